"""Memory at the hooks: a new session is given its workspace's memory once, and a session
that pauses or ends is harvested in the background.

The memory text goes with SessionStart, and again after a compaction or /clear; the rule is
`dshkit.inject.rules.memory_at_start`, which the preview (`dshkit inject show`, `dshkit
memory inject`) runs too. DSH's bridge delivers a start's context from the second request
on: its first prompt does not carry memory, because a prompt's hook budget is all taken
(the optimizer's).

On Stop and SessionEnd a detached `dshkit memory harvest` is started for the session (at a
pause it skips a session harvested a short while ago); the agent never waits for it. A
harness whose hooks have no SessionEnd (DSH's bridge: the registry's dialect says so) has no
end to catch what a pause skipped, so there every Stop harvests as an end would: whatever the
interval, waiting for a harvest that is running rather than skipping the turn.
"""

from __future__ import annotations

from ..inject import rules
from .protocol import HookInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any


def on_session_start(hook: HookInput) -> dict[str, Any] | None:
    return hook.deliver(rules.memory_at_start)


def on_stop(hook: HookInput) -> dict[str, Any] | None:
    info = hook.harness_info
    ends = info is None or info.dialect.name("SessionEnd") is not None
    _harvest(hook, "stop" if ends else "end")
    return None


def on_session_end(hook: HookInput) -> dict[str, Any] | None:
    _harvest(hook, "end")
    return None


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
