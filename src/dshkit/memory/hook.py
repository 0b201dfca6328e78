"""Memory at the hooks, memory's hook face: a new session is given its workspace's memory
once, and a session that pauses or ends is harvested in the background.

The memory text goes with SessionStart, and again after a compaction or /clear, in the room
the answer has left (`Call.room`); the preview (`dshkit inject show`) runs the same function
dry. DSH's bridge delivers a start's context from the second request on: its first prompt
does not carry memory, because a prompt's hook budget is all taken (the optimizer's).

On Stop and SessionEnd a detached `dshkit memory harvest` is started for the session (at a
pause it skips a session harvested a short while ago); the agent never waits for it.
"""

from __future__ import annotations

from ..hookio import Answer, Call, Piece

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from ..store import Store

MEMORY = "memory"


def on_session_start(call: Call) -> Answer:
    """The workspace's memory (`dshkit.memory.inject`), once per session at its start and
    again after a compaction or /clear (then ranked by the session's first request), in the
    room the answer has left once the handlers before it spoke (`Call.room`: the profile, a
    handoff's pickup, the capability facts). Only the session's own workspace: no directory
    in the call, no memory. Delivered means recorded by the commit."""
    with call.open_store() as store:
        return _memory_at_start(store, call)


def _memory_at_start(store: Store, call: Call) -> Answer:
    from ..config import load_config
    from ..store import MEMORY_DELIVERY

    if not call.session_id:
        return Answer(MEMORY, why="the call names no session")
    if call.event != "SessionStart":
        return Answer(MEMORY, why="memory comes with the session's start")
    settings = load_config(call.state_dir)["memory"]
    if not settings["inject"]:
        return Answer(MEMORY, why="switched off ([memory] inject)")
    with store.transaction():
        done = store.delivered(call.key, MEMORY_DELIVERY)
    if done and not call.again:
        return Answer(MEMORY, why="this session had it already")
    if not call.cwd:
        return Answer(MEMORY, why="the call names no directory: no workspace to read")
    from .inject import choose  # (a start that had it reads none)
    from .workspace import identify, settle

    workspace = identify(call.cwd, settings["workspaces"])
    settle(store, workspace)  # a remote added since: its root's records join it
    budget = min(settings["inject_chars"], call.room)  # what the answer has left
    chosen = choose(store, workspace, _first_request(store, call), budget)
    if not chosen.text:
        return Answer(MEMORY, why=f"nothing to give a session of {workspace.root}")
    if chosen.holds_until is not None:  # (ranked by recency too: the order moves with time)
        call.holds_until(chosen.holds_until)
    text = chosen.text
    key = call.key

    def record(store: Store) -> None:
        import hashlib  # after the answer: not on the way to it

        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        store.mark_delivered(key, MEMORY_DELIVERY, digest, superseding=True)

    # Each piece as it was given (dshkit's template, never a record's external text).
    pieces = tuple(
        Piece(f"memory:{r.id}", line) for r, line in zip(chosen.records, chosen.lines, strict=True)
    )
    return Answer(MEMORY, text, pieces=pieces, commit=record)


def _first_request(store: Store, call: Call) -> str:
    """The session's first request when it is known (a start after a compaction): the first
    human message the scan kept."""
    row = store.db.execute(
        "SELECT text FROM human_messages WHERE harness = ? AND session_id = ? "
        "ORDER BY seq, rowid LIMIT 1",
        call.key,
    ).fetchone()
    return str(row[0]) if row else ""


def on_stop(call: Call) -> Answer | None:
    # A harness whose hooks have no SessionEnd (DSH's bridge: its dialect says so) has no end
    # to catch what a pause skipped, so there every Stop harvests as an end would.
    info = call.harness_info
    ends = info is None or info.dialect.name("SessionEnd") is not None
    _harvest(call, "stop" if ends else "end")
    return None


def on_session_end(call: Call) -> Answer | None:
    _harvest(call, "end")
    return None


def _harvest(call: Call, at: str) -> None:
    """Start the session's harvest detached (at a pause, unless one is running: one at a
    time; at the end always, waiting for the one running)."""
    if not call.session_id or call.harness_info is None:
        return
    from ..procs import spawn_detached
    from .records import HARVEST_LEASE

    if at == "stop":  # a pause while a harvest runs: the next pause or the end harvests
        with call.open_store() as store:
            if store.lease_holder(HARVEST_LEASE) is not None:
                return
    spawn_detached(
        "memory",
        "harvest",
        "--session",
        call.session_id,
        "--harness",
        call.harness,
        "--at",
        at,
        "--state-dir",
        str(call.state_dir),
    )
