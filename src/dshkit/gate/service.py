"""The delivery gate's one face: judge a file, follow a run as a job, read the verdicts back,
and deliver: what the agent writes is judged in the background, a failure is handed back at
its Stop or next prompt (`delivery`), rework switched per session.

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

from ..config import load_config
from ..errors import Invalid, NotFound
from ..store import Store
from . import delivery
from .rework import Rework, instruction, shots_dir, written_deliverables

if TYPE_CHECKING:  # imported when used: the hooks never judge, nor start a job here
    from ..jobs import JobRunner, Progress, Submitted
    from .judge import Verdict
    from .wire import ReworkStateJson, StoredVerdictJson, VerdictsJson

Key = tuple[str, str]  # (harness, session id)
JOB_KIND = "gate"
VERDICTS_LIMIT = 1000  # verdicts of one answer at most


@dataclass(frozen=True)
class Verdicts:
    """The latest verdicts, newest first, each with its id, time and stored evidence."""

    verdicts: list[StoredVerdictJson]

    def as_json(self) -> VerdictsJson:
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

    def check(
        self, path: Path | str, budget: float | None = None, *, watch: bool = False
    ) -> Verdict:
        """Judge `path` (sampling for `budget` seconds at most; `[gate] budget_s` when None)
        and store the verdict with its evidence and screenshot (`summary()` is its JSON).

        With `watch` (the background runs of delivery), an early "ok" is stored at once, so
        that nobody waits for it, and the page is watched to the end of its budget: a late
        failure is stored after it as the content's newest verdict, delivered like any
        other. Returns the final verdict."""
        from .judge import check_budget, check_deliverable, judge_files
        from .verdicts import save_verdict

        file = check_deliverable(Path(path))
        seconds = check_budget(
            load_config(self.state_dir)["gate"]["budget_s"] if budget is None else budget
        )
        claimed = delivery.content_hash(file)  # a background run claimed this content
        early: list[Verdict] = []

        def store_early(verdict: Verdict) -> None:
            with self._open() as store:
                early.append(save_verdict(store, verdict))

        try:
            (verdict,) = judge_files(
                [file], seconds, shots_dir(self.state_dir), store_early if watch else None
            )
            if early and verdict is early[0]:
                return verdict  # still ok at the end of the watch: stored already
            with self._open() as store:
                return save_verdict(store, verdict)
        finally:
            with self._open() as store:
                delivery.finish_run(store, str(file), claimed)

    def start_check(self, path: Path | str, budget: float | None = None) -> Submitted:
        """`check` in the background; what is wrong with the file, the budget or the config
        is refused now, before anything starts. The job's result is the verdict's evidence
        and id."""
        from .judge import check_budget, check_deliverable

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
        from .verdicts import recent_verdicts

        with self._open() as store:
            return Verdicts(recent_verdicts(store, limit))

    def verdict(self, verdict_id: int) -> StoredVerdictJson:
        """One stored verdict, as `verdicts` lists it (NotFound when there is none)."""
        from .verdicts import stored_evidence

        with self._open() as store:
            row = store.db.execute(
                "SELECT id, at, evidence FROM gate_verdicts WHERE id = ?", (verdict_id,)
            ).fetchone()
        if row is None:
            raise NotFound(f"no gate verdict {verdict_id}", field="id")
        return stored_evidence(row["id"], row["at"], row["evidence"])

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

    # -- delivery: the hooks' use cases ------------------------------------------------------

    def written(self, key: Key, tool_input: Any, cwd: str | None) -> list[Path]:
        """After a write tool: the web deliverables its input names (relative paths against
        `cwd`) are recorded for the session and judged in the background (one detached run
        per content); returns the files whose run started now. Nothing when rework is off."""
        files = written_deliverables(tool_input, cwd)
        if not files:
            return []
        with self._open() as store:
            if not delivery.rework_on(store, key):
                return []
            delivery.note_writes(store, key, files)
            return delivery.start_runs(store, files)

    def commanded(self, key: Key, cwd: str | None) -> list[Path]:
        """After a shell command: deliverables under `cwd` changed since the session's turn
        began (a bounded scan, see `delivery.changed_deliverables`) are recorded and judged
        in the background like written ones; returns the files whose run started now."""
        if not cwd:
            return []
        with self._open() as store:
            since = delivery.turn_began(store, key)
            if since is None or not delivery.rework_on(store, key):
                return []
            files = delivery.changed_deliverables(cwd, since)
            if not files:
                return []
            delivery.note_writes(store, key, files)
            return delivery.start_runs(store, files)

    def at_prompt(self, key: Key) -> Rework | None:
        """A new prompt (or, where the harness asks before every model step, the next step):
        the failures judged since and not yet delivered to the session; the session's turn
        begins (unless one is open)."""
        with self._open() as store:
            delivery.begin_turn(store, key)
            if not delivery.rework_on(store, key):
                return None
            return self._rework(delivery.owed(store, key), key)

    def at_stop(
        self, key: Key, cwd: str | None, deadline: float, *, may_block: bool = True
    ) -> Rework | None:
        """The agent is about to end its turn: deliverables it wrote (or its commands changed,
        under `cwd`, since the turn began) whose content is still unjudged are waited for
        until the monotonic `deadline`; the failures not yet delivered to the session are
        the Rework. None when there are none, rework is off, or `may_block` is false (the
        harness is already going on because of a Stop hook: what is owed waits for the
        next prompt). The turn ends unless a Rework goes back."""
        with self._open() as store:
            if not delivery.rework_on(store, key):
                delivery.end_turn(store, key)
                return None
            since = delivery.turn_began(store, key)
            if since is not None and cwd:
                files = delivery.changed_deliverables(cwd, since)
                if files:
                    delivery.note_writes(store, key, files)
            found = delivery.wait_for_verdicts(store, key, deadline if may_block else 0.0)
            if not may_block or not found.failed:
                delivery.end_turn(store, key)
                return None
            return self._rework(found, key)

    def _rework(self, found: delivery.Owed, key: Key) -> Rework | None:
        if not found.failed:
            return None
        marks = found.marks()

        def commit() -> None:
            with self._open() as store:
                delivery.mark_delivered(store, key, marks)

        return Rework(instruction(found.failed), commit)

    def session_key(self, session: str, harness: str | None = None) -> Key:
        """The session `session` names (an id or a unique prefix, of `harness` when given):
        one the store's catalog knows, else one the gate's hooks have seen by its exact id
        (NotFound, Ambiguous otherwise)."""
        from .. import harnesses
        from ..errors import NotFound as Missing
        from ..sessions.catalog import Catalog

        if harness is not None:
            harnesses.get(harness)  # an unknown name is refused (Invalid), never stored
        with self._open() as store:
            try:
                info = Catalog(store).find(session, harness)
                return (info.harness, info.session_id)
            except Missing:
                rows = store.db.execute(
                    "SELECT DISTINCT harness FROM gate_sessions WHERE session_id = ?"
                    + (" AND harness = ?" if harness else ""),
                    (session.strip(), harness) if harness else (session.strip(),),
                ).fetchall()
                if len(rows) == 1:
                    return (rows[0][0], session.strip())
                if harness and not rows:
                    return (harness, session.strip())  # named whole: switched ahead of time
                raise

    def set_rework(self, key: Key, on: bool | None) -> ReworkStateJson:
        """Switch rework on or off for one session (None: back to `[gate] rework`); its
        state after."""
        with self._open() as store:
            delivery.set_session_rework(store, key, on)
        return self.rework_state(key)

    def rework_state(self, key: Key) -> ReworkStateJson:
        """Whether failures go back to the session, and where that comes from."""
        with self._open() as store:
            own = delivery.session_rework(store, key)
            effective = delivery.rework_on(store, key)
        return {
            "harness": key[0],
            "session": key[1],
            "rework": effective,
            "source": "config" if own is None else "session",
        }
