"""`dshkit sessions show` keeps a log's problems in view and says what it does not know; the
service behind the session commands refuses bad input by name before it opens anything."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from dshkit.errors import Busy, Invalid
from dshkit.sessions import SessionNotFound, SessionsService, Source
from dshkit.store import SCAN_LEASE, Store

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


def test_the_service_opens_nothing_until_asked_and_names_what_is_wrong(tmp_path: Path) -> None:
    state = tmp_path / "state"
    service = SessionsService(state, sources=[])
    refusals: list[tuple[Callable[[], object], str]] = [
        (lambda: service.recent("vim"), "harness"),
        (lambda: service.recent(None, 0), "limit"),
        (lambda: service.window("x", limit=0), "limit"),
        (lambda: service.window("x", offset=-1), "offset"),
        (lambda: service.quote(" "), "text"),
        (lambda: service.quote("x" * 501), "text"),
        (lambda: service.scan(frame_budget=0), "frame_budget"),
    ]
    for call, field in refusals:
        with pytest.raises(Invalid) as refused:
            call()
        assert refused.value.field == field
    assert not state.exists()  # neither making it nor refusing input touched the state
    with pytest.raises(SessionNotFound) as missing:
        service.show("nope")
    assert missing.value.field == "session"


def test_forget_through_the_service_waits_for_a_scan_then_says_busy(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    transcript = root / "-home-dev-p" / "busy-one.jsonl"
    transcript.parent.mkdir(parents=True)
    typed = {"type": "user", "message": {"role": "user", "content": "hello"}}
    transcript.write_bytes(orjson.dumps(typed) + b"\n")
    service = SessionsService(tmp_path / "state", sources=[Source("claude", root)])
    assert service.scan().sessions == 1
    with (
        Store(tmp_path / "state") as store,
        store.lease(SCAN_LEASE, wait=0),
        pytest.raises(Busy),
    ):
        service.forget("busy", wait=0.2)
    assert service.forget("busy").as_json() == {
        "forgotten": {"harness": "claude", "id": "busy-one"}
    }
    assert service.recent() == [] and service.scan().files == 0  # later scans skip it
