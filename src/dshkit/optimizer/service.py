"""The optimizer as a service: background optimizations with progress, runs, outcomes, settings.

Each call opens its own store connection, so it can be driven from any thread; an
optimization runs as a job of the shared runner and reports its stages as it goes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..jobs import JobFailed, JobRunner, Progress, Submitted
from ..llm import LLMConfig
from ..sessions import Catalog
from ..store import Store
from .context import resolve_session
from .pipeline import optimize
from .runs import get_run, list_runs, record_outcome, success_rates
from .settings import set_session_settings, settings_for

JOB_KIND = "optimizer"


class OptimizerService:
    def __init__(self, state_dir: Path, jobs: JobRunner) -> None:
        self.state_dir = Path(state_dir)
        self.jobs = jobs

    def _open(self) -> Store:
        return Store(self.state_dir)

    def start(self, raw: str, request: dict[str, Any]) -> Submitted:
        """Optimize `raw` in the background; `request` may name `session` (id or prefix),
        `harness`, `cwd`, and settings (`tier`, `form`, `turns`, `full`). ValueError (a
        ConfigError too) names what is wrong before anything starts."""
        if not raw.strip():
            raise ValueError("raw must not be empty")
        with self._open() as store:
            key = self._session(store, request)
            overrides = {k: request.get(k) for k in ("tier", "form", "turns", "full")}
            settings = settings_for(store, key, overrides)
            info = Catalog(store).get(key) if key else None
        cwd = request.get("cwd") or (info.cwd if info and info.cwd else None)
        if cwd is not None and not isinstance(cwd, str):
            raise ValueError("cwd must be a string")

        def work(progress: Progress) -> dict[str, Any]:
            with self._open() as store:
                llm = LLMConfig.load(store.state_dir) if settings.tier != "off" else None
                if llm is not None:
                    llm.check()
                run = optimize(store, raw, settings, llm, session=key, cwd=cwd, progress=progress)
            if run.fallback:
                raise JobFailed(f"the raw words were passed on: {run.fallback}", run.as_json())
            return run.as_json()

        return self.jobs.submit(JOB_KIND, self.state_dir, work, label=raw[:60])

    def _session(self, store: Store, request: dict[str, Any]) -> tuple[str, str] | None:
        session, harness = request.get("session"), request.get("harness")
        if session is None:
            return None
        if not isinstance(session, str) or not (harness is None or isinstance(harness, str)):
            raise ValueError("session and harness must be strings")
        key = resolve_session(Catalog(store), session, harness)
        if key is None:
            raise ValueError(f"no single session matches {session!r}")
        return key

    def runs(self, limit: int, tier: str | None) -> dict[str, Any]:
        with self._open() as store:
            runs = list_runs(store, limit, tier)
            return {
                "runs": [run.as_json() | {"at": run.at, "outcome": run.outcome} for run in runs],
                "rates": success_rates(store),
            }

    def run(self, run_id: int) -> dict[str, Any]:
        with self._open() as store:
            return get_run(store, run_id).detail()

    def outcome(self, run_id: int, outcome: str) -> dict[str, Any]:
        with self._open() as store:
            return record_outcome(store, run_id, outcome).detail()

    def settings(self, session: str | None, harness: str | None) -> dict[str, Any]:
        with self._open() as store:
            key = self._session(store, {"session": session, "harness": harness})
            return settings_for(store, key).as_json()

    def set_settings(self, session: str, harness: str | None, values: dict[str, Any]) -> None:
        with self._open() as store:
            key = self._session(store, {"session": session, "harness": harness})
            assert key is not None
            set_session_settings(store, key, values)
