"""The delivery gate's one face: judge a file, follow a run as a job, read the verdicts back,
and review what the agent just wrote (the hook's rework).

The CLI, the local service, the MCP server and the hook call these methods and nothing below
them. Each call opens its own store connection (waiting at most `busy_timeout` seconds for
another process's lock), so the service can be driven from any thread; a run from the
service is a job of the shared runner (one gate run at a time per state directory).

Errors are those of `dshkit.errors`: `Invalid` (GateInputError, with `field` "path" or
"budget") for a file or budget the gate refuses before anything runs, `Unavailable`
(BrowserError) when Chromium cannot be started, `NotFound` for a verdict or screenshot that
is not there; a `[gate]` config that cannot be used is a ConfigError.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..config import load_config
from ..errors import Invalid, NotFound
from ..store import Store
from .judge import Verdict, check_budget, check_deliverable, judge_files
from .rework import Rework, review_written, shots_dir, written_deliverables
from .verdicts import recent_verdicts, save_verdict

if TYPE_CHECKING:  # the job runner is imported when a job starts: the hook never needs it
    from ..jobs import JobRunner, Progress, Submitted

JOB_KIND = "gate"
VERDICTS_LIMIT = 1000  # verdicts of one answer at most


@dataclass(frozen=True)
class Verdicts:
    """The latest verdicts, newest first, each with its id, time and stored evidence."""

    verdicts: list[dict[str, Any]]

    def as_json(self) -> dict[str, Any]:
        return {"verdicts": self.verdicts}


class GateService:
    """Every use case of the delivery gate, over one state directory (`jobs` runs the
    background checks: a runner of its own by default)."""

    def __init__(
        self, state_dir: Path, *, jobs: JobRunner | None = None, busy_timeout: float = 30.0
    ) -> None:
        self.state_dir = Path(state_dir)
        self._jobs = jobs
        self.busy_timeout = busy_timeout

    @property
    def jobs(self) -> JobRunner:
        if self._jobs is None:
            from ..jobs import JobRunner

            self._jobs = JobRunner()
        return self._jobs

    def _open(self) -> Store:
        return Store(self.state_dir, busy_timeout=self.busy_timeout)

    def check(self, path: Path | str, budget: float | None = None) -> Verdict:
        """Judge `path` (sampling for `budget` seconds at most; `[gate] budget_s` when None)
        and store the verdict with its evidence and screenshot (`summary()` is its JSON)."""
        file = check_deliverable(Path(path))
        seconds = check_budget(
            load_config(self.state_dir)["gate"]["budget_s"] if budget is None else budget
        )
        (verdict,) = judge_files([file], seconds, shots_dir(self.state_dir))
        with self._open() as store:
            return save_verdict(store, verdict)

    def start_check(self, path: Path | str, budget: float | None = None) -> Submitted:
        """`check` in the background; what is wrong with the file, the budget or the config
        is refused now, before anything starts. The job's result is the verdict's evidence
        and id."""
        file = check_deliverable(Path(path))
        if budget is not None:
            check_budget(budget)
        load_config(self.state_dir)  # a bad config is refused now, not inside the job

        def work(progress: Progress) -> dict[str, Any]:
            progress("judging", f"sampling {file.name} in headless Chromium")
            verdict = self.check(file, budget)
            return verdict.evidence() | {"id": verdict.id}

        return self.jobs.submit(JOB_KIND, self.state_dir, work, label=file.name)

    def verdicts(self, limit: int = 50) -> Verdicts:
        """The latest `limit` verdicts (1 to VERDICTS_LIMIT), newest first."""
        if not 1 <= limit <= VERDICTS_LIMIT:
            raise Invalid(
                f"limit must be a whole number from 1 to {VERDICTS_LIMIT}, got {limit!r}",
                field="limit",
            )
        with self._open() as store:
            return Verdicts(recent_verdicts(store, limit))

    def verdict(self, verdict_id: int) -> dict[str, Any]:
        """One stored verdict, as `verdicts` lists it (NotFound when there is none)."""
        with self._open() as store:
            row = store.db.execute(
                "SELECT id, at, evidence FROM gate_verdicts WHERE id = ?", (verdict_id,)
            ).fetchone()
        if row is None:
            raise NotFound(f"no gate verdict {verdict_id}", field="id")
        return {"id": row["id"], "at": row["at"], **orjson.loads(row["evidence"])}

    def screenshot(self, verdict_id: int) -> Path:
        """The screenshot of verdict `verdict_id`, when it has one still on disk in this state
        directory's shots (a path stored elsewhere is never served); NotFound otherwise."""
        with self._open() as store:
            row = store.db.execute(
                "SELECT screenshot FROM gate_verdicts WHERE id = ?", (verdict_id,)
            ).fetchone()
        path = Path(row[0]).resolve() if row is not None and row[0] else None
        shots = shots_dir(self.state_dir).resolve()
        if path is None or path.parent != shots or not path.is_file():
            raise NotFound(f"no screenshot for gate verdict {verdict_id!r}", field="id")
        return path

    def review(self, tool_input: Any, cwd: str | None) -> Rework | None:
        """What the hook asks after a write tool: the web deliverables its input names
        (relative paths against `cwd`) are judged unless their content was sent back before;
        a Rework for the hard failures (its `commit` records the delivery), or None (rework
        off, nothing written, nothing new, all good)."""
        files = written_deliverables(tool_input, cwd)
        if not files:
            return None
        return review_written(self.state_dir, files, open_store=self._open)
