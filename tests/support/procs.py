"""Processes as the tests look at them through /proc: who runs in a process group, who carries
an argument, and a bounded wait until they are gone (a killed process re-parented to an init
that does not reap stays a zombie: dead, not running)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

GONE_S = 10.0  # the longest what was killed (or whose owner was) may take to be gone


def _running() -> list[tuple[int, int, bytes]]:
    """(pid, process group, command line) of every process that runs (not a zombie)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_bytes().rpartition(b")")[2].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        if fields[0] not in (b"Z", b"X"):
            found.append((int(entry.name), int(fields[2]), cmdline))
    return found


def running_in_group(group: int) -> list[int]:
    """The processes of process group `group` that run."""
    return [pid for pid, pgid, _ in _running() if pgid == group]


def running_with(text: str) -> list[int]:
    """The processes that run with `text` in their command line (its arguments joined by
    spaces: Chromium's children rewrite theirs into one string)."""
    wanted = text.encode()
    return [pid for pid, _, cmdline in _running() if wanted in cmdline.replace(b"\0", b" ")]


def wait_until(condition: Callable[[], object], what: str, seconds: float = 60.0) -> None:
    """Until `condition()` is true; fails the test with `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def left(find: Callable[[], list[int]], seconds: float = GONE_S) -> list[int]:
    """What `find` still finds once it has had `seconds` to find nothing (empty, soon, when
    all went as it should)."""
    deadline = time.monotonic() + seconds
    while (found := find()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def watchdog_of(group: int) -> list[int]:
    """The watchdog that watches process group `group`, while it runs."""
    from dshkit.procs import _WATCHDOG

    code, leader = _WATCHDOG.encode(), str(group).encode()
    return [
        pid for pid, _, cmdline in _running() if cmdline.split(b"\0")[3:6] == [b"-c", code, leader]
    ]
