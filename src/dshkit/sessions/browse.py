"""One session as a person reads it: its summary, human messages and tool calls with their
results, in windows of bounded size whose totals are always stated (nothing is cut silently).

The console's `GET /api/sessions/{harness}/{id}` and its session list read sessions here;
events come from the cache through the `Catalog`, never from a session directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .. import harnesses
from ..store import Store
from .catalog import Catalog, SessionKey, SessionNotFound
from .events import (
    Event,
    TurnCounter,
    is_failed_result,
    is_human_message,
    message_text,
    pair_tool_calls,
)

TEXT_LIMIT = 2000  # characters of one text shown; the rest is counted in `cutChars`
WINDOW_LIMIT = 500  # items of one list per answer at most


@dataclass(frozen=True, slots=True)
class Window:
    """Which part of a session's lists to show: `limit` items from `offset`, or (`around`, an
    event seq) the part holding that event."""

    offset: int = 0
    limit: int = 100
    around: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= WINDOW_LIMIT:
            raise ValueError(f"limit must be from 1 to {WINDOW_LIMIT}, got {self.limit}")
        if self.offset < 0:
            raise ValueError(f"offset must not be negative, got {self.offset}")


def recent_sessions(store: Store, harness: str | None, limit: int) -> list[dict[str, Any]]:
    """The newest `limit` sessions (of `harness`), as the session list shows them."""
    return [info.as_json() for info in Catalog(store).recent(harness, limit)]


def session_view(store: Store, key: SessionKey, window: Window) -> dict[str, Any]:
    """One session (SessionNotFound when the store has no such session): its summary, its
    human messages and its tool calls, each list windowed with its total."""
    harnesses.get(key[0])  # an unknown harness is refused by name
    catalog = Catalog(store)
    info = catalog.get(key)
    if info is None:
        raise SessionNotFound(f"no session {key[0]}:{key[1]} in the store")
    events = catalog.events(key)
    numbers = _turn_numbers(events)
    humans = [
        {"seq": e.get("seq"), "time": e.get("time"), "turn": numbers[i], **_text(message_text(e))}
        for i, e in enumerate(events)
        if is_human_message(e)
    ]
    pairing = pair_tool_calls(events)
    calls = [
        {
            "seq": pair.call.get("seq"),
            "time": pair.call.get("time"),
            "turn": numbers[pair.index],
            "name": pair.name,
            "arguments": _text(_arguments(pair.call)),
            "durationMs": pair.duration_ms,
            "failed": pair.failed,
            "result": None if pair.result is None else _result(pair.result),
        }
        for pair in pairing.calls
    ]
    return {
        "session": info.as_json(),
        "turns": max(numbers, default=0),
        "humanMessages": _windowed(humans, window),
        "toolCalls": _windowed(calls, window),
        "unpairedToolResults": len(pairing.unpaired_results),
        "textLimit": TEXT_LIMIT,
    }


def _turn_numbers(events: list[Event]) -> list[int]:
    """The harness's own turn number at each event (`TurnCounter.number`, as signal hits
    report it; 0 before any)."""
    counter = TurnCounter()
    numbers: list[int] = []
    for event in events:
        counter.add(event)
        numbers.append(counter.number)
    return numbers


def _text(text: str) -> dict[str, Any]:
    return {"text": text[:TEXT_LIMIT], "cutChars": max(0, len(text) - TEXT_LIMIT)}


def _arguments(call: Event) -> str:
    raw = (call.get("data") or {}).get("arguments")
    if isinstance(raw, str):
        return raw
    return orjson.dumps(raw).decode() if raw is not None else ""


def _result(result: Event) -> dict[str, Any]:
    error = (result.get("data") or {}).get("error")
    return {
        "seq": result.get("seq"),
        "time": result.get("time"),
        "failed": is_failed_result(result),
        "errorCode": error.get("code") if isinstance(error, dict) else None,
        **_text(message_text(result)),
    }


def _windowed(items: list[dict[str, Any]], window: Window) -> dict[str, Any]:
    offset = window.offset
    if window.around is not None:
        at = next(
            (i for i, item in enumerate(items) if _seq(item) >= window.around), len(items) - 1
        )
        offset = max(0, at - window.limit // 2)
    shown = items[offset : offset + window.limit]
    return {"total": len(items), "offset": offset, "items": shown}


def _seq(item: dict[str, Any]) -> int:
    seq = item.get("seq")
    return seq if isinstance(seq, int) else -1


QUOTE_LIMIT = 500  # characters of a quote looked up at most


def quote_sources(store: Store, quote: str, limit: int = 5) -> dict[str, Any]:
    """The human messages that contain `quote` (a profile entry's evidence is quoted from
    them), newest first: `{"matches": [{harness, sessionId, seq, time}], "total"}`.
    ValueError for an empty quote or one over QUOTE_LIMIT characters."""
    quote = quote.strip()
    if not quote or len(quote) > QUOTE_LIMIT:
        raise ValueError(f"text must be 1 to {QUOTE_LIMIT} characters, got {len(quote)}")
    rows = store.db.execute(
        "SELECT harness, session_id, seq, time FROM human_messages WHERE instr(text, ?) > 0 "
        "ORDER BY time DESC, rowid DESC",
        (quote,),
    ).fetchall()
    matches = [
        {"harness": h, "sessionId": session, "seq": seq, "time": at}
        for h, session, seq, at in rows[:limit]
    ]
    return {"matches": matches, "total": len(rows)}


class SessionsService:
    """The read side above for the web API; each call opens its own store connection."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)

    def recent(self, harness: str | None, limit: int) -> list[dict[str, Any]]:
        with Store(self.state_dir) as store:
            return recent_sessions(store, harness, limit)

    def view(self, key: SessionKey, window: Window) -> dict[str, Any]:
        with Store(self.state_dir) as store:
            return session_view(store, key, window)

    def quote(self, text: str) -> dict[str, Any]:
        with Store(self.state_dir) as store:
            return quote_sources(store, text)
