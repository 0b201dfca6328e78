"""The lean foreground: a prompt or a session's start answered from the session's hint
(`hooks.hint`), without loading a handler, while everything that answer depended on holds.

A hint is only ever "nothing to say", and is made from an observed run of the real handlers:
after a full call that said nothing (in the foreground, once the answer was written), and after
each call the hint answered (in a detached step, `hooks.after`, which runs the handlers the
foreground skipped, so what they do besides answering still happens). A call that said
something leaves one too when its words were all delivered once and recorded
(`plugins.Hook.once`: its commits ran; run again on what they read, as the commits left it,
their handlers say nothing) or said by live handlers (checked anew at every call): its key is
taken once the commits ran (docs/design/hooks.md#words-delivered-once-leave-a-hint). While
they run, an `Observation` records what they read: the store's rows (every SELECT of every
connection, with its parameters, run again read-only to key the hint), the files they opened,
listed or looked at, and which of the payload's fields they read (a look at all of them reads
each), and which handlers read the prompt's words. The hint is kept only when no other handler
said anything, none failed or overran, and the words were read by no handler but one whose
descriptor says for which words its answer would not be "nothing" (`plugins.Hook.words`: the
optimizer with its tier off answers nothing but a prompt starting with its prefix); the key
holds the other fields a handler read, or the runtime reads before them (`HELD`), and
dshkit's variables; a field nobody read only by its presence (a harness's per-call fields:
Claude Code's `prompt_id`).
A handler whose answer depends on what moves at every call (graft's watermark reads the
transcript) is answered in the foreground by the check its descriptor names
(`plugins.Hook.live`), as a quiet check answers (`dshkit.quiet`): "nothing", or the
handler's words (`Say`: the whole answer, the hint's handlers saying nothing; the step
records them once the handler, run after the answer, gives the same bytes); when it can say
neither, the full path runs. A hint that turns out
wrong (the detached step's handlers said something after all) is dropped and logged; nothing was
committed, so what was owed is owed still, and the next event carries it.

A call answered in full (or from a template) also leaves its event's template, whatever it
said, keyed to what its handlers read as they found it (a `storeview.Snapshot` taken before
they ran): a start (a payload without the free field) whose session the store knew nothing
of (`hint.unseen`), and a prompt whose words' readers are guarded and whose answer holds no
live handler's words (a new session's first prompt: its start told it what every new
session is told). A start or prompt with no hint of its own is answered from it, the answer
written here, and the detached step records what that answer leaves behind (its commits, the
turn) only once its handlers gave the same bytes (`after`); otherwise it records nothing and
drops the template.
"""

from __future__ import annotations

import os
import sys

from ..hookspec import AFTER, Say, named
from ..turns import STEP_QUERY, begin
from . import hint
from .run import LEAN_EVENTS  # (defined where calls are routed: run.py)
from .spawn import SAID  # beside the step's payload file: the templated answer written

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import IO, Any

    from ..harnesses import Reply
    from ..hookio import Call
    from ..hookspec import Entry
    from ..storeview import Snapshot

    Streams = tuple[IO[bytes] | None, IO[bytes] | None]  # the call's stdout and stderr

FREE = "prompt"  # the one payload field a hint may hold for any value (see `guards`)
# What the runtime reads of a payload before any handler does (the harness is told by them;
# the hint is named by the session): a hint always holds their values.
HELD = frozenset(("hook_event_name", "transcript_path", "session_id", "cwd"))
EVERY = "\0every field"  # what a handler read that looked at them all (not a field's name)
STEP = "dshkit.hooks.after"  # the detached step's module
BY_OWED = "--said-by-owed"  # its argument when the answer written is the owed handlers' words
OPENED = "--turn-opened"  # its argument when the call was a turn's first prompt, opened here
_STORE_FILES = ("dshkit.db", "dshkit.db-wal", "dshkit.db-shm", "dshkit.db-journal")
_CODE_SUFFIXES = (".py", ".pyc", ".so", ".pth", ".pyi")
# The session's turn as `turns.is_step` reads it (traced with its values in place).
_TURN_READ = STEP_QUERY.partition(" WHERE ")[0] + " WHERE "


def live() -> dict[str, str]:
    """Handler → the check the foreground runs in its place (`plugins.Hook.live`)."""
    from ..plugins import hooks

    return {hook.handler: hook.live for hook in hooks() if hook.live}


def once() -> set[str]:
    """The handlers whose words are delivered once (`plugins.Hook.once`)."""
    from ..plugins import hooks

    return {hook.handler for hook in hooks() if hook.once}


def guards() -> dict[str, str]:
    """Handler → what says for which words it answers (`plugins.Hook.words`)."""
    from ..plugins import hooks

    return {hook.handler: hook.words for hook in hooks() if hook.words}


# -- the foreground ----------------------------------------------------------------------------


def answer(
    event: str,
    wanted: list[Entry],
    raw: bytes,
    state: str,
    env: Mapping[str, str],
    detach: bool = True,
    out: Streams | None = None,
    deferred: list[Callable[[], None]] | None = None,
) -> int | None:
    """The exit code when this call is answered from a hint: its session's ("nothing to
    say"), or, where the session has none, its event's template, whose answer is written to
    `out` (stdout, stderr) first. Then the handlers the foreground skipped are
    appended to `deferred` as one step (the caller runs it once it answered: a resident
    worker), else started in a detached step (`detach`), else run here, now (the tests' calls
    in their own process); that step records what a templated answer leaves behind once it
    finds the answer is the one its handlers give. None: the full path answers (and nothing
    was done here)."""
    if event not in LEAN_EVENTS:
        return None
    try:
        from ..storeview import Shared
        from .protocol import delivered, loads

        payload = loads(raw)
        if not isinstance(payload, dict):
            return None
        session = str(payload.get("session_id") or "")
        with Shared(state):  # (the hint's rows, then the live checks' looks: one connection)
            found = hint.read(state, event, None, session, payload, env)  # (its harness: ours)
            templated = False
            if found is None and out is not None:
                found = hint.read_template(state, event, payload, env)
                templated = found is not None
            checks = live()
            covered = sorted(entry.handler for entry in wanted if entry.handler not in checks)
            if found is None or found.handlers != covered:
                return None
            if not templated and (found.output or found.error or found.code):
                return None
            owed = []  # live handlers whose check answered AFTER or Say: the step runs them after
            spoken = []  # (of those) the ones whose words the check gave: (handler, text)
            for handler in [entry.handler for entry in wanted if entry.handler in checks]:
                said = named(checks[handler])(state, payload)
                if not said:
                    return None
                if isinstance(said, Say):
                    spoken.append((handler, said.text))
                if said == AFTER or isinstance(said, Say):
                    owed.append(handler)
            if spoken and (templated or out is None):
                return None  # (words beside a templated answer, or nowhere to write: in full)
            # A turn's first prompt, where the harness asks before every step (its hint is a
            # turn's first prompt's, or a new session's first prompt's template): the turn is
            # opened now, before the answer, as the full path records it; left to the step
            # after, the model's next step could ask first and be taken for the person's
            # prompt (from a template: told the same again). The step is told it was the
            # turn's first. Both the look and the write are made while the shared connection
            # is open: the write's connection is then not the process's last to close, which
            # would checkpoint the log into the database (~1 ms of the call, measured).
            opened = found.step is False or (
                templated and _first_of_turn(state, event, found, session, payload)
            )
            if opened and not begin(state, (found.harness, session)):
                return None  # (the full path answers, and records the turn)
    except Exception:  # anything at all: the full path answers
        return None
    said = None  # (an answer not delivered: the step records nothing of it)
    code = 0
    if spoken and out is not None:
        # The live handlers' words are the whole answer (the hint: the others say nothing);
        # the step records them once its handlers give these bytes (`hooks.later`).
        from .run import say

        written = say(event, spoken, found.harness, state, out)
        if written is None:
            return None  # nothing written: the full path answers
        code, said = written
    elif templated and out is not None:
        # The step records what the answer leaves behind once its handlers give it (said or
        # not: a template that says nothing is proved the same way).
        if not (found.output or found.error or found.code):
            said = _said(found)
        elif delivered(out, found.output, found.error, state, event):
            said = _said(found)
            code = found.code
    by_owed = bool(spoken)
    if deferred is not None or not detach:
        from .after import step

        if deferred is None:
            step(event, state, raw, said, owed, by_owed, opened)
        else:
            deferred.append(lambda: step(event, state, raw, said, owed, by_owed, opened))
        return code
    try:
        after(event, raw, state, said, owed, by_owed, opened)
    except Exception as exc:  # answered: what the handlers do besides is done here, then
        from .after import step
        from .log import log

        log(state, event, f"hint step not started ({type(exc).__name__}: {exc}): run here")
        step(event, state, raw, said, owed, by_owed, opened)
    return code


def _first_of_turn(
    state: str, event: str, found: hint.Reply, session: str, payload: Mapping[str, Any]
) -> bool:
    """For a templated answer: whether it answers a turn's first prompt of a harness that
    asks before every step, whose turn the foreground must open (a new session's first
    prompt: no turn yet). Raises where no template may answer: a step of a turn under way
    (a template stands for a session's first prompt, and the step that records the turn of
    the one it answered may not have run yet), or an answer that holds a prompt back (it
    opens no turn: a template never holds one, and the full path is the safe answer)."""
    from .. import harnesses
    from ..turns import is_step_read

    if event != "UserPromptSubmit" or not harnesses.get(found.harness).asks_every_step:
        return False
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or is_step_read(state, (found.harness, session), prompt):
        raise LookupError("a step of a turn under way: no template answers it")
    if found.code or b'"block"' in found.output:  # (a JSON string "block": a decision)
        raise LookupError("a templated answer that holds the prompt back")
    return True


def _said(found: hint.Reply) -> bytes:
    """A templated answer as the step compares it with its handlers' (`protocol.said`)."""
    from .protocol import said

    return said(found.output, found.error, found.code)


def after(
    event: str,
    raw: bytes,
    state: str,
    said: bytes | None = None,
    owed: Sequence[str] = (),
    by_owed: bool = False,
    opened: bool = False,
) -> None:
    """Start the detached step for this call: `python -m dshkit.hooks.after EVENT STATE FILE
    [BY_OWED] [OPENED] OWED…` (`owed`: live handlers whose check answered AFTER or `Say`, run
    by the step after its own; `opened`: the call was a turn's first prompt, whose turn the
    foreground opened), the payload in an owner-only file of the hints directory (it removes
    it), in a session of its own, its standard streams on /dev/null (a harness waiting on our
    stdout or killing our group must not wait for it, nor kill it). The answer the foreground
    wrote (`said`: a templated one, or, `by_owed`, the words of `owed`) goes beside it, in
    `<payload file>.said` (owner-only too)."""
    from .spawn import leave, start

    flags = (*((BY_OWED,) if by_owed else ()), *((OPENED,) if opened else ()))
    start(STEP, event, state, leave(state, event, raw, {SAID: said}), *flags, *owed)


# -- observing a run -------------------------------------------------------------------------------

_observing: list[Observation] = []  # the observation under way (one per process at a time)
_hooked = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _observing:
        return
    seen = _observing[-1]
    if seen.handler is None:
        return
    if event == "open":
        name, mode = args[0], args[1]
        if isinstance(name, str) and (mode is None or not any(c in mode for c in "wax+")):
            seen.file(name)
    elif event in ("os.listdir", "os.scandir"):
        name = args[0]
        seen.file(os.fsdecode(name) if isinstance(name, str | bytes) else ".")
    elif event == "dshkit.sessions.tail":  # (`sessions.tail.read_tail`, announced)
        seen.tail(*args)


class _Payload(dict):  # type: ignore[type-arg]
    """A payload that notes which fields each handler read (a bulk read: every field)."""

    observation: Observation

    def get(self, key: Any, default: Any = None) -> Any:
        self.observation.read(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.observation.read(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.observation.read(key)
        return super().__contains__(key)

    def __iter__(self) -> Any:
        self.observation.read(EVERY)
        return super().__iter__()

    def keys(self) -> Any:
        self.observation.read(EVERY)
        return super().keys()

    def items(self) -> Any:
        self.observation.read(EVERY)
        return super().items()

    def values(self) -> Any:
        self.observation.read(EVERY)
        return super().values()

    def copy(self) -> dict[Any, Any]:
        self.observation.read(EVERY)
        return dict(super().items())


class Observation:
    """What the handlers of one call read (see the module docstring); `spoke`, whether any
    said something, failed or overran (then no hint is kept). `templates` False: no template
    is written from the call (a hint's step: its answer was the hint's), and the store's
    snapshot a template holds to is not taken."""

    def __init__(self, state: str, templates: bool = True) -> None:
        self.state = state
        self.templates = templates  # whether a template may be written from this call
        self.handler: str | None = None
        self.files: set[str] = set()
        # Logs read by a tail read that announced the event kinds its consumer reads:
        # path → consumer → {kinds, check} (a hint holds while only other kinds are appended,
        # as the named check tells).
        self.tails: dict[str, dict[str, dict[str, Any]]] = {}
        self._tailing: set[str] = set()  # the logs a tail read is reading now
        # The statements a tail read ran (its consumer's cursor): a hint holds to them by the
        # read's own check (`tails`), not by their rows (`keep`).
        self._tailed: set[str] = set()
        self.statements: list[str] = []
        self.readers: set[str] = set()  # handlers that read the free field
        self.fields: set[str] = set()  # the payload's fields the handlers read (EVERY: all)
        self.spoke = False
        self.failed = False  # a handler failed or overran, or the answer could not be made
        # The answer was written, carrying every handler's result, and its commits all ran
        # (`dispatch._answer`): what it said is recorded as delivered.
        self.recorded = False
        self.reply: hint.Reply | None = None  # the answer as written (`answered`)
        self.speakers: set[str] = set()  # the handlers that gave a result (`heard`)
        # What a template written from this call holds to (`answered`: None, none may be).
        self.template: hint.Seen | None = None
        self._guarded: tuple[bool, list[str]] | None = None  # (`_guard`)
        self._snapshot: Snapshot | None = None  # (from `__enter__` to `answered`)
        self._payload: Mapping[str, Any] = {}
        self._stat: Callable[..., Any] | None = None
        self._connect: Callable[..., Any] | None = None
        self._live = live()
        skipped = {os.path.join(state, name) for name in _STORE_FILES}
        # The state directory itself is looked at as a store opens (its mode), and its mtime
        # moves with every file made in it: none of it is an answer's input.
        skipped.update((os.path.join(state, "hooks.log"), os.path.abspath(state)))
        self._skipped = skipped
        self._code = tuple(
            {os.path.dirname(os.path.dirname(os.path.abspath(__file__))), sys.prefix}
            | {sys.base_prefix, sys.exec_prefix}
        )

    def __enter__(self) -> Observation:
        global _hooked
        from ..storeview import Snapshot

        try:  # the store as the handlers find it: what a template holds to (`answered`)
            self._snapshot = Snapshot(self.state) if self.templates else None
        except Exception:  # no store yet (or unreadable): no template from this call
            self._snapshot = None
        if not _hooked:
            sys.addaudithook(_audit)
            _hooked = True
        _observing.append(self)
        real = os.stat
        self._stat = real

        def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
            if self.handler is not None and isinstance(path, str | bytes | os.PathLike):
                self.file(os.fsdecode(path))
            return real(path, *args, **kwargs)

        os.stat = stat  # what os.path.exists, isfile and pathlib look at (not the importer)
        import sqlite3  # every connection the handlers open traces its statements here

        connect = sqlite3.connect
        self._connect = connect

        def traced(*args: Any, **kwargs: Any) -> Any:
            connection = connect(*args, **kwargs)
            connection.set_trace_callback(self.statement)
            return connection

        sqlite3.connect = traced
        return self

    def __exit__(self, *exc: object) -> None:
        self._release()
        if self._stat is not None:
            os.stat = self._stat
        if self._connect is not None:
            import sqlite3

            sqlite3.connect = self._connect
        if self in _observing:
            _observing.remove(self)

    def heard(self, results: Sequence[tuple[str, Any]], reply: Reply) -> None:
        """The handlers' results and the answer made of them, before it is written: when any
        gave one or it says anything, no hint of "nothing to say" is kept; who gave one
        (`speakers`) is what a template may not hold of the live handlers (`answered`)."""
        self.speakers = {name for name, _ in results}
        if results or reply.output or reply.error:
            self.spoke = True

    def answered(self, reply: Reply, call: Call) -> None:
        """The call's answer, written whole (or nothing to write): what a template holds
        (after `heard`). Asked before the answer's commits run
        (after, the session's own record would be in what its handlers read): whether a
        template may be written from this call, and what it would hold to. A start's, when
        its session was one the store knew nothing of; a prompt's (the session's first, or
        the first after its hint no longer held), when no live handler's words are in it
        (its check says them anew at every call) and the words' readers say for which words
        they answer nothing, these words among them (`_guard`)."""
        from .protocol import written

        self.reply = hint.Reply(*written(reply), reply.code)
        try:
            self.template = self._template(call)
        finally:
            self._release()  # (before the commits: no reader held while they write)

    def _template(self, call: Call) -> hint.Seen | None:
        """What a template written from this call would hold to (see `answered`), or None."""
        payload, snapshot = self._payload, self._snapshot
        if self.failed or snapshot is None:
            return None
        if dict.__contains__(payload, FREE):
            guarded, prefixes = self._guard(call)
            words = {FREE: dict.get(payload, FREE) if isinstance(payload, dict) else None}
            if not guarded or hint.prefixed({FREE: prefixes}, words):
                return None
            if self.speakers & set(self._live):
                return None
        # (a start: whether its session was one nobody had seen, its logs' files too)
        elif not hint.unseen(payload, self.files | set(self.tails), self.statements, snapshot.rows):
            return None
        return hint.seen(payload, self.files, self.statements, snapshot.rows, self.tails)

    def _release(self) -> None:
        snapshot, self._snapshot = self._snapshot, None
        if snapshot is not None:
            snapshot.close()

    def _guard(self, call: Call) -> tuple[bool, list[str]]:
        """Whether every handler that read the prompt's words says for which words it
        answers nothing (`plugins.Hook.words`), and the prefixes those words start with;
        asked once (what the guards read is observed as their handler's)."""
        if self._guarded is not None:
            return self._guarded
        prefixes: list[str] = []
        guarded = True
        for reader in sorted(self.readers):
            guard = guards().get(reader)
            if guard is None:
                guarded = False
                break
            self.begin(reader)
            try:
                free = named(guard)(call)
            except Exception as exc:
                call.log(f"no hint kept: {guard} failed: {type(exc).__name__}: {exc}")
                free = None
            finally:
                self.end()
            if free is None:
                guarded = False
                break
            prefixes.extend(free)
        self._guarded = (guarded, sorted(set(prefixes)))
        return self._guarded

    def begin(self, handler: str) -> None:
        self.handler = None if handler in self._live else handler

    def end(self) -> None:
        self.handler = None

    def payload(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        wrapped = _Payload(payload)
        wrapped.observation = self
        self._payload = wrapped
        return wrapped

    def read(self, key: object) -> None:
        if self.handler is None:
            return
        if key == FREE or key is EVERY:
            self.readers.add(self.handler)
        if isinstance(key, str):
            self.fields.add(key)

    def unread(self, payload: Mapping[str, Any]) -> list[str]:
        """The payload's fields no handler read, nor the runtime before them (`HELD`): a
        hint holds them by their presence alone (a harness's per-call fields: Claude Code's
        `prompt_id`, a resumed start's `seconds_since_last_response`, ...)."""
        if EVERY in self.fields:
            return []
        names: list[str] = list(dict.keys(payload)) if isinstance(payload, dict) else []
        # (`dict.keys`, not the payload's own: the runtime's look is no handler's read)
        return sorted(name for name in names if name not in self.fields and name not in HELD)

    def tail(
        self,
        path: str,
        consumer: str,
        kinds: tuple[str, ...],
        check: str,
        events: str,
        begins: bool,
    ) -> None:
        """A tail read of `path` for `consumer`, which reads only events of `kinds` (`check`,
        "module:function", tells whether the log gained any; `events`, which), begins or
        ends: what it opens is keyed as a tail, not as a file."""
        if begins:
            self._tailing.add(path)
            read = {"kinds": sorted(kinds), "check": check, "events": events}
            self.tails.setdefault(path, {})[consumer] = read
        else:
            self._tailing.discard(path)

    def file(self, name: str) -> None:
        name = os.path.abspath(name)
        if name in self._tailing:
            return  # (a tail read's look at its log: keyed as a tail)
        if name in self._skipped or name.endswith(_CODE_SUFFIXES):
            return
        if name.startswith(self._code) or name.startswith(os.path.join(self.state, hint.HINT_DIR)):
            return
        self.files.add(name)

    def statement(self, sql: str) -> None:
        if self.handler is not None and sql.lstrip()[:6].upper() == "SELECT":
            self.statements.append(sql)
            if self._tailing:
                self._tailed.add(sql)

    def keep(self, call: Call, handlers: list[str], env: Mapping[str, str]) -> bool:
        """Write the call's session's hint of "nothing to say" from what was observed, when it
        may be kept (see the module docstring); else drop the one there. Whether one was."""
        state, event, harness, session = self.state, call.event, call.harness, call.session_id
        covered = sorted(name for name in handlers if name not in self._live)
        # A payload without the free field (a start's) holds to its absence: its readers
        # read nothing that could differ.
        present = isinstance(call.payload, dict) and dict.__contains__(call.payload, FREE)
        # Words delivered once and recorded, or a live handler's: the handlers, run again on
        # what they read (the store as the commits left it: the key is taken now), say
        # nothing (docs/design/hooks.md#words-delivered-once-leave-a-hint).
        delivered = (
            self.spoke
            and self.recorded
            and not self.failed
            and self.speakers <= once() | set(self._live)
        )
        quiet = not self.spoke or delivered
        asked = present and (quiet or self.template is not None)  # (asked already)
        guarded, prefixes = self._guard(call) if asked else (True, [])
        kept = quiet and bool(session) and guarded
        payload = dict(call.payload.items()) if isinstance(call.payload, dict) else {}
        # Where the harness asks before every step, the hint is the next step's or the next
        # turn's first prompt's, as this call was (`hint.read` tells which the next call is,
        # from the session's turn: no part of the key then, `turns.STEP_QUERY`).
        step = call.is_step if call.steps else None
        # And a log's cursor a tail read announced is held by the read's own check (`tails`:
        # no event of its kinds since the cursor, as it is then), not by its row: the
        # consumer moves it on at every step whose log grew.
        statements = sorted(
            sql
            for sql in set(self.statements) - self._tailed
            if step is None or not sql.startswith(_TURN_READ)
        )
        unread = self.unread(payload)
        free = sorted({*unread, *((FREE,) if present else ())})
        unprefixed = {FREE: prefixes} if prefixes else None
        if self.template is not None and self.reply is not None:
            # The answer, said or not, stands for the same call of any session whose
            # handlers would read all the same (`hint.write_template`).
            hint.write_template(
                state,
                event,
                harness,
                payload,
                self.reply,
                env=env,
                seen=self.template,
                handlers=covered,
                free=free,
                unprefixed=unprefixed if present else None,
                until=call.until,
            )
        if not kept:
            hint.drop(state, event, harness, session, opening=step is False)
            return False
        return hint.write(
            state,
            event,
            harness,
            session,
            payload,
            hint.Reply(),
            free=free,
            env=env,
            files=sorted(self.files),
            tails=self.tails,
            queries=[(sql, []) for sql in statements],
            handlers=covered,
            unprefixed=unprefixed,
            until=call.until,
            step=step,
        )


def observed(call: Call, observation: Observation) -> Call:
    """`call` with its payload noting who reads its words (for the observed run)."""
    call.payload = observation.payload(call.payload)
    return call
