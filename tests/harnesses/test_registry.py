"""The harness registry: one object per harness, and nobody else deciding by a harness's name."""

from __future__ import annotations

import re
from pathlib import Path

import click
import orjson
import pytest

from dshkit import harnesses
from dshkit.cli import errors as cli_errors
from dshkit.errors import Invalid
from dshkit.gate import GateService
from dshkit.sessions import Scanner, Source
from dshkit.web.routing import error_response

from ..support.paths import CLAUDE, CODEX, DSH_ZSTD, REPO


def test_each_harness_has_every_seam() -> None:
    assert harnesses.NAMES == ("dsh", "claude", "codex")
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
    said = "unknown harness 'cursor' (known: dsh, claude, codex)"
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
    roots = {h.name: h.sessions_root() for h in harnesses.all_harnesses()}
    assert roots == {
        "dsh": str(tmp_path / "d" / "sessions"),
        "claude": str(tmp_path / "c" / "projects"),
        "codex": str(tmp_path / "x" / "sessions"),
    }


@pytest.mark.parametrize(
    ("name", "root"), [("dsh", DSH_ZSTD), ("claude", CLAUDE), ("codex", CODEX)]
)
def test_log_name_pattern_matches_what_the_adapter_discovers(name: str, root: Path) -> None:
    harness = harnesses.get(name)
    found = list(harness.adapter.discover(str(root)))
    assert found
    for log in found:
        assert harness.log_name.match(Path(log.path).name), log.path


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
    assert start.cwd == "/work/p" and "-p" in start.argv and "继续" in start.argv
    resumed = claude.resume("/work/p", "sid-1", "next")
    assert resumed is not None and "--resume" in resumed.argv and "sid-1" in resumed.argv
    codex = harnesses.get("codex").launcher
    assert codex.start("/w", "go").argv[:2] == ["codex", "exec"]
    assert harnesses.get("dsh").launcher.resume("/w", "s", "m") is None  # no headless resume
    assert claude.start("/w", "m", env={"CLAUDE_BIN": "/opt/claude"}).argv[0] == "/opt/claude"


def test_sessions_by_registry_roots(tmp_path: Path) -> None:
    from dshkit.store import Store

    with Store(tmp_path / "state") as store:
        report = Scanner(store).scan(
            [
                Source(h.name, root)
                for h, root in zip(
                    harnesses.all_harnesses(), (DSH_ZSTD, CLAUDE, CODEX), strict=True
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
