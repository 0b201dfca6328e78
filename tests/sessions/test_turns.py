"""One turn numbering (`events.TurnCounter`), the same for every user: `events.turns`, the
console's session view, the streaming signal counter and graft's watermark digest."""

from __future__ import annotations

from pathlib import Path

import orjson

from dshkit.graft.watermark import Digest
from dshkit.profile.signals import SignalConfig, session_signals
from dshkit.sessions import Catalog, Scanner, SessionKey, Source
from dshkit.sessions.browse import Window, session_view
from dshkit.sessions.events import Event, TurnCounter, turn_ordinals, turns

from ..support.logs import dsh, event, human, session_dir, write_log
from ..support.paths import CLAUDE, CODEX, DSH_PLAIN, DSH_ZSTD, GEMINI

# Every rule made to fire wherever it can, so that hits report turns all over a session: any
# last assistant text is a "delegate run", every failure a repeat, every timed command long.
EVERYWHERE = SignalConfig(delegate_patterns=(r"[\s\S]",), repeat_fail_min=1, long_tool_ms=0)
# The event each signal's hit reports the turn of, by the hit's key for its seq.
AT = {
    "delegateRuns": "seq",  # the turn's last assistant message
    "longTools": "callSeq",
    "humanWaitTools": "callSeq",
    "concurrentSkipped": "callSeq",
    "repeatFailures": "resultSeq",  # the failure that completed the streak
    "freeformAnswers": "askSeq",
    "unpairedToolResults": "seq",
}


def numbering(events: list[Event]) -> list[tuple[int, int]]:
    """(ordinal, number) at each event, as `events.turns` groups them."""
    return [(turn.ordinal, turn.number) for turn in turns(events) for _ in turn.events]


def _all_failed(events: list[Event]) -> list[Event]:
    return [
        {**e, "data": {**(e.get("data") or {}), "error": {"code": "E"}}}
        if e.get("type") == "tool/result"
        else e
        for e in events
    ]


def check_session(catalog: Catalog, key: SessionKey) -> int:
    """Assert that the four users number the session's turns alike; how many numbers the
    signals and the session view reported (each checked)."""
    events = catalog.events(key)
    expected = numbering(events)
    assert turn_ordinals(events) == [ordinal for ordinal, _ in expected]
    seqs = [e.get("seq") for e in events]
    assert len(set(seqs)) == len(seqs)  # a seq names one event here
    number_at = {seq: number for seq, (_, number) in zip(seqs, expected, strict=True)}

    # The stream, one event at a time; the digest folded event by event, kept as JSON between.
    counter, digest = TurnCounter(), Digest()
    for item, (ordinal, number) in zip(events, expected, strict=True):
        counter.add(item)
        digest = Digest.from_json(orjson.loads(orjson.dumps(digest.as_json())))
        digest.extend([item])
        assert (counter.ordinal, counter.number) == (ordinal, number)
        assert (digest.ordinal, digest.turns.number) == (ordinal, number)
    assert Digest.of(events) == digest

    # The session view: each human message and tool call with its turn.
    view = session_view(catalog.store, key, Window(limit=500))
    shown = [*view["humanMessages"]["items"], *view["toolCalls"]["items"]]
    assert all(item["turn"] == number_at[item["seq"]] for item in shown)
    assert view["turns"] == max((number for _, number in expected), default=0)

    # Signal hits: at the message, the call or the result each is about.
    hits = session_signals(_all_failed(catalog.events(key)), EVERYWHERE, "s").hits
    reported = [(name, hit) for name, found in hits.items() for hit in found]
    for name, hit in reported:
        assert hit["turn"] == number_at[hit[AT[name]]], (name, hit)
    return len(reported) + len(shown)


def test_the_four_number_the_real_sessions_alike(scanner: Scanner) -> None:
    sources = [Source("dsh", DSH_ZSTD), Source("dsh", DSH_PLAIN), Source("claude", CLAUDE)]
    assert scanner.scan([*sources, Source("codex", CODEX), Source("gemini", GEMINI)]).errors == []
    catalog = scanner.catalog
    checked = {info.harness: 0 for info in catalog.recent(None, limit=None)}
    for info in catalog.recent(None, limit=None):
        checked[info.harness] += check_session(catalog, info.key)
    assert set(checked) == {"dsh", "claude", "codex", "gemini"} and all(checked.values()), checked


def test_the_four_number_a_resumed_session_with_unnumbered_turns_alike(
    tmp_path: Path, scanner: Scanner
) -> None:
    # Events before any turn, a turn without a number (its ordinal), a resumed session's turn 7,
    # and an unnumbered turn after it (its ordinal again, 3: not 8).
    log = [
        human(0, "before any turn"),
        event("turn/start", 1, {}),
        human(2, "first"),
        event("assistant/message", 3, {"turn": 1, "step": 1, "message": _said("在看")}),
        event("turn/start", 4, {"turn": 7}),
        human(5, "resumed"),
        event("tool/call", 6, {"callId": "c1", "name": "bash", "arguments": "{}"}),
        event("tool/result", 7, {"message": {"source": {"callId": "c1"}, "content": []}}),
        event("turn/start", 8, {"turn": "eight"}),
        human(9, "last"),
        event("assistant/message", 10, {"message": _said("好了")}),
    ]
    write_log(session_dir(tmp_path, "s-t") / "session.v4.jsonl.zstd", [log], session_id="s-t")
    assert scanner.scan(dsh(tmp_path)).errors == []
    assert [number for _, number in numbering(scanner.catalog.events(("dsh", "s-t")))] == [
        *[0, 1, 1, 1],
        *[7, 7, 7, 7],
        *[3, 3, 3],
    ]
    assert check_session(scanner.catalog, ("dsh", "s-t")) >= 6


def _said(text: str) -> dict[str, object]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}
