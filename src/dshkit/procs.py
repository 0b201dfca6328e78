"""Processes dshkit starts and watches: detached dshkit commands, liveness, process groups ended.

One place for what every user of a process needs: a hook hands its slow part to a dshkit
command nobody waits for (its own session, no standard streams, so a harness killing the
hook's group does not kill it); whether a pid still runs (a zombie does not: an orphan's may
never be reaped); and ending a whole process group, whatever its members do with SIGTERM.
"""

from __future__ import annotations

import os
import signal
import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    import subprocess
    from typing import Any

_POLL_S = 0.02  # how often a group given a grace period is looked at


def spawn_detached(*args: str) -> None:
    """`python -m dshkit ARGS…` in a session of its own, not waited for."""
    import subprocess  # only here: the store imports this module on the hooks' hot path

    subprocess.Popen(
        [sys.executable, "-m", "dshkit", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env=dict(os.environ),
    )


def alive(pid: int) -> bool:
    """Whether the process `pid` runs: one that exists and is not a zombie (read from
    /proc/<pid>/stat where there is a /proc). One owned by another user is alive."""
    if pid <= 0:
        return False  # 0 and negatives name process groups, not a process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            # The state follows the command name in parentheses, which may hold anything.
            return handle.read().rpartition(b")")[2].split()[0] != b"Z"
    except (OSError, IndexError):
        return True  # no /proc here (or it vanished meanwhile): alive as far as can be told


def kill_group(target: subprocess.Popen[Any] | int, grace: float = 0.0) -> None:
    """End the process group that `target` leads (a Popen started with `start_new_session`,
    or a process group id): SIGTERM and up to `grace` seconds to go, then SIGKILL for all
    that is left. A Popen is then reaped and its pipes closed.

    No grace (the default) is SIGKILL at once: what needs no cleanup (a browser with a
    throw-away profile, a probe) should not be given the chance to ignore SIGTERM. The leader
    is reaped only after the SIGKILL, so its group id cannot have been reused meanwhile."""
    process = None if isinstance(target, int) else target
    group = target if isinstance(target, int) else target.pid
    if group <= 0:  # os.killpg(0, …) would be this process's own group
        raise ValueError(f"not a process group: {group}")
    if grace > 0 and _signal_group(group, signal.SIGTERM):
        deadline = time.monotonic() + grace
        while alive(group) and time.monotonic() < deadline:
            time.sleep(_POLL_S)
    _signal_group(group, signal.SIGKILL)
    if process is not None:
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _signal_group(group: int, signum: int) -> bool:
    """Send `signum` to the group; False when it is gone (or not ours to signal)."""
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def alive_and_ours(pid: int) -> bool:
    """Whether `pid` is a live process (`alive`) this user may signal: an id recorded once
    and taken since by another user's process does not name the process recorded."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        return False
    except OSError:
        pass  # gone: `alive` says so
    return alive(pid)
