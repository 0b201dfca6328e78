"""Memory at the hooks: a new session is given its workspace's memory once, and a session
that pauses or ends is harvested in the background.

The memory text goes with SessionStart, and again after a compaction or /clear; the rule is
`dshkit.inject.rules.memory_at_start`, which the preview (`dshkit inject show`, `dshkit
memory inject`) runs too. DSH's bridge delivers a start's context from the second request
on: its first prompt does not carry memory, because a prompt's hook budget is all taken
(the optimizer's).

On Stop and SessionEnd a detached `dshkit memory harvest` is started for the session (at a
pause it skips a session harvested a short while ago); the agent never waits for it.
"""

from __future__ import annotations

from ..hookio import Answer, Call
from ..inject import rules


def on_session_start(call: Call) -> Answer | None:
    return rules.memory_at_start(call)


def on_stop(call: Call) -> Answer | None:
    _harvest(call, "stop")
    return None


def on_session_end(call: Call) -> Answer | None:
    _harvest(call, "end")
    return None


def _harvest(call: Call, at: str) -> None:
    """Start the session's harvest detached (at a pause, unless one is running: one at a
    time; at the end always, waiting for the one running)."""
    if not call.session_id or call.harness_info is None:
        return
    from ..memory.records import HARVEST_LEASE
    from ..procs import spawn_detached

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
