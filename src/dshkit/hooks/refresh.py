"""On Stop and SessionEnd: an incremental scan and the profile trigger check, detached.

The agent is not kept waiting: a separate process runs `dshkit refresh`, and none is started
while a scan holds the store's lease (at most one at a time, decided through the store).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from ..store import SCAN_LEASE
from .protocol import HookInput


def on_session_pause(hook: HookInput) -> dict[str, Any] | None:
    with hook.open_store() as store:
        if store.lease_holder(SCAN_LEASE) is not None:
            return None
    subprocess.Popen(
        [sys.executable, "-m", "dshkit", "refresh", "--state-dir", str(hook.state_dir)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env=dict(os.environ),
    )
    return None
