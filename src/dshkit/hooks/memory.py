"""Memory at the hooks: a new session is given its workspace's memory once, and a session
that pauses or ends is harvested in the background.

The memory text goes with SessionStart, and again after a compaction or /clear (then ranked
by the session's first request). DSH's bridge delivers a start's context from the second
request on; its first prompt does not carry memory, because a prompt's hook budget is all
taken (the optimizer's). It takes
the room the profile leaves in the answer (and at most `[memory] inject_chars`). Delivered
means recorded by the commit, once the answer was written. `dshkit memory inject --cwd DIR`
prints the same choice.

On Stop and SessionEnd a detached `dshkit memory harvest` is started for the session (it
skips a session harvested a short while ago at Stop); the agent never waits for it.
"""

from __future__ import annotations

from ..inject import rules
from .protocol import HookInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from ..inject.rules import Call, Part
    from ..store import Store

MEMORY = "memory"
DELIVERY = "memory"  # the ledger's kind: the digest of the text last delivered


def on_session_start(hook: HookInput) -> dict[str, Any] | None:
    return hook.deliver(memory_at_start)


def on_stop(hook: HookInput) -> dict[str, Any] | None:
    _harvest(hook, "stop")
    return None


def on_session_end(hook: HookInput) -> dict[str, Any] | None:
    _harvest(hook, "end")
    return None


def memory_at_start(store: Store, call: Call) -> Part:
    """The rule (see the module docstring); a dry call changes nothing."""
    from ..config import load_config
    from ..memory.inject import choose, room_beside
    from ..memory.workspace import identify

    if not call.session_id:
        return rules.Part(MEMORY, why="the call names no session")
    if call.event != "SessionStart":
        return rules.Part(MEMORY, why="memory comes with the session's start")
    settings = load_config(call.state_dir)["memory"]
    if not settings["inject"]:
        return rules.Part(MEMORY, why="switched off ([memory] inject)")
    with store.transaction():
        done = store.delivered(call.key, DELIVERY)
    if done and not call.again:
        return rules.Part(MEMORY, why="this session had it already")
    if not call.cwd:
        return rules.Part(MEMORY, why="the call names no directory: no workspace to read")
    workspace = identify(call.cwd, settings["workspaces"])
    budget = min(settings["inject_chars"], room_beside(_profile(store)))
    chosen = choose(store, workspace, _request(store, call), budget)
    if not chosen.text:
        return rules.Part(MEMORY, why=f"nothing to give a session of {workspace.root}")
    text = chosen.text
    key = call.key

    def record(store: Store) -> None:
        import hashlib

        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        store.mark_delivered(key, DELIVERY, digest, superseding=True)

    pieces = tuple(rules.Piece(f"memory:{r.id}", r.text) for r in chosen.records)
    return rules.Part(MEMORY, text, pieces=pieces, commit=record)


def _profile(store: Store) -> str:
    """The profile's text, which comes first in the answer."""
    from ..profile.state import ProfileState

    return ProfileState(store).effective().text


def _request(store: Store, call: Call) -> str:
    """The session's first request when it is known: the prompt of the event carrying the
    context, else (a start after a compaction) the first human message the scan kept."""
    prompt = call.payload.get("prompt")
    if call.event == "UserPromptSubmit" and isinstance(prompt, str):
        return prompt
    row = store.db.execute(
        "SELECT text FROM human_messages WHERE harness = ? AND session_id = ? "
        "ORDER BY seq, rowid LIMIT 1",
        call.key,
    ).fetchone()
    return str(row[0]) if row else ""


def _harvest(hook: HookInput, at: str) -> None:
    """Start the session's harvest detached (at a pause, unless one is running: one at a
    time; at the end always, waiting for the one running)."""
    if not hook.session_id or hook.harness_info is None:
        return
    from ..memory.records import HARVEST_LEASE
    from ..procs import spawn_detached

    if at == "stop":  # a pause while a harvest runs: the next pause or the end harvests
        with hook.open_store() as store:
            if store.lease_holder(HARVEST_LEASE) is not None:
                return
    spawn_detached(
        "memory",
        "harvest",
        "--session",
        hook.session_id,
        "--harness",
        hook.harness,
        "--at",
        at,
        "--state-dir",
        str(hook.state_dir),
    )
