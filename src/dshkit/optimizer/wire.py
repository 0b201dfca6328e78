"""The JSON shapes of the prompt optimizer's results: one TypedDict per shape, the `as_json()` of
each result type (`dshkit optimize --json`, `dshkit runs … --json`, the MCP tool
`optimize_prompt` and `/api/optimizer/` alike)."""

from __future__ import annotations

from typing import Any, TypedDict


class EvalRow(TypedDict):
    """One case under one tier: its run, the gates of the answer, and for a clear case
    whether it said 无 (None for the others)."""

    raw: str
    tier: str
    runId: int | None
    fallback: str | None
    askGate: dict[str, Any]
    lengthGate: dict[str, Any]
    nothingOnClear: bool | None


class TierRate(TypedDict):
    """One tier's record. `runs`: prompts it delivered (a fallback is the raw words', a
    continuation nobody's); `judged`, `ok`, `rework` of those; `successRate` the one-pass
    rate and `interval` its 95% Wilson interval, both None under `minSample` judged runs;
    `vsRawWords` its difference from the raw words' rate on comparable prompts (the same
    length class, weighted as this tier's judged runs are), over `comparable` judged runs of
    this tier and `rawComparable` of the raw words (None while either is under `minSample`).
    `latency`: the optimizer's added time of every prompt this tier's settings ran (skips
    and fallbacks included): count, how many asked no model, p50 and p95 in ms."""

    runs: int
    judged: int
    ok: int
    rework: int
    successRate: float | None
    interval: tuple[float, float] | None
    minSample: int
    vsRawWords: float | None
    comparable: int
    rawComparable: int
    latency: Latency


class Latency(TypedDict):
    prompts: int
    skipped: int
    fallbacks: int
    p50Ms: int | None
    p95Ms: int | None


class SettingsJson(TypedDict):
    """The optimizer's settings in effect (for a session, a project, or none): tier, form,
    history turns, whether the whole history goes, the tools' permission, the prefix that
    skips it, whether trivial prompts skip it (and which words are), the timeouts and the
    model's token limit."""

    tier: str
    form: str
    turns: int
    full: bool
    permission: str
    skipPrefix: str
    skipTrivial: bool
    trivialWords: str
    timeoutS: float
    stallS: float
    maxTokens: int
    budgetS: float
    strategy: str
    model: str
    reasoningEffort: str


class UnitJson(TypedDict):
    """One audited sentence (or structural line) of an output: its line, whether it traces to
    a source (`kind`: traced, freedom, untraced, structure), why, what it cites, and the share
    of its bigrams found in the raw words."""

    line: int
    text: str
    kind: str
    why: str
    cites: list[str]
    overlap: float | None


class ContextBlockJson(TypedDict):
    """The session context shown to the model: the session, the exchanges included and those
    dropped for the budget, the detail level, the seqs labelled, the cap, whether it met a
    compaction, and its size."""

    harness: str
    sessionId: str
    turnsIncluded: int
    turnsDropped: int
    detail: str
    seqs: list[int]
    truncatedTo: int | None
    compacted: bool
    chars: int


class RunJson(TypedDict):
    """One optimization (`dshkit optimize --json`, the MCP tool `optimize_prompt`): the raw
    words and the output, why the raw words were passed on instead (None: they were not), the
    gates and the audit, each as the run stored it."""

    runId: int | None
    tier: str
    form: str
    raw: str
    output: str
    fallback: str | None
    lengthGate: dict[str, Any]
    askGate: dict[str, Any]
    evidence: list[dict[str, Any]]
    audit: dict[str, Any]


class RunSummaryJson(RunJson):
    """A run as listed: when, its outcome (`ok`, `rework`, None), why no model was asked, its
    timings."""

    at: int
    outcome: str | None
    passed: str | None
    timings: dict[str, int]


class RunDetailJson(RunSummaryJson):
    """Everything kept of a run (`dshkit runs show --json`, `GET /api/optimizer/runs/{id}`):
    also its session and directory, its model, the context shown, what was stripped, each
    step of the tool loop, each sentence's audit, the person's language and the strategy
    text the model was given (None: no model was asked)."""

    harness: str | None
    sessionId: str | None
    cwd: str | None
    model: str | None
    context: ContextBlockJson | None
    stripped: list[str]
    steps: list[dict[str, Any]]
    sentences: list[UnitJson]
    language: str | None
    strategy: str | None


class RunListJson(TypedDict):
    """The newest runs (newest first) and every tier's record (`off`: the raw words)."""

    runs: list[RunSummaryJson]
    rates: dict[str, TierRate]
