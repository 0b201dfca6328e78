"""`dshkit sessions show` keeps a log's problems in view and says what it does not know."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ..support.cli import invoke


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # tables unwrapped, so lines can be asserted whole


def test_garbage_lines_stay_visible_after_the_scan_that_met_them(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    transcript = root / "-home-dev-p" / "garbage.jsonl"
    transcript.parent.mkdir(parents=True)
    typed = {"type": "user", "message": {"role": "user", "content": "hello"}, "cwd": "/w"}
    transcript.write_bytes(b"not json at all\n" + orjson.dumps(typed) + b"\n{broken\n")
    first = invoke("scan", "--root", str(root), "--harness", "claude", "--json", home=tmp_path)
    assert len(orjson.loads(first.stdout)["errors"]) == 2
    invoke("scan", "--root", str(root), "--harness", "claude", home=tmp_path)  # nothing new
    shown = orjson.loads(invoke("sessions", "show", "garbage", "--json", home=tmp_path).stdout)
    (log,) = shown["logFiles"]
    assert log["badLines"] == 2 and "invalid JSON" in log["lastProblem"]
    assert shown["contextWindow"] is None
    text = invoke("sessions", "show", "garbage", home=tmp_path).stdout
    assert "2 unreadable lines skipped" in text
    assert "not reported by the log" in text and "None" not in text


def test_rich_markup_in_a_title_is_shown_as_typed(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    transcript = root / "-home-dev-p" / "markup.jsonl"
    transcript.parent.mkdir(parents=True)
    typed = {"type": "user", "message": {"role": "user", "content": "fix [llm] and [bold]x[/]"}}
    transcript.write_bytes(orjson.dumps(typed) + b"\n")
    invoke("scan", "--root", str(root), "--harness", "claude", home=tmp_path)
    assert "fix [llm] and [bold]x[/]" in invoke("sessions", "list", home=tmp_path).stdout
    assert "fix [llm] and [bold]x[/]" in invoke("sessions", "show", "markup", home=tmp_path).stdout
