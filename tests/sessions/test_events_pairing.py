"""One pairing of tool calls with their results (`events.Pairer`), the same for every user:
the event helpers and the console's session view, the streaming signal counter, read-back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dshkit.graft.readback import read_result, search_history
from dshkit.profile.signals import SignalConfig, session_signals
from dshkit.sessions import Scanner, Source
from dshkit.sessions.browse import Window, session_view
from dshkit.sessions.events import Event, Pairer, pair_tool_calls

from ..support.logs import dsh, event, human, session_dir, write_log
from ..support.paths import CLAUDE, CODEX, DSH_PLAIN, DSH_ZSTD

SESSION = "s-repeat"


def call(seq: int, call_id: str, name: str) -> Event:
    return event(
        "tool/call", seq, {"turn": 1, "step": 1, "callId": call_id, "name": name, "arguments": "{}"}
    )


def failed(seq: int, call_id: str, text: str) -> Event:
    """A failed result: every paired one is a repeatFailures hit at `repeat_fail_min=1`."""
    message = {
        "role": "tool",
        "content": [{"type": "text", "text": text}],
        "source": {"callId": call_id},
    }
    return event(
        "tool/result", seq, {"turn": 1, "step": 1, "message": message, "error": {"code": "E"}}
    )


# Call ids that repeat. A result pairs with the most recent open call of its id: `bash`,
# superseded by `grep` before any result came, is left without one, and the second `x` result
# after `grep`'s is unpaired; `write_file`, opened later under the same id, takes only the
# result after it (a map of ids over the whole log gave every `x` result to it).
EVENTS = [
    event("turn/start", 0, {"turn": 1}),
    human(1, "go"),
    call(2, "x", "read_file"),
    failed(3, "x", "read failed"),
    call(4, "x", "bash"),
    call(5, "x", "grep"),
    failed(6, "x", "grep failed"),
    failed(7, "x", "a second answer"),
    failed(8, "y", "answers no call"),
    call(9, "x", "write_file"),
    failed(10, "x", "write failed"),
]
# Result seq → the tool it answers (None: unpaired).
PAIRED = {3: "read_file", 6: "grep", 7: None, 8: None, 10: "write_file"}


def test_pair_tool_calls_pairs_a_repeated_id_with_its_latest_open_call() -> None:
    pairing = pair_tool_calls(EVENTS)
    assert [(c.call["seq"], c.name, c.result and c.result["seq"]) for c in pairing.calls] == [
        (2, "read_file", 3),
        (4, "bash", None),  # superseded while open
        (5, "grep", 6),
        (9, "write_file", 10),
    ]
    assert [(index, result["seq"]) for index, result in pairing.unpaired_results] == [
        (7, 7),
        (8, 8),
    ]


def test_the_pairer_fed_one_event_at_a_time_pairs_as_the_whole_log_does() -> None:
    pairer: Pairer[int] = Pairer()
    paired: dict[int, int | None] = {}
    for item in EVENTS:
        if item["type"] == "tool/call":
            pairer.call(item, item["seq"])
        elif item["type"] == "tool/result":
            paired[item["seq"]] = pairer.result(item)
    assert paired == {3: 2, 6: 5, 7: None, 8: None, 10: 9}
    # A result without any call id answers nothing, not even a call whose id is empty.
    pairer.call(call(11, "", "odd"), 11)
    assert pairer.result({"type": "tool/result", "data": {"message": {}}}) is None


def _from_pairing(events: list[Event]) -> dict[int, str | None]:
    pairing = pair_tool_calls(events)
    found: dict[int, str | None] = {result["seq"]: None for _, result in pairing.unpaired_results}
    found.update({c.result["seq"]: c.name for c in pairing.calls if c.result is not None})
    return found


def _from_signals(events: list[Event]) -> dict[int, str | None]:
    hits = session_signals(events, SignalConfig(repeat_fail_min=1), "dsh:s").hits
    found: dict[int, str | None] = {hit["seq"]: None for hit in hits["unpairedToolResults"]}
    found.update({hit["resultSeq"]: hit["tool"] for hit in hits["repeatFailures"]})
    return found


def test_every_user_of_the_pairing_agrees_where_call_ids_repeat(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "sessions"
    write_log(session_dir(root, SESSION) / "session.v4.jsonl.zstd", [EVENTS], session_id=SESSION)
    assert scanner.scan(dsh(root)).errors == []
    catalog = scanner.catalog
    events = catalog.conversation(("dsh", SESSION))
    assert [e["seq"] for e in events] == list(range(len(EVENTS)))

    assert _from_pairing(events) == PAIRED
    assert _from_signals(events) == PAIRED  # streamed, one event at a time
    view = session_view(catalog.store, ("dsh", SESSION), Window())
    browsed: dict[int | None, str | None] = {
        item["result"]["seq"]: item["name"] for item in view["toolCalls"]["items"] if item["result"]
    }
    assert view["unpairedToolResults"] == 2
    assert {**browsed, 7: None, 8: None} == PAIRED
    read_back = {seq: read_result(catalog, SESSION, seq).get("tool") for seq in PAIRED}
    assert read_back == PAIRED
    searched = search_history(catalog, SESSION, "failed")["hits"]
    assert {hit["seq"]: hit.get("tool") for hit in searched} == {
        3: "read_file",
        6: "grep",
        10: "write_file",
    }


def test_the_users_agree_on_the_real_sessions(scanner: Scanner) -> None:
    sources = [Source("dsh", DSH_ZSTD), Source("dsh", DSH_PLAIN), Source("claude", CLAUDE)]
    assert scanner.scan([*sources, Source("codex", CODEX)]).errors == []
    catalog = scanner.catalog
    checked = 0
    for info in catalog.recent(None, limit=None):
        events = catalog.conversation(info.key)
        expected = _from_pairing(events)
        assert _from_signals(_all_failed(events)) == expected, info.key
        for seq, tool in expected.items():
            assert (
                read_result(catalog, info.session_id, seq, harness=info.harness).get("tool") == tool
            )
        checked += len(expected)
    assert checked  # the real DSH log calls a tool


def _all_failed(events: list[Event]) -> list[Event]:
    """The events with every result marked failed, so that each paired one is a hit."""
    marked: list[Event] = []
    for item in events:
        if item.get("type") == "tool/result":
            data: dict[str, Any] = {**(item.get("data") or {}), "error": {"code": "E"}}
            item = {**item, "data": data}
        marked.append(item)
    return marked
