"""Optimizer runs as stored: each with what it stood on, and the one-action outcome (seed 000 §7.3).

The north star is whether the agent got it right in one pass: a person marks a run `ok` or
`rework`. Runs of tier `off` are the baseline, the raw words themselves ("不优化" is a tier like
any other), so each tier's success rate is read against it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, TypedDict

import orjson

from ..errors import NotFound
from ..store import SQLITE_INT_MAX, Store

OUTCOMES = ("ok", "rework")


class RunNotFound(NotFound, LookupError):
    """No optimizer run has the id asked for."""

    def __init__(self, run_id: int) -> None:
        super().__init__(f"no optimizer run {run_id}", field="run")


@dataclass
class Run:
    """One optimization, as the CLI's `--json` and the service show it."""

    tier: str
    form: str
    raw: str
    output: str
    fallback: str | None = None  # why the raw words were passed on instead, if they were
    length_gate: dict[str, Any] = field(default_factory=dict)
    ask_gate: dict[str, Any] = field(default_factory=dict)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    audit: dict[str, Any] = field(default_factory=dict)
    # Diagnostics: the session and directory, the context shown, what was stripped, each
    # tool-loop step, the model and timings.
    harness: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    model: str | None = None
    context: dict[str, Any] | None = None
    stripped: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    sentences: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, int] = field(default_factory=dict)
    id: int | None = None
    at: int = 0
    outcome: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The `dshkit optimize --json` contract."""
        return {
            "runId": self.id,
            "tier": self.tier,
            "form": self.form,
            "raw": self.raw,
            "output": self.output,
            "fallback": self.fallback,
            "lengthGate": self.length_gate,
            "askGate": self.ask_gate,
            "evidence": self.evidence,
            "audit": self.audit,
        }

    def detail(self) -> dict[str, Any]:
        """Everything kept of the run (`dshkit runs show`, `GET /api/optimizer/runs/{id}`)."""
        return {
            **self.as_json(),
            "at": self.at,
            "harness": self.harness,
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "model": self.model,
            "context": self.context,
            "stripped": self.stripped,
            "steps": self.steps,
            "sentences": self.sentences,
            "timings": self.timings,
            "outcome": self.outcome,
        }


_KEPT = ("context", "stripped", "steps", "sentences", "timings")
_GATES = {"lengthGate": "length_gate", "askGate": "ask_gate", "evidence": "evidence"}


def save_run(store: Store, run: Run) -> Run:
    """Store a run; sets its id and time."""
    run.at = run.at or int(time.time() * 1000)
    record = {name: getattr(run, name) for name in _KEPT}
    record.update({key: getattr(run, attr) for key, attr in _GATES.items()})
    record["audit"] = run.audit
    with store.transaction() as db:
        run.id = db.execute(
            "INSERT INTO optimizer_runs (at, harness, session_id, cwd, tier, form, raw, output, "
            "fallback, model, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.at,
                run.harness,
                run.session_id,
                run.cwd,
                run.tier,
                run.form,
                run.raw,
                run.output,
                run.fallback,
                run.model,
                orjson.dumps(record).decode(),
            ),
        ).lastrowid
    return run


_COLUMNS = (
    "id, at, harness, session_id, cwd, tier, form, raw, output, fallback, model, record, outcome"
)


def _run(row: Any) -> Run:
    record = orjson.loads(row["record"])
    return Run(
        tier=row["tier"],
        form=row["form"],
        raw=row["raw"],
        output=row["output"],
        fallback=row["fallback"],
        length_gate=record.get("lengthGate", {}),
        ask_gate=record.get("askGate", {}),
        evidence=record.get("evidence", []),
        audit=record.get("audit", {}),
        harness=row["harness"],
        session_id=row["session_id"],
        cwd=row["cwd"],
        model=row["model"],
        context=record.get("context"),
        stripped=record.get("stripped", []),
        steps=record.get("steps", []),
        sentences=record.get("sentences", []),
        timings=record.get("timings", {}),
        id=row["id"],
        at=row["at"],
        outcome=row["outcome"],
    )


def get_run(store: Store, run_id: int) -> Run:
    """The run `run_id`; RunNotFound when there is none, as for a number no row id can be."""
    if not _storable(run_id):
        raise RunNotFound(run_id)
    row = store.db.execute(
        f"SELECT {_COLUMNS} FROM optimizer_runs WHERE id = ?", (run_id,)
    ).fetchone()
    if row is None:
        raise RunNotFound(run_id)
    return _run(row)


def list_runs(store: Store, limit: int = 50, tier: str | None = None) -> list[Run]:
    """The newest runs first."""
    query = f"SELECT {_COLUMNS} FROM optimizer_runs"
    params: list[Any] = []
    if tier:
        query += " WHERE tier = ?"
        params.append(tier)
    query += " ORDER BY id DESC LIMIT ?"
    return [_run(row) for row in store.db.execute(query, [*params, limit])]


def record_outcome(store: Store, run_id: int, outcome: str) -> Run:
    """Mark a run `ok` or `rework` (marking again replaces the mark)."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
    if not _storable(run_id):
        raise RunNotFound(run_id)
    with store.transaction() as db:
        changed = db.execute(
            "UPDATE optimizer_runs SET outcome = ?, outcome_at = ? WHERE id = ?",
            (outcome, int(time.time() * 1000), run_id),
        ).rowcount
    if not changed:
        raise RunNotFound(run_id)
    return get_run(store, run_id)


def _storable(run_id: int) -> bool:
    """Whether `run_id` can be a run's id at all (SQLite's row ids are 1 to SQLITE_INT_MAX)."""
    return 1 <= run_id <= SQLITE_INT_MAX


class TierRate(TypedDict):
    """One tier's record: its runs, how many were judged and how, the one-pass success rate,
    and its difference from the raw-words baseline (None while either has no judged run)."""

    runs: int
    judged: int
    ok: int
    rework: int
    successRate: float | None
    vsRawWords: float | None


@dataclass(frozen=True)
class RunList:
    """The newest runs (newest first) and every tier's success rate."""

    runs: list[Run]
    rates: dict[str, TierRate]

    def as_json(self) -> dict[str, Any]:
        return {
            "runs": [run.as_json() | {"at": run.at, "outcome": run.outcome} for run in self.runs],
            "rates": self.rates,
        }


def success_rates(store: Store) -> dict[str, TierRate]:
    """Per tier: runs, how many were judged, ok and rework, the one-pass success rate, and its
    difference from the raw-words baseline (tier `off`) when both have judged runs."""
    rows = store.db.execute(
        "SELECT tier, count(*), sum(outcome = 'ok'), sum(outcome = 'rework') "
        "FROM optimizer_runs GROUP BY tier"
    ).fetchall()
    rates: dict[str, TierRate] = {}
    for tier, runs, ok, rework in rows:
        judged = (ok or 0) + (rework or 0)
        rates[tier] = {
            "runs": runs,
            "judged": judged,
            "ok": ok or 0,
            "rework": rework or 0,
            "successRate": (ok or 0) / judged if judged else None,
            "vsRawWords": None,
        }
    baseline = rates["off"]["successRate"] if "off" in rates else None
    for values in rates.values():
        rate = values["successRate"]
        values["vsRawWords"] = None if rate is None or baseline is None else rate - baseline
    return rates
