"""What each hook event would inject into a session, byte for byte, without injecting it: the
preview behind `dshkit inject show` and `GET /api/inject/`.

For each event (SessionStart, UserPromptSubmit, …) the handlers registered in `hookspec` for
it run in their order as the hooks would run them next: the capabilities' own hook faces
(`<capability>/hook.py`, named by the descriptors), each told the room the parts before it
leave, but dry (`hookio.Call.dry`): on a store whose transactions are rolled back
(`Uncommitted`), with no commit called and nothing started (where a hook would start a probe
or a refresh, the part says so). Each part keeps its handler, its order, its text and its
pieces with their sources (the generated profile, the extra or custom text, the capability
facts, a handoff's pickup, a notice, the watermark), its length as the harnesses count it, and
whether the 10,000-character cap would drop it; the event's text is exactly the
additionalContext the hook would answer.

Every event is previewed as if it fired next, on its own: nothing is delivered between them.
Handlers whose output depends on what the event carries (the prompt optimizer on the prompt,
the command guard on the command, the delivery gate on the file written) and handlers of
one's own (`DSHKIT_HOOK_HANDLERS`) are listed as not previewed, with why.
"""

from __future__ import annotations

import importlib
import os
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import harnesses, hookspec, plugins
from ..errors import Invalid
from ..hookio import LIMIT, Answer, Call, Piece, join_contexts, room_after
from ..sessions.catalog import Catalog, SessionNotFound
from ..sessions.harness import SideFiles
from ..store import Store
from .wire import EventPreviewJson, InjectPreviewJson, PartPreviewJson

Rule = Callable[[Call], Answer | None]


def _rule(reference: str) -> Rule:
    """The handler `reference` names ("module:function" of a hook face)."""
    module, _, name = reference.partition(":")
    found: Rule = getattr(importlib.import_module(module), name)
    return found


# From the descriptors (`dshkit.plugins`): each built-in handler the preview runs dry, and each
# whose answer depends on what the event carries, why not.
RULES: dict[str, Rule] = {
    hook.handler: _rule(hook.handler) for hook in plugins.hooks() if hook.unpreviewed is None
}
NOT_PREVIEWED: dict[str, str] = {
    hook.handler: hook.unpreviewed for hook in plugins.hooks() if hook.unpreviewed
}
SOURCES = ("startup", "resume", "compact", "clear")  # what a SessionStart says it follows
BUSY_TIMEOUT_S = 5.0


class Uncommitted(Store):
    """A store whose work never commits: inside `rolled_back()` one transaction is open, each
    `transaction()` of the code run there is a savepoint of it, and all of it is rolled back
    at the end. (Opening it migrates the schema as any store does.)"""

    _dry = False

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        if not self._dry:
            with super().transaction() as db:
                yield db
            return
        self.db.execute("SAVEPOINT dry")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK TO dry")
            self.db.execute("RELEASE dry")
            raise
        self.db.execute("RELEASE dry")

    @contextmanager
    def rolled_back(self) -> Iterator[Store]:
        self.db.execute("BEGIN")
        self._dry = True
        try:
            yield self
        finally:
            self._dry = False
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")


# -- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartPreview:
    """One handler's part of an event: what it would put in, from where, and whether the
    answer would carry it."""

    handler: str
    order: int
    previewed: bool  # False: its output depends on the event (or it is not ours): `why`
    source: str
    text: str
    pieces: tuple[Piece, ...]
    why: str  # why there is no text (or no preview)
    decision: tuple[str, str] | None  # ("block" or "deny", the reason)
    effects: tuple[str, ...]  # what the hook would start besides answering
    dropped: bool  # the cap would leave it out whole

    @property
    def chars(self) -> int:
        return harnesses.text_length(self.text)

    @property
    def delivered(self) -> bool:
        return bool(self.text) and not self.dropped

    def as_json(self) -> PartPreviewJson:
        return {
            "handler": self.handler,
            "order": self.order,
            "previewed": self.previewed,
            "source": self.source,
            "text": self.text,
            "chars": self.chars,
            "delivered": self.delivered,
            "dropped": self.dropped,
            "pieces": [
                {"source": p.source, "chars": harnesses.text_length(p.text), "text": p.text}
                for p in self.pieces
            ],
            "why": self.why,
            "decision": None
            if self.decision is None
            else {"kind": self.decision[0], "reason": self.decision[1]},
            "effects": list(self.effects),
        }


@dataclass(frozen=True)
class EventPreview:
    """What one event would bring: the exact context text, a block or deny, and its parts."""

    event: str
    text: str  # the answer's additionalContext, byte for byte ("" when none)
    decision: tuple[str, str] | None
    parts: tuple[PartPreview, ...]
    notes: tuple[str, ...]  # what the cap left out (as the hook would log it)

    @property
    def chars(self) -> int:
        return harnesses.text_length(self.text)

    def as_json(self) -> EventPreviewJson:
        return {
            "event": self.event,
            "text": self.text,
            "chars": self.chars,
            "limit": LIMIT,
            "decision": None
            if self.decision is None
            else {"kind": self.decision[0], "reason": self.decision[1]},
            "parts": [part.as_json() for part in self.parts],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class InjectPreview:
    """Every event previewed for one session (or a new one in a directory)."""

    harness: str
    session_id: str | None  # None: a new session
    catalogued: bool  # whether the scan has read the session (the hooks see it before)
    cwd: str
    transcript: str | None
    source: str  # the SessionStart previewed follows this
    permission_mode: str | None
    events: tuple[EventPreview, ...]

    def event(self, name: str) -> EventPreview:
        return next(e for e in self.events if e.event == name)

    def as_json(self) -> InjectPreviewJson:
        return {
            "harness": self.harness,
            "sessionId": self.session_id,
            "new": self.session_id is None,
            "catalogued": self.catalogued,
            "cwd": self.cwd,
            "transcript": self.transcript,
            "source": self.source,
            "permissionMode": self.permission_mode,
            "asIfNext": "each event as if it fired next, nothing delivered in between",
            "events": [event.as_json() for event in self.events],
        }


# -- the use case ----------------------------------------------------------------------------


class InjectService:
    """The preview over one state directory (each call opens its own store, waiting at most
    `busy_timeout` seconds for another process's lock)."""

    def __init__(self, state_dir: Path, *, busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        self.state_dir = Path(state_dir)
        self.busy_timeout = busy_timeout

    def preview(
        self,
        session: str | None = None,
        harness: str | None = None,
        *,
        cwd: str | None = None,
        events: Sequence[str] | None = None,
        source: str = "startup",
        permission_mode: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> InjectPreview:
        """What each of `events` (default: every event a handler serves in the harness)
        would inject next into `session` (an id or a unique prefix; one the scan has not read
        yet needs its `harness`), or, without one, into a new session of `harness` started
        in `cwd` (default: the current directory). `source` is what the SessionStart follows,
        `permission_mode` what the hook payload would say (Claude Code's mode), `env` the
        hooks' environment (default: this process's)."""
        if harness is not None and harness not in harnesses.NAMES:
            raise Invalid(
                f"harness must be one of {', '.join(harnesses.NAMES)}, got {harness!r}",
                field="harness",
            )
        if source not in SOURCES:
            raise Invalid(
                f"source must be one of {', '.join(SOURCES)}, got {source!r}", field="source"
            )
        if cwd is not None and not os.path.isabs(cwd):
            raise Invalid(f"cwd must be an absolute path, got {cwd!r}", field="cwd")
        unknown = [e for e in events or () if e not in hookspec.EVENTS]
        if unknown:
            raise Invalid(
                f"event must be one of {', '.join(hookspec.EVENTS)}, got {unknown[0]!r}",
                field="event",
            )
        environ = os.environ if env is None else env
        with closing(Uncommitted(self.state_dir, busy_timeout=self.busy_timeout)) as store:
            found = _session(store, session, harness, cwd)
            name, session_id, where, transcript, catalogued = found
            wanted = list(events) if events else _served_events(name, environ)
            previews = []
            for event in wanted:
                payload = _payload(event, session_id, where, transcript, source, permission_mode)
                directory = str(store.state_dir)
                call = Call(
                    event, payload, name, directory, environ, dry=True, store=store, step=False
                )
                with store.rolled_back():
                    previews.append(_event(call))
        return InjectPreview(
            name,
            None if session is None else session_id,
            catalogued,
            where,
            transcript,
            source,
            permission_mode,
            tuple(previews),
        )


def _session(
    store: Store, session: str | None, harness: str | None, cwd: str | None
) -> tuple[str, str, str, str | None, bool]:
    """(harness, session id, cwd, transcript, catalogued) of the session previewed."""
    if session is None:
        if harness is None:
            raise Invalid("a new session's preview needs its harness", field="harness")
        # A fresh id: the ledger has nothing for it, as for any session just started.
        return harness, f"preview-{uuid.uuid4()}", cwd or os.getcwd(), None, False
    catalog = Catalog(store)
    try:
        info = catalog.find(session, harness)
    except SessionNotFound:
        if harness is None:
            raise
        # The hooks see a session before any scan does: previewed by the id as given.
        return harness, session.strip(), cwd or os.getcwd(), None, False
    adapter = harnesses.get(info.harness).adapter
    sides = adapter.side_file if isinstance(adapter, SideFiles) else None
    logs = [c.path for c in catalog.files(info.key) if not (sides and sides(c.path))]
    where = cwd or info.cwd or os.getcwd()
    return info.harness, info.session_id, where, next(iter(logs), None), True


def _served_events(harness: str, env: Mapping[str, str]) -> list[str]:
    """The events some handler serves in `harness`, in the order they happen."""
    extra = _extra(env)
    return [
        event
        for event in hookspec.EVENTS
        if any(entry.serves(harness) for entry in hookspec.entries(event, extra))
    ]


def _extra(env: Mapping[str, str]) -> tuple[hookspec.Entry, ...]:
    try:
        return hookspec.extra_entries(env.get("DSHKIT_HOOK_HANDLERS", ""))
    except ValueError:
        return ()  # the hooks log it and run the built-in ones


def _payload(
    event: str,
    session_id: str,
    cwd: str,
    transcript: str | None,
    source: str,
    permission_mode: str | None,
) -> dict[str, Any]:
    """The payload a harness would send for `event` (what the rules read of it)."""
    payload: dict[str, Any] = {"session_id": session_id, "cwd": cwd, "hook_event_name": event}
    if transcript:
        payload["transcript_path"] = transcript
    if permission_mode:
        payload["permission_mode"] = permission_mode
    if event == "SessionStart":
        payload["source"] = source
    return payload


def _event(call: Call) -> EventPreview:
    """The parts of one event's handlers, in order, and the text the answer would carry."""
    found: list[tuple[hookspec.Entry, Answer | None, str]] = []
    for entry in hookspec.entries(call.event, _extra(call.env)):
        if not entry.serves(call.harness):
            continue
        rule = RULES.get(entry.handler)
        if rule is None:
            why = NOT_PREVIEWED.get(entry.handler, "a handler of your own (DSHKIT_HOOK_HANDLERS)")
            found.append((entry, None, why))
            continue
        if entry.when_exists and not (call.state_dir / entry.when_exists).exists():
            # (the entry point does not start it while the file it waits for is absent)
            absent = f"not started while {entry.when_exists} is not in the state directory"
            found.append((entry, Answer("", why=absent), ""))
            continue
        # (told the room the parts before it leave, as the hook runtime tells it)
        said = [(e.handler, p.text) for e, p, _ in found if p is not None and p.text]
        call.room = room_after(call.event, said)
        try:
            part = rule(call) or Answer("", why="nothing to say to this event")
        except Exception as exc:  # the hook logs it and gives no opinion for this handler
            part = Answer("", why=f"fails, so no opinion: {type(exc).__name__}: {exc}")
        found.append((entry, part, ""))
    contexts = [
        (index, entry.handler, part.text)
        for index, (entry, part, _) in enumerate(found)
        if part is not None and part.text
    ]
    text, kept, notes = join_contexts(call.event, [(name, t) for _, name, t in contexts])
    dropped = {index for index, _, _ in contexts} - {contexts[k][0] for k in kept}
    parts = tuple(
        PartPreview(
            entry.handler,
            entry.order,
            part is not None,
            part.source if part else "",
            part.text if part else "",
            part.pieces if part else (),
            part.why if part else why,
            part.decision if part else None,
            part.effects if part else (),
            index in dropped,
        )
        for index, (entry, part, why) in enumerate(found)
    )
    decision = next((p.decision for p in parts if p.decision is not None), None)
    return EventPreview(call.event, text, decision, parts, tuple(notes))
