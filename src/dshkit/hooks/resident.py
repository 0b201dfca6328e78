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

The protocol is framed by lengths, never by content: a request is `EVENT LENGTH\\n` and the
payload; an answer `CODE OUT ERR\\n` (the exit code and two lengths) and the two streams.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import weakref
from typing import IO

SIZE = 4  # how many calls may run at once (a slow Stop holds one worker)
MODULE = "dshkit.hooks.resident"


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

    def call(self, event: str, payload: bytes) -> tuple[int, bytes, bytes]:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(f"{event} {len(payload)}\n".encode() + payload)
            stdin.flush()
            head = stdout.readline().split()
            code, out_length, err_length = (int(word) for word in head)
            out, err = _exactly(stdout, out_length), _exactly(stdout, err_length)
        except (OSError, ValueError) as exc:
            self.close()
            raise ResidentError(f"the hook worker ended mid-call: {exc}") from exc
        return code, out, err

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
        stderr). Raises ResidentError when the worker died mid-call."""
        worker = self._take()
        try:
            answer = worker.call(event, payload)
        except BaseException:
            with self._free:
                self._count -= 1
                self._free.notify()
            raise
        with self._free:
            if self._closed:
                worker.close()
                self._count -= 1
            else:
                self._idle.append(worker)
            self._free.notify()
        return answer

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
            with self._free:
                self._count -= 1
                self._free.notify()
            raise

    def close(self) -> None:
        """End every idle worker now, and each busy one as its call ends."""
        with self._free:
            self._closed = True
            idle = list(self._idle)
            self._idle.clear()  # (the finalizer's list: emptied, not replaced)
            self._count -= len(idle)
            self._free.notify_all()
        _end(idle)


def serve(state_dir: str, calls: IO[bytes], answers: IO[bytes]) -> None:
    """The worker's loop: each call read from `calls` answered on `answers`, until end of
    file (the service is gone)."""
    import tempfile
    from io import BytesIO

    from .run import call

    while True:
        head = calls.readline()
        if not head:
            return
        event, length = head.split()
        payload = _exactly(calls, int(length))
        out, err = BytesIO(), BytesIO()
        with tempfile.TemporaryFile() as stdin:  # read through its descriptor, as a pipe is
            stdin.write(payload)
            stdin.seek(0)
            argv = [event.decode("ascii"), "--state-dir", state_dir]
            code = call(argv, stdin, out, err, os.environ)
        said, warned = out.getvalue(), err.getvalue()
        answers.write(f"{code} {len(said)} {len(warned)}\n".encode() + said + warned)
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
