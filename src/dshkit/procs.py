"""Processes dshkit starts and watches: detached dshkit commands, liveness, process groups ended.

One place for what every user of a process needs: a hook hands its slow part to a dshkit
command nobody waits for (its own session, no standard streams, so a harness killing the
hook's group does not kill it); whether a pid still runs (a zombie does not: an orphan's may
never be reaped); ending a whole process group, whatever its members do with SIGTERM; a
child that dies with its owner however the owner ends, SIGKILL included (`start_watched`,
docs/design/gate.md#every-child-dies-with-its-owner); and SIGTERM turned into an exception
so that cleanup runs (`ExitOnSigterm`).
"""

from __future__ import annotations

import os
import signal
import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Mapping, Sequence
    from types import FrameType, TracebackType
    from typing import Any

_POLL_S = 0.02  # how often a group given a grace period is looked at
_STAND_DOWN_S = 5.0  # the longest a released watchdog may take to leave (it leaves at once)
_REMOVE_S = 10.0  # how long a watchdog keeps removing paths a killed group was writing into
# The watchdog beside a watched child, run as `python -I -S -c _WATCHDOG PGID PATH…` (no site
# packages, no PYTHON* variables: it starts in milliseconds and imports nothing of anyone's,
# which also means it cannot import dshkit, hence code and not a module). It blocks reading
# its stdin, a pipe only the owner holds the write end of. End of file with nothing said means
# the owner is gone, however it ended: the child's whole group is killed and the paths removed
# (again for a while: what the group was still writing can land just after the kill). A byte
# said first is the owner standing it down: it leaves without touching anything.
_WATCHDOG = f"""\
import os, signal, sys, time
if not sys.stdin.buffer.read():
    try:
        os.killpg(int(sys.argv[1]), signal.SIGKILL)
    except OSError:
        pass
    if sys.argv[2:]:
        import shutil
        deadline = time.monotonic() + {_REMOVE_S}
        for path in sys.argv[2:]:
            while os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
"""
# How the watchdog starts, before the child does (`python -I -S -c _WATCHDOG_FIRST PATH…`): it
# reads the child's group id, a line on the same stdin, one byte at a time (nothing said after
# it may be read ahead and lost), then becomes `_WATCHDOG` for that group by exec, its stdin
# kept open across: a death of the owner meanwhile is seen once the exec is done. End of file
# before a group (the child never started) leaves at once.
_WATCHDOG_FIRST = f"""\
import os, sys
line = b""
while not line.endswith(b"\\n"):
    byte = os.read(0, 1)
    if not byte:
        sys.exit(0)
    line += byte
group = line.strip()
if group.isdigit():
    os.execv(sys.executable, [sys.executable, "-I", "-S", "-c", {_WATCHDOG!r}, group.decode(),
                              *sys.argv[1:]])
"""


# How a watched child starts (`python -I -S -c _HELD FD PROGRAM ARGV0 ARG…`): held until the
# owner has told the watchdog its group, a byte on the pipe at FD (then closed); end of file
# instead means the owner died before that, and the child leaves without running anything.
# Then it becomes PROGRAM by exec with nothing of the interpreter left behind: the signals it
# ignores set back to their default (as subprocess's restore_signals), and the environment
# as given, LC_CTYPE included, which the interpreter coerces in the C locale (PEP 538): its
# given value rides in `_HELD_LC` ("=" and the value, or "" for none).
_HELD_LC = "DSHKIT_HELD_LC_CTYPE"
_HELD_START = f"""\
import os, sys, _signal
fd = int(sys.argv[1])
go = os.read(fd, 1)
os.close(fd)
if not go:
    os._exit(125)
for number in (_signal.SIGPIPE, _signal.SIGXFSZ):
    _signal.signal(number, _signal.SIG_DFL)
env = dict(os.environ)
given = env.pop({_HELD_LC!r}, "")
env.pop("LC_CTYPE", None)
if given:
    env["LC_CTYPE"] = given[1:]
try:
    os.execve(sys.argv[2], sys.argv[3:], env)
except OSError:
    os._exit(127)
"""


def spawn_detached(*args: str, env: dict[str, str] | None = None) -> None:
    """`python -m dshkit ARGS…` in a session of its own, not waited for; `env` is added to
    this process's environment for it (in its environment only: never on disk or argv).

    Started with `posix_spawn` (the C library's vfork-like spawn), not `subprocess`, whose
    fork copies the page tables of a large process (the service's hook workers) first: a
    Stop hook starting its refresh spent ~14 ms there. Its standard streams are /dev/null;
    every other descriptor dshkit opens is non-inheritable (PEP 446), so none reaches it."""
    null = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
    ]
    argv = [sys.executable, "-m", "dshkit", *args]
    environment = {**(env or {}), **os.environ}  # (now: a held spawn keeps the call's)

    def spawn() -> None:
        # As subprocess's restore_signals: the interpreter ignores SIGPIPE and SIGXFSZ, and
        # an ignored signal stays ignored across exec.
        pid = os.posix_spawn(
            sys.executable,
            argv,
            environment,
            file_actions=actions,
            setsid=True,
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
        )
        _reap_later(pid)

    if _HELD:
        _HELD[-1].append(spawn)
    else:
        spawn()


# Spawns held back until the caller's answer is out (`hold_spawns`): a resident hook worker
# answers first, then starts what the call's handlers detached (a Stop's refresh, harvest).
_HELD: list[list[Callable[[], None]]] = []


def hold_spawns(into: list[Callable[[], None]]) -> None:
    """From now until `release_spawns`, `spawn_detached` appends its start to `into` instead
    of starting the process (in this call's environment, as read now): the caller starts
    them (each `into` item, called) once it answered."""
    _HELD.append(into)


def release_spawns(into: list[Callable[[], None]]) -> None:
    """`spawn_detached` starts processes at once again (`into` keeps what was held)."""
    if _HELD and _HELD[-1] is into:
        _HELD.pop()


def _reap_later(pid: int) -> None:
    """Reap `pid` once it ends, so a long-lived process (the service) keeps no zombie of it:
    `subprocess` did this for the children it started; a posix_spawn child is ours to wait."""
    import threading

    threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True, name=f"reap-{pid}").start()


def ancestor_env(wanted: Callable[[str], bool], pid: int | None = None) -> dict[str, str]:
    """The variables whose names are `wanted`, and which this process's environment lacks, in
    the environment of the nearest ancestor of `pid` (this process by default) that has any:
    what a harness withholds from the processes it starts (a hook, an MCP server, and a shell
    between) read back from its own process, which started with the person's environment.
    Processes of other users (unreadable) are passed over; {} where there is no /proc or no
    ancestor has any."""
    current = os.getpid() if pid is None else pid
    for _ in range(64):  # a chain of ancestors is short; a cycle cannot be, but be sure
        parent = _parent(current)
        if parent is None or parent <= 1:
            return {}
        current = parent
        try:
            with open(f"/proc/{current}/environ", "rb") as handle:
                raw = handle.read()
        except OSError:
            continue
        found = {}
        for entry in raw.split(b"\0"):
            name, sep, value = entry.partition(b"=")
            if not sep:
                continue
            key = name.decode(errors="replace")
            if key not in os.environ and wanted(key):
                found[key] = value.decode(errors="surrogateescape")
        if found:
            return found
    return {}


def _parent(pid: int) -> int | None:
    """The parent of `pid` as /proc says (None: gone, or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            # The fields after the command name (in parentheses, which may hold anything):
            # state, then the parent's pid.
            return int(handle.read().rpartition(b")")[2].split()[1])
    except (OSError, IndexError, ValueError):
        return None


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
                try:  # (no contextlib: this module is on the hooks' hot path)  # noqa: SIM105
                    stream.close()
                except OSError:
                    # Bytes still buffered for a child that is gone (a write that broke the
                    # pipe): closing tries them again, and there is nobody left to take them.
                    pass


def _signal_group(group: int, signum: int) -> bool:
    """Send `signum` to the group; False when it is gone (or not ours to signal)."""
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class Watched:
    """A child in a process group of its own (`process`), watched so that it dies with this
    process: made by `start_watched`.

    The owner ends it (`end`) or lets it go (`release`: the child outlives the owner). Either
    is final, and both are safe to call again and from any thread. What is still watched when
    this process exits is killed then (atexit); what is left when it dies without running its
    exit (SIGKILL, `os._exit`, a crash) is the watchdog's, started before the child and told
    its group before the child runs its program (held until then: a death in between leaves
    a child that runs nothing)."""

    def __init__(self, process: subprocess.Popen[Any], watchdog: subprocess.Popen[bytes]) -> None:
        import threading

        self.process = process
        self._watchdog = watchdog
        self._lock = threading.Lock()
        self._settled = False

    def end(self) -> None:
        """Kill the child's whole group at once (SIGKILL: what is watched needs no cleanup of
        its own), reap it, and stand the watchdog down; what it was to remove is the owner's
        to remove now. Nothing once ended or released."""
        if not self._settle():
            return
        _signal_group(self.process.pid, signal.SIGKILL)
        # Stood down while the killed leader is not reaped yet: its group id cannot be reused
        # meanwhile, so a watchdog that still fired would kill nothing but this group.
        self._stand_down()
        kill_group(self.process)

    def release(self) -> None:
        """Let the child outlive this process: the watchdog leaves and nothing is killed or
        removed. Nothing once ended or released."""
        if self._settle():
            self._stand_down()

    def _settle(self) -> bool:
        """True for the one call that ends or releases the watch."""
        with self._lock:
            if self._settled:
                return False
            self._settled = True
        _WATCHED.discard(self)
        return True

    def _stand_down(self) -> None:
        import subprocess

        stream = self._watchdog.stdin
        assert stream is not None
        try:
            stream.write(b"r")
        except OSError:
            pass  # the watchdog is gone already (someone killed it): nothing to tell
        finally:
            stream.close()
        try:
            self._watchdog.wait(_STAND_DOWN_S)
        except subprocess.TimeoutExpired:
            self._watchdog.kill()
            self._watchdog.wait()


_WATCHED: set[Watched] = set()  # started and neither ended nor released
_AT_EXIT: list[bool] = []  # whether `_kill_all` is registered with atexit


def start_watched(argv: Sequence[str], *, remove: Sequence[str] = (), **popen: Any) -> Watched:
    """Start `argv` (with Popen's other arguments in `popen`) in a session and process group
    of its own, beside a watchdog that kills that group and removes the paths `remove` once
    this process is gone without having ended or released it, SIGKILL included.

    The watchdog's stdin is a pipe whose write end only this process holds: it is opened
    close-on-exec, and every process started here closes the descriptors it does not name,
    so neither the child nor any other child keeps it open. The watchdog has a session of its
    own too, so a kill of this process's group (Ctrl-C, a harness's timeout) spares it. The
    parent-death signal is not used: it fires when the thread that started the child ends
    (the service starts browsers in job threads), and reaches the child only, not the rest of
    its group. Without a watchdog no child is started (the error is raised); a child whose
    watchdog cannot be told its group is killed and the error raised. The child is held before
    it runs its program until the watchdog was told (`_HELD_START`, an interpreter start more:
    a test killing the owner under full load found it between the child's start and the
    telling, which left the child running), so `argv[0]` is looked up here, and a program
    that cannot be run raises as Popen would."""
    import subprocess

    # The watchdog first (when it came second, a test killing the owner under load found the
    # group unwatched for a whole interpreter start); the child is then held until it is told.
    watchdog = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _WATCHDOG_FIRST, *remove],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",  # holds no directory of anyone's busy
        start_new_session=True,
        close_fds=True,
        bufsize=0,
    )
    told = watchdog.stdin
    assert told is not None
    # The child is held until the watchdog knows its group (`_HELD_START`): an owner killed
    # in between leaves a child that runs nothing.
    go_read, go_write = os.pipe()  # (not inheritable: the child is given the read end alone)
    try:
        given = popen.pop("env", None)
        env = dict(os.environ if given is None else given)
        program = _program(argv[0], env, popen.get("cwd"))
        env[_HELD_LC] = f"={env['LC_CTYPE']}" if "LC_CTYPE" in env else ""
        held = [sys.executable, "-I", "-S", "-c", _HELD_START, str(go_read), program, *argv]
        process = subprocess.Popen(
            held, start_new_session=True, close_fds=True, pass_fds=(go_read,), env=env, **popen
        )
    except BaseException:
        os.close(go_write)
        told.close()  # no group to watch: it leaves
        watchdog.wait()
        raise
    finally:
        os.close(go_read)
    try:
        told.write(f"{process.pid}\n".encode())
    except BaseException:
        os.close(go_write)  # (the held child leaves, running nothing)
        kill_group(process)  # a child nothing watches is not left running
        told.close()
        watchdog.wait()
        raise
    try:
        os.write(go_write, b"g")
    finally:
        os.close(go_write)
    watched = Watched(process, watchdog)
    _WATCHED.add(watched)
    if not _AT_EXIT:
        import atexit

        atexit.register(_kill_all)
        _AT_EXIT.append(True)
    return watched


def _program(name: str, env: Mapping[str, str], cwd: Any) -> str:
    """The executable `name` runs as Popen would find it (on the PATH of `env`, the child's;
    a path with a slash from `cwd`): FileNotFoundError or PermissionError, as Popen raises
    them, where there is none to run, since the held child cannot say so."""
    import errno
    import shutil

    if os.sep in name:
        found = os.path.join(os.fspath(cwd) if cwd is not None else os.getcwd(), name)
        if not os.path.isfile(found):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)
        if not os.access(found, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
        return found
    path = env.get("PATH", os.defpath)
    found_on_path = shutil.which(name, path=path)
    if found_on_path is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)
    return os.path.abspath(found_on_path)


def _kill_all() -> None:
    """At exit, kill the groups still watched (the service's job threads do not get to end
    theirs); their watchdogs, told nothing, remove their paths once this process is gone."""
    for watched in list(_WATCHED):
        _signal_group(watched.process.pid, signal.SIGKILL)


class ExitOnSigterm:
    """While held, SIGTERM ends this process as Ctrl-C does, by an exception
    (`SystemExit(143)`), so that `finally` blocks and context managers run (a browser is
    closed by its owner) instead of the default action ending it on the spot. It does
    nothing outside the main thread, the only one a signal handler can be set from."""

    def __init__(self) -> None:
        self._installed = False
        self._previous: Any = None

    def __enter__(self) -> ExitOnSigterm:
        try:
            self._previous = signal.signal(signal.SIGTERM, _exit_on_signal)
        except ValueError:
            return self  # not the main thread
        self._installed = True
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._installed:
            self._installed = False
            previous = signal.SIG_DFL if self._previous is None else self._previous
            signal.signal(signal.SIGTERM, previous)


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


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
