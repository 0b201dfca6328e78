"""Graft at the hooks, graft's hook face: a handed-off session takes no new work, the
watermark speaks once per turn, a waiting handoff reaches the next session, notices once,
and the person is told where a forced cut's work went.

A prompt to a transferring or retired session is blocked and every tool call denied, with a
pointer to where the work went. The warning, the escalation and the forced cut reach the model
as additional context after a tool call or with a prompt; what they leave behind is recorded
only once the text was delivered (the answer's `commit`). When no live process drives a
handoff any more, a recovery is started in the background.

After a tool call (every tool call: the hot path) a session the watermark cannot have
anything to say to yet is answered from its room hint (`graft.marker`), without opening the
store or reading the transcript; a check that had nothing to say moves the hint. A prompt
where no handoff ever began is answered from the same hint (and turns it: its room in bytes
no longer holds, its ceilings do). Where the hint cannot tell, the fold may (`graft.fold`):
these functions then run once the call is answered, their full check moving the store and
the hint, their answer discarded (`hooks.later`). The preview
(`dshkit inject show`) runs these functions dry: it starts nothing and leaves the room hint,
a file of the state directory, alone (it always checks in full).
"""

from __future__ import annotations

import os

from ..hookio import JOIN, Answer, Call, Piece
from . import marker

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TypeAlias

    from ..store import Store
    from . import live

    # What a session is owed: a text and its commit.
    Owed: TypeAlias = "live.Notice | live.Watch | _Scope"

GRAFT = "graft"


def on_session_start(call: Call) -> Answer:
    """A handoff waiting in the session's directory, handed to this new session; and an
    unfinished handoff nobody drives any more, recovered in the background."""
    with call.open_store() as store:
        return _handoff_at_start(store, call)


def on_prompt(call: Call) -> Answer | None:
    """A prompt to a handed-off session is blocked (with where the work went); otherwise what
    the session is owed: a waiting handoff (its first prompt, where that carries context), a
    notice (a rolled-back handoff), the watermark's word for this step."""
    if call.dry:
        with call.open_store() as store:
            return _handoff_at_prompt(store, call)
    state = call.state
    transcript = str(call.payload.get("transcript_path") or "")
    # Where no handoff ever began, only the watermark can speak to a prompt, and its room
    # hint says when it surely has nothing to say to the transcript as it is (as after a
    # tool call): then the store is not opened nor the log read; the next check folds it.
    size = marker.transcript_size(transcript)
    begun = marker.used(state)
    quiet = not begun and marker.quiet(state, transcript, size, None)
    # A prompt may bring context its transcript does not show in bytes (an attached file)
    # and begins a new turn: the room hint then holds by its ceilings alone, the turn's and
    # the next one's, which the requests' own usage is measured against.
    marker.turn(state, transcript)
    if quiet:
        return None
    with call.open_store() as store:
        answer = _handoff_at_prompt(store, call)
        if begun or size is None or not call.session_id:
            return answer  # (a handed-off session's prompt may not fold its log)
        try:  # the check folded the log (no handoff ever began): the room hint moved
            if any(piece.source == "graft:watermark" for piece in answer.pieces):
                marker.forget(state, transcript)
            else:
                marker.remember(store, state, call.harness, call.session_id, transcript, size)
                marker.turn(state, transcript)
        except Exception as exc:  # a hint not kept only costs the next call a full check
            marker.forget(state, transcript)
            call.log(f"graft room hint not kept: {type(exc).__name__}: {exc}")
    return answer


def on_tool(call: Call) -> Answer:
    """Every tool call of a handed-off session is denied, with where the work went.

    Registered to run only once a handoff ever began here (the entry point checks the marker
    before it starts any handler): every tool call would pass here otherwise."""
    if not call.session_id:
        return Answer(GRAFT, why="the call names no session")
    with call.open_store() as store:
        return _retirement_at_tool(store, call)


def after_tool(call: Call) -> Answer | None:
    """The watermark's word after a tool call, when it has one (a nudge, an escalation, the
    forced cut)."""
    if call.dry:
        with call.open_store() as store:
            return _watermark_after_tool(store, call)
    state = call.state  # the state directory without pathlib (the hot path)
    transcript = str(call.payload.get("transcript_path") or "")
    if not marker.caught_up(transcript, call.payload.get):
        call.log(
            f"graft: the log did not show tool call {call.payload.get('tool_use_id')!r} in "
            "time: the watermark judged it as it was"
        )
    size = marker.transcript_size(transcript)
    if marker.quiet(state, transcript, size, call.payload.get("tool_input")):
        return None
    with call.open_store() as store:
        answer = _watermark_after_tool(store, call)
        if size is None or not call.session_id:
            return answer
        try:  # the room hint moved in the same store
            if answer.text:
                marker.forget(state, transcript)
            else:
                marker.remember(store, state, call.harness, call.session_id, transcript, size)
        except Exception as exc:  # a hint not kept only costs the next call a full check
            marker.forget(state, transcript)
            call.log(f"graft room hint not kept: {type(exc).__name__}: {exc}")
    return answer


def on_stop(call: Call) -> Answer | None:
    """After a forced cut, where the work went, told to the person once at the end of the
    source's turn: where the harness shows a hook's words to the person, there; else the
    model is sent on to say it (its words are what the person reads), once."""
    if not call.session_id or not marker.used(call.state):
        return None  # no handoff ever began here: no forced cut to report (one `stat`)
    with call.open_store() as store:
        from . import live

        report = live.forced_report(
            store, call.harness, call.session_id, 0.0 if call.dry else STOP_WAIT_S
        )
    if report is None:
        return Answer(GRAFT, why="no forced cut of this session waits to be reported")
    from .. import harnesses

    if harnesses.dialect(call.harness).person is not None:
        return Answer(GRAFT, notice=report.text, commit=report.commit)
    if harnesses.stop_support(call.harness).blocks and not call.payload.get("stop_hook_active"):
        relay = live.RELAY + report.text
        return Answer(GRAFT, decision=("block", relay), commit=report.commit)
    return Answer(GRAFT, why="this harness shows the person nothing a hook says")


# How long the end of a force-cut turn waits for its handoff (detached) to start the target,
# within the Stop hook's budget (`dshkit.plugins`): the model's last words took a while
# already; a target not known by then is named by the pointer the next prompt is answered
# with, and by `dshkit graft status`.
STOP_WAIT_S = 0.7


def _handoff_at_start(store: Store, call: Call) -> Answer:
    effects: tuple[str, ...] = ()
    if _handoff_begun(store) and _recovery_due(store):
        effects = ("starts `dshkit graft recover`: an unfinished handoff has no process",)
        if not call.dry:
            from ..procs import spawn_detached

            spawn_detached("graft", "recover", "--state-dir", str(call.state_dir))
    said = [
        (source, each)
        for source, each in (
            ("graft:pickup", _pickup(store, call)),
            ("graft:scope", _scope(store, call)),
        )
        if each is not None
    ]
    if not said:
        return Answer(GRAFT, why="no handoff waits for a session started here", effects=effects)
    return _joined(said, effects)


def _joined(said: Sequence[tuple[str, Owed]], effects: tuple[str, ...] = ()) -> Answer:
    """What is owed to the session, in order, as one answer committing each once delivered."""
    pieces = tuple(Piece(source, str(each.text)) for source, each in said)
    commits = [each.commit for _, each in said]

    def commit(store: Store) -> None:
        for each in commits:
            each(store)

    return Answer(
        GRAFT,
        JOIN.join(piece.text for piece in pieces),
        pieces=pieces,
        effects=effects,
        commit=commit,
    )


class _Scope:
    """Where to search, owed to the session once (see `graft.scope`)."""

    __slots__ = ("commit", "text")

    def __init__(self, text: str, key: tuple[str, str]) -> None:
        self.text = text

        def said(store: Store) -> None:
            from ..store import GRAFT_SCOPE_DELIVERY

            store.mark_delivered(key, GRAFT_SCOPE_DELIVERY)

        self.commit = said


def _scope(store: Store, call: Call) -> _Scope | None:
    """The workspace to search in, told once per session on the event whose context reaches
    its first request (again after a compaction or /clear: what was told is gone), never in
    the middle of a turn, where `[graft] search_scope` asks for it
    (docs/design/graft.md#the-model-is-told-where-to-search)."""
    if not call.first_context or call.is_step or not call.session_id or not call.cwd:
        return None
    from ..store import GRAFT_SCOPE_DELIVERY

    if not call.again and store.delivered(call.key, GRAFT_SCOPE_DELIVERY):
        return None
    from .settings import GraftSettings

    if not GraftSettings.resolve(call.state_dir)[0].search_scope:
        return None  # off unless asked for (`[graft] search_scope`)
    from .scope import search_scope

    return _Scope(search_scope(call.cwd), call.key)


def _handoff_at_prompt(store: Store, call: Call) -> Answer:
    if not call.session_id:
        return Answer(GRAFT, why="the call names no session")
    # No handoff ever began here: no session was handed off and none is owed a notice, so
    # only the watermark can speak (and `graft.live` is loaded only when it does read).
    notice = None
    if _handoff_begun(store):
        from . import live

        pointer = live.retired(store, call.harness, call.session_id)
        # A model step of the turn under way (a harness that asks before every step) is no
        # new work: the model may still say where it stopped, and what the person is to be
        # told; its tool calls are denied all the same.
        if pointer is not None and not call.is_step:
            return _blocked(store, call, "block", pointer)
        notice = live.notices(store, call.harness, call.session_id)
    owed: list[tuple[str, Owed | None]] = [
        ("graft:pickup", _pickup(store, call)),
        ("graft:scope", _scope(store, call)),
        ("graft:notice", notice),
        ("graft:watermark", _watch(store, call)),
    ]
    said = [(source, each) for source, each in owed if each is not None]
    if not said:
        return Answer(GRAFT, why="no handoff, notice or watermark word is owed")
    return _joined(said, _forced(said))


def _watermark_after_tool(store: Store, call: Call) -> Answer:
    watched = _watch(store, call)
    if watched is None:
        return Answer(GRAFT, why="the watermark has nothing to say at this step")
    return Answer(
        GRAFT,
        str(watched.text),
        pieces=(Piece("graft:watermark", str(watched.text)),),
        effects=_forced([("graft:watermark", watched)]),
        commit=watched.commit,
    )


def _retirement_at_tool(store: Store, call: Call) -> Answer:
    from . import live

    pointer = live.retired(store, call.harness, call.session_id)
    if pointer is None:
        return Answer(GRAFT, why="the session was not handed off")
    return _blocked(store, call, "deny", pointer)


def _blocked(store: Store, call: Call, decision: str, pointer: str) -> Answer:
    """A handed-off session's prompt or tool call refused with the pointer; when no live
    process drives its handoff any more (its driver was killed), a recovery is started now."""
    from . import live

    if not live.driver_gone(store, call.harness, call.session_id):
        return Answer(GRAFT, decision=(decision, pointer))
    if not call.dry:
        from ..procs import spawn_detached

        spawn_detached("graft", "recover", "--state-dir", str(call.state_dir))
    return Answer(
        GRAFT,
        decision=(decision, f"{pointer}\n{live.RECOVERING}"),
        effects=("starts `dshkit graft recover`: no live process drives this handoff",),
    )


def _watch(store: Store, call: Call) -> live.Watch | None:
    """The watermark's word for this step, when it has one to say."""
    transcript = str(call.payload.get("transcript_path") or "")
    if not call.session_id or not os.path.isfile(transcript):
        return None  # nothing written yet (or a harness that names no transcript)
    from . import live
    from .settings import GraftSettings

    # A value that does not fit is refused and its default used: the nudge and the forced cut
    # never go quiet for it (docs/design/graft.md#a-refused-setting-falls-back-to-its-default).
    settings, problem = GraftSettings.resolve(call.state_dir)
    if problem is not None:
        _refused(store, call, problem)
    elif not call.dry:  # for the check where no room hint answers, whatever this one says
        from .fold import keep_settings

        keep_settings(str(call.state_dir), settings, os.environ)
    watched = live.watch(
        store, call.harness, call.session_id, transcript, settings, str(call.state_dir)
    )
    return watched if watched.text else None


def _refused(store: Store, call: Call, problem: str) -> None:
    """Say that `[graft]` settings were refused: in the hooks' log at every check, and in
    the audit trail (`settings-refused`, what the console shows) once per distinct refusal."""
    call.log(f"graft settings refused, defaults used: {problem}")
    if call.dry:
        return
    import hashlib

    digest = hashlib.sha256(problem.encode()).hexdigest()[:16]
    try:
        with store.transaction():
            if store.get_meta(REFUSED_KEY) == digest:
                return
            store.set_meta(REFUSED_KEY, digest)
            from . import ledger

            ledger.audit(store, "settings-refused", problem=problem, by="hook")
    except Exception as exc:  # the trail missing it must not silence the watermark
        call.log(f"graft settings refusal not audited: {type(exc).__name__}: {exc}")


REFUSED_KEY = "graft.settings-refused"  # the digest of the refusal last audited


def _pickup(store: Store, call: Call) -> live.Notice | None:
    """A handoff waiting in this session's directory, when this event reaches the model
    (never in the middle of a turn: a step takes none)."""
    if not call.first_context or call.is_step or not call.session_id or not call.cwd:
        return None
    if not _handoff_begun(store):  # (as `live.pickup` says, without loading it)
        return None
    from . import live

    return live.pickup(store, call.harness, call.session_id, call.cwd)


def _recovery_due(store: Store) -> bool:
    from . import live

    return live.recovery_due(store)


def _handoff_begun(store: Store) -> bool:
    """Whether a handoff ever began in the store's state directory (`graft.marker.used`, one
    `stat`): without one no session here was handed off, is owed a notice or can pick one up,
    and `graft.live` (the watermark's imports with it) need not be loaded to say so."""
    return marker.used(str(store.state_dir))


def _forced(said: Sequence[tuple[str, Owed]]) -> tuple[str, ...]:
    """What a delivered forced cut starts (its commit starts it)."""
    from .live import Watch

    forced = any(isinstance(each, Watch) and each.decision.action == "force" for _, each in said)
    return ("once delivered, starts the handoff (`dshkit graft slice`, forced)",) if forced else ()
