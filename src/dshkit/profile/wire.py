"""The JSON shapes of prompt-adapt's results: one TypedDict per shape, the `as_json()` of each
result type (`dshkit profile … --json`, `dshkit signals --json`, the MCP tool `profile_show`
and `/api/profile/`, `/api/signals/` alike)."""

from __future__ import annotations

from typing import Any, TypedDict

# One entry of the profile, as the model wrote it (`model.MODEL_FIELDS`) with what dshkit keeps
# beside (when it was first and last seen, how often, the person's pin or edit): typed by the
# delta contract's checks (`model`), not here.
Entry = dict[str, Any]
# One hit of a signal: its session and turn, then fields of its own signal's (the tool, the
# duration, the error code, the seqs, the texts).
Hit = dict[str, Any]


class SourceJson(TypedDict):
    """Where one evidence quote was said: the person's own words (`quote`), the harness, the
    session, the message's seq and its time (ms; None when the harness recorded none)."""

    quote: str
    harness: str
    session: str
    seq: int | None
    at: int | None


class RefusedJson(TypedDict):
    """An entry of the model's answer that did not go into the profile as written: its id (as
    the model gave it), claim, the evidence it gave, what was done (`kind`: "unsupported" no
    evidence traced to the person, "echo" the claim repeats the prompt, "invalid", "over-cap",
    "removed" the person removed it), why in words, and the entry kept in its place (the
    previous one, when the answer rewrote an entry) or None."""

    id: str
    claim: str
    evidence: list[str]
    kind: str
    why: str
    kept: str | None


class RetryJson(TypedDict):
    """When the hooks may next ask the model after failed generations: the failures in a row,
    the earliest time (ms) and the human message count new material is measured from."""

    failures: int
    notBefore: int
    humanMessages: int


class GenerationJson(TypedDict):
    """What one generation came to (`dshkit profile generate --json`): whether it stored a
    version, its named outcome, the version, its entry count, its diff and spurious rate,
    whether it was rescued from a cut answer, why in words, and the error when it failed."""

    ok: bool
    outcome: str
    version: int | None
    entries: int
    diff: DiffJson
    spuriousRate: float
    partial: bool
    reason: str
    error: str | None


class LastRunJson(GenerationJson):
    """The last generation, every field kept (the profile's `lastRun`): also whether the
    trigger fired, when it ran, how the model's answer was cut and what of it was dropped."""

    triggered: bool
    at: int
    truncationReason: str | None
    droppedTailChars: int
    warnings: list[str]
    deletedByContract: list[str]
    deletionsHonored: bool
    droppedAsRemoved: list[DroppedAsRemoved]
    refused: list[RefusedJson]
    materialMessages: int
    materialLeftOut: int
    promptTokens: int
    retry: RetryJson | None


class VersionJson(TypedDict):
    """One kept version: its entries, its diff from the one before, how much of it the model
    changed without cause (`spuriousRate`), whether it was rescued from a cut answer (and
    how), the human messages it was made from, why it was made, and the model's notes."""

    version: int
    at: int
    entries: list[Entry]
    diff: DiffJson
    spuriousRate: float
    partial: bool
    rescue: dict[str, Any] | None
    materialMessages: int
    reason: str
    notes: str


class ProfileVersionsJson(TypedDict):
    """The newest kept versions, newest first, each with its diff; `kept` counts them all."""

    kept: int
    versions: list[VersionJson]


class DiffJson(TypedDict):
    """What a version changed of the one before it: entry ids added, removed, modified (claim
    or category) and unchanged."""

    added: list[str]
    removed: list[str]
    modified: list[str]
    unchanged: list[str]


class DroppedAsRemoved(TypedDict):
    """An entry of the model's answer dropped because it says again what the person removed:
    the removed entry's id, and why they are the same."""

    id: str
    category: str
    claim: str
    removedId: str
    why: str


class RemovalJson(TypedDict):
    """One entry the person removed (`removal` numbers the removal): no regeneration writes
    it again until they restore it."""

    removal: int
    id: str
    category: str
    claim: str
    removedAt: int


class EffectiveProfileJson(TypedDict):
    """The one text the agent is given now, byte for byte; its mode and source ("profile" or
    "customText"), the entries left out to fit the budget, and why stored text is withheld."""

    text: str
    mode: str
    source: str
    dropped: list[str]
    withheld: str | None


class ProfileShowJson(TypedDict):
    """What the agent is told and from where, the newest version behind it, the last run."""

    mode: str
    effectiveText: str
    effectiveSource: str
    withheld: str | None
    profile: ProfileViewJson | None
    lastRun: LastRunJson | None


class ProfileStatusJson(TypedDict):
    """The newest version's number and entries, how many versions are kept, the last run."""

    version: int | None
    entries: list[Entry]
    versionsKept: int
    lastRun: LastRunJson | None
    retry: RetryJson | None


class ConsoleStateJson(TypedDict):
    """Everything the console's profile view shows: the mode and the injected text, the
    person's texts, the newest version, the last run, the last copy (and whether the text
    changed since), whether a background run is going, the entries the person removed, and
    the wait of the hooks' refreshes after failed runs (None when the last run did not fail)."""

    contract: int
    mode: str
    effectiveText: str
    effectiveSource: str
    customText: str
    autoExtraText: str
    profile: ProfileViewJson | None
    lastRun: LastRunJson | None
    copiedSnapshot: CopiedSnapshotJson | None
    staleCopy: bool
    hallUrl: str | None
    running: bool
    removed: list[RemovalJson]
    retry: RetryJson | None


class EntryChangeJson(TypedDict):
    """What a person's change to one entry made: the version it stored, what was done, and
    the entry as it now stands (None once removed)."""

    version: int
    action: str
    id: str
    entry: Entry | None


class DeltaSizeRowJson(TypedDict):
    """How many tokens the model writes for a profile of `entries` entries, `changed` of them
    new or rewritten, under the full contract and the delta one, and the share saved."""

    entries: int
    changed: int
    fullTokens: int
    deltaTokens: int
    saved: float


class DayTotals(TypedDict):
    """Every signal's total on one day (UTC; None: sessions with no time) in one harness."""

    day: str | None
    harness: str
    totals: dict[str, int]


class SignalThresholds(TypedDict):
    """The thresholds the signals were counted with."""

    longToolMs: int
    repeatFailMin: int
    answerWindowMs: int


class SignalTotalsJson(TypedDict):
    """Every signal's totals over all sessions, per harness, and per day and harness (oldest
    first), with the signals' names and the thresholds they were counted with."""

    signals: list[str]
    sessions: int
    humanMessages: int
    totals: dict[str, int]
    harnesses: dict[str, dict[str, int]]
    days: list[DayTotals]
    config: SignalThresholds


class SignalHitsJson(TypedDict):
    """One page of one signal's hits, from `offset`, each with its harness, session id and
    day; `total` counts every match."""

    signal: str
    total: int
    offset: int
    hits: list[Hit]


class SessionFriction(TypedDict):
    """One session with friction: its count of every signal, its harness, project and day."""

    harness: str
    sessionId: str
    project: str
    day: str | None
    totals: dict[str, int]


class SignalSessionsJson(TypedDict):
    """Each session with friction, newest first, with the signals' names."""

    signals: list[str]
    sessions: list[SessionFriction]


class SessionSignalsJson(TypedDict):
    """One session's human messages and the hits of every signal in it (kept per session)."""

    humanMessages: int
    hits: dict[str, list[Hit]]


class SignalsReportJson(TypedDict):
    """Signals over many sessions (`dshkit signals --json`): the sessions and human messages
    counted, every signal's total, its first hits, and how many hits were left out."""

    sessions: int
    humanMessages: int
    totals: dict[str, int]
    details: dict[str, list[Hit]]
    omitted: dict[str, int]


class ProfileBudget(TypedDict):
    """What a profile version may hold to be injected whole: entries and characters."""

    entries: int
    characters: int


class ProfileViewJson(TypedDict):
    """The newest version as shown to people and scripts: its number, time, notes and entries
    (each as the model and the person left it), the ids of the entries left out of the
    injected text to fit the budget, of those never injected (no evidence traced to the
    person's words, or a claim another entry says), and the budget."""

    version: int
    generatedAt: int
    notes: str
    entries: list[Entry]
    dropped: list[str]
    unsupported: list[str]
    budget: ProfileBudget


class CopiedEntry(TypedDict):
    """One entry of a copied text, its values as the copier gave them."""

    id: Any
    category: Any
    claim: Any
    evidenceQuoteCount: Any


class CopiedSnapshotJson(TypedDict):
    """The text a person copied, when, of which version, with its entries."""

    text: str
    at: int
    profileVersion: int | None
    entries: list[CopiedEntry]
    algorithmVersion: str
