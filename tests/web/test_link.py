"""The serve record (`web.link`): believed only while the process it names is alive and this
user's: a killed server's id, a zombie, or an id another user's process has taken since is
no running service of ours."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import pytest

from dshkit import procs
from dshkit.web import link

URL = "http://127.0.0.1:8765/"


def naming(state: Path, pid: int) -> Path:
    record = state / link.RECORD_NAME
    record.write_bytes(orjson.dumps({"url": URL, "port": 8765, "pid": pid}))
    return record


@pytest.mark.process
def test_a_record_is_believed_only_while_its_process_runs(tmp_path: Path) -> None:
    served = link.record(tmp_path, URL, 8765)
    assert link.recorded(tmp_path) == served == link.Served(URL, 8765, os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # reaped: the id names nothing now
    naming(tmp_path, child.pid)
    assert link.recorded(tmp_path) is None
    assert link.recorded(tmp_path, alive_only=False) == link.Served(URL, 8765, child.pid)
    zombie = os.fork()
    if zombie == 0:  # gone at once, not reaped yet: signal 0 still finds it
        os._exit(0)
    try:
        naming(tmp_path, zombie)
        deadline = time.monotonic() + 20
        while link.recorded(tmp_path) is not None:  # until the child has exited
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.01)
        os.kill(zombie, 0)  # still there, unreaped: signal 0 alone would call it our server
    finally:
        os.waitpid(zombie, 0)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
@pytest.mark.process
def test_another_users_process_is_not_our_server() -> None:
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no `nobody` user on this machine")
    state = Path(tempfile.mkdtemp(prefix="dshkit-link-"))  # (pytest's own is root's alone)
    state.chmod(0o755)
    naming(state, os.getpid()).chmod(0o644)  # names this process: alive, and root's
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # as `nobody`, what this process recorded is another user's process
        try:
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            seen = [
                procs.alive(os.getppid()),
                link.recorded(state),
                link.recorded(state, alive_only=False),
            ]
            os.write(write, repr([seen[0], seen[1] is None, seen[2] is not None]).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        said = answer.read()
    os.waitpid(child, 0)
    shutil.rmtree(state)
    # Alive as far as `procs.alive` can tell, the record read, and not believed: not ours.
    assert said == b"[True, True, True]"


def test_sigterm_while_recording_asks_the_server_to_stop_and_raises_nothing(
    tmp_path: Path,
) -> None:
    """A signal lands between any two bytecodes: the handler only asks the server to stop,
    and the record goes when the block ends (a raise there once broke `logging`'s lock
    while uvicorn configured it, and the service exited 1)."""
    asked: list[str] = []
    before = signal.getsignal(signal.SIGTERM)
    with link.recording(tmp_path, URL, 8765, lambda: asked.append("stop")) as served:
        assert served.pid == os.getpid() and (tmp_path / link.RECORD_NAME).exists()
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGTERM)  # as uvicorn re-raises the one it caught
        assert asked == ["stop", "stop"]
    assert not (tmp_path / link.RECORD_NAME).exists()
    assert signal.getsignal(signal.SIGTERM) is before
