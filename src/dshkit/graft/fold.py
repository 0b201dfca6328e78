"""The watermark's check where no room hint answers, on the hot path: from the store's last
fold of the session and the log's records since, what the watermark says to the call.

The full check (`live.watch`) loads the store, the session reader and the decisions: about
90 ms of a hook's time, measured. Where the session's room hint cannot answer (none kept, a
line it cannot skip, more log than it reads, a compressed log: DSH's), the call is still,
nearly always, below the warning band with no plan-first nudge due, or in the band with the
nudge or the escalation due or already given. `quiet` (at a prompt) proves "nothing to say"
from what the full check left behind, loading none of it; `verdict` (after a tool call) and
`prompted` (at a prompt, where graft's face could say nothing else) also say the nudge and
the escalation (docs/design/graft.md#a-call-the-room-hint-cannot-answer-is-folded):

- the session's digest and state (`graft_watch`) and the watermark's cursor over its log
  (`transcript_tails`, consumer `graft`), read-only (`storeview`); with neither, the log is
  folded from its start, as the first full check would;
- the log's records since that cursor, as the tail reader takes them (`sessions.livetail`:
  whole lines, or the lines of whole zstd frames), folded as the session reader and the digest
  fold them: the latest request's context, its model (and the window a log announces), a
  person's words beginning a turn, each turn's level, the latest todo list. The registry says
  how: a Claude Code line by its `QuietLines` (a request's usage, repeated on each of its
  lines, counted once), a DSH line by its `EventLog` (the line is the event; its header first),
  a Codex or Gemini line by its `EventLog`'s mapping (the adapter's own, `sessions.rollout`,
  `sessions.chats`, with the adapter's state the cursor keeps: the events it maps the line to,
  a value it writes as JSON text written by `jsonscan.dumps`);
- the `[graft]` settings the last full check resolved, kept in the state directory with the
  configuration file and the variables they were read from (`keep_settings`);
- the lines: the window for the model, the growth the levels predict, the warning and the
  forced line (`graft.lines`, the decisions' own arithmetic).

The call has nothing to say when the latest context is below every line (or there is no usage
yet) and no plan-first nudge is due. Otherwise the band's rules are taken in the
decisions' order (`lines.band`) on the stored state and what the lines since add (a model
step among them): nothing more to say in the turn is nothing; a nudge or an escalation is
said with the decisions' words (`graft.texts`). What a handoff begun here adds to the decision
(a session handed off already, one born from a handoff in its first turns) only ever makes it
quieter, so a nudge is said only where none handed the session off or, in its first turns,
into it, and its first words were folded by the store. The plan-first nudge (a long todo list
without phases, once per session) is said where the decisions give it whether or not the
session was born from a handoff: no usage yet, below the band, model-driven off; never for a
session handed off. Whatever the proof does not cover takes the full check:
a forced cut due or started for the session (whether it failed is the ledger's to say), the
plan-first nudge due in the band's other places in a session's first turns, a handoff tool
named in a line, a log read anew since the nudge, a line
that does not parse or holds a shape the fold does not know, a log the registry describes
neither way, more log than `livetail` reads, settings refused or not kept. Nothing is written
here but a line per saying (`SAID_FILE`: the same saying is never the fold's twice, and a
call while its record is pending says nothing: `_first_said`): a step
after the answer runs the check's handler (`dshkit.quiet`, `hooks.later`), whose full check
folds the same records into the store, records what was said when it says the same, and keeps
the room hint, so the next call reads less again.
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
SAID_FILE = "graft-said"  # in the state directory: what the fold said, to whom, in which turn
_SAID_BYTES = 4096  # more than this, and the file starts again
# A saying the fold noted less than this long ago is still being recorded by the check after
# its answer (which ends within a second or so): a call meanwhile has nothing to say.
PENDING_MS = 10_000
_RECENT_REQUESTS = 64  # request ids the reader remembers (`sessions.harness.remember`)
# A request's context in an event log: its usage's input, cache read and cache write
# (`sessions.events.Usage.context`).
_EVENT_USAGE = ("inputTokens", "cacheReadTokens", "cacheWriteTokens")
_CONFIG = "config.toml"  # (config.CONFIG_NAME, not imported on the hot path)


class Fold:
    """What the proof needs of a session's digest (`watermark.Digest`, as its JSON keeps it),
    folded on by `line` (a Claude Code line) or `event` (an event log's): False from either
    means a record the fold does not cover."""

    __slots__ = (
        "context",
        "counted",
        "excluded",
        "handed",
        "identity",
        "last_graft_call",
        "last_step",
        "levels",
        "model",
        "ordinal",
        "people",
        "people_before",
        "received",
        "recent",
        "stepped",
        "todos",
        "window",
    )

    def __init__(self, digest: Mapping[str, Any], recent: list[str]) -> None:
        self.context: int | None = digest.get("context")
        self.levels: list[list[int]] = [list(level) for level in digest.get("levels") or ()]
        self.model: str | None = digest.get("model")
        self.ordinal: int = digest.get("ordinal") or 0
        self.window: int | None = digest.get("window")
        self.todos: list[str] = list(digest.get("todos") or ())
        self.recent = list(recent)  # the request ids the reader remembers
        # As the store's fold left them (the lines since never change the last two: a line
        # of a handoff tool is the full check's; `stepped` says whether they hold a step).
        self.counted: int = digest.get("count") or 0  # events the store folded
        self.people: int = digest.get("humans") or 0  # a person's messages, as the digest counts
        self.people_before = self.people
        self.identity: Any = digest.get("identity")
        self.last_step: int = digest.get("last_step", -1)
        self.last_graft_call: int = digest.get("last_graft_call", -1)
        self.stepped = False  # a model step (a message or a call) among the lines since
        self.excluded = False  # a person kept the session from the forced cut
        # What the ledger holds for it, once a handoff ever began here (`standing.queries`): a
        # row naming it (handed off), a committed handoff it is the target of (received).
        self.handed = self.received = False

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
            if shape.opens_turn(record):  # (the reader's turn: a person's message)
                self.ordinal += 1
                self.people += 1
            return True
        if kind != shape.request:
            return True  # an attachment, a title, a line the reader leaves out: no digest field
        message = record.get("message") or {}
        if not isinstance(message, dict):
            return False
        self.stepped = True  # (every request line is a model message to the reader)
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
        elif kind == "user/message":
            source = data.get("source") or {}
            self.people += isinstance(source, dict) and source.get("kind") == "user"
        elif kind == "request/context":
            window = data.get("contextWindow")
            if isinstance(window, int) and window > 0:
                self.window = window
            self._named(data.get("model"))
        elif kind in ("assistant/message", "usage/record"):
            if kind == "assistant/message":
                self.stepped = True
                message = data.get("message") or {}
                source = message.get("source") or {} if isinstance(message, dict) else None
                if not isinstance(source, dict):
                    return False  # (the reader cannot read it as a message)
                self._named(source.get("model"))
            usage = data.get("usage")
            if isinstance(usage, dict) and not self._used(usage, _EVENT_USAGE):
                return False
        elif kind == "tool/call":
            self.stepped = True
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

    def measure(self, settings: Mapping[str, Any]) -> tuple[float, float | None, float | None]:
        """The latest context as a ratio of the window, and the warning and forced lines the
        decisions draw for it (`watermark.decide_digest`; None: no such line), with the
        settings as the store's session has them (a person kept it from the cut: no forced
        line). Only with usage to measure (`context`)."""
        assert self.context is not None
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
        drawn = lines.drawn(warning, forced, settings["forced"] and not self.excluded)
        return (self.context / limit, *drawn)


def quiet(
    state_dir: str,
    transcript: str,
    session_id: str | None,
    payload: Mapping[str, Any] | None = None,
) -> bool:
    """Whether the watermark surely has nothing to say to this prompt (see the module
    docstring; `payload`, the call's, names its harness for a session the full check has not
    read yet): below every line, or no usage yet, or told all there is in the turn, and no
    plan-first nudge due. (A DSH session asks before every model step: in the band, most of
    them.) Never raises: False decides nothing (the full check runs)."""
    try:
        return _verdict(state_dir, transcript, session_id, payload, False) == ""
    except Exception:
        return False


def verdict(state_dir: str, transcript: str, session_id: str | None) -> str | None:
    """What the watermark says after a tool call, where the fold can tell (see the module
    docstring): "" for nothing, a nudge's or an escalation's words as the full check would
    give them, or None (the full check runs). Never raises."""
    try:
        return _verdict(state_dir, transcript, session_id, None, True)
    except Exception:
        return None


def prompted(
    state_dir: str,
    transcript: str,
    session_id: str | None,
    payload: Mapping[str, Any] | None = None,
) -> str | None:
    """What graft's prompt face says to this prompt, where the fold can tell (`verdict`'s
    answer, as `quiet` reads the call): the watermark's nudge or escalation is its whole
    answer where no handoff ever began and its search scope cannot be owed (`[graft]
    search_scope` off: the scope is said at a session's first context, which the fold does
    not know). Never raises."""
    try:
        return _verdict(state_dir, transcript, session_id, payload, True, prompt=True)
    except Exception:
        return None


def _verdict(
    state_dir: str,
    transcript: str,
    session_id: str | None,
    payload: Mapping[str, Any] | None,
    speak: bool,
    prompt: bool = False,
) -> str | None:
    settings = _settings(state_dir)
    if settings is None or not session_id or not transcript:
        return None
    seen = glance(state_dir, transcript, session_id, payload)
    if seen is None:
        return None
    fold, state = seen
    # The plan-first nudge, due where nothing the band says comes first (no usage yet, below
    # the band, model-driven off; born from a handoff or not), unless a handoff made the
    # session's decisions quieter (`watermark._plan_or`).
    plan = lines.plan_due(fold.todos, bool(state.get("planNudged")))
    if plan and (fold.handed or not speak):
        return None
    if fold.context is None:
        return _say_plan(state_dir, session_id, fold, settings, prompt) if plan else ""
    ratio, warning, forced = fold.measure(settings)
    nudge_at = state.get("nudgeAt")
    model_driven = settings.get("model_driven")
    if nudge_at is not None and fold.counted < nudge_at:
        return None  # the log was read anew since the nudge: its steps are counted again
    place = lines.band(
        ratio,
        warning,
        forced,
        model_driven=model_driven is not False,
        obeyed=nudge_at is not None and fold.last_graft_call >= nudge_at,
        nudged_this_turn=state.get("nudgeTurn") == fold.ordinal,
        stepped=fold.stepped or fold.last_step >= (nudge_at or 0),
        escalated=bool(state.get("escalated")),
    )
    if place in ("below", "off") and plan:
        return _say_plan(state_dir, session_id, fold, settings, prompt)
    if place == "below":
        return ""
    if place == "force" or not isinstance(model_driven, bool):
        return None  # a cut, or settings kept before the band was read
    if plan and fold.ordinal <= lines.PROTECTED_TURNS:
        return None  # (born from a handoff, the plan comes first: which, not read here)
    if place in ("off", "obeyed", "warned"):
        return ""  # (a handoff begun here only ever makes the decision quieter)
    if not speak or (prompt and settings.get("search_scope") is not False):
        return None  # (at a prompt, the scope may be owed with the words: the full check's)
    # A nudge or an escalation: said here only where no handoff could make it quieter (none
    # handed the session off, `standing`; in its first turns, it was not born from one: it
    # received none, and its person's first words, if any, were folded by the store and
    # named none).
    if fold.handed:
        return None
    if fold.ordinal <= lines.PROTECTED_TURNS and (
        fold.identity is not None or fold.received or (fold.people and not fold.people_before)
    ):
        return None  # born from a handoff, or its first words among the lines: not read here
    from . import texts

    said = texts.nudge(ratio) if place == "nudge" else texts.escalation(ratio)
    return _once(state_dir, session_id, fold.ordinal, place, texts.naming(said, session_id))


def _say_plan(
    state_dir: str,
    session_id: str,
    fold: Fold,
    settings: Mapping[str, Any],
    prompt: bool,
) -> str | None:
    """The plan-first nudge's words, once (`_first_said`): None at a prompt where the search
    scope may be owed with them, as for the band's words."""
    if prompt and settings.get("search_scope") is not False:
        return None
    from .texts import PLAN

    return _once(state_dir, session_id, fold.ordinal, "plan", PLAN)


def _once(state_dir: str, session_id: str, turn: int, place: str, words: str) -> str | None:
    """`words` where the fold says `place` to the session now (`_first_said`), nothing ("")
    where it said it moments ago, None where the full check answers."""
    first = _first_said(state_dir, session_id, turn, place)
    return None if first is None else words if first else ""


def _first_said(state_dir: str, session_id: str, turn: int, place: str) -> bool | None:
    """Whether the fold says `place` (a nudge, an escalation, the plan) to the session in
    this turn (`SAID_FILE`: a line per saying, the session by its crc32, with when it was
    said), noted now if so. What the fold says is recorded by the full check after the answer
    when it says the same (`hooks.later`). So a saying noted less than `PENDING_MS` ago is a
    call at the same moment (a harness's parallel tool calls): its record is pending, and
    this call has nothing to say (False; before, the full check answered it, which said it
    again). One noted before that was left unrecorded (the log grew before the check): the
    full check answers (None), so the fold never repeats it. The file is read and noted under
    a lock (`os.lockf`), so two calls at once never both find it unsaid."""
    import time
    import zlib

    key = b"%08x %d %s" % (zlib.crc32(session_id.encode()), turn, place.encode())
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(os.path.join(state_dir, SAID_FILE), flags, 0o600)
    try:
        os.lockf(descriptor, os.F_LOCK, 0)  # (the whole file; let go when it is closed)
        now = int(time.time() * 1000)  # (once the lock is held: after the last one noted)
        seen = os.read(descriptor, _SAID_BYTES + 1)
        for line in seen.splitlines():
            noted, _, at = line.partition(b" @")
            if noted == key:
                age = now - int(at) if at.isdigit() else PENDING_MS  # (an older line: no time)
                return False if 0 <= age < PENDING_MS else None
        if len(seen) >= _SAID_BYTES:  # (kept small)
            os.ftruncate(descriptor, 0)
        os.lseek(descriptor, 0, os.SEEK_END)
        os.write(descriptor, b"%s @%d\n" % (key, now))  # (one short write, whole)
        return True
    finally:
        os.close(descriptor)


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
    from .marker import EXCLUDE_KEY, used

    begun = used(state_dir)  # (a handoff ever began here: the ledger's rows for the session)
    if begun:
        from . import standing
    try:
        tails, watched, kept_from_cut, *ledger = queries_rows(
            state_dir,
            [
                (TAIL_CURSOR, [CONSUMER, path]),
                (
                    "SELECT harness, digest, state, forced_at FROM graft_watch "
                    "WHERE session_id = ?",
                    [session_id],
                ),
                # The sessions a person kept from the forced cut (`live.decide_stored`): the
                # meta keys `<EXCLUDE_KEY><harness>:<session id>`, few.
                (
                    "SELECT key FROM meta WHERE key > ? AND key < ?",
                    [EXCLUDE_KEY, EXCLUDE_KEY[:-1] + chr(ord(EXCLUDE_KEY[-1]) + 1)],
                ),
                *(standing.queries(session_id) if begun else ()),
            ],
        )
    except FileNotFoundError:
        tails, watched, kept_from_cut = [], [], []  # no store yet: the first full check folds
        ledger = [[], []] if begun else []
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
    fold.excluded = (f"{EXCLUDE_KEY}{harness}:{session_id}",) in kept_from_cut
    if begun:  # (`standing.queries`, in their order)
        fold.handed, fold.received = (bool(rows) for rows in ledger)
    # An event log's first line is its header, which the reader takes once (and keeps its
    # version): from there on, every line is an event. A mapped log's lines are mapped with
    # the adapter's state as the cursor keeps it (from the log's start: none yet).
    log = found.event_log
    header = log is not None and log.header is not None and "version" not in kept
    mapping = dict(kept) if offset else {}
    if not _fold_since(fold, path, cursor if offset else None, found, header, scan, mapping):
        return None
    return fold, state


def _fold_since(
    fold: Fold,
    path: str,
    cursor: Mapping[str, Any] | None,
    harness: harnesses.Harness,
    header: bool,
    scan: Any,
    state: dict[str, Any],
) -> bool:
    """Fold the log's records since `cursor` (from the start without one), as the tail reader
    takes them (`sessions.livetail`); False where it would not take them from there (another
    file, a changed past) or the fold leaves them to the full check. A mapped log's records
    are mapped with `state`, the adapter's, which they move on."""
    from ..jsonscan import dumps
    from ..sessions.livetail import records_since

    records = records_since(path, cursor)
    if records is None:
        return False
    log = harness.event_log
    mapped = None if log is None else log.mapped()
    for record in records:
        if header:  # (an event log's first line)
            if log is None or not isinstance(record, dict) or record.get("type") != log.header:
                return False
            if record.get("version") not in log.versions:
                return False
            header = False
            continue
        if mapped is not None:
            try:
                events = mapped(record, state, dumps)
            except Exception:  # (what the adapter would refuse: the full check's)
                return False
            if not all(fold.event({"type": kind, "data": data}, scan) for kind, data in events):
                return False
        elif log is not None:
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
    for the fold, with the configuration file's stamp and every `[graft]` variable's value;
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
        "model_driven": settings.model_driven,
        "search_scope": settings.search_scope,
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
