"""Optimizer runs as stored: each with what it stood on, and the one-action outcome.

Every prompt the hook sees is a run, the model asked or not (`passed` says why not: tier
off, the skip prefix, a bare continuation, a command to the harness). The north star is
whether the agent got it right in one pass: a person marks a run `ok` or `rework`. What
reached the agent as the raw words — tier off, the skip prefix, and any run that fell back —
is the baseline, and each tier's one-pass rate is read against it on comparable prompts
(raw words of the same length class), with the sample size on both sides. Prompts that
needed no model (a continuation, a harness command) ask nothing to refine: no rate counts
them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..errors import NotFound
from ..store import SQLITE_INT_MAX, Store

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from .wire import ContextBlockJson, RunDetailJson, RunJson, RunListJson, TierRate, UnitJson

OUTCOMES = ("ok", "rework")
# Why a prompt reached the agent without a model call.
PASSED_OFF = "off"  # the tier is off
PASSED_PREFIX = "skip-prefix"  # the person asked for their own words
PASSED_CONTINUATION = "continuation"  # a bare continuation (继续, ok): nothing to refine
PASSED_COMMAND = "command"  # a command to the harness itself (a slash command)
# The refined instruction of the session's last run, pasted back with the prefix (review):
# that run's words reach the agent now, and that run is what a mark judges.
PASSED_REFINED = "refined-sent"
# Not a request to refine: kept (the cost shown), never counted in a rate.
NOT_COMPARABLE = (PASSED_CONTINUATION, PASSED_COMMAND, PASSED_REFINED)
# The length classes prompts are compared within (characters of the raw words, at most).
LENGTH_CLASSES = ((12, "short"), (40, "medium"), (None, "long"))
# Judged runs a rate needs before it is shown at all: under it, only the counts are.
MIN_SAMPLE = 10
_Z95 = 1.959964  # the normal quantile of a two-sided 95% interval


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
    passed: str | None = None  # why no model was asked (PASSED), None when one was
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
    context: ContextBlockJson | None = None
    stripped: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    sentences: list[UnitJson] = field(default_factory=list)
    timings: dict[str, int] = field(default_factory=dict)
    language: str | None = None  # the person's, which the instruction's fixed parts follow
    strategy: str | None = None  # the strategy text the model was given (v6, v5)
    id: int | None = None
    at: int = 0
    outcome: str | None = None

    def as_json(self) -> RunJson:
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

    def detail(self) -> RunDetailJson:
        """Everything kept of the run (`dshkit runs show`, `GET /api/optimizer/runs/{id}`)."""
        return {
            **self.as_json(),
            "passed": self.passed,
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
            "language": self.language,
            "strategy": self.strategy,
        }


_KEPT = ("context", "stripped", "steps", "sentences", "timings", "language", "strategy")
_GATES = {"lengthGate": "length_gate", "askGate": "ask_gate", "evidence": "evidence"}


def save_run(store: Store, run: Run) -> Run:
    """Store a run; sets its id and time."""
    run.at = run.at or int(time.time() * 1000)
    record = {name: getattr(run, name) for name in _KEPT}
    record.update({key: getattr(run, attr) for key, attr in _GATES.items()})
    record["audit"] = run.audit
    record["passed"] = run.passed
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


def record_passed(
    store: Store,
    raw: str,
    tier: str,
    form: str,
    why: str,
    *,
    owner: tuple[str, str] | None,
    cwd: str | None,
    started: float,
) -> Run:
    """Store a prompt that reached the agent as typed without a model call (`why`, one of
    PASSED_*), so every prompt is counted and its cost shown (`started`: when the prompt
    began to wait, a `time.monotonic()`). Loads no model client: the hook's cheap path."""
    run = Run(
        tier=tier,
        form=form,
        raw=raw,
        output=raw,
        passed=why,
        harness=owner[0] if owner else None,
        session_id=owner[1] if owner else None,
        cwd=cwd,
    )
    run.timings["totalMs"] = round((time.monotonic() - started) * 1000)
    return save_run(store, run)


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
        passed=record.get("passed"),
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
        language=record.get("language"),
        strategy=record.get("strategy"),
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


def is_last_refined(store: Store, harness: str, session_id: str, text: str) -> bool:
    """Whether `text` is the refined instruction of the session's newest run that refined
    one (whitespace aside: a paste may change it)."""
    row = store.db.execute(
        "SELECT output FROM optimizer_runs WHERE harness = ? AND session_id = ? "
        "AND fallback IS NULL AND json_extract(record, '$.passed') IS NULL AND tier != 'off' "
        "ORDER BY id DESC LIMIT 1",
        (harness, session_id),
    ).fetchone()
    return row is not None and row[0].split() == text.split()


def last_markable(store: Store, harness: str, session_id: str) -> Run:
    """The session's newest run a person can judge: not a continuation or a harness command
    (those carry on the work of the run before them). RunNotFound(0) when there is none."""
    rows = store.db.execute(
        f"SELECT {_COLUMNS} FROM optimizer_runs WHERE harness = ? AND session_id = ? "
        "AND coalesce(json_extract(record, '$.passed'), '') NOT IN (?, ?, ?) "
        "ORDER BY id DESC LIMIT 1",
        (harness, session_id, *NOT_COMPARABLE),
    ).fetchall()
    if not rows:
        raise NotFound(
            f"session {harness}:{session_id} has no optimizer run to mark yet", field="session"
        )
    return _run(rows[0])


@dataclass(frozen=True)
class RunList:
    """The newest runs (newest first) and every tier's success rate."""

    runs: list[Run]
    rates: dict[str, TierRate]

    def as_json(self) -> RunListJson:
        return {
            "runs": [
                {
                    **run.as_json(),
                    "at": run.at,
                    "outcome": run.outcome,
                    "passed": run.passed,
                    "timings": run.timings,
                }
                for run in self.runs
            ],
            "rates": self.rates,
        }


RAW_WORDS = "off"  # the rates' key of what reached the agent as the raw words


def delivered_by(tier: str, fallback: str | None, passed: str | None) -> str | None:
    """Whose words reached the agent: the tier's, the raw words' (`RAW_WORDS`), or None for
    a prompt that asked nothing to refine."""
    if passed in NOT_COMPARABLE:
        return None
    if fallback or passed or tier == RAW_WORDS:
        return RAW_WORDS
    return tier


def length_class(raw: str) -> str:
    """The raw words' length class, their characters counted as every budget counts them."""
    from .strategies import count_chars  # (not on the hook's path: the rates only)

    chars = count_chars(raw)
    for most, name in LENGTH_CLASSES:
        if most is None or chars <= most:
            return name
    return LENGTH_CLASSES[-1][1]


def success_rates(store: Store) -> dict[str, TierRate]:
    """Per tier (and `off`, the raw words): what `TierRate` says."""
    rows = store.db.execute(
        "SELECT tier, raw, fallback, outcome, json_extract(record, '$.passed'), "
        "json_extract(record, '$.timings.totalMs') FROM optimizer_runs"
    ).fetchall()
    # (group, length class) -> [ok, judged]
    judged: dict[tuple[str, str], list[int]] = {}
    totals: dict[str, list[int]] = {}  # group -> [runs, ok, rework]
    times: dict[str, list[int]] = {}
    counts: dict[str, list[int]] = {}  # tier -> [prompts, skipped, fallbacks]
    for tier, raw, fallback, outcome, passed, total_ms in rows:
        count = counts.setdefault(tier, [0, 0, 0])
        count[0] += 1
        count[1] += passed is not None
        count[2] += fallback is not None
        if total_ms is not None:
            times.setdefault(tier, []).append(int(total_ms))
        group = delivered_by(tier, fallback, passed)
        if group is None:
            continue
        total = totals.setdefault(group, [0, 0, 0])
        total[0] += 1
        if outcome in OUTCOMES:
            total[1 if outcome == "ok" else 2] += 1
            cell = judged.setdefault((group, length_class(raw)), [0, 0])
            cell[0] += outcome == "ok"
            cell[1] += 1
    rates: dict[str, TierRate] = {}
    for group in sorted(set(totals) | set(counts)):
        runs, ok, rework = totals.get(group, [0, 0, 0])
        vs, mine, theirs = _against_raw_words(group, judged)
        prompts, skipped, fallbacks = counts.get(group, [0, 0, 0])
        spent = sorted(times.get(group, []))
        sampled = ok + rework >= MIN_SAMPLE
        rates[group] = {
            "runs": runs,
            "judged": ok + rework,
            "ok": ok,
            "rework": rework,
            "successRate": ok / (ok + rework) if sampled else None,
            "interval": wilson(ok, ok + rework) if sampled else None,
            "minSample": MIN_SAMPLE,
            "vsRawWords": vs if min(mine, theirs) >= MIN_SAMPLE else None,
            "comparable": mine,
            "rawComparable": theirs,
            "latency": {
                "prompts": prompts,
                "skipped": skipped,
                "fallbacks": fallbacks,
                "p50Ms": _percentile(spent, 0.5),
                "p95Ms": _percentile(spent, 0.95),
            },
        }
    return rates


def _against_raw_words(
    group: str, judged: dict[tuple[str, str], list[int]]
) -> tuple[float | None, int, int]:
    """The group's rate minus the raw words' in each length class both were judged in,
    weighted by the group's judged runs there; and both sample sizes."""
    if group == RAW_WORDS:
        return None, 0, 0
    difference, mine, theirs = 0.0, 0, 0
    for (owner, klass), (ok, count) in judged.items():
        base = judged.get((RAW_WORDS, klass))
        if owner != group or not base:
            continue
        difference += (ok / count - base[0] / base[1]) * count
        mine += count
        theirs += base[1]
    return (difference / mine if mine else None), mine, theirs


def wilson(ok: int, judged: int, z: float = _Z95) -> tuple[float, float] | None:
    """The Wilson score interval (95% by default) of a one-pass rate of `ok` in `judged`
    (None for none judged): honest at small samples and near 0 or 1, where ok/judged ± a
    normal margin is not."""
    if judged <= 0:
        return None
    share = ok / judged
    spread = z * z / judged
    centre = (share + spread / 2) / (1 + spread)
    margin = z * ((share * (1 - share) + spread / 4) / judged) ** 0.5 / (1 + spread)
    return round(max(0.0, centre - margin), 4), round(min(1.0, centre + margin), 4)


def _percentile(values: list[int], share: float) -> int | None:
    """The nearest-rank percentile of sorted `values` (None: none)."""
    if not values:
        return None
    rank = max(1, -(-len(values) * share // 1))  # ceil
    return values[int(rank) - 1]
