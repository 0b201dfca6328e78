"""Starting a dshkit command that nobody waits for: how a hook hands off its slow part.

The child runs in its own session (a harness killing the hook's group does not kill it) with
no standard streams, and the caller answers at once.
"""

from __future__ import annotations

import os
import subprocess
import sys


def start_detached(*args: str) -> None:
    """`python -m dshkit ARGS…`, not waited for."""
    subprocess.Popen(
        [sys.executable, "-m", "dshkit", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env=dict(os.environ),
    )
