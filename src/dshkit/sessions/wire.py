"""The JSON shapes of the session layer's results: one TypedDict per shape, the `as_json()` of
each result type (`dshkit sessions … --json` and `/api/sessions/` alike)."""

from __future__ import annotations

from typing import Any, Generic, TypedDict, TypeVar

T = TypeVar("T")


class StoredLength(TypedDict):
    """A stored text's length in the log, and the characters of it the store did not keep."""

    length: int
    notStoredChars: int


class MessageTextJson(StoredLength):
    """One human message, whole as stored."""

    seq: int | None
    time: int | None
    text: str


class ToolCountJson(TypedDict):
    """How often one tool was called, and how many of its calls failed."""

    calls: int
    failed: int


class LogFileStateJson(TypedDict):
    """How far one log file of the session was read, and what went wrong in it."""

    path: str
    bytesRead: int
    error: str | None
    skippedLines: int
    badLines: int
    lastProblem: str | None


class UsageJson(TypedDict):
    """A session's tokens, summed over its model calls."""

    inputTokens: int
    outputTokens: int
    cacheReadTokens: int
    cacheWriteTokens: int
    reasoningTokens: int


class SessionInfoJson(TypedDict):
    """One session's summary: where it ran, its title, and how much of it was read."""

    harness: str
    id: str
    project: str
    cwd: str
    title: str
    files: int
    events: int
    humanMessages: int
    toolCalls: int
    firstTime: int | None
    lastTime: int | None


class SessionDetailJson(SessionInfoJson):
    """One session whole (`dshkit sessions show --json`): its summary, then its human
    messages, tools, turns, token usage, context window and pressure, and log files."""

    turns: int
    humanMessageTexts: list[MessageTextJson]
    tools: dict[str, ToolCountJson]
    unpairedToolResults: int
    usage: UsageJson
    contextWindow: int | None
    contextPressure: int | None
    logFiles: list[LogFileStateJson]


class ShownText(TypedDict):
    """The first TEXT_LIMIT characters of a text; `cutChars` counts the rest as the log has
    it, of which `notStoredChars` the store did not keep."""

    text: str
    cutChars: int
    notStoredChars: int


class HumanItemJson(ShownText):
    """One human message in a session's view, with the harness's turn number."""

    seq: int | None
    time: int | None
    turn: int


class ToolResultJson(ShownText):
    """The result of a tool call: whether it failed, with the error's code when it says one."""

    seq: int | None
    time: int | None
    failed: bool
    errorCode: Any


class ToolCallItemJson(TypedDict):
    """One tool call in a session's view, its arguments and its result (None: none came)."""

    seq: int | None
    time: int | None
    turn: int
    name: str
    arguments: ShownText
    durationMs: int | None
    failed: bool
    result: ToolResultJson | None


class ListingJson(TypedDict, Generic[T]):
    """A window of one of a session's lists: `items` from `offset`, of `total` in all."""

    total: int
    offset: int
    items: list[T]


class SessionViewJson(TypedDict):
    """One session as the console opens it: its summary, turns, and its human messages and
    tool calls, each a window with its total; texts are cut at `textLimit` characters."""

    session: SessionInfoJson
    turns: int
    humanMessages: ListingJson[HumanItemJson]
    toolCalls: ListingJson[ToolCallItemJson]
    unpairedToolResults: int
    textLimit: int


class QuoteMatchJson(TypedDict):
    """A human message that holds the quote."""

    harness: str
    sessionId: str
    seq: int | None
    time: int | None


class QuoteSourcesJson(TypedDict):
    """The newest human messages holding a quote, and how many do in all."""

    matches: list[QuoteMatchJson]
    total: int


class QuotedJson(TypedDict):
    """One human message of the session holding one quote, and what it is evidence for."""

    label: str
    quote: str
    seq: int | None
    time: int | None


class ScanProblem(TypedDict):
    """A log file the scan could not read (whole or in part), and why."""

    file: str
    error: str


class ScanReportJson(TypedDict):
    """What one scan read: files, sessions, events, human messages, frames and bytes, the
    files it could not read, and how long it took."""

    files: int
    sessions: int
    events: int
    humanMessages: int
    framesDecoded: int
    bytesRead: int
    errors: list[ScanProblem]
    elapsedMs: int


class SessionKeyJson(TypedDict):
    """A session named by its harness and id."""

    harness: str
    id: str


class ForgottenJson(TypedDict):
    """The session forgotten for good."""

    forgotten: SessionKeyJson
