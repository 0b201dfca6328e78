"""The process helpers: liveness (a zombie is not alive), ending a whole process group (at
once, or after a grace period for SIGTERM), dshkit commands started detached, a watched child
that dies with its owner however the owner ends (unless released), and SIGTERM as an exit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from dshkit.procs import (
    _WATCHDOG_FIRST,
    ExitOnSigterm,
    alive,
    ancestor_env,
    hold_spawns,
    kill_group,
    release_spawns,
    spawn_detached,
    start_watched,
)

from .support.procs import left, running_in_group, running_with, watchdog_of

pytestmark = pytest.mark.process


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


def test_a_held_spawn_starts_when_its_holder_says_in_the_environment_of_its_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A resident hook worker answers first: what its call's handlers detached starts after.
    state = tmp_path / "state"
    held: list[Any] = []
    hold_spawns(held)
    try:
        monkeypatch.setenv("DSHKIT_TEST_CALL", "the call's")
        spawn_detached("sessions", "list", "--state-dir", str(state))
    finally:
        release_spawns(held)
    monkeypatch.setenv("DSHKIT_TEST_CALL", "the worker's own")
    time.sleep(0.5)
    assert len(held) == 1 and not state.exists()  # not started while held
    started: list[dict[str, str]] = []
    spawn = os.posix_spawn

    def seen(path: str, argv: list[str], env: dict[str, str], **kwargs: Any) -> int:
        started.append(env)
        return spawn(path, argv, env, **kwargs)

    monkeypatch.setattr(os, "posix_spawn", seen)
    held[0]()
    assert [env["DSHKIT_TEST_CALL"] for env in started] == ["the call's"]
    wait_until((state / "dshkit.db").exists, "the released command never ran", 60)
    spawn_detached("sessions", "list", "--state-dir", str(state))  # released: at once
    assert len(started) == 2 and len(held) == 1


# An owner of a watched `sleep` group: it prints the group's id (once released, with `release`),
# then waits to be killed, or, with `exit`, leaves at once as if done (ending nothing).
OWNER = """
import subprocess, sys, time
from dshkit.procs import start_watched
how, remove = sys.argv[1], sys.argv[2:]
watched = start_watched(["sleep", "300"], remove=remove)
if how == "release":
    watched.release()
if how == "others":  # a plain child inheriting what it can, then a second watched group
    plain = subprocess.Popen(["sleep", "300"], close_fds=False)
    second = start_watched(["sleep", "300"])
    print(plain.pid, second.process.pid, flush=True)
print(watched.process.pid, flush=True)
if how != "exit":
    time.sleep(300)
"""


def owner(how: str, *remove: Path, own_group: bool = False) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", OWNER, how, *map(str, remove)],
        stdout=subprocess.PIPE,
        start_new_session=own_group,
    )


def scratch(tmp_path: Path) -> Path:
    """A directory with something in it, for a watchdog to remove."""
    made = tmp_path / "profile"
    (made / "Default").mkdir(parents=True)
    (made / "Default" / "Preferences").write_text("{}")
    return made


@pytest.mark.parametrize("kill", ["owner", "owner's group"])
def test_the_watchdog_kills_the_group_and_removes_its_paths_when_the_owner_is_killed(
    tmp_path: Path, kill: str
) -> None:
    profile = scratch(tmp_path)
    process = owner("wait", profile, own_group=True)
    assert process.stdout is not None
    group = int(process.stdout.readline())
    assert running_in_group(group)
    wait_until(lambda: watchdog_of(group), "no watchdog")  # (its command line set a moment late)
    if kill == "owner":
        process.kill()
    else:  # as a harness ends a hook, or Ctrl-C a terminal's: the watchdog is not in it
        os.killpg(process.pid, signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    assert left(lambda: running_in_group(group)) == []
    wait_until(lambda: not profile.exists(), "the watchdog left the owner's directory")
    assert left(lambda: watchdog_of(group)) == []  # and it left too


def test_a_released_child_outlives_its_owner(tmp_path: Path) -> None:
    profile = scratch(tmp_path)
    process = owner("release", profile)
    assert process.stdout is not None
    group = int(process.stdout.readline())
    try:
        assert watchdog_of(group) == []  # released: the watchdog has left already
        process.kill()
        process.wait()
        assert running_in_group(group) and profile.is_dir()
    finally:
        kill_group(group)


def test_the_watch_holds_only_in_the_owner(tmp_path: Path) -> None:
    # Its pipe's write end is in no other process: not in a child that inherits every
    # descriptor it can, nor in a second watched group or its watchdog.
    process = owner("others", own_group=True)
    assert process.stdout is not None
    plain, second = map(int, process.stdout.readline().split())
    group = int(process.stdout.readline())
    try:
        process.kill()
        process.wait()
        assert left(lambda: running_in_group(group) + running_in_group(second)) == []
        assert alive(plain)  # an ordinary child of the owner: nobody watched it
    finally:
        os.kill(plain, signal.SIGKILL)


def test_a_watched_group_still_running_at_exit_is_killed(tmp_path: Path) -> None:
    profile = scratch(tmp_path)
    process = owner("exit", profile)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    assert left(lambda: running_in_group(int(out))) == []
    wait_until(lambda: not profile.exists(), "nobody removed the directory")


def test_end_kills_the_group_and_stands_the_watchdog_down(tmp_path: Path) -> None:
    profile = scratch(tmp_path)
    watched = start_watched(["sleep", "300"], remove=[str(profile)])
    group = watched.process.pid
    wait_until(lambda: watchdog_of(group), "no watchdog")  # (its command line set a moment late)
    watched.end()
    assert watched.process.returncode == -signal.SIGKILL  # killed and reaped
    assert left(lambda: running_in_group(group) + watchdog_of(group)) == []
    assert profile.is_dir()  # the owner's to remove once it ended the group itself
    watched.end()  # again, or released after: nothing more happens
    watched.release()


def test_sigterm_raises_system_exit_while_held() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as exited, ExitOnSigterm():
        signal.raise_signal(signal.SIGTERM)
    assert exited.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == before
    # Outside the main thread it cannot set a handler, and does nothing.
    seen: list[object] = []
    thread = threading.Thread(target=lambda: seen.append(ExitOnSigterm().__enter__()))
    thread.start()
    thread.join()
    assert len(seen) == 1 and signal.getsignal(signal.SIGTERM) == before


def test_kill_group_closes_a_pipe_still_holding_what_a_dead_child_never_read() -> None:
    """A write that broke the pipe leaves its bytes buffered: ending the group must not raise
    them again (a probe's answer was lost to a BrokenPipeError that way)."""
    import subprocess

    child = subprocess.Popen(["sh", "-c", "exit 1"], stdin=subprocess.PIPE, start_new_session=True)
    child.wait()
    assert child.stdin is not None
    child.stdin.write(b"x" * 100)  # buffered: nobody will ever read it
    with pytest.raises(BrokenPipeError):
        child.stdin.flush()
    kill_group(child)
    assert child.stdin.closed


# A harness (the outer shell, holding the person's key) starts a hook with the key removed
# (as DSH's subprocess scrub does), through a shell in between that has no key either.
_HARNESS_SCRIPT = """
import json, sys
from dshkit.procs import ancestor_env
print(json.dumps(ancestor_env(lambda name: name.endswith("_API_KEY") or name == "XHOME")))
"""


@pytest.mark.process
def test_ancestor_env_reads_back_what_a_harness_withheld() -> None:
    # The harness (a shell with the key) starts a shell without it, which runs the hook (`;
    # true` keeps each shell from replacing itself with its last command).
    harness = 'env -u FAKE_API_KEY -u XHOME sh -c \'"$0" -c "$1"; true\' "$0" "$1"; true'
    done = subprocess.run(
        ["sh", "-c", harness, sys.executable, _HARNESS_SCRIPT],
        env={**os.environ, "FAKE_API_KEY": "sk-person", "XHOME": "/h", "OTHER_API_KEY": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout)
    # What the hook lacks, from the nearest ancestor that has it; what it has is not taken.
    assert found == {"FAKE_API_KEY": "sk-person", "XHOME": "/h"}


def test_ancestor_env_of_a_process_without_ancestors_is_empty() -> None:
    assert ancestor_env(lambda name: True, pid=1) == {}


@pytest.mark.process
def test_the_watchdog_runs_before_the_child_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    # An owner killed between the child's start and its watchdog's left the group running (a
    # loaded machine gave the gap a whole interpreter start): the watchdog comes first now,
    # and is only told the group once the child runs.
    started: list[tuple[str, bool]] = []
    real = subprocess.Popen

    def recording(argv: list[str], *args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        watchdogs = [p for name, p in seen if name == "watchdog"]
        kind = "watchdog" if _WATCHDOG_FIRST in argv else "child"
        started.append((kind, any(w.poll() is None for w in watchdogs)))
        process = real(argv, *args, **kwargs)  # type: ignore[call-overload]
        seen.append((kind, process))
        return process

    seen: list[tuple[str, subprocess.Popen[bytes]]] = []
    monkeypatch.setattr(subprocess, "Popen", recording)
    watched = start_watched(["sleep", "30"])
    try:
        assert started == [("watchdog", False), ("child", True)]
        cmdline = Path(f"/proc/{watched.process.pid}/cmdline")
        wait_until(lambda: cmdline.read_bytes().startswith(b"sleep\0"), "never its program")
    finally:
        watched.end()


# An owner whose watchdog is told the child's group only after a long pause (a loaded
# machine's preemption, made certain): it says when the child was started, then stalls.
STALLED = """
import subprocess, sys, time
from dshkit import procs
real = subprocess.Popen

class Stalled:
    def __init__(self, pipe):
        self.pipe = pipe
    def write(self, data):
        print("started", flush=True)
        time.sleep(300)
    def close(self):
        self.pipe.close()

def popen(argv, *args, **kwargs):
    process = real(argv, *args, **kwargs)
    if procs._WATCHDOG_FIRST in argv:
        process.stdin = Stalled(process.stdin)
    return process

subprocess.Popen = popen
procs.start_watched([sys.argv[1]])
"""


@pytest.mark.process
def test_a_child_runs_nothing_before_its_watchdog_knows_its_group(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    program = tmp_path / "program.sh"
    program.write_text(f"#!/bin/sh\necho $$ > {ran}\nexec sleep 300\n")
    program.chmod(0o755)
    owner = subprocess.Popen([sys.executable, "-c", STALLED, str(program)], stdout=subprocess.PIPE)
    assert owner.stdout is not None
    assert owner.stdout.readline() == b"started\n"  # the child started, the watchdog not told
    time.sleep(0.5)
    assert not ran.exists()  # held: its program has not run
    owner.kill()
    owner.wait()
    owner.stdout.close()
    time.sleep(0.5)
    assert not ran.exists()  # its owner gone before the watchdog knew: it ran nothing
    assert left(lambda: running_with(str(program))) == []


@pytest.mark.process
@pytest.mark.parametrize("given", [{}, {"LANG": "C"}, {"LC_CTYPE": "C"}, {"LC_ALL": "C"}])
def test_a_watched_child_gets_its_environment_and_signals_as_given(
    given: dict[str, str],
) -> None:
    # Held by an interpreter first, which coerces a C locale's LC_CTYPE (PEP 538) and ignores
    # SIGPIPE: neither may reach the program.
    env = {"PATH": os.environ["PATH"], **given}
    watched = start_watched(["sleep", "30"], env=env)
    proc = Path(f"/proc/{watched.process.pid}")
    try:
        became = lambda: (proc / "cmdline").read_bytes().startswith(b"sleep\0")  # noqa: E731
        wait_until(became, "it never became its program")
        environ = (proc / "environ").read_bytes().decode().split("\0")
        status = (proc / "status").read_text().splitlines()
    finally:
        watched.end()
    assert dict(entry.split("=", 1) for entry in environ if entry) == env
    ignored = int(next(line for line in status if line.startswith("SigIgn")).split()[1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1)), status
