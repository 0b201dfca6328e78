"""prompt-adapt as a service: the state a console shows, its writes, and background runs.

Each call opens its own store connection, so the service can be driven from any thread.
Background runs (a forced regeneration, or a rescan with the usual trigger check) are jobs
of kind "profile" on the process's job runner: one at a time per store, reporting their
stages, and leaving their result in the profile's `lastRun` as well.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..jobs import JobFailed, JobRunner, Progress, Submitted
from ..llm import LLMConfigError
from ..sessions import Scanner, Source
from ..sessions import scanner as scanning
from ..store import LeaseBusy, Store
from .generate import Generation, generate_configured, last_run, record_run
from .history import profile_versions
from .state import ProfileState

CONTRACT = 1
HALL_URL = ""  # the prompt hall (seed §7.4): '' means not configured, shown as null
JOB_KIND = "profile"


class ProfileService:
    def __init__(self, state_dir: Path, sources: list[Source], jobs: JobRunner | None = None):
        self.state_dir = Path(state_dir)
        self.sources = sources
        self.jobs = jobs if jobs is not None else JobRunner()

    def _open(self) -> Store:
        return Store(self.state_dir)

    def state(self) -> dict[str, Any]:
        with self._open() as store:
            profile = ProfileState(store)
            effective = profile.effective()
            return {
                "contract": CONTRACT,
                "mode": effective.mode.value,
                "effectiveText": effective.text,
                "effectiveSource": effective.source,
                "customText": profile.custom_text,
                "autoExtraText": profile.auto_extra_text,
                "profile": profile.profile_view(),
                "lastRun": last_run(store),
                "copiedSnapshot": profile.copied_snapshot(),
                # For the console's own bookkeeping only: a rewording also makes it true, so it
                # must never become a "copy again" prompt (seed §6-2.5(b)).
                "staleCopy": profile.stale_copy(),
                "hallUrl": HALL_URL or None,
                "running": self.running,
            }

    def versions(self, limit: int) -> dict[str, Any]:
        """The kept versions, newest first, with their diffs (ValueError on a bad limit)."""
        with self._open() as store:
            return profile_versions(store, limit)

    def set_mode(self, mode: str) -> None:
        with self._open() as store:
            ProfileState(store).set_mode(mode)

    def set_custom_text(self, text: Any) -> None:
        with self._open() as store:
            ProfileState(store).set_custom_text(text)

    def mark_copied(self, text: Any, entries: Any = None) -> dict[str, Any]:
        with self._open() as store:
            return ProfileState(store).mark_copied(
                text, entries if isinstance(entries, list) else None
            )

    @property
    def running(self) -> bool:
        return self.jobs.current(JOB_KIND, self.state_dir) is not None

    def start(self, force: bool) -> Submitted:
        """Begin a run in the background (forced regeneration, or rescan and trigger check);
        `started` is False when one is already running (its job is returned)."""
        label = "forced regeneration" if force else "rescan and trigger check"
        return self.jobs.submit(
            JOB_KIND, self.state_dir, lambda progress: self._run(force, progress), label=label
        )

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the latest run to end."""
        job = self.jobs.latest(JOB_KIND, self.state_dir)
        if job is not None:
            job.wait(timeout)

    def _run(self, force: bool, progress: Progress) -> dict[str, Any]:
        """One run; whatever stops it is written to lastRun rather than lost in a thread."""
        with self._open() as store:
            try:
                progress("scanning", "reading what is new in the session logs", 0.0)
                scanner = Scanner(store)
                keys = scanner.scan(self.sources, _ScanProgress(progress)).keys
                progress("generating", "checking the trigger; the model is asked when it fires")
                run = generate_configured(
                    scanner, keys, force=force, on_delta=_ReplyProgress(progress)
                )
            except (LeaseBusy, LLMConfigError, OSError, ValueError) as exc:
                run = _failed(store, str(exc))
            except Exception as exc:  # a bug: keep the service up, say what happened
                run = _failed(store, f"internal error: {type(exc).__name__}: {exc}")
        if run.error:
            raise JobFailed(run.error, run.as_json())
        return run.as_json()


def _failed(store: Store, error: str) -> Generation:
    run = Generation(at=int(time.time() * 1000), error=error, triggered=True)
    record_run(store, run)
    return run


class _ReplyProgress:
    """The model's streamed answer as "generating" events, one per 2,000 characters."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.received = self.reported = 0

    def __call__(self, delta: str) -> None:
        self.received += len(delta)
        if self.received - self.reported >= 2000:
            self.reported = self.received
            self.progress("generating", f"{self.received:,} characters of the answer received")


class _ScanProgress(scanning.Progress):
    """The scan's byte progress as the job's "scanning" fraction, one event per percent."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.total = self.done = self.reported = 0

    def start(self, total_bytes: int, files: int) -> None:
        self.total = total_bytes
        if total_bytes:
            self.progress("scanning", f"reading up to {total_bytes:,} bytes", 0.0)
        else:
            self.progress("scanning", "nothing new in the session logs", 1.0)

    def advance(self, nbytes: int) -> None:
        self.done += nbytes
        percent = min(100, self.done * 100 // self.total) if self.total else 100
        if percent > self.reported:
            self.reported = percent
            self.progress("scanning", f"read {self.done:,} of {self.total:,} bytes", percent / 100)
