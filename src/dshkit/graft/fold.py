"""The watermark's check where no room hint answers, on the hot path: from the store's last
fold of the session and the log's records since, a proof that the call has nothing to say.

The full check (`live.watch`) loads the store, the session reader and the decisions: about
90 ms of a hook's time, measured. Where the session's room hint cannot answer (none kept, a
line it cannot skip, more log than it reads, a compressed log: DSH's), the call is still,
nearly always, below the warning band with no plan-first nudge due. `quiet` proves that from
what the full check left behind, loading none of it, after a tool call and at a prompt
(docs/design/graft.md#a-call-the-room-hint-cannot-answer-is-folded):

- the session's digest and state (`graft_watch`) and the watermark's cursor over its log
  (`transcript_tails`, consumer `graft`), read-only (`storeview`); with neither, the log is
  folded from its start, as the first full check would;
- the log's records since that cursor, as the tail reader takes them (`sessions.livetail`:
  whole lines, or the lines of whole zstd frames), folded as the session reader and the digest
  fold them: the latest request's context, its model (and the window a log announces), a
  person's words beginning a turn, each turn's level, the latest todo list. The registry says
  how: a Claude Code line by its `QuietLines` (a request's usage, repeated on each of its
  lines, counted once), a DSH line by its `EventLog` (the line is the event; its header first);
- the `[graft]` settings the last full check resolved, kept in the state directory with the
  configuration file and the variables they were read from (`keep_settings`);
- the lines: the window for the model, the growth the levels predict, the warning and the
  forced line (`graft.lines`, the decisions' own arithmetic).

The call has nothing to say when the latest context is below every line (or there is no usage
yet) and no plan-first nudge is due. What a handoff begun here adds to the decision (a session
handed off already, one born from a handoff in its first turns) only ever makes it quieter.
Whatever the proof does not cover takes the full check: a forced cut started for the session
(whether it failed is the ledger's to say), a handoff tool named in a line, a todo list longer
than the nudge's limit the session was not nudged for, a line that does not parse or holds a
shape the fold does not know, a log the registry describes neither way, more log than
`livetail` reads, settings refused or not kept. Nothing is written here: a step after the
answer runs the check's handler (`hookspec.AFTER`, `hooks.later`), whose full check folds
the same records into the store and keeps the room hint, so the next call reads less again.
"""

from __future__ import annotations

import os

from .. import harnesses
from . import lines

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from .settings import GraftSettings

CONSUMER = "graft"  # the watermark's cursor over a live log (`live.CONSUMER`)
SETTINGS_FILE = "graft-settings"  # in the state directory: the `[graft]` settings last resolved
_RECENT_REQUESTS = 64  # request ids the reader remembers (`sessions.harness.remember`)
# A request's context in an event log: its usage's input, cache read and cache write
# (`sessions.events.Usage.context`).
_EVENT_USAGE = ("inputTokens", "cacheReadTokens", "cacheWriteTokens")
_CONFIG = "config.toml"  # (config.CONFIG_NAME, not imported on the hot path)


class Fold:
    """What the proof needs of a session's digest (`watermark.Digest`, as its JSON keeps it),
    folded on by `line` (a Claude Code line) or `event` (an event log's): False from either
    means a record the fold does not cover."""

    __slots__ = ("context", "levels", "model", "ordinal", "recent", "todos", "window")

    def __init__(self, digest: Mapping[str, Any], recent: list[str]) -> None:
        self.context: int | None = digest.get("context")
        self.levels: list[list[int]] = [list(level) for level in digest.get("levels") or ()]
        self.model: str | None = digest.get("model")
        self.ordinal: int = digest.get("ordinal") or 0
        self.window: int | None = digest.get("window")
        self.todos: list[str] = list(digest.get("todos") or ())
        self.recent = list(recent)  # the request ids the reader remembers

    def line(self, record: Any, shape: harnesses.QuietLines) -> bool:
        """Fold one parsed line as the reader and the digest fold it; False when it holds
        what the proof leaves to the full check."""
        if not isinstance(record, dict):
            return True  # (the reader makes no event of it)
        kind = record.get("type")
        if kind == shape.results:
            message = record.get("message")
            if message is not None and not isinstance(message, dict):
                return False
            content = (message or {}).get("content")
            if content is not None and not isinstance(content, str | list):
                return False
            if shape.opens_turn(record):
                self.ordinal += 1
            return True
        if kind != shape.request:
            return True  # an attachment, a title, a line the reader leaves out: no digest field
        message = record.get("message") or {}
        if not isinstance(message, dict):
            return False
        request = str(record.get(shape.request_ids[0]) or message.get(shape.request_ids[1]) or "")
        fresh = not request or request not in self.recent
        if request and fresh:
            self.recent = [*self.recent, request][-_RECENT_REQUESTS:]
        self._named(message.get("model"), shape.synthetic)
        blocks = message.get("content") or ()
        if not isinstance(blocks, list | tuple):
            return False
        for block in blocks:
            if (
                isinstance(block, dict)
                and block.get("type") == shape.call
                and not self._call(block)
            ):
                return False
        usage = message.get("usage")
        if fresh and isinstance(usage, dict):  # (a request's later lines repeat its usage)
            return self._used(usage, shape.usage_keys)
        return True

    def event(self, record: Any, scan: Any) -> bool:
        """Fold one line of an event log (`harnesses.EventLog`: the line is the event) as the
        digest folds it (`watermark.Digest.extend`); False when it holds what the proof
        leaves to the full check. `scan` reads a call's arguments (JSON text)."""
        if type(record) is not dict:
            return False  # (the reader refuses the log there)
        kind = record.get("type")
        data = record.get("data") or {}
        if not isinstance(data, dict):
            return False
        if kind == "turn/start":
            self.ordinal += 1
        elif kind == "request/context":
            window = data.get("contextWindow")
            if isinstance(window, int) and window > 0:
                self.window = window
            self._named(data.get("model"))
        elif kind in ("assistant/message", "usage/record"):
            if kind == "assistant/message":
                message = data.get("message") or {}
                source = message.get("source") or {} if isinstance(message, dict) else None
                if not isinstance(source, dict):
                    return False  # (the reader cannot read it as a message)
                self._named(source.get("model"))
            usage = data.get("usage")
            if isinstance(usage, dict) and not self._used(usage, _EVENT_USAGE):
                return False
        elif kind == "tool/call":
            name, arguments = str(data.get("name")), data.get("arguments") or "{}"
            if not isinstance(arguments, str):
                return False
            if any(tool in name or tool in arguments for tool in lines.GRAFT_TOOLS):
                return False
            try:
                parsed, end = scan(arguments, 0)
            except (StopIteration, ValueError, RecursionError):
                return True  # (arguments that do not parse write no todo list)
            if isinstance(parsed, dict) and not arguments[end:].strip():
                self._listed(parsed.get("todos", parsed.get("plan")))
        elif kind == "todo/write":
            self._listed(data.get("todos"))
        return True

    def _named(self, model: Any, placeholder: str = "<") -> None:
        """A model named (one starting with the log's `placeholder` mark names none)."""
        if isinstance(model, str) and model and not model.startswith(placeholder):
            self.model = model

    def _listed(self, items: Any) -> None:
        """A todo list written whole: its unfinished items replace the latest list's."""
        if isinstance(items, list):
            self.todos = [
                str(item.get("content", item.get("step", "")))
                for item in items
                if isinstance(item, dict) and item.get("status") != "completed"
            ]

    def _call(self, block: Mapping[str, Any]) -> bool:
        """A tool call: a handoff tool's (or one naming it) is the full check's; a todo list
        replaces the latest one (`events.todo_items`, `Digest.extend`)."""
        name = str(block.get("name"))
        arguments = block.get("input") or {}
        if any(tool in name or tool in repr(arguments) for tool in lines.GRAFT_TOOLS):
            return False
        if isinstance(arguments, dict):
            self._listed(arguments.get("todos", arguments.get("plan")))
        return True

    def _used(self, usage: Mapping[str, Any], keys: Sequence[str]) -> bool:
        """A request's usage: its context (the sum of `keys`) is the latest, and its turn's
        level; False for a number the reader takes its own way."""
        context = 0
        for key in keys:
            value = usage.get(key) or 0
            if type(value) is not int:
                return False
            context += value
        self.context = context
        if self.levels and self.levels[-1][0] == self.ordinal:
            self.levels[-1][1] = context
        else:
            self.levels = [*self.levels, [self.ordinal, context]][
                -(lines.GROWTH_SAMPLE_TURNS + 1) :
            ]
        return True

    def below_lines(self, settings: Mapping[str, Any]) -> bool:
        """Whether the latest context is below every line the decisions draw (or there is no
        usage to measure), as `watermark.decide_digest` draws them. A session a person kept
        from the forced cut has no forced line, and the same warning: below both here is below
        it there."""
        if self.context is None:
            return True
        windows = settings["windows"]
        limit, _ = lines.window(self.window, self.model, windows, settings["window_tokens"])
        rise = lines.growth([level for _, level in self.levels])
        if rise is None:
            rise = settings["growth_tokens_per_turn"]
        warning, forced, _ = lines.cut_lines(
            settings["mode"],
            (settings["warning_ratio"], settings["forced_ratio"]),
            settings["warning_margin"],
            limit,
            settings["handoff_tokens"] + rise * settings["reserve_turns"],
        )
        # The lowest line a decision is taken at: with a forced cut, the lower of the two
        # (a warning at or above the cut is dropped, the cut stays); without, the warning.
        lowest = min(warning, forced) if settings["forced"] else warning
        return self.context / limit < lowest


def quiet(
    state_dir: str,
    transcript: str,
    session_id: str | None,
    payload: Mapping[str, Any] | None = None,
) -> bool:
    """Whether the watermark surely has nothing to say to this call (see the module
    docstring; `payload`, the call's, names its harness for a session the full check has not
    read yet). Never raises: False decides nothing (the full check runs)."""
    try:
        return _quiet(state_dir, transcript, session_id, payload)
    except Exception:
        return False


def _quiet(
    state_dir: str, transcript: str, session_id: str | None, payload: Mapping[str, Any] | None
) -> bool:
    settings = _settings(state_dir)
    if settings is None or not session_id or not transcript:
        return False
    seen = glance(state_dir, transcript, session_id, payload)
    if seen is None:
        return False
    fold, state = seen
    if not state.get("planNudged") and len(fold.todos) > lines.OPEN_TODO_LIMIT:
        return False  # the plan-first nudge may be due: its phases are the full check's
    return fold.below_lines(settings)


def glance(
    state_dir: str, transcript: str, session_id: str, payload: Mapping[str, Any] | None = None
) -> tuple[Fold, dict[str, Any]] | None:
    """The session's digest as the full check would fold it now, and its state (what it was
    told), from the store's last fold and the log's lines since; None where the fold does not
    cover them (see the module docstring). Reads only: the store is not opened for writing.
    The harness is the one the full check named in its cursor (`payload`, the call's, tells
    it where there is none yet)."""
    path = os.path.abspath(transcript)
    from ..storeview import TAIL_CURSOR, queries_rows

    try:
        tails, watched = queries_rows(
            state_dir,
            [
                (TAIL_CURSOR, [CONSUMER, path]),
                (
                    "SELECT harness, digest, state, forced_at FROM graft_watch "
                    "WHERE session_id = ?",
                    [session_id],
                ),
            ],
        )
    except FileNotFoundError:
        tails, watched = [], []  # no store yet: the first full check folds from the start
    from ..jsonscan import scanner

    scan = scanner()
    cursor = scan(tails[0][0], 0)[0] if tails else None
    if cursor is not None:
        harness = cursor.get("harness")
    else:
        named = {"transcript_path": transcript, **(payload or {})}
        harness = harnesses.detect(named, os.environ)
    try:
        found = harnesses.get(str(harness))
    except harnesses.UnknownHarness:
        return None
    if found.quiet_lines is None and found.event_log is None:
        return None
    rows = [row for row in watched if row[0] == harness]
    offset = 0 if cursor is None else cursor.get("offset") or 0
    if offset and not rows:
        return None  # a cursor with no digest beside it: the full check sees why
    state: dict[str, Any] = scan(rows[0][2], 0)[0] if rows else {}
    if rows and rows[0][3] is not None:
        return None  # a forced cut was started: whether it failed is the ledger's to say
    # From the log's start (no cursor yet, or one at 0), the digest begins anew, as the full
    # check's does; the state (what the session was told) stays.
    digest: dict[str, Any] = scan(rows[0][1], 0)[0] if offset else {}
    kept = (cursor or {}).get("state") or {} if offset else {}
    fold = Fold(digest, list(kept.get("requests") or ()))
    # An event log's first line is its header, which the reader takes once (and keeps its
    # version): from there on, every line is an event.
    header = found.event_log is not None and "version" not in kept
    if not _fold_since(fold, path, cursor if offset else None, found, header, scan):
        return None
    return fold, state


def _fold_since(
    fold: Fold,
    path: str,
    cursor: Mapping[str, Any] | None,
    harness: harnesses.Harness,
    header: bool,
    scan: Any,
) -> bool:
    """Fold the log's records since `cursor` (from the start without one), as the tail reader
    takes them (`sessions.livetail`); False where it would not take them from there (another
    file, a changed past) or the fold leaves them to the full check."""
    from ..sessions.livetail import records_since

    records = records_since(path, cursor)
    if records is None:
        return False
    for record in records:
        if header:  # (an event log's first line)
            log = harness.event_log
            if log is None or not isinstance(record, dict) or record.get("type") != log.header:
                return False
            if record.get("version") not in log.versions:
                return False
            header = False
            continue
        if harness.event_log is not None:
            if not fold.event(record, scan):
                return False
        elif harness.quiet_lines is None or not fold.line(record, harness.quiet_lines):
            return False
    return True


def _settings(state_dir: str) -> dict[str, Any] | None:
    """The `[graft]` settings the last full check resolved, while the configuration file and
    the variables they came from are as they were then; None otherwise."""
    try:
        with open(os.path.join(state_dir, SETTINGS_FILE), "rb") as handle:
            raw = handle.read(1 << 16)
        from ..jsonscan import scanner

        kept = scanner()(raw.decode("utf-8"), 0)[0]
    except (OSError, UnicodeDecodeError, StopIteration, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("config") != _config_stamp(state_dir):
        return None
    variables = kept.get("env")
    if not isinstance(variables, dict):
        return None
    if any(os.environ.get(name) != value for name, value in variables.items()):
        return None
    values = kept.get("graft")
    return values if isinstance(values, dict) else None


def keep_settings(state_dir: str, settings: GraftSettings, environ: Mapping[str, str]) -> None:
    """Keep the settings a full check resolved with nothing refused (`GraftSettings.resolve`),
    for `quiet`, with the configuration file's stamp and every `[graft]` variable's value;
    written only when that changed (owner-only, whole)."""
    import orjson

    from ..config import SECTIONS
    from ..paths import replace_whole

    names = sorted({setting.env for setting in SECTIONS["graft"].values() if setting.env})
    values = {
        "mode": settings.mode,
        "forced": settings.forced,
        "warning_ratio": settings.warning_ratio,
        "forced_ratio": settings.forced_ratio,
        "warning_margin": settings.warning_margin,
        "window_tokens": settings.window_tokens,
        "windows": dict(settings.windows),
        "handoff_tokens": settings.handoff_tokens,
        "growth_tokens_per_turn": settings.growth_tokens_per_turn,
        "reserve_turns": settings.reserve_turns,
    }
    kept = {
        "config": _config_stamp(state_dir),
        "env": {name: environ.get(name) for name in names},
        "graft": values,
    }
    data = orjson.dumps(kept, option=orjson.OPT_SORT_KEYS) + b"\n"
    path = os.path.join(state_dir, SETTINGS_FILE)
    try:
        with open(path, "rb") as handle:
            if handle.read() == data:
                return
    except OSError:
        pass
    replace_whole(path, data)  # (the state directory: the store made it, private)


def _config_stamp(state_dir: str) -> str:
    """The configuration file as it is now: its inode, change time and size ("-": none)."""
    try:
        st = os.stat(os.path.join(state_dir, _CONFIG))
    except OSError:
        return "-"
    return f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"


# -- the step after the answer -------------------------------------------------------------------
