"""The hot path's plain-file hints (graft.marker): the room hint a check leaves, where its
bytes are counted from, what voids it, and the raw-payload reading that skips a call
before any JSON parser is imported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import harnesses
from dshkit.graft import marker
from dshkit.graft.settings import GraftSettings
from dshkit.graft.watermark import Digest, band_tokens, next_turn, usage_ceiling
from dshkit.store import Store

from ..support.corpus import encode_frame

SETTINGS = GraftSettings()  # dynamic, a 200,000-token window


def stored(store: Store, session: str, context: int | None) -> None:
    """The watch row a check leaves: a digest at `context` tokens."""
    digest = Digest(count=3, context=context)
    store.db.execute(
        "INSERT INTO graft_watch (harness, session_id, digest, state, updated_at) "
        "VALUES ('claude', ?, ?, '{}', 0) ON CONFLICT (harness, session_id) "
        "DO UPDATE SET digest = excluded.digest",
        (session, orjson.dumps(digest.as_json()).decode()),
    )


def room(tmp_path: Path, store: Store, transcript: Path, context: int) -> marker.Room | None:
    stored(store, "s", context)
    size = transcript.stat().st_size
    return marker.remember(store, str(tmp_path), "claude", "s", str(transcript), size)


def test_the_room_is_counted_from_the_line_of_the_latest_usage(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(b"x" * 1_000)
    free = band_tokens(Digest(context=0), SETTINGS)
    with Store(tmp_path / "db") as store:
        first = room(tmp_path, store, transcript, 20_000)
        assert first is not None and (first.low, first.limit) == (0, free - 20_000)
        with open(transcript, "ab") as handle:
            handle.write(b"y" * 500)
        same = room(tmp_path, store, transcript, 20_000)  # no new usage: the same line
        assert same is not None and (same.low, same.size) == (0, 1_500)
        with open(transcript, "ab") as handle:
            handle.write(b"z" * 500)
        newer = room(tmp_path, store, transcript, 21_000)  # a usage logged after 1,500 bytes
        assert newer is not None and newer.low == 1_500
        assert newer.limit == 1_500 + free - 21_000
    state = str(tmp_path)
    assert marker.quiet(state, str(transcript), 2_000, {})
    with open(transcript, "ab") as handle:  # grown to the limit, by a line no harness logs
        handle.write(b"z" * (newer.limit - 2_001) + b"\n")
    assert not marker.quiet(state, str(transcript), newer.limit, {})
    assert not marker.quiet(state, str(transcript), 1_000, {})  # smaller than checked: rewritten
    assert not marker.quiet(state, str(transcript), 2_000, {"todos": []})
    assert not marker.quiet(state, str(transcript), 2_000, {"plan": []})
    assert not marker.quiet(state, str(tmp_path / "other.jsonl"), 2_000, {})


def test_no_room_no_usage_or_a_compressed_log_leaves_no_hint(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(b"x" * 100)
    state = str(tmp_path)
    with Store(tmp_path / "db") as store:
        assert room(tmp_path, store, transcript, 20_000) is not None
        assert room(tmp_path, store, transcript, 200_000) is None  # in the band: no room
        assert not marker.quiet(state, str(transcript), 100, {})  # the old hint is gone
        stored(store, "s", None)
        assert marker.remember(store, state, "claude", "s", str(transcript), 100) is None
        zstd = tmp_path / "session.v4.jsonl.zstd"
        zstd.write_bytes(encode_frame([{"type": "turn/start", "seq": 0, "data": {"turn": 1}}]))
        stored(store, "s", 20_000)
        assert marker.remember(store, state, "claude", "s", str(zstd), 10) is None
    assert not marker.quiet(state, str(zstd), 10, {})


def test_a_changed_configuration_voids_the_hint(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(b"x" * 100)
    with Store(tmp_path / "db") as store:
        assert room(tmp_path, store, transcript, 20_000) is not None
    assert marker.quiet(str(tmp_path), str(transcript), 100, {})
    (tmp_path / "config.toml").write_text("[graft]\nwindow_tokens = 30000\n")
    assert not marker.quiet(str(tmp_path), str(transcript), 100, {})


def test_the_raw_payload_is_read_plainly_or_not_at_all(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(b"x" * 100)
    with Store(tmp_path / "db") as store:
        assert room(tmp_path, store, transcript, 20_000) is not None
    state, path = str(tmp_path), str(transcript).encode()
    plain = b'{"session_id":"s", "transcript_path" : "' + path + b'","tool_name":"Read"}'
    assert marker.quiet_payload(state, plain)
    todo = plain[:-1] + b',"tool_input":{"todos":[]}}'
    assert not marker.quiet_payload(state, todo)
    escaped = b'{"transcript_path":"' + path.replace(b"/", b"\\/") + b'"}'
    assert not marker.quiet_payload(state, escaped)  # the parsed check decides
    twice = plain[:-1] + b',"x":{"transcript_path":"/elsewhere"}}'
    assert not marker.quiet_payload(state, twice)
    assert not marker.quiet_payload(state, b"not json")
    assert not marker.quiet_payload(state, b'{"transcript_path":"' + path + b"")  # unclosed


def test_the_hint_is_private_and_names_no_session(tmp_path: Path) -> None:
    transcript = tmp_path / "projects" / "-home-dev-secret" / "session-1234.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(b"x" * 100)
    with Store(tmp_path / "db") as store:
        assert room(tmp_path, store, transcript, 20_000) is not None
    [hint] = (tmp_path / marker.ROOM_DIR).iterdir()
    assert hint.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / marker.ROOM_DIR).stat().st_mode & 0o777 == 0o700
    assert b"secret" not in hint.read_bytes() and b"1234" not in hint.read_bytes()
    marker.forget(str(tmp_path), str(transcript))
    assert not hint.exists()


# -- near the band: the usage ceiling -----------------------------------------------------------


def request(tokens: int, model: str = "claude-x", tool: str = "Read", **given: object) -> bytes:
    """One model request as Claude Code logs it."""
    use = {"type": "tool_use", "id": "t", "name": tool, "input": given or {"file_path": "a"}}
    message = {"model": model, "content": [use], "usage": {"input_tokens": tokens}}
    return orjson.dumps({"type": "assistant", "message": message, "requestId": "r"}) + b"\n"


RESULT = orjson.dumps(
    {"type": "user", "message": {"content": [{"type": "tool_result", "content": "ok"}]}}
)


def near(tmp_path: Path, *logged: bytes, forced_at: int | None = None) -> bool:
    """Whether a call is skipped after a check that saw 80,000 tokens on `claude-x` (in a
    200,000 window: no room in bytes, a ceiling at the warning's 140,000) and then `logged`."""
    transcript = tmp_path / "near.jsonl"
    transcript.write_bytes(request(80_000) + RESULT + b"\n")
    digest = Digest(count=2, context=80_000, model="claude-x", levels=[[0, 80_000]])
    with Store(tmp_path / "db") as store:
        store.db.execute(
            "INSERT OR REPLACE INTO graft_watch "
            "(harness, session_id, digest, state, forced_at, updated_at) "
            "VALUES ('claude', 's', ?, '{}', ?, 0)",
            (orjson.dumps(digest.as_json()).decode(), forced_at),
        )
        size = transcript.stat().st_size
        marker.remember(store, str(tmp_path), "claude", "s", str(transcript), size)
    with open(transcript, "ab") as handle:
        handle.write(b"".join(logged))
    return marker.quiet(str(tmp_path), str(transcript), transcript.stat().st_size, {})


def test_requests_below_the_ceiling_and_their_results_are_skipped(tmp_path: Path) -> None:
    assert near(tmp_path)
    assert near(tmp_path, request(90_000), RESULT + b"\n", request(139_999), RESULT + b"\n")
    assert near(tmp_path, request(100_000, model="<synthetic>"))  # names no model
    assert near(tmp_path, request(100_000), b'{"type": "assistant", "mess')  # cut short: later
    assert not near(tmp_path, request(140_000))  # at the warning line
    assert not near(tmp_path, request(90_000), request(150_000), request(90_000))


PROMPT = orjson.dumps({"type": "user", "message": {"content": "再看看"}}) + b"\n"


def test_messages_before_any_request_are_skipped_below_both_ceilings(tmp_path: Path) -> None:
    # The next turn's ceiling: its first request's rise over this turn's level is the growth
    # a dynamic cut allows for, so its lines sit below this turn's warning (140,000).
    digest = Digest(count=2, context=80_000, model="claude-x", levels=[[0, 80_000]])
    turned = usage_ceiling(next_turn(digest), SETTINGS)
    assert turned is not None and turned < usage_ceiling(digest, SETTINGS) == 140_000  # type: ignore[operator]
    reminder = {"type": "user", "message": {"content": [{"type": "text", "text": "x"}]}}
    hook = {"type": "attachment", "attachment": {"type": "hook_additional_context"}}
    for line in (PROMPT, orjson.dumps(reminder) + b"\n", orjson.dumps(hook) + b"\n"):
        assert near(tmp_path, line)
        assert near(tmp_path, line, request(turned - 1), RESULT + b"\n", request(turned - 1))
        assert not near(tmp_path, line, request(turned))  # below this turn's, not the next's
    assert near(tmp_path, PROMPT, PROMPT, request(turned - 1))  # more turns: the same lines
    # Requests of this turn before it, no lower than the check's context: the two rises the
    # next turn's growth is made of add up to the same while the levels keep rising.
    assert near(tmp_path, request(90_000), RESULT + b"\n", PROMPT, request(turned - 1))
    assert not near(tmp_path, request(79_999), PROMPT)  # below the check's level
    assert not near(tmp_path, request(90_000), PROMPT, request(89_999))  # the next one lower
    # A message after a request of the turn it began: not the turn the ceiling was found for.
    assert not near(tmp_path, PROMPT, request(90_000), PROMPT)


def test_a_prompt_turns_the_hint_to_its_ceilings(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(request(20_000) + RESULT + b"\n")
    with Store(tmp_path / "db") as store:
        assert room(tmp_path, store, transcript, 20_000) is not None
    with open(transcript, "ab") as handle:
        handle.write(b"z" * 10 + b"\n")  # a line no harness logs, within the bytes
    state, size = str(tmp_path), transcript.stat().st_size
    assert marker.quiet(state, str(transcript), size, {})
    marker.turn(state, str(transcript))
    assert not marker.quiet(state, str(transcript), size, {})  # the bytes no longer hold
    marker.forget(state, str(transcript))
    assert not list((tmp_path / marker.ROOM_DIR).iterdir())  # the turned one too


def test_a_new_turn_already_told_at_its_context_keeps_no_next_ceiling(tmp_path: Path) -> None:
    # Fixed lines (70% / 75%), warned and escalated in this turn: only the cut counts in it,
    # but a new turn at 72% is told again at once.
    (tmp_path / "config.toml").write_text('[graft]\nmode = "fixed"\nwindow_tokens = 100000\n')
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(request(72_000) + RESULT + b"\n")
    digest = Digest(count=2, context=72_000, model="claude-x", levels=[[0, 72_000]])
    state = {"nudgeTurn": 0, "nudgeAt": 1, "escalated": True}
    with Store(tmp_path / "db") as store:
        store.db.execute(
            "INSERT INTO graft_watch (harness, session_id, digest, state, updated_at) "
            "VALUES ('claude', 's', ?, ?, 0)",
            (orjson.dumps(digest.as_json()).decode(), orjson.dumps(state).decode()),
        )
        size = transcript.stat().st_size
        kept = marker.remember(store, str(tmp_path), "claude", "s", str(transcript), size)
    assert kept is not None and (kept.ceiling, kept.turned) == (75_000, 0)
    with open(transcript, "ab") as handle:
        handle.write(request(73_000) + RESULT + b"\n")
    assert marker.quiet(str(tmp_path), str(transcript), transcript.stat().st_size, {})
    with open(transcript, "ab") as handle:
        handle.write(PROMPT)
    assert not marker.quiet(str(tmp_path), str(transcript), transcript.stat().st_size, {})


def test_anything_else_logged_means_a_full_check(tmp_path: Path) -> None:
    summary, odd_type = {"type": "summary", "summary": "s"}, {"type": ["assistant"]}
    lines: list[Any] = [summary, odd_type, [], "x"]
    for line in lines:
        assert not near(tmp_path, orjson.dumps(line) + b"\n"), line
    assert not near(tmp_path, request(90_000, model="claude-y"))  # another model's window
    todos = {"todos": [{"content": "a", "status": "pending"}]}
    assert not near(tmp_path, request(90_000, "claude-x", "TodoWrite", **todos))
    assert not near(tmp_path, b"not json\n")
    odd = request(90_000).replace(b'"input_tokens":90000', b'"input_tokens":9e4')
    assert not near(tmp_path, odd)  # a count that is not a plain integer
    assert not near(tmp_path, RESULT + b"\n" * (marker.SCAN_LIMIT + 1))  # too much to read
    assert not near(tmp_path, forced_at=1)  # a cut was started: its failure must be told


def test_in_the_band_no_ceiling_is_kept(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(request(150_000))
    with Store(tmp_path / "db") as store:
        assert room(tmp_path, store, transcript, 150_000) is None
    assert not marker.quiet(str(tmp_path), str(transcript), transcript.stat().st_size, {})


def test_lines_the_reader_leaves_out_are_skipped_as_it_leaves_them(tmp_path: Path) -> None:
    lines = harnesses.get("claude").quiet_lines
    assert lines is not None
    noted = {"type": "attachment", "attachment": {"type": "todo_reminder", "content": []}}
    silent = [{"type": kind, "subtype": "x"} for kind in sorted(lines.silent)] + [noted]
    adapter = harnesses.get("claude").adapter
    assert adapter.normalize(silent, {}) == []  # no event: nothing the watermark reads
    assert near(tmp_path, *(orjson.dumps(line) + b"\n" for line in silent), request(90_000))


def test_a_line_too_deep_to_scan_means_a_full_check(tmp_path: Path) -> None:
    deep = b'{"type": "user", "message": {"content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}\n"
    assert not near(tmp_path, deep)


def test_the_lines_skipped_are_the_registrys_and_only_claude_code_describes_its_own() -> None:
    assert harnesses.quiet_lines() == (harnesses.get("claude").quiet_lines,)
    assert harnesses.get("codex").quiet_lines is None and harnesses.get("dsh").quiet_lines is None


def test_a_log_with_no_request_yet_is_quiet_where_no_handoff_began(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    prompt = {"type": "user", "message": {"content": "开始"}}
    noted = {"type": "attachment", "attachment": {"type": "todo_reminder", "content": []}}
    transcript.write_bytes(orjson.dumps(prompt) + b"\n" + orjson.dumps(noted) + b"\n")
    state, size = str(tmp_path), transcript.stat().st_size
    assert marker.quiet(state, str(transcript), size, {})  # no hint: nothing to measure
    assert not marker.quiet(state, str(transcript), 10, {})  # nothing whole yet
    with open(transcript, "ab") as handle:
        handle.write(request(1_000))  # a first request: its usage may be anything
    assert not marker.quiet(state, str(transcript), transcript.stat().st_size, {})
    assert marker.quiet(state, str(transcript), size, {})
    marker.mark(state)  # a handoff began here: a forced cut's failure may be owed
    assert not marker.quiet(state, str(transcript), size, {})
    zstd = tmp_path / "session.v4.jsonl.zstd"
    zstd.write_bytes(encode_frame([{"type": "turn/start", "seq": 0, "data": {"turn": 1}}]))
    assert not marker.quiet(str(tmp_path / "other"), str(zstd), zstd.stat().st_size, {})


def test_a_calls_line_is_looked_for_once_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The raw quiet check and the full check of one PostToolUse both ask; the log is read (or
    # waited on) once, and the next call looks again.
    looks: list[bytes] = []

    def look(transcript: str, needle: bytes, wait_s: float) -> bool:
        looks.append(needle)
        return False

    monkeypatch.setattr(marker, "_wait_for_line", look)
    log = str(tmp_path / "s.jsonl")
    first = {"tool_use_id": "toolu_1"}.get
    assert not marker.caught_up(log, first) and not marker.caught_up(log, first)
    assert not marker.caught_up(log, {"tool_use_id": "toolu_2"}.get)
    assert looks == [b'"toolu_1"', b'"toolu_2"']
