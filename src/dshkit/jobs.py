"""Background jobs: one job of a kind at a time per store, with progress events to follow.

A capability submits work of a *kind* ("profile", later "optimizer", "gate") for a state
directory; while one of that kind runs for that directory, a second submit gets the running
job back instead of a second run. That exclusion holds within this process (the jobs of one
service); across processes each capability keeps using its own `store.lease`.

The work runs in its own thread and receives a `Progress` callable to report stages; the
runner keeps each job's recent events, its result or error, and lets any number of
followers (the web surface's event stream) wait for new events without polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypedDict

from .errors import Failed

QUEUED = "queued"
RUNNING = "running"
DONE = "done"
FAILED = "failed"
# Stages the runner itself reports; a job reports its own stages between them.
RESERVED_STAGES = frozenset({QUEUED, DONE, FAILED})

KEEP_JOBS = 50  # finished jobs remembered (running ones are always kept)
KEEP_EVENTS = 1000  # events remembered per job; older ones are counted as dropped


class Progress(Protocol):
    """What a job calls to report where it is: a stage name, words for a person, and how far
    along the stage is (0–1) when that is known."""

    def __call__(self, stage: str, message: str = "", fraction: float | None = None) -> None: ...


class JobFailed(Failed):
    """Raised by a job's work to end it as failed with `message`, keeping a `result` too."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True, slots=True)
class JobEvent:
    seq: int  # 1, 2, … within its job
    at: int  # ms since the epoch
    stage: str
    message: str
    fraction: float | None


class JobJson(TypedDict):
    """One background job: its kind, state and latest stage, its result or error (the result
    is what its kind's work returns), and how many progress events it reported."""

    id: str
    kind: str
    label: str
    state: str
    stage: str | None
    message: str
    fraction: float | None
    createdAt: int
    startedAt: int | None
    finishedAt: int | None
    result: Any
    error: str | None
    events: int
    droppedEvents: int


class JobEventJson(TypedDict):
    """One progress event of a job (the `data` of a server-sent `progress` event)."""

    job: str
    kind: str
    seq: int
    at: int
    stage: str
    message: str
    fraction: float | None


@dataclass(eq=False)
class Job:
    """One submitted run; its fields change only under the runner's lock."""

    id: str
    kind: str
    state_dir: str
    label: str
    created_at: int
    state: str = QUEUED  # queued → running → done | failed
    started_at: int | None = None
    finished_at: int | None = None
    result: Any = None
    error: str | None = None
    events: deque[JobEvent] = field(default_factory=lambda: deque(maxlen=KEEP_EVENTS))
    dropped_events: int = 0
    finished: threading.Event = field(default_factory=threading.Event)
    _seq: int = 0
    _waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.state in (DONE, FAILED)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job has ended (True) or `timeout` passed (False)."""
        return self.finished.wait(timeout)

    def as_json(self) -> JobJson:
        last = self.events[-1] if self.events else None
        return {
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "state": self.state,
            "stage": last.stage if last else None,
            "message": last.message if last else "",
            "fraction": last.fraction if last else None,
            "createdAt": self.created_at,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "result": self.result,
            "error": self.error,
            "events": self._seq,
            "droppedEvents": self.dropped_events,
        }


def event_json(job: Job, event: JobEvent) -> JobEventJson:
    return {
        "job": job.id,
        "kind": job.kind,
        "seq": event.seq,
        "at": event.at,
        "stage": event.stage,
        "message": event.message,
        "fraction": event.fraction,
    }


class Submitted(NamedTuple):
    job: Job  # the new job, or the one of its kind already running
    started: bool  # False: one of this kind was already running for this store


class JobRunner:
    """Runs jobs in threads; thread-safe; one instance serves a process's surfaces."""

    def __init__(self, *, keep: int = KEEP_JOBS) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}  # insertion order: oldest first
        self._running: dict[tuple[str, str], Job] = {}
        self._keep = keep

    def submit(
        self,
        kind: str,
        state_dir: Path,
        work: Callable[[Progress], Any],
        *,
        label: str = "",
    ) -> Submitted:
        """Start `work(progress)` in the background unless a job of `kind` already runs for
        `state_dir`. What `work` returns is the job's result; an exception fails the job with
        its message (`JobFailed` also keeps a result)."""
        scope = str(Path(state_dir).resolve())
        with self._lock:
            running = self._running.get((kind, scope))
            if running is not None:
                return Submitted(running, False)
            job = Job(
                id=f"{kind}-{secrets.token_hex(6)}",
                kind=kind,
                state_dir=scope,
                label=label,
                created_at=_now_ms(),
            )
            self._jobs[job.id] = job
            self._running[(kind, scope)] = job
            self._emit(job, QUEUED, label or f"{kind} job queued", None)
            self._forget_old()
        thread = threading.Thread(
            target=self._run, args=(job, work), daemon=True, name=f"dshkit-{job.id}"
        )
        thread.start()
        return Submitted(job, True)

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def jobs(self, kind: str | None = None) -> list[Job]:
        """Remembered jobs, newest first."""
        with self._lock:
            return [j for j in reversed(self._jobs.values()) if kind is None or j.kind == kind]

    def current(self, kind: str, state_dir: Path) -> Job | None:
        """The job of `kind` running for `state_dir`, if any."""
        with self._lock:
            return self._running.get((kind, str(Path(state_dir).resolve())))

    def latest(self, kind: str, state_dir: Path) -> Job | None:
        """The newest remembered job of `kind` for `state_dir`, running or not."""
        scope = str(Path(state_dir).resolve())
        with self._lock:
            for job in reversed(self._jobs.values()):
                if job.kind == kind and job.state_dir == scope:
                    return job
        return None

    def events(self, job: Job, after: int = 0) -> list[JobEvent]:
        """The remembered events of `job` with a sequence number above `after`."""
        with self._lock:
            return [e for e in job.events if e.seq > after]

    async def follow(
        self, job: Job, after: int = 0, *, heartbeat: float | None = None
    ) -> AsyncIterator[JobEvent | None]:
        """Yield `job`'s events above `after` as they happen, ending once the job has ended
        and every event was yielded; yields None after `heartbeat` seconds without one."""
        loop = asyncio.get_running_loop()
        while True:
            wake = asyncio.Event()
            with self._lock:
                new = [e for e in job.events if e.seq > after]
                ended = job.done
                if not new and not ended:
                    job._waiters.append((loop, wake))
            if new:
                for event in new:
                    yield event
                after = new[-1].seq
                continue
            if ended:
                return
            try:
                await asyncio.wait_for(wake.wait(), heartbeat)
            except TimeoutError:
                yield None

    def _run(self, job: Job, work: Callable[[Progress], Any]) -> None:
        def progress(stage: str, message: str = "", fraction: float | None = None) -> None:
            if stage in RESERVED_STAGES:
                raise ValueError(f"job stage {stage!r} is reserved for the runner")
            if fraction is not None and not 0.0 <= fraction <= 1.0:
                raise ValueError(f"progress fraction must be within 0..1, got {fraction}")
            with self._lock:
                self._emit(job, stage, message, fraction)

        with self._lock:
            job.state, job.started_at = RUNNING, _now_ms()
        result: Any = None
        error: str | None = None
        try:
            result = work(progress)
        except JobFailed as exc:
            result, error = exc.result, str(exc)
        except Exception as exc:  # a bug in the job: keep the process up, say what happened
            error = f"internal error: {type(exc).__name__}: {exc}"
        with self._lock:
            job.result, job.error = result, error
            job.state, job.finished_at = (FAILED if error else DONE), _now_ms()
            del self._running[(job.kind, job.state_dir)]
            self._emit(job, job.state, error or "finished", 1.0 if error is None else None)
        job.finished.set()

    def _emit(self, job: Job, stage: str, message: str, fraction: float | None) -> None:
        """Record an event and wake the job's followers (holding the lock)."""
        job._seq += 1
        if len(job.events) == job.events.maxlen:
            job.dropped_events += 1
        job.events.append(JobEvent(job._seq, _now_ms(), stage, message, fraction))
        for loop, wake in job._waiters:
            with contextlib.suppress(RuntimeError):  # that follower's loop has closed
                loop.call_soon_threadsafe(wake.set)
        job._waiters.clear()

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.done]
        for job in finished[: max(0, len(finished) - self._keep)]:
            del self._jobs[job.id]


def _now_ms() -> int:
    return int(time.time() * 1000)
