"""The sessions' hook face: on Stop and SessionEnd, an incremental scan and the profile
trigger check, detached.

The agent is not kept waiting: a separate process runs `dshkit refresh`, and none is started
while a scan holds the store's lease (at most one at a time, decided through the store). The
preview (`dshkit inject show`) runs the same function dry: it starts nothing and says it would.
"""

from __future__ import annotations

from ..hookio import Answer, Call

REFRESH = "refresh"


def on_session_pause(call: Call) -> Answer:
    """An incremental scan and the profile trigger check in a detached `dshkit refresh`, unless
    a scan holds the store's lease (one at a time)."""
    from ..store import SCAN_LEASE

    with call.open_store() as store:
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
