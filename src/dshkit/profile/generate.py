"""One profile generation: trigger check, prompt, model call, delta assembly, stored version.

One generation per store at a time: a run holds the store's PROFILE_LEASE from its trigger
check to its stored version, so two runs never ask the model twice for the same material nor
collide on a version number. `generate` does not wait for the lease: a run that finds it held
makes no model call and says it was skipped (in `lastRun` too, while the other run is still
going); `generate_waiting` waits its turn, then checks the trigger afresh.

Every run leaves a `lastRun` record (camelCase keys, like all dshkit JSON), triggered or not,
successful or not, with its named `outcome` and its reason in words; each new version is kept
with its diff in a bounded history that never drops the newest.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import orjson

from ..config import ConfigError, load_config
from ..errors import DshkitError
from ..llm import LLMClient, LLMConfig, LLMConfigError
from ..provenance.quotes import person_words
from ..provenance.secrets import redact
from ..sessions import Scanner, SessionKey, Source
from ..store import PROFILE_LEASE, Lease, LeaseBusy, Store
from .evidence import EvidenceCheck, echoes
from .model import (
    Assembly,
    Checks,
    ProfileOutputError,
    Trigger,
    assemble,
    diff_profiles,
    parse_output,
    should_regenerate,
    spurious_rate,
)
from .prompt import MAX_MATERIAL, PROMPT_TOKENS, Material, build_prompt
from .removals import Removal, match_removal, removals
from .signals import collect_signals, configured
from .state import latest_version
from .wire import (
    DiffJson,
    DroppedAsRemoved,
    Entry,
    GenerationJson,
    LastRunJson,
    RefusedJson,
    RetryJson,
)

HISTORY_LIMIT = 50
_WATERMARK = "profile.watermark"
_LAST_RUN = "profile.lastRun"
# Set while a run holds the lease and has not yet recorded its lastRun: a skipped run records
# itself only then, so it never hides the result of the run it gave way to.
_RUNNING = "profile.running"
_LEASE_MARGIN_S = 60.0  # beyond the model call's deadline, for storing what it answered
_PROPOSABLE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,15}")
_PLACEHOLDER = re.compile(r"(?i)[0-9]+|new[-_]?[0-9]*|id|entry|…")
_RETRY = "profile.retry"  # the pacing after failed runs (RetryJson), cleared by a good one
_LAST_ID = "profile.lastId"  # the highest number dshkit gave an entry ("p<n>")
# After a failed run the hooks' refreshes wait this long, doubling with each failure in a row,
# at most RETRY_CAP_S, unless new material arrives (docs/design/profile.md#a-failure-backs-off).
RETRY_BASE_S = 60
RETRY_CAP_S = 6 * 3600

# What a run came to (`Generation.outcome`). Not failures: "ok" (a version was stored),
# "not-triggered" (too little is new), "skipped" (another generation held the lease).
# Failures: "config-error", the model call's own outcome (dshkit.llm: "http-error",
# "network-error", "stream-error", "deadline", "aborted"), "unusable-reply" (no usable JSON, or
# a profile left empty), "superseded" (another version was stored meanwhile), and "error" for a
# failure recorded by a caller that named no outcome.
# "unchanged" (the answer changed nothing: no version is stored) and "backing-off" (a paced
# run within the wait after a failure: no model call) are not failures either.
NOT_FAILURES = ("ok", "not-triggered", "skipped", "unchanged", "backing-off")


@dataclass
class Generation:
    """The outcome of one `generate` call (also stored as the profile's `lastRun`)."""

    ok: bool = False  # a new version was stored
    version: int | None = None
    entries: int = 0
    diff: DiffJson = field(
        default_factory=lambda: DiffJson(added=[], removed=[], modified=[], unchanged=[])
    )
    spurious_rate: float = 0.0
    partial: bool = False
    reason: str = ""
    error: str | None = None
    triggered: bool = False
    at: int = 0
    outcome: str | None = None  # see NOT_FAILURES; None only from a caller naming none
    truncation_reason: str | None = None
    dropped_tail_chars: int = 0
    warnings: list[str] = field(default_factory=list)
    deleted_by_contract: list[str] = field(default_factory=list)
    deletions_honored: bool = True
    # Entries of the answer dropped because the person had removed them, each with why
    # (`model.Assembly.dropped_as_removed`).
    dropped_as_removed: list[DroppedAsRemoved] = field(default_factory=list)
    # Entries of the answer that did not go in as written (model.Assembly.refused).
    refused: list[RefusedJson] = field(default_factory=list)
    material_messages: int = 0  # the person's messages the prompt listed
    material_left_out: int = 0  # older ones the prompt's budget left out
    prompt_tokens: int = 0  # the prompt's estimate
    retry: RetryJson | None = None  # the pacing this run left, when it failed

    @property
    def failed(self) -> bool:
        return self._outcome() not in NOT_FAILURES

    def as_json(self) -> GenerationJson:
        """The `dshkit profile generate --json` contract."""
        return {
            "ok": self.ok,
            "outcome": self._outcome(),
            "version": self.version,
            "entries": self.entries,
            "diff": self.diff,
            "spuriousRate": self.spurious_rate,
            "partial": self.partial,
            "reason": self.reason,
            "error": self.error,
        }

    def record(self) -> LastRunJson:
        """Every field, with camelCase keys: the profile's `lastRun`."""
        return {
            "ok": self.ok,
            "version": self.version,
            "entries": self.entries,
            "diff": self.diff,
            "spuriousRate": self.spurious_rate,
            "partial": self.partial,
            "reason": self.reason,
            "error": self.error,
            "triggered": self.triggered,
            "at": self.at,
            "outcome": self._outcome(),
            "truncationReason": self.truncation_reason,
            "droppedTailChars": self.dropped_tail_chars,
            "warnings": self.warnings,
            "deletedByContract": self.deleted_by_contract,
            "deletionsHonored": self.deletions_honored,
            "droppedAsRemoved": self.dropped_as_removed,
            "refused": self.refused,
            "materialMessages": self.material_messages,
            "materialLeftOut": self.material_left_out,
            "promptTokens": self.prompt_tokens,
            "retry": self.retry,
        }

    def _outcome(self) -> str:
        if self.outcome is not None:
            return self.outcome
        return "error" if self.error else "ok" if self.ok else "not-triggered"


def last_run(store: Store) -> LastRunJson | None:
    stored = store.get_meta(_LAST_RUN)
    if not stored:
        return None
    # A record from before a field existed reads as that field's empty value.
    record: LastRunJson = Generation().record() | orjson.loads(stored)
    return record


def retry_state(store: Store) -> RetryJson | None:
    """The pacing failed runs left (None when the last run did not fail)."""
    stored = store.get_meta(_RETRY)
    return orjson.loads(stored) if stored else None


def generate(
    scanner: Scanner,
    keys: Iterable[SessionKey],
    llm: LLMConfig,
    *,
    force: bool = False,
    trigger: Trigger | None = None,
    history_limit: int = HISTORY_LIMIT,
    on_delta: Callable[[str], None] | None = None,
    paced: bool = False,
) -> Generation:
    """Generate a new profile version from the sessions `keys` when the trigger fires; skip
    (outcome "skipped", no model call) when another generation holds the store's lease. A
    `paced` run (the hooks' refreshes) also makes no call while failed runs' wait lasts and
    no new material came (outcome "backing-off")."""
    if history_limit < 1:
        raise ValueError(f"history_limit must be at least 1, got {history_limit}")
    run = Generation(at=int(time.time() * 1000))
    store = scanner.store
    try:
        with store.lease(PROFILE_LEASE, wait=0) as lease:
            store.set_meta(_RUNNING, str(run.at))
            return _generate(
                scanner, keys, llm, run, lease, force, trigger, history_limit, on_delta, paced
            )
    except LeaseBusy as busy:
        run.outcome = "skipped"
        run.reason = f"skipped: another profile generation (dshkit process {busy.pid}) was running"
        with store.transaction():
            if store.get_meta(_RUNNING) and store.lease_holder(PROFILE_LEASE) is not None:
                record_run(store, run)
        return run


def generate_waiting(
    scanner: Scanner,
    keys: Iterable[SessionKey],
    llm: LLMConfig,
    *,
    on_wait: Callable[[int], None] | None = None,
    force: bool = False,
    history_limit: int = HISTORY_LIMIT,
    on_delta: Callable[[str], None] | None = None,
) -> Generation:
    """`generate`, after waiting for any generation already running (`on_wait(pid)` is told
    once); the trigger is checked once it is this run's turn."""
    keys = list(keys)
    told = False
    while True:
        holder = scanner.store.lease_holder(PROFILE_LEASE)
        if holder is None:
            run = generate(
                scanner, keys, llm, force=force, history_limit=history_limit, on_delta=on_delta
            )
            if run.outcome != "skipped":
                return run
            continue  # another run took the lease first: wait for that one
        if not told and on_wait is not None:
            on_wait(holder)
        told = True
        time.sleep(0.2)


def _generate(
    scanner: Scanner,
    keys: Iterable[SessionKey],
    llm: LLMConfig,
    run: Generation,
    lease: Lease,
    force: bool,
    trigger: Trigger | None,
    history_limit: int,
    on_delta: Callable[[str], None] | None,
    paced: bool,
) -> Generation:
    """One generation, under the lease."""
    keys = list(keys)
    try:
        # The knobs every reader counts with: the stored counts serve the console too.
        knobs = configured(scanner.store.state_dir)
    except ConfigError as exc:
        run.outcome, run.error = "config-error", str(exc)
        return _finish(scanner, run)
    # A generation writes anyway: what it counts is kept for the next read.
    signals = collect_signals(scanner.catalog, keys, knobs, memo=True)
    waiting = _waiting(scanner.store, signals.human_messages, run.at) if paced else None
    if waiting is not None and not force:
        run.outcome, run.reason = "backing-off", waiting
        scanner.store.set_meta(_RUNNING, "")
        return run  # lastRun keeps the failure it waits after
    stored = scanner.store.get_meta(_WATERMARK)
    watermark = orjson.loads(stored) if stored else None
    run.triggered, run.reason = should_regenerate(
        watermark, signals.human_messages, signals.sessions, trigger or Trigger()
    )
    if force:
        run.triggered, run.reason = True, f"forced ({run.reason})"
    if not run.triggered:
        run.outcome = "not-triggered"
        return _finish(scanner, run)
    previous = latest_version(scanner.store)
    removed = removals(scanner.store)
    material = _material(scanner, keys)
    prompt = build_prompt(
        previous[1] if previous else None,
        previous[0] if previous else None,
        material,
        {"humanMessages": signals.human_messages, "sessions": signals.sessions},
        signals.totals,
        removed,
        tokens=_prompt_tokens(scanner.store),
    )
    # Left out: every message of the person's not listed, older than the newest MAX_MATERIAL
    # read or cut by the budget.
    run.material_messages = len(prompt.listed)
    run.material_left_out = max(prompt.left_out, signals.human_messages - len(prompt.listed))
    run.prompt_tokens = prompt.tokens
    sources = list(dict.fromkeys((m.harness, m.session_id) for m in prompt.listed))
    try:
        # The call carries these sessions' words: forgetting one of them takes it.
        client = LLMClient(llm, scanner.store, sessions=sources)
    except LLMConfigError as exc:
        run.outcome, run.error = "config-error", str(exc)
        return _finish(scanner, run, signals.human_messages)
    messages = prompt.messages
    # The lease outlives the call by design: the client ends every call by its deadline.
    lease.ttl = llm.deadline_s + _LEASE_MARGIN_S
    lease.renew()
    with client:
        reply = client.complete(messages, purpose="profile", on_delta=on_delta)
    if reply.outcome not in ("ok", "max-tokens"):
        run.outcome = reply.outcome
        run.error = f"the model call failed ({reply.outcome}): {reply.error}"
        return _finish(scanner, run, signals.human_messages)
    run.truncation_reason = "max-tokens" if reply.outcome == "max-tokens" else None
    try:
        parsed = parse_output(reply.text, run.truncation_reason)
    except ProfileOutputError as exc:
        run.outcome, run.error = "unusable-reply", str(exc)
        return _finish(scanner, run, signals.human_messages)

    before = previous[1] if previous else []
    words = person_words(scanner.catalog, keys)
    ids = _Ids(scanner.store, before, removed)
    checks = Checks(
        evidence=EvidenceCheck(words, prompt.listed).check,
        requote=EvidenceCheck(words).check,
        echoes=lambda claim: echoes(claim, prompt.own_words),
        removed=_removed_check(removed),
        new_id=ids.next,
    )
    built = assemble(before, parsed, run.at, len(prompt.listed), checks)
    parsed.notes = _without_secrets(built, parsed.notes)
    run.refused = built.refused
    run.warnings = built.warnings
    if not built.entries:
        run.outcome = "unusable-reply"
        run.error = (
            "the model's answer left the profile empty (nothing it wrote was supported by the "
            "person's own words); the last version is kept"
        )
        return _finish(scanner, run, signals.human_messages)
    run.diff = diff_profiles(before, built.entries)
    run.spurious_rate = spurious_rate(run.diff, len(before), built.unsupported)
    run.entries = len(built.entries)
    run.partial = parsed.rescue is not None
    run.dropped_tail_chars = (parsed.rescue or {}).get("droppedTailChars", 0)
    run.deleted_by_contract = built.deleted_by_contract
    run.deletions_honored = built.deletions_honored
    run.dropped_as_removed = built.dropped_as_removed
    mark = {"at": run.at, "humanMessages": signals.human_messages, "sessions": signals.sessions}
    run.version = (previous[0] if previous else 0) + 1
    with scanner.store.transaction() as db:
        newest = db.execute("SELECT max(version) FROM profile_versions").fetchone()[0]
        if newest == (previous[0] if previous else None) and _forgotten_meanwhile(
            scanner.store, previous, sources
        ):
            # The answer and the entries it builds on hold words a forget has since taken out
            # (docs/design/profile.md#forgetting-a-session-takes-its-words-out-of-the-profile).
            run.outcome, run.version = "superseded", None
            run.error = (
                "a session this answer was made from was forgotten meanwhile; the answer is "
                "discarded"
            )
            _record_final(scanner.store, run)
            return run
        if newest != (previous[0] if previous else None):
            # Only if the lease was lost (it outlives the call by design): never a collision.
            run.outcome, run.version = "superseded", None
            run.error = (
                f"another generation stored v{newest} meanwhile; this answer, made from "
                f"v{previous[0] if previous else 0}, is discarded"
            )
            _record_final(scanner.store, run)
            return run
        if previous is not None and _same(built.entries, before):
            # Nothing changed: no version is stored (docs/design/profile.md#no-change-no-version).
            run.outcome, run.version, run.entries = "unchanged", None, len(before)
            run.reason += "; the answer changed nothing, so no version is stored"
            scanner.store.set_meta(_WATERMARK, orjson.dumps(mark).decode())
            scanner.store.set_meta(_RETRY, "")
            _record_final(scanner.store, run)
            return run
        run.ok, run.outcome = True, "ok"
        db.execute(
            "INSERT INTO profile_versions (version, at, entries, diff, spurious_rate, partial, "
            "rescue, material_messages, reason, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.version,
                run.at,
                orjson.dumps(built.entries).decode(),
                orjson.dumps(run.diff).decode(),
                run.spurious_rate,
                run.partial,
                orjson.dumps(parsed.rescue).decode() if parsed.rescue else None,
                len(prompt.listed),
                run.reason,
                parsed.notes,
            ),
        )
        # A bounded history, never without the newest version
        # (docs/design/profile.md#version-history-is-bounded).
        db.execute(
            "DELETE FROM profile_versions WHERE version <= ?", (run.version - history_limit,)
        )
        scanner.store.set_meta(_WATERMARK, orjson.dumps(mark).decode())
        scanner.store.set_meta(_RETRY, "")
        ids.keep()
        _record_final(scanner.store, run)
    return run


def _same(entries: list[Entry], before: list[Entry]) -> bool:
    """Whether a new version would say exactly what the last one says (times seen aside)."""

    def stable(entry: Entry) -> Entry:
        return {k: v for k, v in entry.items() if k not in ("lastSeenAt",)}

    return [stable(e) for e in entries] == [stable(e) for e in before]


class _Ids:
    """The ids dshkit gives new entries (docs/design/profile.md#dshkit-gives-the-ids): the one
    the model proposed when it is a short name no entry has, had or was removed under, and not
    the prompt's placeholder ("new1"); otherwise "p<n>", n above any given before (kept in the
    store) and clear of every id in use or removed."""

    def __init__(self, store: Store, before: list[Entry], removed: list[Removal]) -> None:
        self.store = store
        self.taken = {str(e["id"]) for e in before} | {r.entry_id for r in removed}
        stored = store.get_meta(_LAST_ID)
        self.last = int(stored) if stored and stored.isdigit() else 0

    def next(self, proposed: str) -> str:
        usable = _PROPOSABLE.fullmatch(proposed) and not _PLACEHOLDER.fullmatch(proposed)
        if usable and proposed not in self.taken:
            self.taken.add(proposed)
            return proposed
        while True:
            self.last += 1
            given = f"p{self.last}"
            if given not in self.taken:
                self.taken.add(given)
                return given

    def keep(self) -> None:
        """Record the highest number given (inside the version's transaction)."""
        self.store.set_meta(_LAST_ID, str(self.last))


def _waiting(store: Store, human_messages: int, now_ms: int) -> str | None:
    """Why a paced run makes no call now, or None when it may: failed runs' wait lasts and
    no human message came since the last failure."""
    retry = retry_state(store)
    if retry is None or human_messages > retry["humanMessages"] or now_ms >= retry["notBefore"]:
        return None
    wait_s = (retry["notBefore"] - now_ms + 999) // 1000
    return (
        f"backing off after {retry['failures']} failed generation(s) in a row: the next try "
        f"is in {wait_s} s, or as soon as the person says something new or asks"
    )


def _failed_pacing(store: Store, run: Generation, human_messages: int) -> None:
    """After a failed run, the wait before a paced run may call again (inside a transaction)."""
    before = retry_state(store)
    failures = (before["failures"] if before else 0) + 1
    wait_s = min(RETRY_CAP_S, RETRY_BASE_S * 2 ** min(failures - 1, 20))
    run.retry = {
        "failures": failures,
        "notBefore": run.at + wait_s * 1000,
        "humanMessages": human_messages,
    }
    store.set_meta(_RETRY, orjson.dumps(run.retry).decode())


def _prompt_tokens(store: Store) -> int:
    """`[profile] prompt_tokens`, or its default when the settings cannot be read (a run's
    configuration problem is the LLM client's to report)."""
    try:
        return int(load_config(store.state_dir)["profile"]["prompt_tokens"])
    except (DshkitError, OSError, KeyError, ValueError):
        return PROMPT_TOKENS


def _forgotten_meanwhile(
    store: Store, previous: tuple[int, list[Entry]] | None, sources: list[SessionKey]
) -> bool:
    """Whether a forget since the run began took words this run's answer may carry: one of
    the sessions its material came from is gone, or the version it built on was rewritten."""
    if not all(store.holds_session(key) for key in sources):
        return True
    if previous is None:
        return False
    row = store.db.execute("SELECT entries FROM profile_versions WHERE version = ?", (previous[0],))
    stored = row.fetchone()
    return stored is None or orjson.loads(stored[0]) != previous[1]


def _removed_check(removed: list[Removal]) -> Callable[[Entry], tuple[str, str] | None]:
    """Whether an entry of the answer says again what the person removed (model.assemble)."""

    def check(entry: Entry) -> tuple[str, str] | None:
        found = match_removal(entry, removed)
        return None if found is None else (found[0].entry_id, found[1])

    return check


def scan_and_generate(
    store: Store, sources: Sequence[Source], *, force: bool = False, wait: float = 30.0
) -> Generation:
    """Scan `sources`, then generate when the trigger fires (or `force`): what the hooks'
    detached refresh and the service's background runs both do. A configuration problem is
    kept in lastRun like any other failure; a generation already running makes this one
    "skipped"; LeaseBusy is raised when another scan is running."""
    scanner = Scanner(store)
    keys = scanner.scan(sources, wait=wait).keys
    return generate_configured(scanner, keys, force=force, paced=not force)


def generate_configured(
    scanner: Scanner,
    keys: Iterable[SessionKey],
    *,
    force: bool = False,
    on_delta: Callable[[str], None] | None = None,
    paced: bool = False,
) -> Generation:
    """`generate` with the store's own LLM configuration (a problem with it is kept in
    lastRun like any other failure)."""
    try:
        llm = LLMConfig.load(scanner.store.state_dir)
    except LLMConfigError as exc:
        return config_failure(scanner.store, exc)
    return generate(scanner, keys, llm, force=force, on_delta=on_delta, paced=paced)


def config_failure(store: Store, exc: LLMConfigError) -> Generation:
    """The run that could not start because the LLM configuration is unusable, recorded."""
    run = Generation(at=int(time.time() * 1000), outcome="config-error", error=str(exc))
    with store.transaction():
        record_run(store, run)
    return run


def _material(scanner: Scanner, keys: list[SessionKey]) -> list[Material]:
    """The newest human messages of the sessions, oldest first, as the scan kept them (no
    session's cache is read again), each with where it was said; a secret the person typed is
    a marker naming its kind: it is not sent to the model, nor kept with its prompt."""
    newest = scanner.catalog.human_messages(keys, newest=MAX_MATERIAL)
    return [Material(m.harness, m.session_id, m.seq, m.time, redact(m.text).text) for m in newest]


def _without_secrets(built: Assembly, notes: str) -> str:
    """What an answer put in the profile and its report, with every secret a marker naming
    its kind (the model may have copied one from elsewhere); the notes, likewise."""
    for entry in built.entries:
        if "sources" in entry:  # written or checked by this run (kept ones were before)
            entry["claim"] = redact(str(entry["claim"])).text
    for refused in built.refused:
        refused["claim"] = redact(refused["claim"]).text
        refused["evidence"] = [redact(e).text for e in refused["evidence"]]
        refused["why"] = redact(refused["why"]).text
    built.warnings[:] = [redact(w).text for w in built.warnings]
    return redact(notes).text


def _finish(scanner: Scanner, run: Generation, human_messages: int | None = None) -> Generation:
    """Record `run`; a failed one (given the human message count) sets the pacing."""
    with scanner.store.transaction():
        if human_messages is not None and run.failed:
            _failed_pacing(scanner.store, run, human_messages)
        _record_final(scanner.store, run)
    return run


def _record_final(store: Store, run: Generation) -> None:
    """The lease holder's lastRun: from here on, a skipped run leaves it standing."""
    record_run(store, run)
    store.set_meta(_RUNNING, "")


def record_run(store: Store, run: Generation) -> None:
    """Keep `run` as the profile's lastRun (inside the caller's transaction, if any)."""
    store.set_meta(_LAST_RUN, orjson.dumps(run.record()).decode())
