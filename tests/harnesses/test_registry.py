"""The harness registry: one object per harness, and nobody else deciding by a harness's name."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import orjson
import pytest

from dshkit import harnesses, hookspec
from dshkit.cli import errors as cli_errors
from dshkit.errors import Invalid
from dshkit.gate import GateService
from dshkit.sessions import Scanner, Source
from dshkit.web.routing import error_response

from ..support import fourth_harness as fourth
from ..support.fourth_harness import dshkit_with_fourth, hook_with_fourth
from ..support.paths import CLAUDE, CODEX, DSH_ZSTD, GEMINI, REPO


def test_each_harness_has_every_seam() -> None:
    assert harnesses.NAMES == ("dsh", "claude", "codex", "gemini")
    for harness in harnesses.all_harnesses():
        assert harness.adapter.name == harness.name
        assert set(harness.tools) == set(harnesses.VOCABULARIES)
        assert harness.tools[harnesses.COMMAND], harness
        assert harness.context_event in ("SessionStart", "UserPromptSubmit")
        assert harness.launcher.start("/w", "hi").argv[0] == harness.launcher.program


def test_unknown_harness_names_the_known_ones() -> None:
    with pytest.raises(harnesses.UnknownHarness, match="known: dsh, claude, codex"):
        harnesses.get("cursor")


def test_an_unknown_harness_is_mapped_with_its_input_named(tmp_path: Path) -> None:
    # Raised as it is by the core (here the gate's session lookup), every surface's one
    # mapping of the tree names the input: a 400 naming the field, a usage error of --harness.
    with pytest.raises(harnesses.UnknownHarness) as raised:
        GateService(tmp_path).session_key("s1", "cursor")
    error = raised.value
    said = "unknown harness 'cursor' (known: dsh, claude, codex, gemini)"
    assert isinstance(error, Invalid) and isinstance(error, KeyError)
    assert (error.field, error.message, str(error)) == ("harness", said, said)
    answer = error_response(error)
    assert answer.status_code == 400
    assert orjson.loads(answer.body) == {
        "ok": False,
        "error": said,
        "kind": "invalid",
        "field": "harness",
    }
    command = click.Command("rework", params=[click.Option(["--harness"])])
    assert cli_errors.as_json(error, command) == {
        "error": said,
        "kind": "invalid",
        "exitCode": 2,
        "field": "harness",
    }


def test_default_roots_follow_each_harness_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "d"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "x"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "g"))  # the home `.gemini` is in
    roots = {h.name: h.sessions_root() for h in harnesses.all_harnesses()}
    assert roots == {
        "dsh": str(tmp_path / "d" / "sessions"),
        "claude": str(tmp_path / "c" / "projects"),
        "codex": str(tmp_path / "x" / "sessions"),
        "gemini": str(tmp_path / "g" / ".gemini" / "tmp"),
    }


@pytest.mark.parametrize(
    ("name", "root"),
    [("dsh", DSH_ZSTD), ("claude", CLAUDE), ("codex", CODEX), ("gemini", GEMINI)],
)
def test_log_name_pattern_matches_what_the_adapter_discovers(name: str, root: Path) -> None:
    harness = harnesses.get(name)
    found = list(harness.adapter.discover(str(root)))
    assert found
    for log in found:
        assert harness.log_name.match(Path(log.path).name), log.path


def test_a_log_name_told_without_the_pattern_matches_it() -> None:
    # (told without `re`, which a hook recognising a new DSH session's log need not load)
    for harness in harnesses.all_harnesses():
        for literal in harness.log_literals:
            assert harness.log_name.match(literal), (harness.name, literal)
    assert harnesses.get("dsh").log_literals


def test_detect_by_transcript_payload_and_env() -> None:
    dsh_log = "/h/.dsh/sessions/--p--/s/session.v4.jsonl.zstd"
    assert harnesses.detect({"transcript_path": dsh_log}, {}) == "dsh"
    codex_log = "/h/.codex/sessions/2026/11/30/rollout-2026-11-30T04-13-58-01a.jsonl"
    assert harnesses.detect({"transcript_path": codex_log}, {}) == "codex"
    assert harnesses.detect({"turn_id": "t"}, {}) == "codex"
    assert harnesses.detect({"transcript_path": "/h/.claude/projects/-p/s.jsonl"}, {}) == "claude"
    assert harnesses.detect({}, {"CLAUDECODE": "1"}) == "claude"
    assert harnesses.detect({}, {}) == "unknown"


def test_launchers_start_in_the_working_directory_and_resume_where_possible() -> None:
    claude = harnesses.get("claude").launcher
    start = claude.start("/work/p", "继续")
    assert start.cwd == "/work/p" and "-p" in start.argv
    assert "继续" not in start.argv and start.stdin == "继续"  # never on the command line
    resumed = claude.resume("/work/p", "sid-1", "next")
    assert resumed is not None and "--resume" in resumed.argv and "sid-1" in resumed.argv
    codex = harnesses.get("codex").launcher
    assert codex.start("/w", "go").argv[:2] == ["codex", "exec"]
    assert codex.start("/w", "go").argv[-1] == "-" and codex.start("/w", "go").stdin == "go"
    assert harnesses.get("dsh").launcher.resume("/w", "s", "m") is None  # no headless resume
    assert claude.start("/w", "m", env={"CLAUDE_BIN": "/opt/claude"}).argv[0] == "/opt/claude"


def test_sessions_by_registry_roots(tmp_path: Path) -> None:
    from dshkit.store import Store

    with Store(tmp_path / "state") as store:
        report = Scanner(store).scan(
            [
                Source(h.name, root)
                for h, root in zip(
                    harnesses.all_harnesses(), (DSH_ZSTD, CLAUDE, CODEX, GEMINI), strict=True
                )
            ]
        )
    assert report.sessions > 0 and not report.errors


def test_no_module_outside_the_registry_decides_by_a_harness_name() -> None:
    # Every capability asks the registry; a `== "dsh"` anywhere else is knowledge leaking out.
    pattern = re.compile(r"""(==|!=|\bin\b)\s*\(?\s*["'](dsh|claude|codex)["']""")
    offenders = []
    for path in sorted((REPO / "src" / "dshkit").rglob("*.py")):
        if path.parent.name == "harnesses":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert offenders == []


def test_the_registry_is_made_of_one_module_per_harness() -> None:
    made = harnesses.build(harnesses.MODULES)
    assert tuple(made) == harnesses.NAMES and list(made.values()) == list(
        harnesses.HARNESSES.values()
    )
    for name, module in zip(harnesses.NAMES, harnesses.MODULES, strict=True):
        assert sys.modules[f"dshkit.harnesses.{module}"].HARNESS is harnesses.get(name)
    with pytest.raises(ValueError, match="a harness named 'dsh' is registered"):
        harnesses.build(["dsh", "dsh"])


@pytest.mark.process
def test_a_harness_asked_for_by_name_loads_its_own_module_alone() -> None:
    # A prompt answered from its hint writes in its harness's dialect, and asks for no other:
    # the registry is built only when something asks for all of them.
    probe = (
        "import sys\n"
        "from dshkit import harnesses\n"
        "harnesses.get('dsh'); harnesses.dialect('dsh'); harnesses.stop_support('dsh')\n"
        "print(sorted(m for m in sys.modules if m.startswith('dshkit.harnesses.')))\n"
        "print(harnesses.NAMES, sorted(harnesses.HARNESSES) == sorted(harnesses.NAMES))\n"
        "print(harnesses.get('dsh') is harnesses.HARNESSES['dsh'])\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True, text=True)
    alone, built, same = done.stdout.splitlines()
    assert alone == "['dshkit.harnesses.dsh', 'dshkit.harnesses.harness']"
    assert built == "('dsh', 'claude', 'codex', 'gemini') True" and same == "True"


@pytest.mark.process
def test_a_payload_proven_to_be_a_harnesss_loads_no_module_after_it() -> None:
    # A new DSH session's first prompt looks for each harness's template and asks which
    # harness a log with no cursor is: neither loads the modules of the harnesses after the
    # one a mark of its own proves it is. A payload only hinted at (a path, a variable) asks
    # them all: a later one could prove it is theirs.
    dsh_log = "/h/.dsh/sessions/--p--/session-1/session.jsonl.zstd"
    codex_log = "/h/.codex/sessions/2026/11/30/rollout-2026-11-30T04-13-58-01a.jsonl"
    probe = (
        "import sys\n"
        "from dshkit import harnesses\n"
        "def loaded():\n"
        "    return sorted(m[17:] for m in sys.modules if m.startswith('dshkit.harnesses.'))\n"
        "print(harnesses.names())\n"
        f"print(harnesses.detect({{'transcript_path': {dsh_log!r}}}, {{}}), loaded())\n"
        f"print(harnesses.detect({{'transcript_path': {codex_log!r}}}, {{}}), loaded())\n"
        "print(harnesses.detect({}, {'CLAUDECODE': '1'}), loaded())\n"
        "print(harnesses.names() == harnesses.NAMES)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True, text=True)
    names, dsh, codex, claude, same = done.stdout.splitlines()
    assert names == "('dsh', 'claude', 'codex', 'gemini')"
    assert dsh == "dsh ['dsh', 'harness']"
    assert codex == "codex ['claude', 'codex', 'dsh', 'harness']"
    assert claude == "claude ['claude', 'codex', 'dsh', 'gemini', 'harness']"
    assert same == "True"


def _verb(words: list[str]) -> list[str]:
    """`hook EVENT` of a hook's command line, whatever starts dshkit before it."""
    at = words.index("hook")
    return words[at : at + 2]


@pytest.mark.process
def test_a_fourth_harness_module_gets_hooks_under_its_own_names(tmp_path: Path) -> None:
    # Nothing but tests/support/fourth_harness.py says where its settings are, what it calls
    # each event (BeforeTool, AfterTool, …) and that it has no SessionEnd.
    (tmp_path / ".fourth").mkdir()
    installed = dshkit_with_fourth("install-hooks", "--harness", "fourth", home=tmp_path)
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((tmp_path / ".fourth" / "settings.json").read_bytes())
    wanted = hookspec.installed_events(fourth.HARNESS, state=str(tmp_path / ".dsh" / "dshkit"))
    assert "SessionEnd" in wanted  # dshkit has handlers for it; this harness has no such hook
    runs = {
        name: (_verb(shlex.split(group["hooks"][0]["command"])), group["matcher"])
        for name, (group,) in settings["hooks"].items()
    }
    assert runs == {
        fourth.NAMES.get(event, event): (["hook", event], matcher)
        for event, matcher in wanted.items()
        if event != "SessionEnd"
    }
    # Its own tool names (no handoff began: graft's check for every tool is not armed).
    assert runs["BeforeTool"][1].startswith("^(read_file|replace|run_shell_command|write_file)$")
    doctor = dshkit_with_fourth("doctor", "--json", home=tmp_path)
    report = json.loads(doctor.stdout)["harnesses"]["fourth"]
    assert report["hooksInstalled"] and report["hooks"][0]["problems"] == [], report


@pytest.mark.process
def test_a_fourth_harness_is_told_by_its_payload_and_answered_in_its_dialect(
    tmp_path: Path,
) -> None:
    work = tmp_path / "proj"
    work.mkdir()
    session = {"session_id": "f1", "cwd": str(work), "transcript_path": str(tmp_path / "c.json")}
    # The command guard judges its command tool; a deny is exit code 2 with the reason.
    dangerous = {"command": "ls && rm -rf ~"}
    tool = {**session, "hook_event_name": "BeforeTool", "tool_name": fourth.SHELL}
    code, out, err = hook_with_fourth(tmp_path, "PreToolUse", {**tool, "tool_input": dangerous})
    assert (code, out) == (2, b"") and "rm: recursive delete of" in err.decode(), err
    # A context is JSON on stdout, under its name for the event.
    prompt = {**session, "hook_event_name": "BeforeAgent", "prompt": "hi"}
    speak = "UserPromptSubmit=tests.support.hook_handlers:speak"
    code, out, err = hook_with_fourth(
        tmp_path, "UserPromptSubmit", prompt, DSHKIT_HOOK_HANDLERS=speak
    )
    context = {"hookEventName": "BeforeAgent", "additionalContext": "from the extra handler"}
    assert (code, json.loads(out)) == (0, {"hookSpecificOutput": context}), err
    stop = {**session, "hook_event_name": "AfterAgent"}
    block = "Stop=tests.support.hook_handlers:block"
    answered = hook_with_fourth(tmp_path, "Stop", stop, DSHKIT_HOOK_HANDLERS=block)
    assert answered == (2, b"", b"dshkit test hook: not yet")
    # Claude Code's call to the same dshkit (no mark of this dialect's) is answered its way.
    claude = {**session, "transcript_path": "/h/.claude/projects/-p/c1.jsonl"}
    bash = {**claude, "hook_event_name": "PreToolUse", "tool_name": "Bash"}
    code, out, err = hook_with_fourth(tmp_path, "PreToolUse", {**bash, "tool_input": dangerous})
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
