"""prompt-adapt as a service: the state a console shows, its writes, and background runs.

Each call opens its own store connection, so the service can be driven from any thread;
background runs (a forced regeneration, or a rescan with the usual trigger check) go one at
a time and leave their result in the profile's `lastRun`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..llm import LLMConfigError
from ..sessions import Source
from ..store import LeaseBusy, Store
from .generate import Generation, last_run, record_run, scan_and_generate
from .state import ProfileState

CONTRACT = 1
HALL_URL = ""  # the prompt hall (seed §7.4): '' means not configured, shown as null


class ProfileService:
    def __init__(self, state_dir: Path, sources: list[Source]) -> None:
        self.state_dir = Path(state_dir)
        self.sources = sources
        self._job = threading.Lock()
        self._thread: threading.Thread | None = None

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
        return self._thread is not None and self._thread.is_alive()

    def start(self, force: bool) -> bool:
        """Begin a run in the background (forced regeneration, or rescan and trigger check);
        False when one is already running."""
        if not self._job.acquire(blocking=False):
            return False
        self._thread = threading.Thread(
            target=self._run, args=(force,), daemon=True, name="dshkit-profile"
        )
        self._thread.start()
        return True

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self, force: bool) -> None:
        try:
            with self._open() as store:
                _guarded(store, lambda: scan_and_generate(store, self.sources, force=force))
        finally:
            self._job.release()


def _guarded(store: Store, work: Callable[[], object]) -> None:
    """Run `work`; whatever stops it is written to lastRun rather than lost in a thread."""
    try:
        work()
    except (LeaseBusy, LLMConfigError, OSError, ValueError) as exc:
        record_run(store, Generation(at=int(time.time() * 1000), error=str(exc), triggered=True))
    except Exception as exc:  # a bug: keep the service up, say what happened
        error = f"internal error: {type(exc).__name__}: {exc}"
        record_run(store, Generation(at=int(time.time() * 1000), error=error, triggered=True))
