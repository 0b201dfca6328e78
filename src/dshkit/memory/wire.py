"""The JSON shapes of memory's results: one TypedDict per shape, the `as_json()` of each result
type (`dshkit memory … --json`, the MCP tools `memory_search` and `memory_get`, and
`/api/memory/` alike). The records, the workspace and the injection are read on the hooks'
path, which imports no typing: those modules name these under TYPE_CHECKING only."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class WorkspaceJson(TypedDict):
    """A workspace: its repository root's real path, and its remote (None: none read)."""

    root: str
    remote: str | None


class RecordSourceJson(TypedDict):
    """The session a record was harvested from, and the seq of the event behind it (None: a
    record with no provenance)."""

    harness: str | None
    sessionId: str | None
    seq: int | None


class RecordJson(TypedDict):
    """One memory record: its kind, subject and text, its detail (by kind), its workspace,
    when it held (`validFrom`, `validTo`) and was recorded (and closed), what superseded it,
    where it came from and how sure that is (`grade`), whether it is set aside and why, a
    skill's state, and (where asked) whether it stands now."""

    id: int
    kind: str
    subject: str
    text: str
    detail: dict[str, Any]
    workspace: WorkspaceJson
    validFrom: int
    validTo: int | None
    recordedAt: int
    expiredAt: int | None
    supersededBy: int | None
    source: RecordSourceJson
    grade: str
    quarantined: bool
    quarantineReason: str | None
    state: str | None
    current: NotRequired[bool]


class RecordListJson(TypedDict):
    """Records, newest first, of a workspace (None: every workspace)."""

    workspace: WorkspaceJson | None
    records: list[RecordJson]


class RecordViewJson(RecordJson):
    """One record whole, with what it superseded and what superseded it."""

    supersedes: list[RecordJson]
    supersededByRecord: RecordJson | None


class ChosenRecord(TypedDict):
    """A record given to a session: its id, kind, grade, and source (harness:session#seq)."""

    id: int
    kind: str
    grade: str
    source: str


class ChosenJson(TypedDict):
    """What a session is given: the text (empty: nothing), the records in it in order, and
    why others were left out (counts by reason)."""

    text: str
    records: list[ChosenRecord]
    leftOut: dict[str, int]


class InjectionJson(ChosenJson):
    """Exactly what a new session of a workspace is given (nothing delivered), for its first
    request, and whether injection is on."""

    workspace: WorkspaceJson
    request: str
    enabled: bool


class JudgementJson(TypedDict):
    """What the model pass of a harvest gave: its outcome, records added, notes, the error."""

    outcome: str
    added: int
    notes: list[str]
    error: str | None


class HarvestSummary(TypedDict):
    """What one session's harvest added and dropped over the limit (per kind), and the events
    it read."""

    added: dict[str, int]
    dropped: dict[str, int]
    events: int
    llm: NotRequired[JudgementJson]


class HarvestedSession(HarvestSummary):
    """One session harvested, in its workspace."""

    harness: str
    id: str
    workspace: WorkspaceJson


class DeferredJson(TypedDict):
    """A retired source not harvested yet: its handoff is under way, or it is not scanned."""

    harness: str
    sessionId: str
    txn: int
    why: NotRequired[str]


class LedgerJson(TypedDict):
    """Retired sources harvested, and those deferred."""

    retired: int
    deferred: list[DeferredJson]


class HarvestReportJson(TypedDict):
    """What a harvest did (`dshkit memory harvest --json`): each session harvested, records
    added per kind, quarantined and superseded, sessions skipped as unchanged, the retired
    sources, whether another harvest held the lease, and how many stored records it redacted
    in place first (once, on a store from before secrets were redacted at write)."""

    sessions: list[HarvestedSession]
    added: dict[str, int]
    quarantined: int
    superseded: int
    skipped: int
    ledger: LedgerJson
    busy: bool
    redacted: int


class WorkspaceEntryJson(WorkspaceJson):
    """A workspace that has records: its id (what `dshkit memory rekey` takes), how many
    records it has and how many of them stand now."""

    id: str
    records: int
    current: int


class WorkspaceIdJson(WorkspaceJson):
    """A workspace and its id."""

    id: str


RekeyJson = TypedDict(
    "RekeyJson",
    {"from": WorkspaceIdJson, "to": WorkspaceIdJson, "records": int, "superseded": int},
)
"""Records moved from one workspace (`from`) to another (`to`): how many, and how many facts
of the two sets closed one another (the older of one subject superseded by the newer)."""


class DroppedSessionJson(TypedDict):
    """A session whose harvest dropped records over a cap: how many, per kind."""

    harness: str
    id: str
    dropped: dict[str, int]


class DroppedJson(TypedDict):
    """What harvests dropped over the per-session caps: per kind over every session, the
    cap of each kind, and the sessions that lost the most (up to 20)."""

    byKind: dict[str, int]
    caps: dict[str, int]
    sessions: list[DroppedSessionJson]


class InjectionLeftOutJson(TypedDict):
    """What a new session of the workspace would be given now: how many records, and the
    records left out, by why (the budget, quarantine, repeated, no provenance, rescanned)."""

    records: int
    chars: int
    leftOut: dict[str, int]


class MemoryStatusJson(TypedDict):
    """`dshkit memory status`: the counts (with a workspace, how its records stand), every
    workspace with records and its id, what the harvests' caps dropped, and with a
    workspace what its next session's injection would leave out."""

    counts: MemoryCountsJson
    workspaces: list[WorkspaceEntryJson]
    dropped: DroppedJson
    injection: InjectionLeftOutJson | None


class AcceptedJson(TypedDict):
    """A skill accepted: its record, and the SKILL.md written."""

    accepted: int
    path: str


class WorkspaceCounts(WorkspaceJson):
    """How the current records stand to one workspace: of it, of another, without provenance."""

    same: int
    cross: int
    noProvenance: int


class MemoryCountsJson(TypedDict):
    """The debug panel's memory counts: current records per kind, skill proposals waiting,
    records set aside, records waiting for the person's review (`[memory] confirm`); with a
    workspace, how the current records stand to it."""

    skills: int
    negative: int
    facts: int
    experiences: int
    queue: int
    quarantined: int
    pending: int
    workspace: NotRequired[WorkspaceCounts]


class ReviewJson(TypedDict):
    """What `dshkit memory review --json` did and what still waits: the records accepted and
    rejected now (each whole), and the queue after them."""

    reviewed: list[RecordViewJson]
    pending: RecordListJson


class WorkspaceSummaryJson(WorkspaceJson):
    """One workspace's memory: its current records per kind, and how many are superseded,
    set aside, waiting for review, rejected; when it last learned something."""

    kinds: dict[str, int]
    superseded: int
    quarantined: int
    pending: int
    rejected: int
    lastRecordedAt: int


class WorkspacesJson(TypedDict):
    """Every workspace memory holds records of, the one learned in last first."""

    workspaces: list[WorkspaceSummaryJson]


class ChainJson(TypedDict):
    """One supersession chain: a subject's facts in the order they held, each with its
    times (valid from/to, recorded, expired) and what superseded it."""

    subject: str
    records: list[RecordJson]


class TimelineJson(TypedDict):
    """The supersession timeline of a workspace (None: every workspace): each chain of facts
    that closed one another, the one changed last first."""

    workspace: WorkspaceJson | None
    chains: list[ChainJson]
