"""On Stop and SessionEnd: an incremental scan and the profile trigger check, detached.

The agent is not kept waiting: a separate process runs `dshkit refresh`, and none is started
while a scan holds the store's lease (at most one at a time, decided through the store).
"""

from __future__ import annotations

from typing import Any

from ..procs import spawn_detached
from ..store import SCAN_LEASE
from .protocol import HookInput


def on_session_pause(hook: HookInput) -> dict[str, Any] | None:
    with hook.open_store() as store:
        if store.lease_holder(SCAN_LEASE) is not None:
            return None
    spawn_detached("refresh", "--state-dir", str(hook.state_dir))
    return None
