"""dshkit as a plugin: the checked-in manifests are what the hook registry writes (the events
and matchers `install-hooks` installs), the launcher finds dshkit where it is installed and
fails closed where it is not, `doctor` recognises every route and warns of a doubled hook,
and `install-hooks` refuses to double an installed plugin.

The records of an installed plugin below have the shapes Claude Code 2.1.332 and Codex
0.171.0 wrote in a fresh home (`claude plugin install`, `codex plugin add`); the real CLIs
writing them is tests/real/test_plugin_*.py's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import __version__, harnesses
from dshkit.install.hooks import wanted_events
from dshkit.install.plugin import LAUNCHER, PLUGIN_DIR, files

from ..support.cli import BARE_PATH, run_at_home
from ..support.install import fake_dsh
from ..support.paths import REPO

LAUNCH = REPO / PLUGIN_DIR / LAUNCHER
GEN = str(REPO / "scripts" / "gen-plugins.py")


# -- the manifests -----------------------------------------------------------------------------


@pytest.mark.process
def test_the_checked_in_manifests_are_what_the_registry_writes(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, GEN, "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    # A stale copy fails the check (and names the file), and writing makes it current.
    copy = tmp_path / "checkout"
    for relative in files():
        (copy / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / relative, copy / relative)
    hooks = copy / PLUGIN_DIR / "hooks" / "hooks.json"
    stale = json.loads(hooks.read_text())
    del stale["hooks"]["PreToolUse"]
    hooks.write_text(json.dumps(stale))
    check = [sys.executable, GEN, "--check", "--root", str(copy)]
    done = subprocess.run(check, capture_output=True, text=True)
    assert done.returncode == 1 and "hooks/hooks.json" in done.stderr
    subprocess.run([sys.executable, GEN, "--root", str(copy)], check=True, capture_output=True)
    assert subprocess.run(check, capture_output=True).returncode == 0


@pytest.mark.parametrize(
    ("harness", "name"), [("claude", "hooks.json"), ("codex", "codex-hooks.json")]
)
def test_the_plugin_hooks_are_those_install_hooks_installs(harness: str, name: str) -> None:
    shipped = json.loads((REPO / PLUGIN_DIR / "hooks" / name).read_text())["hooks"]
    wanted = wanted_events(harnesses.get(harness), ())
    assert set(shipped) == set(wanted)
    for event, groups in shipped.items():
        ((group,),) = [groups]
        (hook,) = group["hooks"]
        assert group["matcher"] == wanted[event][1]
        runs = hook.get("args") or hook["command"].split()[1:]
        assert runs == ["hook", wanted[event][0]] and LAUNCHER in hook["command"]
        if harness == "claude":  # exec form: no shell between the plugin's path and the launcher
            assert hook["command"] == "${CLAUDE_PLUGIN_ROOT}/" + LAUNCHER


def test_the_plugin_version_is_dshkits() -> None:
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert market["plugins"][0]["version"] == __version__
    for kind in (".claude-plugin", ".codex-plugin"):
        manifest = json.loads((REPO / PLUGIN_DIR / kind / "plugin.json").read_text())
        assert manifest["version"] == __version__ and manifest["name"] == "dshkit"
    claude = json.loads((REPO / PLUGIN_DIR / ".claude-plugin" / "plugin.json").read_text())
    assert claude["userConfig"]["llm_api_key"]["sensitive"] is True
    assert set(claude["userConfig"]) == {"llm_api_key", "guard_mode", "state_dir"}


# -- the launcher ------------------------------------------------------------------------------

FAKE_DSHKIT = """#!/bin/sh
printf '%s\\n' "ran $0 $*" "mode=${DSHKIT_GUARD_MODE:-} key=${DSHKIT_LLM_API_KEY:-}"
"""


def launch(
    home: Path, *args: str, path: str = BARE_PATH, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LAUNCH), *args],
        env={"HOME": str(home), "PATH": path, **env},
        input='{"hook_event_name": "x"}',
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.process
def test_without_dshkit_the_guard_denies_and_the_start_says_how_to_install(tmp_path: Path) -> None:
    denied = launch(tmp_path, "hook", "PreToolUse")
    assert denied.returncode == 0
    answer = json.loads(denied.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "make install-user" in answer["permissionDecisionReason"]
    start = json.loads(launch(tmp_path, "hook", "SessionStart").stdout)
    assert "make install-user" in start["hookSpecificOutput"]["additionalContext"]
    assert start["systemMessage"] == start["hookSpecificOutput"]["additionalContext"]  # seen
    quiet = launch(tmp_path, "hook", "Stop")
    assert quiet.returncode == 0 and quiet.stdout == ""
    server = launch(tmp_path, "mcp", "--harness", "claude")
    assert server.returncode == 1 and "make install-user" in server.stderr


@pytest.mark.process
@pytest.mark.parametrize(
    "place",
    [
        "path",
        ".local/bin/dshkit",  # make install-user's link, pipx's and uv's default bin directory
        ".local/share/dshkit/venv/bin/dshkit",  # make install-user's own venv
        ".local/share/pipx/venvs/dshkit/bin/dshkit",
        ".local/pipx/venvs/dshkit/bin/dshkit",  # older pipx
        ".local/share/uv/tools/dshkit/bin/dshkit",
    ],
)
def test_the_launcher_finds_dshkit_where_it_is_installed(tmp_path: Path, place: str) -> None:
    home = tmp_path / "home"
    script = (tmp_path / "bin" / "dshkit") if place == "path" else home / place
    script.parent.mkdir(parents=True)
    script.write_text(FAKE_DSHKIT)
    script.chmod(0o755)
    path = f"{script.parent}:{BARE_PATH}" if place == "path" else BARE_PATH
    done = launch(home, "hook", "PreToolUse", path=path)
    assert done.returncode == 0 and done.stdout.splitlines()[0] == f"ran {script} hook PreToolUse"


@pytest.mark.process
def test_the_plugin_options_reach_dshkit(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dshkit").write_text(FAKE_DSHKIT)
    (bin_dir / "dshkit").chmod(0o755)
    options = {
        "CLAUDE_PLUGIN_OPTION_STATE_DIR": str(tmp_path / "state dir"),
        "CLAUDE_PLUGIN_OPTION_GUARD_MODE": "strict",
        "CLAUDE_PLUGIN_OPTION_LLM_API_KEY": "sk-test",
    }
    path = f"{bin_dir}:{BARE_PATH}"
    ran, given = launch(tmp_path, "hook", "Stop", path=path, **options).stdout.splitlines()
    assert ran == f"ran {bin_dir}/dshkit hook Stop --state-dir {tmp_path}/state dir"
    assert given == "mode=strict key=sk-test"
    plain = launch(tmp_path, "hook", "Stop", path=path).stdout.splitlines()
    assert plain == [f"ran {bin_dir}/dshkit hook Stop", "mode= key="]
    # An option left unset, as its placeholder: dshkit's own configuration decides.
    unset = {
        f"CLAUDE_PLUGIN_OPTION_{k}": f"${{user_config.{k.lower()}}}"
        for k in ("STATE_DIR", "GUARD_MODE", "LLM_API_KEY")
    }
    placeholders = launch(tmp_path, "mcp", path=path, **unset).stdout.splitlines()
    assert placeholders == [f"ran {bin_dir}/dshkit mcp", "mode= key="]


# -- doctor and install-hooks, per route ---------------------------------------------------------


def claude_plugin(home: Path, enabled: bool = True, version: str = __version__) -> None:
    """dshkit's plugin as `claude plugin install dshkit@dshkit` records it."""
    plugins = home / ".claude" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    cache = plugins / "cache" / "dshkit" / "dshkit" / version
    record = {"scope": "user", "installPath": str(cache), "version": version}
    (plugins / "installed_plugins.json").write_text(
        json.dumps({"version": 2, "plugins": {"dshkit@dshkit": [record]}})
    )
    settings = home / ".claude" / "settings.json"
    current = json.loads(settings.read_text()) if settings.exists() else {}
    current["enabledPlugins"] = {"dshkit@dshkit": enabled}
    settings.write_text(json.dumps(current))


def codex_plugin(home: Path) -> None:
    """dshkit's plugin as `codex plugin add dshkit@dshkit` records it."""
    (home / ".codex" / "plugins" / "cache" / "dshkit" / "dshkit" / __version__).mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        '[marketplaces.dshkit]\nsource_type = "local"\nsource = "/src/dshkit"\n\n'
        '[plugins."dshkit@dshkit"]\nenabled = true\n'
    )


def doctor(home: Path, path: str = BARE_PATH) -> dict[str, Any]:
    done = run_at_home(home, "doctor", "--json", "--port", "1", check=False, PATH=path)
    report: dict[str, Any] = orjson.loads(done.stdout)
    return report


def routes(report: dict[str, Any], harness: str) -> list[str]:
    return [r["route"] for r in report["harnesses"][harness]["routes"]]


def test_doctor_sees_the_settings_route(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    report = doctor(tmp_path)
    assert routes(report, "claude") == ["settings"]
    assert report["harnesses"]["claude"]["doubled"] == []


def test_doctor_sees_the_claude_plugin(tmp_path: Path) -> None:
    claude_plugin(tmp_path)
    report = doctor(tmp_path)
    assert routes(report, "claude") == ["plugin"]
    assert report["harnesses"]["claude"]["hooksInstalled"] is True
    (found,) = [c for c in report["checks"] if c["check"] == "plugin"]
    assert found["status"] == "ok" and "dshkit@dshkit" in found["message"]
    assert report["harnesses"]["claude"]["doubled"] == []


def test_doctor_says_a_disabled_or_older_plugin(tmp_path: Path) -> None:
    claude_plugin(tmp_path, enabled=False)
    (found,) = [c for c in doctor(tmp_path)["checks"] if c["check"] == "plugin"]
    assert found["status"] == "absent" and "disabled" in found["message"]
    claude_plugin(tmp_path, version="0.0.1")
    (found,) = [c for c in doctor(tmp_path)["checks"] if c["check"] == "plugin"]
    assert found["status"] == "warn" and f"this dshkit's ({__version__})" in found["message"]


def test_doctor_sees_the_codex_plugin(tmp_path: Path) -> None:
    codex_plugin(tmp_path)
    report = doctor(tmp_path)
    assert routes(report, "codex") == ["plugin"]
    assert report["harnesses"]["codex"]["plugins"][0]["version"] == __version__


@pytest.mark.process
def test_doctor_sees_the_dsh_bridge(tmp_path: Path) -> None:
    path = fake_dsh(tmp_path / "bin")
    run_at_home(tmp_path, "install-hooks", "--harness", "dsh", PATH=path)
    report = doctor(tmp_path, path=path)
    assert routes(report, "dsh") == ["bridge"]


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_doctor_warns_of_a_doubled_hook_and_says_which_to_remove(
    tmp_path: Path, harness: str
) -> None:
    (tmp_path / f".{harness}").mkdir()
    run_at_home(tmp_path, "install-hooks", "--harness", harness)  # first the settings…
    if harness == "claude":  # … then the plugin, installed by the harness behind dshkit's back
        claude_plugin(tmp_path)
    else:
        config = tmp_path / ".codex" / "config.toml"
        kept = config.read_text() if config.exists() else ""
        codex_plugin(tmp_path)
        config.write_text(kept + "\n" + config.read_text())
    report = doctor(tmp_path)
    assert sorted(routes(report, harness)) == ["plugin", "settings"]
    (warning,) = [c for c in report["checks"] if c["check"] == "doubled"]
    assert warning["status"] == "warn" and warning["harness"] == harness
    remove = f"dshkit uninstall-hooks --harness {harness} --scope user"
    assert "twice" in warning["message"] and remove in warning["message"]
    assert report["harnesses"][harness]["doubled"] == [warning["message"]]
    # Doing what it says leaves one route, and no warning.
    run_at_home(tmp_path, "uninstall-hooks", "--harness", harness)
    report = doctor(tmp_path)
    assert routes(report, harness) == ["plugin"] and report["harnesses"][harness]["doubled"] == []


def test_install_hooks_refuses_to_double_an_installed_plugin(tmp_path: Path) -> None:
    claude_plugin(tmp_path)
    refused = run_at_home(tmp_path, "install-hooks", "--harness", "claude", check=False)
    assert refused.returncode == 1
    assert "would run each twice" in refused.stderr
    assert "claude plugin uninstall dshkit@dshkit" in refused.stderr
    assert "hooks" not in json.loads((tmp_path / ".claude" / "settings.json").read_text())
    everywhere = run_at_home(tmp_path, "install-hooks", "--json")
    skipped = {s["harness"]: s["why"] for s in orjson.loads(everywhere.stdout)["skipped"]}
    assert "would run each twice" in skipped["claude"]
    # A disabled plugin runs nothing: the settings route may be taken.
    claude_plugin(tmp_path, enabled=False)
    run_at_home(tmp_path, "install-hooks", "--harness", "claude")
    assert "hooks" in json.loads((tmp_path / ".claude" / "settings.json").read_text())


def test_the_console_overview_counts_an_enabled_plugin_as_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dshkit.overview import overview

    for name in ("DSH_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "project").mkdir()
    state = tmp_path / "state"

    def claude_hooks() -> dict[str, Any]:
        found = overview(state, tmp_path / "project")["hooks"]
        (claude,) = [h for h in found if h["harness"] == "claude"]
        return dict(claude)

    assert claude_hooks()["installed"] is False
    claude_plugin(tmp_path, enabled=False)
    assert claude_hooks()["installed"] is False  # switched off: its hooks do not run
    claude_plugin(tmp_path)
    assert claude_hooks() == {
        "harness": "claude",
        "installed": True,
        "status": "plugin",
        "problems": [],
        "nextStep": None,
    }
