"""The service's hook workers (`hooks.resident`): the command's answer from a warm worker; a
busy call holds only its worker; a hinted call is answered before its step runs, and its
worker takes no call until the step ended; a worker that dies mid-call costs that call only,
one that dies in its step none; workers die with their owner, however it ends."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.hooks.resident import ResidentError, Workers

from ..support.cli import run_dshkit
from ..support.elsewhere import commit_meta
from ..support.hooks import claude
from ..support.procs import left, running_with, wait_until

HANDLERS = "tests.support.hook_handlers"
HERE = __name__  # the step handlers below, as DSHKIT_HOOK_HANDLERS names them
pytestmark = pytest.mark.process  # the workers are processes


def _in_step() -> bool:
    """Whether this handler runs in the step after a hinted answer (`hooks.after.step`)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == "dshkit.hooks.after":
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def held_step(hook: Any) -> None:
    """Says nothing; in a step, writes `step-started` (its pid), waits for `release` (through
    its budget: a step held for as long as a test wants, within reason), then `step-ended`."""
    if not _in_step():
        return
    # Whole, by a rename: a test reads the pid as soon as the file is there.
    (hook.state_dir / "step-started.part").write_text(str(os.getpid()))
    os.replace(hook.state_dir / "step-started.part", hook.state_dir / "step-started")
    deadline = time.monotonic() + 120
    try:
        while True:
            with contextlib.suppress(BaseException):  # its budget's alarm: held on regardless
                if (hook.state_dir / "release").exists() or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
    finally:
        (hook.state_dir / "step-ended").write_text("")


def says_elsewhere(hook: Any) -> dict[str, str]:
    """Says the store's meta value `elsewhere`, as a look reads it (in a worker: on the
    connection it keeps)."""
    from dshkit.storeview import query_rows

    asked = "SELECT value FROM meta WHERE key = 'elsewhere'"
    rows = query_rows(str(hook.state_dir), asked, [])
    return {"additionalContext": f"elsewhere={rows[0][0] if rows else None}"}


def vanish_step(hook: Any) -> None:
    """Says nothing; in a step, ends its process at once (a crash no handler can catch)."""
    if _in_step():
        (hook.state_dir / "vanished").write_text(str(os.getpid()))
        os._exit(3)


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / ".dsh"))
    # The tests' handlers importable in the workers (and the code under test as it is here).
    paths = [str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, paths)))
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


def workers_of(state: Path) -> list[int]:
    return running_with(f"dshkit.hooks.resident {state}")


def test_a_hinted_call_is_answered_before_its_step_runs(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSHKIT_HOOK_HANDLERS", f"UserPromptSubmit={HERE}:held_step")
    workers = Workers(str(state), size=2)
    prompt = payload("a", "UserPromptSubmit")
    answers: list[tuple[int, bytes, bytes]] = []
    hinted = threading.Thread(
        target=lambda: answers.append(workers.call("UserPromptSubmit", prompt))
    )
    try:
        # The full path answers the session's first prompt and keeps its hint.
        assert workers.call("UserPromptSubmit", prompt) == (0, b"", b"")
        assert not (state / "step-started").exists()
        hinted.start()  # the second is answered from the hint; its step waits for `release`
        wait_until(lambda: answers, "the hinted call answered while its step is held")
        assert answers == [(0, b"", b"")]
        wait_until((state / "step-started").exists, "the step started")
        assert not (state / "step-ended").exists()
        # Its worker is in its step: the next call goes to another one, and is answered
        # while the step is still held.
        assert workers.call("UserPromptSubmit", payload("b", "UserPromptSubmit"))[0] == 0
        assert not (state / "step-ended").exists()
        assert len(workers_of(state)) == 2
    finally:
        (state / "release").write_text("")
        hinted.join(60)
        workers.close()
    assert (state / "step-ended").exists()  # (the step ran to its end before its worker did)
    assert left(lambda: workers_of(state)) == []


def test_a_worker_in_its_step_takes_no_call_until_it_ended(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSHKIT_HOOK_HANDLERS", f"UserPromptSubmit={HERE}:held_step")
    workers = Workers(str(state), size=1)
    prompt = payload("a", "UserPromptSubmit")
    answers: list[tuple[int, bytes, bytes]] = []
    waiting = threading.Thread(
        target=lambda: answers.append(workers.call("Stop", payload("a", "Stop")))
    )
    try:
        assert workers.call("UserPromptSubmit", prompt) == (0, b"", b"")  # the hint kept
        assert workers.call("UserPromptSubmit", prompt) == (0, b"", b"")  # from the hint
        wait_until((state / "step-started").exists, "the step started")
        stepping = int((state / "step-started").read_text())
        waiting.start()  # the one worker is in its step: this call waits for it
        assert not answers and not (state / "step-ended").exists()
        (state / "release").write_text("")
        waiting.join(120)
        # Answered by the same worker once its step ended (not sent to it mid-step, where
        # it would have read the call late and answered nonsense; no second worker).
        assert answers and answers[0][0] == 0
        assert (state / "step-ended").exists()
        # (a child the worker is starting after an answer, a Stop's refresh, shows the
        # worker's command line until its exec: only a process that stays is a worker)
        wait_until(lambda: workers_of(state) == [stepping], "no second worker", 10)
    finally:
        (state / "release").write_text("")
        waiting.join(120)
        workers.close()
    assert left(lambda: workers_of(state)) == []


def test_a_worker_that_dies_in_its_step_costs_no_call_and_is_replaced(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSHKIT_HOOK_HANDLERS", f"UserPromptSubmit={HERE}:vanish_step")
    workers = Workers(str(state), size=1)
    prompt = payload("a", "UserPromptSubmit")
    try:
        assert workers.call("UserPromptSubmit", prompt) == (0, b"", b"")  # the hint kept
        # Answered from the hint; its worker then dies in the step.
        assert workers.call("UserPromptSubmit", prompt) == (0, b"", b"")
        # (its text, not the file alone: the file is made before the pid is written in it)
        vanished = state / "vanished"
        wait_until(lambda: vanished.exists() and vanished.read_text() != "", "the step ended")
        first = int(vanished.read_text())
        # The one place is free again once the dead worker is counted out: a new worker
        # answers the next call.
        assert workers.call("Stop", payload("a", "Stop"))[0] == 0
        assert workers_of(state) not in ([], [first])
    finally:
        workers.close()
    assert left(lambda: workers_of(state)) == []


def test_a_worker_sees_what_other_processes_commit_between_its_calls(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker keeps one read connection for its life, and opens the store too (its full
    # paths record what they said). Other processes commit between its calls (another
    # session's hooks), each the last to close the store: each call reads what they wrote.
    monkeypatch.setenv("DSHKIT_HOOK_HANDLERS", f"UserPromptSubmit={HERE}:says_elsewhere")
    workers = Workers(str(state), size=1)
    try:
        for round in range(3):
            commit_meta(state, "elsewhere", str(round))
            code, out, _ = workers.call("UserPromptSubmit", payload("a", "UserPromptSubmit"))
            assert code == 0 and f"elsewhere={round}".encode() in out
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
        workers = workers_of(state)
        assert len(workers) == 1
    finally:
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
    assert left(lambda: workers_of(state)) == []
