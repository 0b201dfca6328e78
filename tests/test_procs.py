"""The process helpers: liveness (a zombie is not alive), ending a whole process group (at
once, or after a grace period for SIGTERM), and dshkit commands started detached."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dshkit.procs import alive, kill_group, spawn_detached


def state_of(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        return handle.read().rpartition(b")")[2].split()[0].decode()


def wait_until(condition: object, what: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_zombie_is_not_alive() -> None:
    pid = os.fork()
    if pid == 0:  # the child: gone at once, and nobody reaps it yet
        os._exit(0)
    try:
        wait_until(lambda: state_of(pid) == "Z", "the child never became a zombie")
        os.kill(pid, 0)  # signal 0 still finds it: that alone would call it alive
        assert alive(pid) is False
    finally:
        os.waitpid(pid, 0)
    assert alive(pid) is False  # reaped: no such process at all


def test_alive_for_running_processes_and_non_pids() -> None:
    assert alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not alive(child.pid)
    assert not alive(0) and not alive(-1)  # process groups, not processes


# A group leader that ignores SIGTERM from its first line (set later, a fast SIGTERM could win the
# race) with a child of its own; the child reports its pid and, when told, traps SIGTERM (writing
# `termed` and leaving) or ignores it. The child sets its own disposition, so inheriting the
# leader's SIG_IGN changes nothing.
GROUP = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the leader holds on, before anyone can signal it
child = subprocess.Popen([sys.executable, "-c", '''
import os, signal, sys, time
how = sys.argv[1]
if how == "trap":
    def leave(*_):
        open(sys.argv[2], "w").write("termed")
        os._exit(0)
    signal.signal(signal.SIGTERM, leave)
elif how == "ignore":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print(os.getpid(), flush=True)
time.sleep(120)
''', sys.argv[1], sys.argv[2]], stdout=subprocess.PIPE)
print(child.stdout.readline().decode().strip(), flush=True)
time.sleep(120)
"""


def group(tmp_path: Path, how: str) -> tuple[subprocess.Popen[bytes], int]:
    leader = subprocess.Popen(
        [sys.executable, "-c", GROUP, how, str(tmp_path / "termed")],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert leader.stdout is not None
    member = int(leader.stdout.readline())
    return leader, member


def test_kill_group_ends_the_leader_and_every_member_at_once(tmp_path: Path) -> None:
    leader, member = group(tmp_path, "trap")
    started = time.monotonic()
    kill_group(leader)
    assert leader.returncode == -signal.SIGKILL and leader.stdout.closed  # type: ignore[union-attr]
    wait_until(lambda: not alive(member), "a member of the group outlived it")
    assert not (tmp_path / "termed").exists()  # no SIGTERM: SIGKILL at once
    assert time.monotonic() - started < 10
    kill_group(leader)  # again: already gone, nothing to do


@pytest.mark.parametrize("how", ["trap", "ignore"])
def test_kill_group_with_grace(tmp_path: Path, how: str) -> None:
    leader, member = group(tmp_path, how)
    started = time.monotonic()
    kill_group(leader, grace=0.5)
    # The leader ignores SIGTERM: the grace period runs out, then SIGKILL takes everyone.
    assert time.monotonic() - started >= 0.5 and leader.returncode == -signal.SIGKILL
    wait_until(lambda: not alive(member), "a member of the group outlived it")
    assert (tmp_path / "termed").exists() == (how == "trap")  # SIGTERM came first


def test_kill_group_by_group_id(tmp_path: Path) -> None:
    leader, member = group(tmp_path, "ignore")
    kill_group(leader.pid)  # as recovery does for a group it did not start
    assert leader.wait(10) == -signal.SIGKILL
    wait_until(lambda: not alive(member), "a member of the group outlived it")
    with pytest.raises(ValueError, match="not a process group"):
        kill_group(0)  # would be this very process's group


def test_spawn_detached_runs_a_dshkit_command_nobody_waits_for(tmp_path: Path) -> None:
    state = tmp_path / "state"
    spawn_detached("sessions", "list", "--state-dir", str(state))
    wait_until((state / "dshkit.db").exists, "the detached command never ran", 60)
