"""The delivery gate through `dshkit hook`, as each harness calls it: a write of a web
deliverable returns at once (judged in the background), the failure goes back when the agent
tries to stop (once per content, never looping), or with the next prompt when Stop could not
block; files written by shell commands are found too; rework switched per session."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dshkit.gate.rework import written_deliverables
from dshkit.store import Store

from ..support.cli import run_dshkit
from ..support.hooks import claude, codex, context, dsh, hook
from ..support.paths import PAGES


@pytest.fixture
def home(tmp_path: Path) -> Path:
    state = tmp_path / ".dsh" / "dshkit"
    state.mkdir(parents=True)
    # A failing page samples the whole budget: the background runs must take the short one.
    (state / "config.toml").write_text("[gate]\nbudget_s = 60.0\nhook_budget_s = 2.0\n")
    (tmp_path / "proj" / "site").mkdir(parents=True)
    return tmp_path


def _base(harness: str, project: Path) -> dict[str, Any]:
    made = {"claude": claude("c1"), "dsh": dsh("d1"), "codex": codex("x1")}[harness]
    return made | {"cwd": str(project)}


def claude_write(project: Path, name: str) -> dict[str, Any]:
    return _base("claude", project) | {
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(project / name), "content": "…"},
        "tool_response": {"type": "create"},
    }


def dsh_write(project: Path, name: str) -> dict[str, Any]:
    return _base("dsh", project) | {
        "hook_event_name": "PostToolUse",
        "tool_name": "write",
        "tool_input": {"file_path": name, "content": "…"},  # as DSH rc.8 names it
    }


def codex_patch(project: Path, name: str) -> dict[str, Any]:
    patch = f"*** Begin Patch\n*** Update File: {name}\n@@\n-a\n+b\n*** End Patch"
    return _base("codex", project) | {
        "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch",
        "tool_input": {"command": ["apply_patch", patch]},
    }


PAYLOADS: dict[str, Callable[[Path, str], dict[str, Any]]] = {
    "claude": claude_write,
    "dsh": dsh_write,
    "codex": codex_patch,
}
SHELL = {"claude": "Bash", "dsh": "bash", "codex": "exec_command"}


def prompt(harness: str, project: Path) -> dict[str, Any]:
    return _base(harness, project) | {"hook_event_name": "UserPromptSubmit", "prompt": "go"}


def stop(harness: str, project: Path, active: bool = False) -> dict[str, Any]:
    return _base(harness, project) | {"hook_event_name": "Stop", "stop_hook_active": active}


def command(harness: str, project: Path, line: str) -> dict[str, Any]:
    return _base(harness, project) | {
        "hook_event_name": "PostToolUse",
        "tool_name": SHELL[harness],
        "tool_input": {"command": line},
    }


def verdicts(home: Path) -> list[tuple[str, str]]:
    with Store(home / ".dsh" / "dshkit") as store:
        rows = store.db.execute("SELECT path, verdict FROM gate_verdicts ORDER BY id").fetchall()
    return [(Path(row[0]).name, row[1]) for row in rows]


def runs(home: Path) -> int:
    with Store(home / ".dsh" / "dshkit") as store:
        return int(store.db.execute("SELECT count(*) FROM gate_runs").fetchone()[0])


def settled(home: Path, count: int, seconds: float = 90.0) -> list[tuple[str, str]]:
    """The verdicts once `count` are stored and no run is left (the background runs)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = verdicts(home)
        if len(found) >= count and runs(home) == 0:
            return found
        time.sleep(0.2)
    raise AssertionError(f"verdicts never came: {verdicts(home)}")


@pytest.mark.browser
@pytest.mark.parametrize("harness", sorted(PAYLOADS))
def test_a_write_returns_at_once_and_the_failure_comes_back_at_stop_once(
    home: Path, harness: str
) -> None:
    project = home / "proj"
    page = project / "site" / "tank.html"
    shutil.copy(PAGES / "tank.html", page)
    assert hook(home, "UserPromptSubmit", prompt(harness, project))[0] == {}
    out, log = hook(home, "PostToolUse", PAYLOADS[harness](project, "site/tank.html"))
    # Nothing said at the write: the judging is a background run, claimed for this content.
    assert out == {}, log
    assert runs(home) + len(verdicts(home)) == 1
    out, log = hook(home, "Stop", stop(harness, project))
    assert out.get("decision") == "block", log
    reason = out["reason"]
    assert reason.startswith("【dshkit 交付门：机器实测未通过，请返工】")
    assert f"文件：{page}" in reason and "判定：blank-canvas-0" in reason
    # Stopping again (going on because of the block, or not): already delivered, no loop.
    again, log = hook(home, "Stop", stop(harness, project, active=harness != "dsh"))
    assert again == {} and verdicts(home) == [("tank.html", "blank-canvas-0")], log
    assert hook(home, "UserPromptSubmit", prompt(harness, project))[0] == {}
    # A new version that is still broken comes back again.
    page.write_text(page.read_text() + "<!-- v2 -->\n")
    hook(home, "PostToolUse", PAYLOADS[harness](project, "site/tank.html"))
    settled(home, 2)  # Stop's own wait was shown above: a loaded machine may outlast it
    third, _ = hook(home, "Stop", stop(harness, project))
    assert third.get("decision") == "block"
    assert len(verdicts(home)) == 2


@pytest.mark.browser
def test_a_good_deliverable_is_judged_and_stop_says_nothing(home: Path) -> None:
    project = home / "proj"
    shutil.copy(PAGES / "tank.fixed.html", project / "site" / "tank.html")
    hook(home, "UserPromptSubmit", prompt("claude", project))
    assert hook(home, "PostToolUse", claude_write(project, "site/tank.html"))[0] == {}
    assert settled(home, 1) == [("tank.html", "ok")]  # judged, not merely waited out
    out, log = hook(home, "Stop", stop("claude", project))
    assert out == {} and verdicts(home) == [("tank.html", "ok")], log


@pytest.mark.browser
@pytest.mark.parametrize("harness", sorted(PAYLOADS))
def test_files_written_by_shell_commands_are_found(home: Path, harness: str) -> None:
    project = home / "proj"
    before = project / "site" / "old.html"
    shutil.copy(PAGES / "tank.html", before)  # broken, but not written in this turn
    old = time.time() - 3600
    os.utime(before, (old, old))
    hook(home, "UserPromptSubmit", prompt(harness, project))
    (project / "node_modules").mkdir()
    for where, name in (("node_modules", "dep.html"), ("site", "report.htm")):  # `cat > …`
        shutil.copy(PAGES / "page-error.html", project / where / name)
        shutil.copy(PAGES / "sampled.js", project / where)  # the page's trigger script
    out, log = hook(home, "PostToolUse", command(harness, project, "python gen.py"))
    assert out == {}, log
    assert settled(home, 1) == [("report.htm", "page-error")]  # started by the command
    out, log = hook(home, "Stop", stop(harness, project))
    assert out.get("decision") == "block", log
    assert "report.htm" in out["reason"] and "判定：page-error" in out["reason"]
    assert "old.html" not in out["reason"] and "dep.html" not in out["reason"]
    assert verdicts(home) == [("report.htm", "page-error")]


@pytest.mark.browser
def test_a_failure_stop_could_not_deliver_comes_with_the_next_prompt(home: Path) -> None:
    project = home / "proj"
    shutil.copy(PAGES / "shader-assembly.html", project / "site" / "scene.html")
    hook(home, "UserPromptSubmit", prompt("codex", project))
    hook(home, "PostToolUse", codex_patch(project, "site/scene.html"))
    # Codex is already going on because of a Stop hook: no block, no wait.
    out, log = hook(home, "Stop", stop("codex", project, active=True))
    assert out == {}, log
    assert settled(home, 1) == [("scene.html", "fatal-overlay")]
    out, log = hook(home, "UserPromptSubmit", prompt("codex", project))
    text = context(out)
    assert text is not None and "判定：fatal-overlay" in text, log
    assert "[scene.vs] ERROR: 0:3: 'layout'" in text
    # Delivered: neither the next prompt nor Stop says it again.
    assert hook(home, "UserPromptSubmit", prompt("codex", project))[0] == {}
    assert hook(home, "Stop", stop("codex", project))[0] == {}


@pytest.mark.browser
def test_rework_switched_off_for_one_session_sends_nothing(home: Path) -> None:
    project = home / "proj"
    shutil.copy(PAGES / "tank.html", project / "site" / "tank.html")
    done = run_dshkit(
        "gate", "rework", "--session", "c1", "--harness", "claude", "off", "--json", home=home
    )
    assert '"rework":false' in done.stdout.replace(" ", "") and '"session"' in done.stdout
    hook(home, "UserPromptSubmit", prompt("claude", project))
    assert hook(home, "PostToolUse", claude_write(project, "site/tank.html"))[0] == {}
    assert hook(home, "Stop", stop("claude", project))[0] == {}
    assert verdicts(home) == [] and runs(home) == 0
    # Another session is not switched off; switched back on, this one gets it too.
    shutil.copy(PAGES / "tank.html", project / "site" / "other.html")
    hook(home, "UserPromptSubmit", prompt("dsh", project))
    hook(home, "PostToolUse", dsh_write(project, "site/other.html"))
    settled(home, 1)
    assert hook(home, "Stop", stop("dsh", project))[0].get("decision") == "block"
    run_dshkit("gate", "rework", "--session", "c1", "--harness", "claude", "on", home=home)
    hook(home, "UserPromptSubmit", prompt("claude", project))
    hook(home, "PostToolUse", claude_write(project, "site/tank.html"))
    settled(home, 2)
    assert hook(home, "Stop", stop("claude", project))[0].get("decision") == "block"


@pytest.mark.process
def test_rework_off_in_the_config_sends_nothing_and_runs_nothing(home: Path) -> None:
    (home / ".dsh" / "dshkit" / "config.toml").write_text("[gate]\nrework = false\n")
    project = home / "proj"
    shutil.copy(PAGES / "tank.html", project / "site" / "tank.html")
    for harness, payload in PAYLOADS.items():
        hook(home, "UserPromptSubmit", prompt(harness, project))
        out, log = hook(home, "PostToolUse", payload(project, "site/tank.html"))
        assert out == {} and "gate" not in log, harness
        assert hook(home, "Stop", stop(harness, project))[0] == {}
    assert verdicts(home) == [] and runs(home) == 0


def test_other_files_and_tools_are_left_alone(home: Path) -> None:
    project = home / "proj"
    (project / "site" / "main.py").write_text("print(1)\n")
    out, _ = hook(home, "PostToolUse", claude_write(project, "site/main.py"))
    assert out == {}
    shutil.copy(PAGES / "tank.html", project / "site" / "tank.html")
    read = claude_write(project, "site/tank.html") | {"tool_name": "Read"}
    out, _ = hook(home, "PostToolUse", read)
    assert out == {} and verdicts(home) == [] and runs(home) == 0


def test_written_deliverables_are_read_from_any_harness_input(tmp_path: Path) -> None:
    for name in ("a.html", "b.svg", "c.XHTML", "d.txt", "moved.htm"):
        (tmp_path / name).write_text("x")
    patch = (
        "*** Begin Patch\n*** Update File: a.html\n*** Add File: d.txt\n"
        "*** Update File: old.htm\n*** Move to: moved.htm\n*** Delete File: gone.html\n"
        "*** End Patch"
    )
    found = written_deliverables({"input": patch, "path": "b.svg"}, str(tmp_path))
    assert found == [tmp_path / "b.svg", tmp_path / "a.html", tmp_path / "moved.htm"]
    absolute = str(tmp_path / "c.XHTML")
    assert written_deliverables({"file_path": absolute}, None) == [tmp_path / "c.XHTML"]
    assert written_deliverables({"file_path": "a.html"}, None) == []  # relative to nothing
    assert written_deliverables({"file_path": "missing.html"}, str(tmp_path)) == []
    assert written_deliverables("not a dict", str(tmp_path)) == []
