"""The hooks' terms: the call a capability's face receives (`Call`) and the answer it gives
(`Answer`), between the hook runtime (`dshkit.hooks`) and the faces (`<capability>/hook.py`).

A face is a module of functions named by its capability's descriptor (`dshkit.plugins`), each
taking one `Call` and returning an `Answer` (or None: nothing to say). The runtime calls them
on a real hook event, writes their answers in the calling harness's dialect and then runs the
commits of what it wrote; the preview (`dshkit inject show`) calls the same functions dry, on
a store whose work never commits (`Call.dry`: nothing started, no commit called).

An answer is a context for the model (`text`, with the `pieces` it is made of and where each
comes from), a notice for the person (`notice`, where the harness shows one), a decision
(allow, ask or deny a tool call; block a prompt or a stop), why there is nothing when there
is nothing, what the hook starts besides answering (`effects`), and a
`commit`: what was delivered, recorded in the store's "delivered once" ledger
(`Store.mark_delivered`) and wherever else, which the runtime calls only once the answer
carrying it was written to the harness.

On every hook's path: nothing is imported here but `os` and the harness registry until a
face asks for more (the store, pathlib, the turn records).
"""

from __future__ import annotations

import os

from . import harnesses

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from contextlib import AbstractContextManager
    from pathlib import Path
    from typing import Any

    from .store import Store

    Commit = Callable[[Store], None]

JOIN = "\n\n"  # between two contexts of one answer, and between the parts of one context
LIMIT = harnesses.HOOK_TEXT_LIMIT  # one answer's text, in UTF-16 code units
AGAIN = ("compact", "clear")  # SessionStart sources after which what was injected is gone
DECISIONS = ("allow", "ask", "deny", "block")  # a tool call's permission; a prompt or stop held
# How long a face's store statement waits for another process's lock: the agent waits.
STORE_BUSY_TIMEOUT_S = 1.0


def state_path(directory: str | None) -> str:
    """The state directory as `paths.state_dir` has it, `directory` as given to `--state-dir`
    (None: the default), without pathlib (the hot path); Invalid when it is relative."""
    if directory:
        path = os.path.expanduser(directory)
        return harnesses.absolute(path, directory, "the state directory", "state_dir")
    return os.path.join(harnesses.dsh_home(), "dshkit")


class Call:
    """One hook call: its event, its payload, the calling harness (a registry name, or
    "unknown"), dshkit's state directory as given (`directory`, None: the default) and the
    environment; `dry` for the preview (nothing started, nothing committed: its store is
    the one given, whose work never commits); `room`, what is left of the answer's context
    cap for this face's text once the faces before it in the answer spoke (`room_after`).

    Its store is opened once for the whole call (`open_store`), and closed by whoever made
    the call (`close`)."""

    __slots__ = (
        "_given",
        "_log",
        "_state",
        "_state_dir",
        "_step",
        "_store",
        "directory",
        "dry",
        "env",
        "event",
        "harness",
        "payload",
        "room",
        "until",
    )

    def __init__(
        self,
        event: str,
        payload: Mapping[str, Any],
        harness: str,
        directory: str | None,
        env: Mapping[str, str] | None = None,
        *,
        dry: bool = False,
        store: Store | None = None,
        step: bool | None = None,
        log: Callable[[str], None] | None = None,
        room: int = LIMIT,
    ) -> None:
        self.event = event
        self.payload = payload
        self.harness = harness
        self.directory = directory
        self.env = env if env is not None else {}
        self.dry = dry
        self.room = room
        self._given = store  # the preview's: lent as it is, never closed here
        self._log = log
        self._state: str | None = None
        self._state_dir: Path | None = None
        self._step = step
        self._store: Store | None = None
        self.until: int | None = None  # (`holds_until`)

    def holds_until(self, at_ms: int) -> None:
        """The answer given to this call holds, as far as time alone goes, until `at_ms` (ms
        since the epoch; the earliest any face names): a face whose words depend on the clock
        (a cache fresh for a while) says when they stop holding, and no hint or template made
        from this call answers from then on (`hooks.hint`)."""
        self.until = at_ms if self.until is None else min(self.until, at_ms)

    # -- what the payload says ---------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return str(self.payload.get("session_id") or "")

    @property
    def key(self) -> tuple[str, str]:
        """The session as the store keys it: (harness, session id)."""
        return self.harness, self.session_id

    @property
    def tool_name(self) -> str:
        return str(self.payload.get("tool_name") or "")

    @property
    def cwd(self) -> str:
        """The directory the payload names ("" when none)."""
        return str(self.payload.get("cwd") or "")

    @property
    def harness_info(self) -> harnesses.Harness | None:
        """The registry's entry for the calling harness (None when it is not known)."""
        return harnesses.HARNESSES.get(self.harness)

    @property
    def first_context(self) -> bool:
        """Whether this event's context reaches the harness's first request: SessionStart, or
        the first prompt where SessionStart context comes too late (DSH's bridge). Unknown
        harnesses are treated like Claude Code."""
        return context_event(self.harness) == self.event

    @property
    def again(self) -> bool:
        """A start after a compaction or /clear: what was injected before is gone."""
        return self.event == "SessionStart" and self.payload.get("source") in AGAIN

    @property
    def steps(self) -> bool:
        """Whether this is a UserPromptSubmit of a harness that fires one before every model
        step (then it may be a step, see `is_step`; never for the others)."""
        info = self.harness_info
        return self.event == "UserPromptSubmit" and info is not None and info.asks_every_step

    @property
    def is_step(self) -> bool:
        """Whether this UserPromptSubmit is a model step of a turn under way, not a person's
        new prompt (`dshkit.turns`; one store read, made once per call and only where the
        harness asks before every step). A store that cannot be read says "a step": the
        safe failure is a prompt left as typed."""
        if self._step is None:
            self._step = False
            prompt = self.payload.get("prompt")
            if self.steps and self.session_id and isinstance(prompt, str):
                from . import turns

                try:
                    with self.open_store() as store:
                        self._step = turns.is_step(store, self.key, prompt)
                except Exception as exc:
                    self.log(f"turn not read ({exc}): taken as a step")
                    self._step = True
        return self._step

    # -- dshkit's state ------------------------------------------------------------------------

    @property
    def state(self) -> str:
        """dshkit's state directory as a string (`state_path`: no pathlib, the hot path)."""
        if self._state is None:
            given = self._given
            self._state = str(given.state_dir) if given else state_path(self.directory)
        return self._state

    @property
    def state_dir(self) -> Path:
        """dshkit's state directory (pathlib is imported only for a face that asks)."""
        if self._state_dir is None:
            if self._given is not None:
                self._state_dir = self._given.state_dir
            else:
                from .paths import state_dir

                self._state_dir = state_dir(self.directory)
        return self._state_dir

    def open_store(self) -> AbstractContextManager[Store]:
        """The call's store for one `with` block, waiting at most STORE_BUSY_TIMEOUT_S on
        another process's lock (a locked store makes the face fail, which is "no opinion",
        never a hung agent).

        One connection serves the whole call, its faces and commits in turn, and `close`
        ends it: the last connection of a process to close a WAL database checkpoints it and
        removes its WAL and index, which the next open makes again, a few milliseconds each
        time (a prompt opens the store for each of its faces). A connection open while the
        services open their own makes theirs cheap too. An open that failed is tried again
        by the next face. A dry call lends the store it was given, as it is."""
        if self._given is not None:
            return _Given(self._given)
        if self._store is None:
            from .store import Store

            self._store = Store(self.state_dir, busy_timeout=STORE_BUSY_TIMEOUT_S)
        return _Lent(self)

    def close(self) -> None:
        """Close the call's store, if one was opened (the runtime does, once it answered)."""
        store, self._store = self._store, None
        if store is not None:
            store.close()

    def log(self, message: str) -> None:
        """A line in the hooks' log (`<state dir>/hooks.log`, the runtime's), for what went
        wrong behind the agent's back; dropped where no log was given (the preview)."""
        if self._log is not None:
            self._log(message)


class _Lent:
    """The call's store lent to one `with` block: left open at its end, but a transaction
    the block left open (interrupted) is rolled back, as closing the connection would have
    done; where that cannot be done, the store is closed (the next block opens another). A
    block inside another (a face asking `Call.is_step` with the store in hand) leaves the
    outer block's transaction to it."""

    __slots__ = ("call", "outer", "store")

    def __init__(self, call: Call) -> None:
        assert call._store is not None
        self.call, self.store = call, call._store
        self.outer = False

    def __enter__(self) -> Store:
        self.outer = self.store.db.in_transaction
        return self.store

    def __exit__(self, *exc: object) -> None:
        if self.outer or not self.store.db.in_transaction:
            return
        try:
            self.store.db.execute("ROLLBACK")
        finally:
            if self.store.db.in_transaction and self.call._store is self.store:
                self.call.close()


class _Given:
    """A store given to a dry call, lent as it is (its owner rolls its work back)."""

    __slots__ = ("store",)

    def __init__(self, store: Store) -> None:
        self.store = store

    def __enter__(self) -> Store:
        return self.store

    def __exit__(self, *exc: object) -> None:
        pass


def context_event(harness: str) -> str:
    """The event whose context reaches `harness`'s first request."""
    info = harnesses.HARNESSES.get(harness)
    return info.context_event if info else "SessionStart"


class Piece:
    """One source of an answer's text: what it is (e.g. "profile:extra") and its text."""

    __slots__ = ("source", "text")

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.text = text


class Answer:
    """What one face gives one call (see the module docstring): `source` names what speaks
    (e.g. "profile"); `decision` is (one of DECISIONS, the reason) or None."""

    __slots__ = ("commit", "decision", "effects", "notice", "pieces", "source", "text", "why")

    def __init__(
        self,
        source: str,
        text: str = "",
        *,
        pieces: tuple[Piece, ...] = (),
        why: str = "",
        decision: tuple[str, str] | None = None,
        effects: tuple[str, ...] = (),
        commit: Commit | None = None,
        notice: str = "",
    ) -> None:
        if decision is not None and decision[0] not in DECISIONS:
            raise ValueError(f"a decision is one of {', '.join(DECISIONS)}, not {decision[0]!r}")
        self.source = source
        self.text = text
        self.pieces = pieces or ((Piece(source, text),) if text else ())
        self.why = why
        self.decision = decision
        self.effects = effects
        self.commit = commit
        # For the person, not the model: shown where the harness shows a hook's words to
        # the person (`HookDialect.person`); a face asks `harnesses.shows_person` first.
        self.notice = notice

    def words(self) -> dict[str, Any]:
        """The answer in dshkit's own words, what the runtime merges and a harness's dialect
        writes (`additionalContext`; `permissionDecision` with `permissionDecisionReason`;
        `decision: "block"` with `reason`; `systemMessage`, for the person); {} when it says
        nothing."""
        said: dict[str, Any] = {}
        if self.text:
            said["additionalContext"] = self.text
        if self.notice:
            said["systemMessage"] = self.notice
        if self.decision is not None:
            kind, reason = self.decision
            if kind == "block":
                said.update(decision="block", reason=reason)
            else:
                said.update(permissionDecision=kind, permissionDecisionReason=reason)
        return said


def join_contexts(event: str, contexts: list[tuple[str, str]]) -> tuple[str, list[int], list[str]]:
    """The contexts (handler, text), in priority order, as the one text an answer carries:
    joined in order, each that would take the text over the cap dropped whole (later, smaller
    ones may still fit). Returns the text, the indexes of the contexts it holds, and a note
    for the log naming each one dropped."""
    kept: list[int] = []
    texts: list[str] = []
    notes: list[str] = []
    used = 0
    for index, (name, text) in enumerate(contexts):
        length = harnesses.text_length(text)
        grown = used + (len(JOIN) if texts else 0) + length
        if grown > LIMIT:
            notes.append(
                f"dropped the context of {name} ({length} characters): it would take the "
                f"{event} context over the {LIMIT}-character cap ({used} used)"
            )
            continue
        texts.append(text)
        kept.append(index)
        used = grown
    return JOIN.join(texts), kept, notes


def room_after(event: str, contexts: list[tuple[str, str]]) -> int:
    """What is left of the cap for one more context after `contexts` (handler, text), joined
    as `join_contexts` joins them (a context it would drop takes no room): the `room` a face
    is called with."""
    if not contexts:
        return LIMIT
    text, _, _ = join_contexts(event, contexts)
    if not text:
        return LIMIT
    return max(0, LIMIT - harnesses.text_length(text) - len(JOIN))
