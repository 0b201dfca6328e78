"""Rework on PostToolUse, as each harness calls the hook: a broken web deliverable written by
the agent comes back to it with the measured evidence, once per content version, and not at
all when `[gate] rework` is off."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dshkit.gate.rework import written_deliverables
from dshkit.store import Store

from ..support.hooks import claude, codex, dsh, hook
from ..support.paths import PAGES


@pytest.fixture
def home(tmp_path: Path) -> Path:
    state = tmp_path / ".dsh" / "dshkit"
    state.mkdir(parents=True)
    (state / "config.toml").write_text("[gate]\nhook_budget_s = 2.0\n")
    (tmp_path / "proj" / "site").mkdir(parents=True)
    return tmp_path


def claude_write(project: Path, name: str) -> dict[str, Any]:
    return claude(
        "c1",
        cwd=str(project),
        hook_event_name="PostToolUse",
        tool_name="Write",
        tool_input={"file_path": str(project / name), "content": "…"},
        tool_response={"type": "create"},
    )


def dsh_write(project: Path, name: str) -> dict[str, Any]:
    return dsh(
        "d1",
        cwd=str(project),
        hook_event_name="PostToolUse",
        tool_name="write",
        tool_input={"path": name, "content": "…"},
    )


def codex_patch(project: Path, name: str) -> dict[str, Any]:
    patch = f"*** Begin Patch\n*** Update File: {name}\n@@\n-a\n+b\n*** End Patch"
    return codex("x1") | {
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch",
        "tool_input": {"command": ["apply_patch", patch]},
    }


PAYLOADS: dict[str, Callable[[Path, str], dict[str, Any]]] = {
    "claude": claude_write,
    "dsh": dsh_write,
    "codex": codex_patch,
}


def verdicts(home: Path) -> list[tuple[str, str]]:
    with Store(home / ".dsh" / "dshkit") as store:
        rows = store.db.execute("SELECT path, verdict FROM gate_verdicts ORDER BY id").fetchall()
    return [(Path(row[0]).name, row[1]) for row in rows]


@pytest.mark.browser
@pytest.mark.parametrize("harness", sorted(PAYLOADS))
def test_a_broken_deliverable_comes_back_once_per_content_version(home: Path, harness: str) -> None:
    project = home / "proj"
    page = project / "site" / "tank.html"
    shutil.copy(PAGES / "tank.html", page)
    payload = PAYLOADS[harness](project, "site/tank.html")
    out, log = hook(home, "PostToolUse", payload)
    assert out.get("decision") == "block", log
    reason = out["reason"]
    assert reason.startswith("【dshkit 交付门：机器实测未通过，请返工】")
    assert f"文件：{page}" in reason and "判定：blank-canvas-0" in reason
    assert "后备缓冲 0×0，CSS 1280×720" in reason
    # The same content again: already sent back, not judged again.
    again, log = hook(home, "PostToolUse", payload)
    assert again == {} and verdicts(home) == [("tank.html", "blank-canvas-0")], log
    # A new version that is still broken is sent back again.
    page.write_text(page.read_text() + "<!-- v2 -->\n")
    third, _ = hook(home, "PostToolUse", payload)
    assert third.get("decision") == "block"
    assert len(verdicts(home)) == 2


@pytest.mark.browser
def test_a_good_deliverable_is_judged_and_not_sent_back(home: Path) -> None:
    project = home / "proj"
    shutil.copy(PAGES / "tank.fixed.html", project / "site" / "tank.html")
    out, log = hook(home, "PostToolUse", claude_write(project, "site/tank.html"))
    assert out == {} and verdicts(home) == [("tank.html", "ok")], log


@pytest.mark.browser
def test_the_overlay_and_errors_reach_the_agent(home: Path) -> None:
    project = home / "proj"
    shutil.copy(PAGES / "shader-assembly.html", project / "site" / "scene.html")
    shutil.copy(PAGES / "page-error.html", project / "site" / "report.htm")
    patch = (
        "*** Begin Patch\n*** Add File: site/scene.html\n+…\n"
        "*** Add File: site/report.htm\n+…\n*** Add File: site/notes.md\n+…\n*** End Patch"
    )
    payload = codex_patch(project, "unused") | {"tool_input": {"command": ["apply_patch", patch]}}
    out, log = hook(home, "PostToolUse", payload)
    assert "reason" in out, log
    reason = out["reason"]
    assert "判定：fatal-overlay" in reason and "[scene.vs] ERROR: 0:3: 'layout'" in reason
    assert "判定：page-error" in reason and "Cannot read properties of undefined" in reason
    assert verdicts(home) == [("scene.html", "fatal-overlay"), ("report.htm", "page-error")]


def test_rework_off_sends_nothing_and_runs_nothing(home: Path) -> None:
    (home / ".dsh" / "dshkit" / "config.toml").write_text("[gate]\nrework = false\n")
    project = home / "proj"
    shutil.copy(PAGES / "tank.html", project / "site" / "tank.html")
    for harness, payload in PAYLOADS.items():
        out, log = hook(home, "PostToolUse", payload(project, "site/tank.html"))
        assert out == {} and "gate" not in log, harness
    assert verdicts(home) == []


def test_other_files_and_tools_are_left_alone(home: Path) -> None:
    project = home / "proj"
    (project / "site" / "main.py").write_text("print(1)\n")
    out, _ = hook(home, "PostToolUse", claude_write(project, "site/main.py"))
    assert out == {}
    shutil.copy(PAGES / "tank.html", project / "site" / "tank.html")
    read = claude_write(project, "site/tank.html") | {"tool_name": "Read"}
    out, _ = hook(home, "PostToolUse", read)
    assert out == {} and verdicts(home) == []


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
