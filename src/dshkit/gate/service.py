"""The gate as a service and a command: judge one file, store the verdict, list recent ones.

Each call opens its own store connection, so it can be driven from any thread; a run from the
service is a job of the shared runner (one gate run at a time per state directory).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import load_config
from ..jobs import JobRunner, Progress, Submitted
from ..store import Store
from .judge import Verdict, check_budget, check_deliverable, judge_files
from .rework import shots_dir
from .verdicts import recent_verdicts, save_verdict

JOB_KIND = "gate"


def run_gate(state_dir: Path, path: Path, budget: float | None = None) -> Verdict:
    """Judge `path` (budget: `[gate] budget_s` when None) and store the verdict with its
    evidence. GateInputError for a file or budget the gate refuses, before anything runs."""
    file = check_deliverable(Path(path))
    seconds = check_budget(load_config(state_dir)["gate"]["budget_s"] if budget is None else budget)
    (verdict,) = judge_files([file], seconds, shots_dir(state_dir))
    with Store(state_dir) as store:
        return save_verdict(store, verdict)


class GateService:
    def __init__(self, state_dir: Path, jobs: JobRunner) -> None:
        self.state_dir = Path(state_dir)
        self.jobs = jobs

    def start(self, path: str, budget: float | None) -> Submitted:
        """Judge `path` in the background; ValueError (GateInputError, ConfigError) names
        what is wrong before anything starts."""
        file = check_deliverable(Path(path))
        if budget is not None:
            check_budget(budget)
        load_config(self.state_dir)  # a bad config is refused now, not inside the job

        def work(progress: Progress) -> dict[str, Any]:
            progress("judging", f"sampling {file.name} in headless Chromium")
            verdict = run_gate(self.state_dir, file, budget)
            return verdict.evidence() | {"id": verdict.id}

        return self.jobs.submit(JOB_KIND, self.state_dir, work, label=file.name)

    def recent(self, limit: int) -> dict[str, Any]:
        with Store(self.state_dir) as store:
            return {"verdicts": recent_verdicts(store, limit)}

    def screenshot(self, verdict_id: int) -> Path | None:
        """The screenshot of verdict `verdict_id`, if it has one still on disk in this state
        directory's shots (a path stored elsewhere is never served)."""
        with Store(self.state_dir) as store:
            row = store.db.execute(
                "SELECT screenshot FROM gate_verdicts WHERE id = ?", (verdict_id,)
            ).fetchone()
        if row is None or not row[0]:
            return None
        path = Path(row[0]).resolve()
        shots = shots_dir(self.state_dir).resolve()
        return path if path.parent == shots and path.is_file() else None
