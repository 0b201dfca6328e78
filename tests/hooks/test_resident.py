"""The service's hook workers (`hooks.resident`): the command's answer from a warm worker; a
busy call holds only its worker; a worker that dies mid-call costs that call only; workers
die with their owner, however it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest

from dshkit.hooks.resident import ResidentError, Workers

from ..support.cli import run_dshkit
from ..support.hooks import claude
from ..support.procs import left, running_with, wait_until

HANDLERS = "tests.support.hook_handlers"
pytestmark = pytest.mark.process  # the workers are processes


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / ".dsh"))
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[2]))
    return tmp_path / ".dsh" / "dshkit"


def payload(session: str, event: str) -> bytes:
    return orjson.dumps(claude(session, hook_event_name=event, stop_hook_active=False))


def test_a_worker_answers_as_the_command_does(state: Path, tmp_path: Path) -> None:
    workers = Workers(str(state))
    try:
        for event in ("Stop", "UserPromptSubmit"):
            done = run_dshkit("hook", event, home=tmp_path, input=payload("c", event), text=False)
            assert workers.call(event, payload("w", event)) == (0, done.stdout, done.stderr)
    finally:
        workers.close()


def test_a_busy_call_holds_only_its_own_worker(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSHKIT_HOOK_HANDLERS", f"Stop={HANDLERS}:held")
    workers = Workers(str(state), size=2)
    answers: list[tuple[int, bytes, bytes]] = []
    busy = threading.Thread(
        target=lambda: answers.append(workers.call("Stop", payload("a", "Stop")))
    )
    try:
        busy.start()
        wait_until((state / "held-started").exists, "the held call started")
        # Another call, while the first is held (it waits for `release`, which nobody wrote).
        code, _, _ = workers.call("UserPromptSubmit", payload("b", "UserPromptSubmit"))
        assert code == 0 and busy.is_alive() and not answers
    finally:
        (state / "release").write_text("")
        busy.join(60)
        workers.close()
    assert answers and answers[0][0] == 0


def test_a_worker_that_dies_mid_call_costs_that_call_only(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSHKIT_HOOK_HANDLERS", f"Stop={HANDLERS}:vanish")
    workers = Workers(str(state), size=1)
    try:
        with pytest.raises(ResidentError, match="ended mid-call"):
            workers.call("Stop", payload("a", "Stop"))
        # The one worker's place is free again: the next call gets a new worker.
        code, _, _ = workers.call("UserPromptSubmit", payload("a", "UserPromptSubmit"))
        assert code == 0
    finally:
        workers.close()


OWNER = """
import sys
from dshkit.hooks.resident import Workers
workers = Workers(sys.argv[1])
print(workers.call("UserPromptSubmit", sys.stdin.buffer.read())[0], flush=True)
sys.stdin.close()
import time
time.sleep(600)
"""


def test_workers_die_with_their_owner(state: Path, tmp_path: Path) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(state)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert owner.stdin is not None and owner.stdout is not None
    owner.stdin.write(payload("o", "UserPromptSubmit"))
    owner.stdin.close()
    try:
        assert owner.stdout.readline().strip() == b"0"
        workers = running_with(f"dshkit.hooks.resident {state}")
        assert len(workers) == 1
    finally:
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
    assert left(lambda: running_with(f"dshkit.hooks.resident {state}")) == []
