"""One session as a person reads it: what `SessionsService` shows, built from a store.

Pure reads of the store and its plaintext cache through the `Catalog` (never a session
directory): a session's detail (its summary, human messages, tools, turns, usage and log
files, as `dshkit sessions show` prints it), its view in windows of bounded size whose totals
are always stated (nothing is cut silently: the console's session page), and the human
messages a quote comes from. Each result is typed, with the one JSON every surface gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

import orjson

from .. import harnesses
from ..store import Store
from .cap import cuts, full_length
from .catalog import Catalog, SessionInfo, SessionKey, SessionNotFound
from .events import (
    Event,
    TurnCounter,
    Usage,
    context_pressure,
    context_window,
    human_messages,
    is_failed_result,
    is_human_message,
    message_text,
    pair_tool_calls,
    total_usage,
    turns,
)
from .reader import Cursor
from .wire import (
    HumanItemJson,
    ListingJson,
    LogFileStateJson,
    MessageTextJson,
    QuoteMatchJson,
    QuoteSourcesJson,
    SessionDetailJson,
    SessionViewJson,
    ShownText,
    StoredLength,
    ToolCallItemJson,
    ToolCountJson,
    ToolResultJson,
)

TEXT_LIMIT = 2000  # characters of one text shown; the rest is counted in `cutChars`
WINDOW_LIMIT = 500  # items of one list per answer at most
QUOTE_LIMIT = 500  # characters of a quote looked up at most
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Window:
    """Which part of a session's lists to show: `limit` items from `offset`, or (`around`, an
    event seq) the part holding that event. ValueError names a bound it is outside of."""

    offset: int = 0
    limit: int = 100
    around: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= WINDOW_LIMIT:
            raise ValueError(f"limit must be from 1 to {WINDOW_LIMIT}, got {self.limit}")
        if self.offset < 0:
            raise ValueError(f"offset must not be negative, got {self.offset}")


# -- a session's detail -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MessageText:
    """One human message, whole as stored: a text over the store's cap holds a marker where
    it was cut (docs/design/sessions.md#one-text-is-capped-never-cut-silently), and says its
    length in the log and how many characters of it the store did not keep."""

    seq: int | None
    time: int | None
    text: str

    def as_json(self) -> MessageTextJson:
        return {"seq": self.seq, "time": self.time, "text": self.text, **_stored(self.text)}


@dataclass(frozen=True, slots=True)
class ToolCount:
    calls: int
    failed: int

    def as_json(self) -> ToolCountJson:
        return {"calls": self.calls, "failed": self.failed}


@dataclass(frozen=True, slots=True)
class LogFileState:
    """How far one log file of the session was read, and what went wrong in it."""

    path: str
    bytes_read: int
    error: str | None
    skipped_lines: int  # lines of kinds the adapter does not know
    bad_lines: int  # lines that could not be parsed
    last_problem: str | None

    def as_json(self) -> LogFileStateJson:
        return {
            "path": self.path,
            "bytesRead": self.bytes_read,
            "error": self.error,
            "skippedLines": self.skipped_lines,
            "badLines": self.bad_lines,
            "lastProblem": self.last_problem,
        }


@dataclass(frozen=True, slots=True)
class SessionDetail:
    """One session whole: its summary, human messages, tools (in order of first call), turns,
    token usage, context window and pressure (None: the log does not say), and log files."""

    info: SessionInfo
    turns: int
    human_messages: list[MessageText]
    tools: dict[str, ToolCount]
    unpaired_tool_results: int
    usage: Usage
    context_window: int | None
    context_pressure: int | None
    log_files: list[LogFileState]

    def as_json(self) -> SessionDetailJson:
        return {
            **self.info.as_json(),
            "turns": self.turns,
            "humanMessageTexts": [m.as_json() for m in self.human_messages],
            "tools": {name: count.as_json() for name, count in self.tools.items()},
            "unpairedToolResults": self.unpaired_tool_results,
            "usage": {
                "inputTokens": self.usage.input,
                "outputTokens": self.usage.output,
                "cacheReadTokens": self.usage.cache_read,
                "cacheWriteTokens": self.usage.cache_write,
                "reasoningTokens": self.usage.reasoning,
            },
            "contextWindow": self.context_window,
            "contextPressure": self.context_pressure,
            "logFiles": [f.as_json() for f in self.log_files],
        }


def session_detail(catalog: Catalog, info: SessionInfo) -> SessionDetail:
    """The detail of the session `info` (found in `catalog`'s store)."""
    events = catalog.events(info.key)
    pairing = pair_tool_calls(events)
    tools: dict[str, ToolCount] = {}
    for call in pairing.calls:
        count = tools.get(call.name, ToolCount(0, 0))
        tools[call.name] = ToolCount(count.calls + 1, count.failed + call.failed)
    return SessionDetail(
        info=info,
        turns=len([t for t in turns(events) if t.ordinal]),
        human_messages=[
            MessageText(e.get("seq"), e.get("time"), message_text(e))
            for e in human_messages(events)
        ],
        tools=tools,
        unpaired_tool_results=len(pairing.unpaired_results),
        usage=total_usage(events),
        context_window=context_window(events),
        context_pressure=context_pressure(events),
        log_files=[_log_file(cursor) for cursor in catalog.files(info.key)],
    )


def _log_file(cursor: Cursor) -> LogFileState:
    return LogFileState(
        path=cursor.path,
        bytes_read=cursor.offset,
        error=cursor.error,
        skipped_lines=cursor.state.get("unknownLines", 0),
        bad_lines=cursor.state.get("badLines", 0),
        last_problem=cursor.state.get("lastProblem"),
    )


# -- a session's view, in windows ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Listing(Generic[T]):
    """A window of one of a session's lists: `items` from `offset`, of `total` in all."""

    total: int
    offset: int
    items: list[T]

    def as_json(self) -> ListingJson[T]:
        return {"total": self.total, "offset": self.offset, "items": self.items}


@dataclass(frozen=True, slots=True)
class SessionView:
    """One session as the console opens it: its summary, its turns, and its human messages and
    tool calls (with their results), each list windowed with its total; texts are cut at
    `TEXT_LIMIT` characters with the rest counted."""

    info: SessionInfo
    turns: int
    human_messages: Listing[HumanItemJson]
    tool_calls: Listing[ToolCallItemJson]
    unpaired_tool_results: int

    def as_json(self) -> SessionViewJson:
        return {
            "session": self.info.as_json(),
            "turns": self.turns,
            "humanMessages": self.human_messages.as_json(),
            "toolCalls": self.tool_calls.as_json(),
            "unpairedToolResults": self.unpaired_tool_results,
            "textLimit": TEXT_LIMIT,
        }


def view(catalog: Catalog, info: SessionInfo, window: Window) -> SessionView:
    """The view of the session `info` (found in `catalog`'s store) through `window`."""
    events = catalog.events(info.key)
    numbers = _turn_numbers(events)
    humans: list[HumanItemJson] = [
        {"seq": e.get("seq"), "time": e.get("time"), "turn": numbers[i], **_text(message_text(e))}
        for i, e in enumerate(events)
        if is_human_message(e)
    ]
    pairing = pair_tool_calls(events)
    calls: list[ToolCallItemJson] = [
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
    return SessionView(
        info=info,
        turns=max(numbers, default=0),
        human_messages=_windowed(humans, window),
        tool_calls=_windowed(calls, window),
        unpaired_tool_results=len(pairing.unpaired_results),
    )


def session_view(store: Store, key: SessionKey, window: Window) -> SessionViewJson:
    """The JSON view of the session `key` exactly (SessionNotFound when the store has none)."""
    harnesses.get(key[0])  # an unknown harness is refused by name
    catalog = Catalog(store)
    info = catalog.get(key)
    if info is None:
        raise SessionNotFound(f"no session {key[0]}:{key[1]} in the store", field="session")
    return view(catalog, info, window).as_json()


def _turn_numbers(events: list[Event]) -> list[int]:
    """The harness's own turn number at each event (`TurnCounter.number`, as signal hits
    report it; 0 before any)."""
    counter = TurnCounter()
    numbers: list[int] = []
    for event in events:
        counter.add(event)
        numbers.append(counter.number)
    return numbers


def _text(text: str) -> ShownText:
    """The first TEXT_LIMIT characters of `text`; `cutChars` counts the rest of it as the log
    has it (what the store did not keep included: `notStoredChars`)."""
    shown = text[:TEXT_LIMIT]
    return {
        "text": shown,
        "cutChars": full_length(text) - full_length(shown),
        "notStoredChars": _stored(text)["notStoredChars"],
    }


def _stored(text: str) -> StoredLength:
    """A stored text's length in the log, and the characters of it the store did not keep."""
    return {"length": full_length(text), "notStoredChars": sum(c.cut for c in cuts(text))}


def _arguments(call: Event) -> str:
    raw = (call.get("data") or {}).get("arguments")
    if isinstance(raw, str):
        return raw
    return orjson.dumps(raw).decode() if raw is not None else ""


def _result(result: Event) -> ToolResultJson:
    error = (result.get("data") or {}).get("error")
    return {
        "seq": result.get("seq"),
        "time": result.get("time"),
        "failed": is_failed_result(result),
        "errorCode": error.get("code") if isinstance(error, dict) else None,
        **_text(message_text(result)),
    }


def _windowed(items: list[T], window: Window) -> Listing[T]:
    offset = window.offset
    if window.around is not None:
        at = next(
            (i for i, item in enumerate(items) if _seq(item) >= window.around), len(items) - 1
        )
        offset = max(0, at - window.limit // 2)
    return Listing(len(items), offset, items[offset : offset + window.limit])


def _seq(item: object) -> int:
    seq = item.get("seq") if isinstance(item, dict) else None
    return seq if isinstance(seq, int) else -1


# -- where a quote comes from -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QuoteMatch:
    """A human message that holds the quote."""

    harness: str
    session_id: str
    seq: int | None
    time: int | None

    def as_json(self) -> QuoteMatchJson:
        return {
            "harness": self.harness,
            "sessionId": self.session_id,
            "seq": self.seq,
            "time": self.time,
        }


@dataclass(frozen=True, slots=True)
class QuoteSources:
    """The newest human messages holding a quote (at most the limit asked), of `total`."""

    matches: list[QuoteMatch]
    total: int

    def as_json(self) -> QuoteSourcesJson:
        return {"matches": [m.as_json() for m in self.matches], "total": self.total}


def quote_text(quote: str) -> str:
    """The quote to look up, stripped; ValueError when it is empty or over QUOTE_LIMIT
    characters."""
    quote = quote.strip()
    if not quote or len(quote) > QUOTE_LIMIT:
        raise ValueError(f"text must be 1 to {QUOTE_LIMIT} characters, got {len(quote)}")
    return quote


def quote_sources(store: Store, quote: str, limit: int = 5) -> QuoteSources:
    """The human messages that contain `quote` (a profile entry's evidence is quoted from
    them), newest first. ValueError for an empty quote or one over QUOTE_LIMIT characters."""
    quote = quote_text(quote)
    rows = store.db.execute(
        "SELECT harness, session_id, seq, time FROM human_messages WHERE instr(text, ?) > 0 "
        "ORDER BY time DESC, rowid DESC",
        (quote,),
    ).fetchall()
    return QuoteSources([QuoteMatch(*row) for row in rows[:limit]], len(rows))
