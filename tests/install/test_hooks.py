"""Installing dshkit's hooks into each harness's settings, and leaving no trace on removal."""

from __future__ import annotations

import json
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.harnesses.config_files import configured

from ..support.cli import SCRIPT, run_at_home
from ..support.install import FOREIGN, fake_dsh


def commands(settings: dict[str, Any], event: str) -> list[str]:
    return [h["command"] for g in settings["hooks"].get(event, []) for h in g["hooks"]]


def test_claude_install_is_a_clean_merge_and_uninstall_restores_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(FOREIGN, indent=4) + "\n"  # someone else's formatting
    path.write_text(original)
    dry = run_at_home(tmp_path, "install-hooks", "--harness", "claude", "--dry-run")
    assert "+" in dry.stdout and "hook SessionStart" in dry.stdout and path.read_text() == original
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    settings = json.loads(path.read_text())
    assert settings["theme"] == "dark"
    foreign, guard = commands(settings, "PreToolUse")  # theirs kept, ours (the guard) after it
    assert foreign == "/usr/local/bin/audit-bash" and "hook PreToolUse" in guard
    ours = commands(settings, "SessionStart")
    assert ours[0] == "echo hi" and len(ours) == 2
    words = shlex.split(ours[1])
    # This dshkit's interpreter by absolute path, through its launcher (tests/install/
    # test_launcher.py): `site`'s paths in the line, the working directory kept off the path.
    assert Path(words[0]).parent == Path(SCRIPT).parent and Path(words[0]).is_absolute()
    assert words[1] == "-SPc" and "from dshkit.cli import main" in words[2]
    assert words[3:5] == ["hook", "SessionStart"]
    assert words[-2:] == ["--state-dir", str(tmp_path / ".dsh" / "dshkit")]
    assert {"UserPromptSubmit", "Stop", "SessionEnd"} <= set(settings["hooks"])
    again = run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    assert "already installed" in again.stdout  # idempotent
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    assert path.read_text() == original  # byte for byte
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_uninstall_after_someone_edited_the_file_removes_only_ours(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()  # Claude Code is here
    # No file before: dshkit creates it.
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    settings = json.loads(path.read_text())
    settings["model"] = "sonnet"
    notify = {"matcher": "", "hooks": [{"type": "command", "command": "notify"}]}
    settings["hooks"]["Stop"].append(notify)
    path.write_text(json.dumps(settings))
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    assert json.loads(path.read_text()) == {"model": "sonnet", "hooks": {"Stop": [notify]}}


def test_an_edit_between_two_installs_survives_uninstalling(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    settings = json.loads(path.read_text())
    settings["model"] = "sonnet"
    path.write_text(json.dumps(settings))
    elsewhere = str(tmp_path / "other-state")  # a change: the hooks are written again
    run_at_home(tmp_path, "install-hooks", "--harness", "claude", "--state-dir", elsewhere)
    assert elsewhere in path.read_text() and json.loads(path.read_text())["model"] == "sonnet"
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")  # and once more, unedited
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    assert json.loads(path.read_text()) == {"model": "sonnet"}


def test_untouched_new_file_is_removed_again(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()  # Codex is here, with no hooks of anyone's
    run_at_home(tmp_path, "install-hooks", "--harness", "codex")
    assert (tmp_path / ".codex" / "hooks.json").exists()
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "codex")
    assert not (tmp_path / ".codex" / "hooks.json").exists()
    project = run_at_home(
        tmp_path, "install-hooks", "--harness", "codex", "--scope", "project", check=False
    )
    assert project.returncode == 1 and "/.codex/hooks.json only: use --scope user" in project.stderr


def test_broken_settings_are_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{ not json")
    done = run_at_home(tmp_path, "install-hooks", "--harness", "claude", check=False)
    assert done.returncode == 1 and "not valid JSON" in done.stderr
    assert path.read_text() == "{ not json" and len(list(path.parent.iterdir())) == 1


@pytest.mark.process
def test_dsh_gets_a_bridge_settings_file_and_a_patch_block(tmp_path: Path) -> None:
    patch = tmp_path / ".dsh" / "profiles" / "headless" / "cordis.patch.yml"
    patch.parent.mkdir(parents=True)
    original = "- id: hmr\n  disabled: false\n  config:\n    root: []"  # no final newline
    patch.write_text(original)
    path = fake_dsh(tmp_path / "bin")
    done = run_at_home(tmp_path, "install-hooks", "--harness", "dsh", PATH=path)
    assert "installed the hook bridge into DSH profile 'headless'" in done.stdout
    (added,) = (tmp_path / "bin" / "dsh.log").read_text().splitlines()
    assert added.startswith("plugin --profile headless add @deepseek-ai/dsh-hooks-claude-code@")
    config = tmp_path / ".dsh" / "dshkit" / "dsh-hooks.json"
    prompt_hooks = commands(json.loads(config.read_text()), "UserPromptSubmit")
    assert "hook UserPromptSubmit" in prompt_hooks[0]
    # The bridge runs neither SessionEnd nor PreCompact: none is installed (Stop does the end's
    # work there), and doctor does not miss them.
    installed = set(json.loads(config.read_text())["hooks"])
    assert {"SessionStart", "Stop"} <= installed and not {"SessionEnd", "PreCompact"} & installed
    text = patch.read_text()
    assert text.startswith(original + "\n") and f"configPath: {json.dumps(str(config))}" in text
    assert "id: hooks-claude-code" in text
    report = orjson.loads(run_at_home(tmp_path, "doctor", "--json", PATH=path).stdout)
    assert report["ok"] is True and report["harnesses"]["dsh"]["hooksInstalled"] is True
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "dsh", PATH=path)
    assert patch.read_text() == original and not config.exists()


def test_dsh_sessions_without_its_cli_are_no_dsh_to_install_into(tmp_path: Path) -> None:
    # DSH's home holds sessions (copied from elsewhere, or left), but no `dsh` runs here: its
    # hooks could only run through the bridge `dsh plugin add` would add.
    (tmp_path / ".dsh" / "sessions").mkdir(parents=True)
    (tmp_path / ".claude").mkdir()
    done = run_at_home(tmp_path, "install-hooks")
    assert "skipped DSH: not installed here (no `dsh` on PATH" in done.stdout
    assert "plugin" not in done.stdout and "dsh-hooks.json" not in done.stdout
    assert sorted(p.name for p in (tmp_path / ".dsh").iterdir()) == ["dshkit", "sessions"]
    assert not (tmp_path / ".dsh" / "dshkit" / "dsh-hooks.json").exists()
    named = run_at_home(tmp_path, "install-hooks", "--harness", "dsh", check=False)
    assert named.returncode == 2 and "DSH is not installed here" in named.stderr
    code, report = doctor_report(tmp_path)
    assert code == 0 and report["harnesses"]["dsh"]["hooksInstalled"] is False
    dsh = [c for c in report["checks"] if c.get("harness") == "dsh"]
    assert {c["check"]: c["status"] for c in dsh if c["check"] != "sessionsRoot"} == {
        "harness": "absent",
        "hooks": "absent",
        "mcpServer": "absent",
    }
    # Asked to anyway: the block is written, and the one command that finishes it said.
    forced = run_at_home(tmp_path, "install-hooks", "--harness", "dsh", "--create")
    assert "dsh plugin --profile headless add @deepseek-ai/dsh-hooks-claude-code" in forced.stdout
    # Still no DSH here: what dshkit left there is named, nothing is broken.
    code, report = doctor_report(tmp_path)
    (hooks,) = [c for c in report["checks"] if c["check"] == "hooks" and c["harness"] == "dsh"]
    assert code == 0 and hooks["status"] == "absent"
    assert hooks["message"].startswith("not checked: DSH is not installed here")
    assert "`dshkit uninstall-hooks --harness dsh` removes them" in hooks["message"]
    assert report["harnesses"]["dsh"]["hooks"][0]["status"] == "absent"


def doctor_report(home: Path) -> tuple[int, dict[str, Any]]:
    done = run_at_home(home, "doctor", "--json", check=False)
    return done.returncode, orjson.loads(done.stdout)


def test_doctor_reports_per_harness(tmp_path: Path) -> None:
    (tmp_path / ".dsh" / "sessions").mkdir(parents=True)
    (tmp_path / ".claude").mkdir()
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    report = orjson.loads(run_at_home(tmp_path, "doctor", "--json", "--port", "1").stdout)
    assert report["harnesses"]["dsh"]["sessionsRootFound"] is True
    assert report["harnesses"]["claude"]["hooksInstalled"] is True
    assert report["harnesses"]["codex"]["hooksInstalled"] is False
    assert report["llmConfigured"] is False and "DSHKIT_LLM_API_KEY" in report["llmProblem"]
    assert report["service"]["reachable"] is False


def test_a_handoff_begun_since_the_install_widens_the_tool_hook(tmp_path: Path) -> None:
    # graft's retirement check starts for every tool once a handoff began (`graft.used`):
    # before, the install leaves those tools out; after, doctor says so until installed again.
    (tmp_path / ".claude").mkdir()
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    path = tmp_path / ".claude" / "settings.json"
    assert json.loads(path.read_text())["hooks"]["PreToolUse"][0]["matcher"] != ""
    assert doctor_report(tmp_path)[0] == 0
    (tmp_path / ".dsh" / "dshkit" / "graft.used").touch()
    code, report = doctor_report(tmp_path)
    (problem,) = report["harnesses"]["claude"]["hooks"][0]["problems"]
    assert code == 1 and problem["message"].startswith("PreToolUse matches '^(Bash|")
    assert "the registry wants ''" in problem["message"]
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    assert json.loads(path.read_text())["hooks"]["PreToolUse"][0]["matcher"] == ""
    assert doctor_report(tmp_path)[0] == 0


def test_doctor_finds_an_event_run_under_another_events_name(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    path = tmp_path / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    (hook,) = settings["hooks"]["Stop"][0]["hooks"]
    hook["command"] = hook["command"].replace("hook Stop", "hook SessionEnd")
    path.write_text(json.dumps(settings))
    code, report = doctor_report(tmp_path)
    (problem,) = report["harnesses"]["claude"]["hooks"][0]["problems"]
    assert code == 1 and problem["message"].startswith(
        "Stop runs `dshkit hook SessionEnd`, the registry wants Stop: run `dshkit install-hooks"
    )


@pytest.mark.process
def test_the_installed_command_runs_whatever_the_path(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    (line,) = commands(settings, "SessionStart")
    payload = orjson.dumps(
        {
            "session_id": "s",
            "source": "startup",
            "transcript_path": "/h/.claude/projects/-p/s.jsonl",
        }
    )
    done = subprocess.run(
        line,
        shell=True,
        input=payload,
        capture_output=True,
        # (capability facts off: they would answer this SessionStart, see tests/conftest.py)
        env={"PATH": "/nonexistent", "HOME": str(tmp_path), "DSHKIT_CAPABILITY": "off"},
    )
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""


@pytest.mark.parametrize("harness", ["claude", "codex", "dsh"])
def test_dry_run_writes_nothing_outside_the_state_dir(tmp_path: Path, harness: str) -> None:
    run_at_home(tmp_path, "install-hooks", "--harness", harness, "--dry-run", "--create")
    written = [p for p in tmp_path.rglob("*") if p.is_file() and "dshkit" not in p.parts]
    assert written == []


@pytest.mark.process
def test_dsh_patch_written_by_dsh_itself_stays_valid(tmp_path: Path) -> None:
    # `dsh plugin add` initialises a profile's patch layer as an empty flow list.
    patch = tmp_path / ".dsh" / "profiles" / "headless" / "cordis.patch.yml"
    patch.parent.mkdir(parents=True)
    original = "# Your patch layer for this dsh profile.\n[]\n"
    patch.write_text(original)
    path = fake_dsh(tmp_path / "bin")
    run_at_home(tmp_path, "install-hooks", "--harness", "dsh", PATH=path)
    text = patch.read_text()
    assert "[]" not in text.replace("`[]`", "") and "- insert:" in text
    edited = text + "- id: other\n  disabled: true\n"  # someone adds an entry afterwards
    patch.write_text(edited)
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "dsh")
    # Still a valid block list: `[]` comes back only when nothing else is left in it.
    assert (
        patch.read_text()
        == "# Your patch layer for this dsh profile.\n- id: other\n  disabled: true\n"
    )
    patch.write_text(original)
    run_at_home(tmp_path, "install-hooks", "--harness", "dsh", PATH=path)
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "dsh")
    assert patch.read_text() == original
    patch.write_text("key: value\n")
    refused = run_at_home(tmp_path, "install-hooks", "--harness", "dsh", check=False, PATH=path)
    assert refused.returncode == 1 and "add this entry by hand" in refused.stderr


def test_uninstall_leaves_a_file_without_dshkit_entries_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    never = '{"hooks":{"Stop":[{"matcher":"","hooks":[]}],"Notification":"oops"}}'
    path.write_text(never)
    done = run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    assert "not installed" in done.stdout and path.read_text() == never
    # Installed, then someone edits the file: uninstalling takes out only dshkit's entries...
    path.write_text('{"model": "opus"}')
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    edited = json.loads(path.read_text())
    edited["hooks"]["Stop"].insert(
        0, {"matcher": "", "hooks": [{"type": "command", "command": "x"}]}
    )
    path.write_text(json.dumps(edited))
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    mine = '{"model":"opus","hooks":{"Stop":[{"matcher":"","hooks":[{"type":"command",'
    mine += '"command":"x"}]}]}}'
    assert json.loads(path.read_text()) == json.loads(mine)
    # ...and a second uninstall is a no-op on the person's own one-line file.
    path.write_text(mine)
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    assert path.read_text() == mine
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_install_writes_through_a_symlink_and_keeps_the_mode(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude-settings.json"
    original = json.dumps(FOREIGN) + "\n"
    target.write_text(original)
    target.chmod(0o600)
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.symlink_to(target)
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    assert path.is_symlink() and path.resolve() == target
    assert "hook SessionStart" in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    # The old bytes are kept in the state directory, its owner's alone; none beside the file.
    ledger = list((tmp_path / ".dsh" / "dshkit" / "install").iterdir())
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in ledger)
    kept = [json.loads(p.read_text()) for p in ledger if p.name != "directories.json"]
    assert [r["before"] for r in kept if r["path"] == str(target)] == [original]
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]
    assert sorted(p.name for p in dotfiles.iterdir()) == ["claude-settings.json"]
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    assert path.is_symlink() and target.read_text() == original
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_project_scope_names_nothing_of_this_machine(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    done = run_at_home(
        tmp_path,
        "install-hooks",
        "--harness",
        "claude",
        "--scope",
        "project",
        "--project",
        str(project),
    )
    assert "found on PATH" in done.stdout
    text = (project / ".claude" / "settings.json").read_text()
    assert commands(json.loads(text), "SessionStart") == ["dshkit hook SessionStart"]
    assert str(tmp_path) not in text and sys.prefix not in text
    missing = tmp_path / "nonexistent"
    refused = run_at_home(
        tmp_path,
        *("install-hooks", "--harness", "claude", "--scope", "project", "--project", str(missing)),
        check=False,
    )
    assert refused.returncode == 1 and "no such directory" in refused.stderr
    assert not missing.exists()


def test_install_again_brings_the_settings_to_what_the_registry_asks(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(FOREIGN, indent=4) + "\n"
    path.write_text(original)
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    groups = json.loads(path.read_text())["hooks"]["PreToolUse"]
    # No handoff ever began here: the guard's tools (and tools named for a delete) only.
    assert groups[1]["matcher"].startswith("^(Bash|Edit|MultiEdit|NotebookEdit|NotebookRead|")
    assert "PreCompact" not in json.loads(path.read_text())["hooks"]
    policy = "PreCompact=tests.support.hook_handlers:deny"  # an event no built-in handler has
    added = run_at_home(
        tmp_path, "install-hooks", "--harness", "claude", DSHKIT_HOOK_HANDLERS=policy
    )
    assert f"updated {path}" in added.stdout
    hooks = json.loads(path.read_text())["hooks"]
    assert hooks["PreToolUse"][0] == FOREIGN["hooks"]["PreToolUse"][0]  # others' as they were
    assert "hook PreCompact" in hooks["PreCompact"][0]["hooks"][0]["command"]
    again = run_at_home(
        tmp_path, "install-hooks", "--harness", "claude", DSHKIT_HOOK_HANDLERS=policy
    )
    assert "already installed" in again.stdout
    # A stale install (another dshkit, since deleted) is brought to this one in place.
    program = shlex.split(hooks["PreCompact"][0]["hooks"][0]["command"])[0]
    stale = path.read_text().replace(program, "/gone/venv/bin/python3")
    assert stale != path.read_text()
    path.write_text(stale)
    run_at_home(tmp_path, "install-hooks", "--harness", "claude", DSHKIT_HOOK_HANDLERS=policy)
    assert (
        "/gone/" not in path.read_text()
        and len(json.loads(path.read_text())["hooks"]["PreToolUse"]) == 2
    )
    # Without the extra handler its event goes again; the foreign PreToolUse stays.
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    hooks = json.loads(path.read_text())["hooks"]
    assert hooks["PreToolUse"][0] == FOREIGN["hooks"]["PreToolUse"][0]
    assert "PreCompact" not in hooks
    bad = run_at_home(
        tmp_path, "install-hooks", "--harness", "claude", DSHKIT_HOOK_HANDLERS="x", check=False
    )
    assert bad.returncode == 1 and "DSHKIT_HOOK_HANDLERS item 'x'" in bad.stderr
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    assert json.loads(path.read_text()) == FOREIGN


# A profile's patch layer as a person writes one after DSH's docs: comments, flow lists,
# quoting of either kind and DSH's own `!!js` tags.
PERSONS_PATCH = """# my dsh setup
- id: hmr
  disabled: false   # keep reloading
- insert:
    - id: mcp-github
      name: "@deepseek-ai/dsh-mcp-client"
      config:
        serverName: github
        transport: stdio
        command: npx
        args: ['-y', "@modelcontextprotocol/server-github"]
        env:
          GITHUB_TOKEN: !!js process.env.GITHUB_TOKEN
"""


@pytest.mark.process
def test_dsh_patch_in_the_persons_own_yaml_keeps_every_byte(tmp_path: Path) -> None:
    patch = tmp_path / ".dsh" / "profiles" / "headless" / "cordis.patch.yml"
    patch.parent.mkdir(parents=True)
    patch.write_text(PERSONS_PATCH)
    run_at_home(tmp_path, "install-hooks", "--harness", "dsh", PATH=fake_dsh(tmp_path / "bin"))
    text = patch.read_text()
    assert text.startswith(PERSONS_PATCH)  # theirs untouched, dshkit's blocks after it
    errors: list[str] = []
    servers = configured([(str(patch), "dsh-patch")], "/w", errors)
    assert errors == [] and [s.name for s in servers] == ["github", "dshkit"]
    assert servers[0].args == ["-y", "@modelcontextprotocol/server-github"]
    edited = text.replace("disabled: false", "disabled: true")  # edited since: no byte restore
    patch.write_text(edited)
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "dsh")
    assert patch.read_text() == PERSONS_PATCH.replace("disabled: false", "disabled: true")


def test_dsh_patch_dshkit_cannot_extend_is_refused_untouched(tmp_path: Path) -> None:
    patch = tmp_path / ".dsh" / "profiles" / "headless" / "cordis.patch.yml"
    patch.parent.mkdir(parents=True)
    path = fake_dsh(tmp_path / "bin")
    cases = {
        # An indented list: an entry added at the margin would no longer be YAML.
        "  - id: hmr\n    disabled: false\n": "add this entry by hand",
        "- [hmr\n": "is not valid YAML",
        # The bridge under another id: two bridges would run every hook twice.
        "- id: my-bridge\n  name: '@deepseek-ai/dsh-hooks-claude-code'\n": "already mounts",
        "- id: mine\n  name: '@deepseek-ai/dsh-mcp-client'\n  config:\n    serverName: dshkit\n": (
            "already configures an MCP server named 'dshkit'"
        ),
    }
    for text, message in cases.items():
        patch.write_text(text)
        done = run_at_home(tmp_path, "install-hooks", "--harness", "dsh", check=False, PATH=path)
        assert done.returncode == 1 and message in done.stderr, done.stderr
        assert patch.read_text() == text
        assert sorted(p.name for p in patch.parent.iterdir()) == ["cordis.patch.yml"]


def test_each_file_is_said_created_updated_or_removed(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()  # Claude Code is here, with no settings of its own yet
    settings, user_file = tmp_path / ".claude" / "settings.json", tmp_path / ".claude.json"
    done = run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    assert done.stdout.splitlines() == [f"created {settings}", f"created {user_file}"]
    policy = "PreCompact=tests.support.hook_handlers:deny"  # one more event: the hooks change
    more = run_at_home(
        tmp_path, "install-hooks", "--harness", "claude", DSHKIT_HOOK_HANDLERS=policy
    )
    assert more.stdout.splitlines() == [f"updated {settings}"]
    gone = run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude")
    assert gone.stdout.splitlines() == [f"removed {user_file}", f"removed {settings}"]


def test_install_hooks_json_names_every_file_of_every_harness(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".codex").mkdir()
    codex_config = tmp_path / ".codex" / "config.toml"
    codex_config.write_text('model = "gpt-fake"\n')
    files = {
        "claude": [str(tmp_path / ".claude" / "settings.json"), str(tmp_path / ".claude.json")],
        "codex": [str(tmp_path / ".codex" / "hooks.json"), str(codex_config)],
    }

    def install(*args: str) -> dict[str, Any]:
        done = run_at_home(tmp_path, "install-hooks", "--json", *args)
        answer: dict[str, Any] = orjson.loads(done.stdout)  # and nothing else on stdout
        assert sorted(answer["harnesses"]) == ["claude", "codex"]
        for name, paths in files.items():
            assert [f["path"] for f in answer["harnesses"][name]["files"]] == paths
            assert answer["harnesses"][name]["bridge"] is None
        skipped = {s["harness"]: s["why"] for s in answer["skipped"]}
        assert sorted(skipped) == ["dsh", "gemini"]
        assert all("not installed here" in why for why in skipped.values())
        return answer

    def actions(answer: dict[str, Any], name: str) -> list[str]:
        return [f["action"] for f in answer["harnesses"][name]["files"]]

    dry = install("--dry-run")
    assert dry["dryRun"] is True and dry["changed"] is False
    assert actions(dry, "claude") == ["created", "created"]
    assert actions(dry, "codex") == ["created", "updated"]
    (codex_diff,) = [f["diff"] for f in dry["harnesses"]["codex"]["files"] if "toml" in f["path"]]
    assert "+[mcp_servers.dshkit]" in codex_diff and not (tmp_path / ".claude.json").exists()
    done = install()
    assert done["changed"] is True and done["stateDir"] == str(tmp_path / ".dsh" / "dshkit")
    assert [actions(done, name) for name in files] == [actions(dry, name) for name in files]
    assert "diff" not in done["harnesses"]["claude"]["files"][0]
    again = install()
    assert again["changed"] is False
    assert actions(again, "claude") == actions(again, "codex") == ["unchanged", "unchanged"]
    gone = orjson.loads(run_at_home(tmp_path, "uninstall-hooks", "--json").stdout)
    assert [f["action"] for f in gone["harnesses"]["claude"]["files"]] == ["removed", "removed"]
    # An error is JSON too, on stdout, with the exit code the error tree gives it.
    refused = run_at_home(tmp_path, "install-hooks", "--json", "--harness", "dsh", check=False)
    error = orjson.loads(refused.stdout)
    assert refused.returncode == error["exitCode"] == 2
    assert error["kind"] == "invalid" and error["field"] == "harness"
    assert "DSH is not installed here" in error["error"]
    bad = run_at_home(tmp_path, "install-hooks", "--json", DSHKIT_HOOK_HANDLERS="x", check=False)
    assert bad.returncode == 1 and orjson.loads(bad.stdout)["kind"] == "invalid"


def test_conditioned_handlers_are_written_converged_and_taken_out(tmp_path: Path) -> None:
    from dshkit.install import hook_settings

    path = tmp_path / "settings.json"
    original = json.dumps(FOREIGN, indent=4) + "\n"
    line = {"PostToolUse": f"{SCRIPT} hook PostToolUse"}.__getitem__
    wanted = {"PostToolUse": "^(Bash|Write)$"}
    said = {"PostToolUse": ("Bash", "Write(*.html)", "Write(*.svg)")}
    text = hook_settings.with_hooks(path, original, wanted, line, said)
    assert text is not None
    (group,) = json.loads(text)["hooks"]["PostToolUse"]
    assert group["matcher"] == "^(Bash|Write)$"
    assert [h.get("if") for h in group["hooks"]] == list(said["PostToolUse"])
    assert {h["command"] for h in group["hooks"]} == {line("PostToolUse")}
    assert hook_settings.conditions(json.loads(text)) == said
    assert hook_settings.with_hooks(path, text, wanted, line, said) == text  # converged
    fewer = hook_settings.with_hooks(path, text, wanted, line, {"PostToolUse": ("Bash",)})
    assert fewer is not None
    (group,) = json.loads(fewer)["hooks"]["PostToolUse"]
    assert [h.get("if") for h in group["hooks"]] == ["Bash"]
    plain = hook_settings.with_hooks(path, fewer, wanted, line)
    assert plain is not None and hook_settings.conditions(json.loads(plain)) == {}
    assert json.loads(hook_settings.without_hooks(path, text)) == FOREIGN
