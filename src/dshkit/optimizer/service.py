"""The optimizer as a service: background optimizations with progress, runs, outcomes, settings.

Each call opens its own store connection, so it can be driven from any thread; an
optimization runs as a job of the shared runner and reports its stages as it goes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..jobs import JobFailed, JobRunner, Progress, Submitted
from ..store import Store
from .pipeline import optimize
from .request import llm_for, resolve_request, session_key
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
        session, harness, cwd = (request.get(k) for k in ("session", "harness", "cwd"))
        for name, value in (("session", session), ("harness", harness), ("cwd", cwd)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{name} must be a string")
        overrides = {k: request.get(k) for k in ("tier", "form", "turns", "full")}
        with self._open() as store:
            resolved = resolve_request(store, session, harness, overrides, cwd)

        def work(progress: Progress) -> dict[str, Any]:
            with self._open() as store:
                llm = llm_for(store, resolved.settings)
                run = optimize(
                    store,
                    raw,
                    resolved.settings,
                    llm,
                    session=resolved.key,
                    cwd=resolved.cwd,
                    progress=progress,
                )
            if run.fallback:
                raise JobFailed(f"the raw words were passed on: {run.fallback}", run.as_json())
            return run.as_json()

        return self.jobs.submit(JOB_KIND, self.state_dir, work, label=raw[:60])

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
            return settings_for(store, session_key(store, session, harness)).as_json()

    def set_settings(self, session: str, harness: str | None, values: dict[str, Any]) -> None:
        with self._open() as store:
            key = session_key(store, session, harness)
            if key is None:
                raise ValueError("a session must be named to change its settings")
            set_session_settings(store, key, values)
