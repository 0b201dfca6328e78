"""Resident hook workers: processes the service hands `POST /api/hooks/{event}` calls to, so a
slow call (the gate at Stop waiting for a verdict) holds only itself, never the console or the
other hooks, and a handler's budget is kept by SIGALRM on a main thread of its own.

`Workers` is the pool the service keeps: up to `size` children, `python -m
dshkit.hooks.resident STATE`, each running one call at a time through the same runtime as
`dshkit hook EVENT` (`hooks.run.call`), so the answer is the command's, byte for byte. The
most recently used idle worker is taken first: its imports are warm. A child reads its calls on
stdin, a pipe only the service holds: at end of file it exits, so it dies with the service
however the service ends (SIGKILL included). A child that dies mid-call costs that call only
(an `ResidentError`: the service answers 502, which Claude Code takes as a non-blocking
error, as a crashed command hook) and is replaced at the next call.

A call answered from its hint (`hooks.lean`) leaves a step: the handlers the answer skipped,
which the command hook detaches; and the processes a call's handlers detach (a Stop's refresh
and harvest: `procs.hold_spawns`) are started after the answer too. A worker answers first,
then starts those and runs that step itself, and only then is it free again: the pool gives
it no call meanwhile (a thread waits for its word), and one that dies in its step costs no
call and is replaced.

The protocol is framed by lengths, never by content: a request is `EVENT LENGTH\\n` and the
payload; an answer `CODE OUT ERR STEPS\\n` (the exit code, two lengths, and how many `READY`
frames follow: 1 when a step runs after the answer, else 0) and the two streams.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable
from typing import IO

SIZE = 4  # how many calls (or steps) may run at once (a slow Stop holds one worker)
MODULE = "dshkit.hooks.resident"
READY = b"ready\n"  # the frame a worker sends once the step after its answer ran


class ResidentError(Exception):
    """A worker ended (or answered nonsense) before the call's answer was whole."""


class _Worker:
    def __init__(self, state_dir: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", MODULE, state_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )

    def call(self, event: str, payload: bytes) -> tuple[int, bytes, bytes, bool]:
        """The call's exit code, stdout and stderr, and whether a step runs after it (then
        `ready` says when it ended)."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(f"{event} {len(payload)}\n".encode() + payload)
            stdin.flush()
            head = stdout.readline().split()
            code, out_length, err_length, steps = (int(word) for word in head)
            out, err = _exactly(stdout, out_length), _exactly(stdout, err_length)
            if steps not in (0, 1):
                raise ValueError(f"{steps} ready frames announced")
        except (OSError, ValueError) as exc:
            self.close()
            raise ResidentError(f"the hook worker ended mid-call: {exc}") from exc
        return code, out, err, bool(steps)

    def ready(self) -> None:
        """Until the step after the last answer ended (the `READY` frame came)."""
        assert self.process.stdout is not None
        try:
            if _exactly(self.process.stdout, len(READY)) != READY:
                raise ValueError("no ready frame")
        except (OSError, ValueError) as exc:
            self.close()
            raise ResidentError(f"the hook worker ended in a step: {exc}") from exc

    def close(self) -> None:
        """End the worker: end of file on its stdin, then a kill if it does not leave."""
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def _end(idle: list[_Worker]) -> None:
    for worker in idle:
        worker.close()


def _exactly(stream: IO[bytes], length: int) -> bytes:
    data = stream.read(length) if length else b""
    if len(data) != length:
        raise ValueError(f"{len(data)} of {length} bytes")
    return data


class Workers:
    """The service's pool of hook workers over one state directory (see the module
    docstring). `call` blocks until a worker is free and answered: run it off the event loop."""

    def __init__(self, state_dir: str, size: int = SIZE) -> None:
        self.state_dir, self.size = state_dir, size
        self._idle: list[_Worker] = []  # the last one is the warmest
        self._count = 0
        self._closed = False
        self._free = threading.Condition()
        # A pool dropped without `close` (an app of the tests') still ends its idle workers.
        weakref.finalize(self, _end, self._idle)

    def call(self, event: str, payload: bytes) -> tuple[int, bytes, bytes]:
        """`dshkit hook EVENT` with `payload` on stdin, run by a worker: (exit code, stdout,
        stderr), as soon as the worker answered (a step it runs after is waited for by a
        thread of its own). Raises ResidentError when the worker died mid-call."""
        worker = self._take()
        try:
            code, out, err, step = worker.call(event, payload)
        except BaseException:
            self._lost()
            raise
        if not step:
            self._back(worker)
            return code, out, err
        settle = threading.Thread(
            target=self._settle, args=(worker,), name="dshkit-hook-step", daemon=True
        )
        try:
            settle.start()
        except RuntimeError:  # no thread to be had: wait here, the answer is late but whole
            self._settle(worker)
        return code, out, err

    def _settle(self, worker: _Worker) -> None:
        """The worker back among the idle once its step ended; counted out if it died in it."""
        try:
            worker.ready()
        except ResidentError:
            self._lost()
            return
        self._back(worker)

    def _back(self, worker: _Worker) -> None:
        """A worker free again: idle, or ended when the pool is closed."""
        with self._free:
            closed = self._closed
            if closed:
                self._count -= 1
            else:
                self._idle.append(worker)
            self._free.notify()
        if closed:
            worker.close()

    def _lost(self) -> None:
        """A worker's place free again (the worker ended)."""
        with self._free:
            self._count -= 1
            self._free.notify()

    def _take(self) -> _Worker:
        with self._free:
            while True:
                if self._closed:
                    raise ResidentError("the service is stopping")
                if self._idle:
                    return self._idle.pop()
                if self._count < self.size:
                    self._count += 1
                    break
                self._free.wait()
        try:
            return _Worker(self.state_dir)
        except BaseException:
            self._lost()
            raise

    def close(self) -> None:
        """End every idle worker now, and each busy one as its call (or its step) ends."""
        with self._free:
            self._closed = True
            idle = list(self._idle)
            self._idle.clear()  # (the finalizer's list: emptied, not replaced)
            self._count -= len(idle)
            self._free.notify_all()
        _end(idle)


def serve(state_dir: str, calls: IO[bytes], answers: IO[bytes]) -> None:
    """The worker's loop: each call read from `calls` answered on `answers`, then the step the
    answer left (if any) run and `READY` sent, until end of file (the service is gone)."""
    from ..storeview import Shared

    # One read-only connection for every look of the worker's life: a new one costs ~0.5 ms
    # a call (SQLite reads the schema at its first statement), a Stop's or a prompt's.
    with Shared(state_dir):
        _serve(state_dir, calls, answers)


def _serve(state_dir: str, calls: IO[bytes], answers: IO[bytes]) -> None:
    import tempfile
    from io import BytesIO

    from ..procs import hold_spawns, release_spawns
    from .log import log
    from .run import call

    while True:
        head = calls.readline()
        if not head:
            return
        event, length = head.split()
        payload = _exactly(calls, int(length))
        out, err = BytesIO(), BytesIO()
        steps: list[Callable[[], None]] = []
        spawns: list[Callable[[], None]] = []  # what the handlers detached: after the answer
        hold_spawns(spawns)
        try:
            with tempfile.TemporaryFile() as stdin:  # read through its descriptor, as a pipe is
                stdin.write(payload)
                stdin.seek(0)
                argv = [event.decode("ascii"), "--state-dir", state_dir]
                code = call(argv, stdin, out, err, os.environ, deferred=steps)
        finally:
            release_spawns(spawns)
        later = bool(spawns or steps)  # (a READY frame follows once they are done)
        said, warned = out.getvalue(), err.getvalue()
        head = f"{code} {len(said)} {len(warned)} {int(later)}\n".encode()
        answers.write(head + said + warned)
        answers.flush()
        if later:
            for spawn in spawns:
                try:
                    spawn()
                except OSError as exc:  # (as a command hook's failed spawn: logged, no more)
                    log(state_dir, event.decode("ascii"), f"not started: {exc}")
            for step in steps:  # (`after.step` never raises: one that did ends this worker)
                step()
            answers.write(READY)
            answers.flush()


def main(argv: list[str]) -> int:
    """The worker process: the protocol moved off fds 0 and 1 (a handler that prints, or reads
    stdin, touches /dev/null, never the protocol), then `serve`."""
    calls = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    serve(argv[0], calls, answers)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
