"""The JSON shapes of graft's results: one TypedDict per shape, the `as_json()` of each result
type (`dshkit graft … --json`, the MCP tools `graft_*` and `/api/graft/` alike), and of what
graft keeps for its hooks (a session's digest and state, a handoff's plan)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

# -- a handoff ------------------------------------------------------------------------------


class IdentityJson(TypedDict):
    """A target's origin: the source session, the seq it was cut at, its generation."""

    sourceSessionId: str
    boundarySeq: int
    generation: int


class ConstraintJson(TypedDict):
    """One hard constraint in the person's words, where it was stated (the seq of the human
    message in the session of that generation)."""

    text: str
    seq: int
    generation: int


class ItemJson(TypedDict):
    """One line of the task board and the seq of the event that proves or states it."""

    text: str
    seq: int | None


class SlimmingJson(TypedDict):
    """What the handoff left out, counted."""

    resolvedErrors: int
    unresolvedErrors: int
    errorBodies: int
    narrationChars: int
    noiseParagraphs: int
    noiseTokens: int
    outputsFolded: int


class BoardJson(TypedDict):
    """The task board: the request, what is done, in progress and to do, and the blocker."""

    request: str | None
    done: list[ItemJson]
    inProgress: list[ItemJson]
    todo: list[ItemJson]
    blocker: ItemJson | None


class IntegrityJson(TypedDict):
    """The proof that the constraints block is whole: how many, their characters, the budget,
    and the digest of their texts."""

    count: int
    chars: int
    budgetChars: int
    sha256: str


class HandoffSourceJson(TypedDict):
    """The session a handoff continues."""

    harness: str
    sessionId: str
    cwd: str


class LaunchJson(TypedDict):
    """The source's model and permission mode, as its log names them: the target runs on them."""

    model: str | None
    mode: str | None


class MaybeRulesJson(TypedDict):
    """The person's later sentences no rule class took, carried verbatim in the "maybe a rule"
    block (`text`, "" when there is none), and the older ones its bound left out (by seq, to
    read back)."""

    carried: list[ConstraintJson]
    leftOut: list[ConstraintJson]
    text: str


class HandoffJson(TypedDict):
    """A prepared handoff (`dshkit graft prepare --json`, the MCP tool `graft_prepare`, `GET
    /api/graft/preview`): the board, the constraints, the maybe-rules, the card and what its
    budget cut, the artifacts, what was left out, the identity, the source, the target's first
    message."""

    board: BoardJson
    constraints: list[ConstraintJson]
    maybeRules: MaybeRulesJson
    card: str
    boundarySeq: int
    artifacts: list[ItemJson]
    cardCut: dict[str, int] | None
    slimming: SlimmingJson
    constraintIntegrity: IntegrityJson
    identity: IdentityJson
    source: HandoffSourceJson
    firstMessage: str
    launch: LaunchJson


class PlanJson(TypedDict):
    """The handoff to carry out, as stored with its transaction."""

    harness: str
    sessionId: str
    cwd: str
    firstMessage: str
    identity: IdentityJson
    card: str
    targetHarness: str | None
    model: str | None
    mode: str | None


class TxnJson(TypedDict):
    """One handoff as stored: its state, source and target, its attempts and last error, and
    how a person goes on with the work (None: there is no way yet, or it was undone)."""

    id: int
    state: str
    harness: str
    sessionId: str
    cwd: str
    targetHarness: str
    targetSessionId: str | None
    identity: IdentityJson
    model: str | None
    mode: str | None
    attempts: int
    lastError: str | None
    createdAt: int
    updatedAt: int
    continueCommand: str | None


class SliceJson(TxnJson):
    """A handoff begun (`dshkit graft slice --json`, the MCP tool `graft_slice_and_inject`):
    the transaction as it stood, and the card it carries."""

    card: str


class RecoveryJson(TypedDict):
    """What `dshkit graft recover` finished or rolled back, and the handoffs live processes
    still drive."""

    recovered: list[TxnJson]
    driven: list[int]


# -- the watermark ----------------------------------------------------------------------------


class PressureJson(TypedDict):
    """How full the context is (`ratio` of the window; None: unknown), and where each figure
    came from."""

    tokens: int | None
    window: int
    windowSource: str
    ratio: float | None
    source: str
    model: str | None


class GraftCostJson(TypedDict):
    """What a handoff costs in context: the handoff itself, growth per turn (and whence), the
    turns kept in reserve, and the total."""

    handoffTokens: int
    tokensPerTurn: int
    tokensPerTurnSource: str
    reserveTurns: int
    totalTokens: int


class WatermarkJson(TypedDict):
    """Where the warning band starts and the forced cut falls (ratios of the window; None:
    none), whether a handoff fits the window at all, and what is wrong with the settings."""

    mode: str
    warning: float | None
    forced: float | None
    feasible: bool
    configError: str | None
    cost: GraftCostJson | None


class ForcedCutMark(TypedDict):
    """A forced cut that came after an ignored warning: the ratio it came at, the warning line
    and the turn the warning was given in."""

    ratio: float
    warning: float
    nudgeTurn: int | None


class DecisionJson(TypedDict):
    """What the session's hooks would do before the model's next step (`none`, `nudge`,
    `escalate`, `force`, `plan`), why, the text the model is told, the pressure and lines."""

    action: str
    reason: str
    text: str | None
    mark: ForcedCutMark | None
    pressure: PressureJson
    watermark: WatermarkJson


class GraftStateJson(TypedDict):
    """What earlier decisions left behind for one session (kept by its hooks)."""

    nudgeTurn: int | None
    nudgeAt: int | None
    escalated: bool
    planNudged: bool
    migrated: bool
    allowReslice: bool
    forcedCutMarks: list[ForcedCutMark]


class DigestJson(TypedDict):
    """What the decisions need of a session's events, kept by its hooks between tail reads."""

    count: int
    window: int | None
    model: str | None
    context: int | None
    levels: list[list[int]]
    humans: int
    identity: IdentityJson | None
    last_step: int
    last_graft_call: int
    todos: list[str]
    ordinal: int
    turn: int


class OutcomeJson(TypedDict):
    """What became of a session's latest handoff, for a person: its state, the target and how
    to go on with it, or why it was rolled back, in one English sentence too (`summary`)."""

    txnId: int
    state: str
    targetHarness: str
    targetSessionId: str | None
    continueCommand: str | None
    model: str | None
    mode: str | None
    error: str | None
    attempts: int
    stalled: bool
    released: bool
    summary: str


class ForceFailureJson(TypedDict):
    """A session's forced handoffs that failed in a row: how many, the last one's error and
    when, whether its model was told, and when the next may start."""

    failures: int
    error: str
    at: int
    told: bool
    retryAt: int


class WatermarkStatusJson(DecisionJson):
    """A session's context pressure, watermark and the decision its hooks would make now
    (`dshkit graft status --json`), the outcome of its latest handoff and failing forced cuts."""

    harness: str
    session: str
    handoff: OutcomeJson | None
    forcedCutFailure: ForceFailureJson | None
    excludedFromForcedCut: bool
    settingsError: str | None


# -- the ledger and the panel -----------------------------------------------------------------


class RetirementJson(TypedDict):
    """Why a source session takes no more work (`transferring`, `retired`), and where the work
    went: the handoff, the target (None: not known yet), the command to go on with it."""

    kind: str
    txnId: int
    targetHarness: str
    targetSessionId: str | None
    cwd: str
    pending: bool
    command: str | None


class RetirementShown(RetirementJson):
    """A retirement with the sentence the session's blocked prompts are answered with."""

    pointer: str


class ExclusionJson(TypedDict):
    """A session a person kept from the forced cut (`dshkit graft exclude`)."""

    harness: str
    sessionId: str
    at: int
    by: str
    reason: str | None


class IgnitionJson(TypedDict):
    """Whether a handoff starts its target at once: in force, the person's choice (None: left
    to the config) and the config's `[graft] ignite_target`."""

    ignite: bool
    chosen: bool | None
    config: bool


class AuditRecordJson(TypedDict):
    """One record of the audit trail: its kind, the session and handoff it concerns, and what
    it holds (by kind)."""

    id: int
    at: int
    kind: str
    harness: str | None
    sessionId: str | None
    txnId: int | None
    detail: dict[str, Any]


class AuditPageJson(TypedDict):
    """The latest records of the audit trail, oldest first, and how many older ones the limit
    left out."""

    records: list[AuditRecordJson]
    more: int


class Counts(TypedDict):
    """The ledger's counts: sessions transferring and retired, sessions born from a handoff,
    and handoffs by state."""

    transferring: int
    retired: int
    targets: int  # sessions born from a handoff: its target was started or picked one up
    byState: dict[str, int]


class PendingRow(TypedDict):
    """A handoff waiting for the next session started in its directory."""

    txnId: int
    targetHarness: str
    cwd: str
    at: int
    ageMs: int
    harness: str
    sessionId: str


class NoticeRow(TypedDict):
    """A notice owed to a session and not yet shown."""

    harness: str
    sessionId: str
    txnId: int
    at: int
    text: str


class SessionPart(TypedDict):
    """One session's part of the panel: its decision now (on the defaults of what `[graft]`
    values were refused, `settingsError` saying which), its retirement, its handoffs as
    source, those it carries on, its notices, what became of its latest handoff, its failing
    forced cuts, whether a person kept it from the forced cut."""

    harness: str
    sessionId: str
    cwd: str
    decision: DecisionJson | None
    settingsError: str | None
    retirement: RetirementShown | None
    handoffs: list[TxnJson]
    targetOf: list[int]
    notices: list[NoticeRow]
    handoff: OutcomeJson | None
    forcedCutFailure: ForceFailureJson | None
    excludedFromForcedCut: bool


class UnfinishedTxn(TxnJson):
    """An unfinished handoff, how old it is, and the pid of the live process driving it (None:
    recovery would take it)."""

    ageMs: int
    driver: int | None


class Panel(TypedDict):
    """The debug panel (`GET /api/graft/status`): a session's part when one is named, the
    unfinished handoffs, the ledger's counts, pending handoffs, notices not yet shown."""

    session: SessionPart | None
    transactions: list[UnfinishedTxn]
    counts: Counts
    pending: list[PendingRow]
    notices: list[NoticeRow]
    exclusions: list[ExclusionJson]
    ignition: IgnitionJson
    settingsError: str | None
    staleLeases: list[StaleLeaseJson]


class StaleLeaseJson(TypedDict):
    """A lease no live process holds (`graft recover` reclaims it, audited): its name, the
    pid that held it and why it is stale."""

    name: str
    pid: int | None
    why: str


# -- context use ------------------------------------------------------------------------------


class TurnUseJson(TypedDict):
    """One turn's last context use, its window, and the lines of that moment (ratios of the
    window, and in tokens; None where the session has none)."""

    ordinal: int
    turn: int
    seq: int | None
    start: int | None
    end: int | None
    tokens: int | None
    window: int
    windowSource: str
    ratio: float | None
    warning: float | None
    forced: float | None
    warningTokens: int | None
    forcedTokens: int | None


class BoundaryJson(TypedDict):
    """Where a handoff of this session cut it (`role` "source"), or the cut it was born from
    (`role` "target", the seq being the source's)."""

    txnId: int
    state: str
    role: str
    otherSessionId: str
    seq: int
    turn: int | None
    time: int | None
    at: int


class ContextUseJson(TypedDict):
    """A session's context use per turn with its lines, its handoff boundaries, its peak turn,
    and the first turns that reached the warning and the forced lines."""

    harness: str
    session: str
    mode: str
    turns: list[TurnUseJson]
    boundaries: list[BoundaryJson]
    peak: TurnUseJson | None
    firstWarningTurn: int | None
    firstForcedTurn: int | None


# -- reading the source back ------------------------------------------------------------------


class ReadResult(TypedDict):
    """One page of an event's text in a handoff's source session (the MCP tool
    `graft_read_result`)."""

    sourceSessionId: str
    harness: str
    seq: int
    type: str | None
    tool: NotRequired[str]  # the tool of a tool call, or of the call a result answers
    text: str
    offset: int
    totalChars: int
    nextOffset: int | None  # where the next page starts; None when this one ends the text


class SearchHit(TypedDict):
    """Where one event of the source session holds the query, and around it."""

    seq: int
    type: str | None
    tool: NotRequired[str]
    snippet: str


class SearchResult(TypedDict):
    """Where the source session holds a query, newest first (the MCP tool
    `graft_search_history`)."""

    sourceSessionId: str
    harness: str
    query: str
    hits: list[SearchHit]
    totalHits: int  # every match, those the limits left out included
    truncated: bool
