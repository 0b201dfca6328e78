"""The rules of what each hook puts into a session: one function per context handler, run by
the hook that delivers it and, dry, by the preview that shows it.

A rule takes a `hookio.Call` (one event of one session, as its payload names it) and returns a
`hookio.Answer`: the text for the model (empty when there is none, with why), where each
piece of it comes from, a decision (a block or a deny) when the rule makes one, what the hook
starts besides answering (a background probe, a recovery, a refresh), and the `commit` that
records the delivery, which the hook runtime calls only once the answer carrying the text
was written. A dry call starts nothing (its `effects` say what would start) and is run on a
store whose transactions never commit (`service.Uncommitted`), so the very same code shows
what the next event would bring without changing anything.

On the hooks' path: nothing beyond `os` is imported until a rule runs.
"""

from __future__ import annotations

import os

from ..hookio import JOIN, Answer, Call, Piece

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from ..graft import live
    from ..store import Store


GRAFT = "graft"
REFRESH = "refresh"


# -- context handoff (graft) -----------------------------------------------------------------


def handoff_at_start(call: Call) -> Answer:
    """A handoff waiting in the session's directory, handed to this new session; and an
    unfinished handoff nobody drives any more, recovered in the background."""
    with call.open_store() as store:
        return _handoff_at_start(store, call)


def _handoff_at_start(store: Store, call: Call) -> Answer:
    effects: tuple[str, ...] = ()
    if _handoff_begun(store) and _recovery_due(store):
        effects = ("starts `dshkit graft recover`: an unfinished handoff has no process",)
        if not call.dry:
            from ..procs import spawn_detached

            spawn_detached("graft", "recover", "--state-dir", str(call.state_dir))
    picked = _pickup(store, call)
    if picked is None:
        return Answer(GRAFT, why="no handoff waits for a session started here", effects=effects)
    return Answer(
        GRAFT,
        picked.text,
        pieces=(Piece("graft:pickup", picked.text),),
        effects=effects,
        commit=picked.commit,
    )


def handoff_at_prompt(call: Call) -> Answer:
    """A prompt to a handed-off session is blocked (with where the work went); otherwise what
    the session is owed: a waiting handoff (its first prompt, where that carries context), a
    notice (a rolled-back handoff), the watermark's word for this step."""
    with call.open_store() as store:
        return _handoff_at_prompt(store, call)


def _handoff_at_prompt(store: Store, call: Call) -> Answer:
    if not call.session_id:
        return Answer(GRAFT, why="the call names no session")
    # No handoff ever began here: no session was handed off and none is owed a notice, so
    # only the watermark can speak (and `graft.live` is loaded only when it does read).
    notice = None
    if _handoff_begun(store):
        from ..graft import live

        pointer = live.retired(store, call.harness, call.session_id)
        if pointer is not None:
            return _blocked(store, call, "block", pointer)
        notice = live.notices(store, call.harness, call.session_id)
    owed: list[tuple[str, live.Notice | live.Watch | None]] = [
        ("graft:pickup", _pickup(store, call)),
        ("graft:notice", notice),
        ("graft:watermark", _watch(store, call)),
    ]
    said = [(source, each) for source, each in owed if each is not None]
    if not said:
        return Answer(GRAFT, why="no handoff, notice or watermark word is owed")
    pieces = tuple(Piece(source, str(each.text)) for source, each in said)
    commits = [each.commit for _, each in said]

    def commit(store: Store) -> None:
        for each in commits:
            each(store)

    return Answer(
        GRAFT,
        JOIN.join(piece.text for piece in pieces),
        pieces=pieces,
        effects=_forced(said),
        commit=commit,
    )


def watermark_after_tool(call: Call) -> Answer:
    """The watermark's word after a tool call, when it has one (a nudge, an escalation, the
    forced cut)."""
    with call.open_store() as store:
        return _watermark_after_tool(store, call)


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


def retirement_at_tool(call: Call) -> Answer:
    """Every tool call of a handed-off session is denied, with where the work went."""
    with call.open_store() as store:
        return _retirement_at_tool(store, call)


def _retirement_at_tool(store: Store, call: Call) -> Answer:
    from ..graft import live

    if not call.session_id:
        return Answer(GRAFT, why="the call names no session")
    pointer = live.retired(store, call.harness, call.session_id)
    if pointer is None:
        return Answer(GRAFT, why="the session was not handed off")
    return _blocked(store, call, "deny", pointer)


def _blocked(store: Store, call: Call, decision: str, pointer: str) -> Answer:
    """A handed-off session's prompt or tool call refused with the pointer; when no live
    process drives its handoff any more (its driver was killed), a recovery is started now."""
    from ..graft import live

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
    from ..graft import live
    from ..graft.settings import GraftSettings

    settings = GraftSettings.load(call.state_dir)
    watched = live.watch(
        store, call.harness, call.session_id, transcript, settings, str(call.state_dir)
    )
    return watched if watched.text else None


def _pickup(store: Store, call: Call) -> live.Notice | None:
    """A handoff waiting in this session's directory, when this event reaches the model
    (never in the middle of a turn: a step takes none)."""
    if not call.first_context or call.is_step or not call.session_id or not call.cwd:
        return None
    if not _handoff_begun(store):  # (as `live.pickup` says, without loading it)
        return None
    from ..graft import live

    return live.pickup(store, call.harness, call.session_id, call.cwd)


def _recovery_due(store: Store) -> bool:
    from ..graft import live

    return live.recovery_due(store)


def _handoff_begun(store: Store) -> bool:
    """Whether a handoff ever began in the store's state directory (`graft.marker.used`, one
    `stat`): without one no session here was handed off, is owed a notice or can pick one up,
    and `graft.live` (the watermark's imports with it) need not be loaded to say so."""
    from ..graft.marker import used

    return used(str(store.state_dir))


def _forced(said: list[tuple[str, live.Notice | live.Watch]]) -> tuple[str, ...]:
    """What a delivered forced cut starts (its commit starts it)."""
    from ..graft.live import Watch

    forced = any(isinstance(each, Watch) and each.decision.action == "force" for _, each in said)
    return ("once delivered, starts the handoff (`dshkit graft slice`, forced)",) if forced else ()


# -- when the agent pauses -------------------------------------------------------------------


def refresh_on_pause(call: Call) -> Answer:
    """An incremental scan and the profile trigger check in a detached `dshkit refresh`, unless
    a scan holds the store's lease (one at a time)."""
    with call.open_store() as store:
        return _refresh_on_pause(store, call)


def _refresh_on_pause(store: Store, call: Call) -> Answer:
    from ..store import SCAN_LEASE

    if store.lease_holder(SCAN_LEASE) is not None:
        return Answer(REFRESH, why="a scan is running: no refresh is started")
    if not call.dry:
        from ..procs import spawn_detached

        spawn_detached("refresh", "--state-dir", str(call.state_dir))
    return Answer(
        REFRESH,
        why="nothing for the model: it brings dshkit's store up to date",
        effects=("starts a detached `dshkit refresh`",),
    )
