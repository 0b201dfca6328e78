"""prompt-adapt's one face: every use case of the user profile and the friction signals.

The CLI, the local service and the MCP server call these methods and nothing below them, so
one use case gives one JSON (`as_json()` of its typed result) whichever surface asked. Each
call opens its own store connection (waiting at most `busy_timeout` seconds for another
process's lock or scan), so the service can be driven from any thread. How fresh the sessions
must be is the caller's explicit `refresh` (`dshkit.sessions.Refresh`): a person's command
waits for the newest turn, the console reads what the last scan stored.

Background runs (a forced regeneration, or a rescan with the usual trigger check) are jobs of
kind "profile" on the job runner: one at a time per store, reporting their stages, and
leaving their result in the profile's `lastRun` as well.

Errors are those of `dshkit.errors`: `Invalid` for input the profile refuses (text it could
not inject whole, a bad limit), `Busy` when the sessions could not be refreshed as asked.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import Busy, DshkitError, Invalid, NotFound, TooLarge
from ..jobs import JobFailed, JobRunner, Progress, Submitted
from ..llm import LLMConfig, LLMConfigError
from ..sessions import Catalog, Scanner, ScanReport, Source, default_sources
from ..sessions import scanner as scanning
from ..sessions.catalog import SessionKey
from ..sessions.freshness import Refresh
from ..sessions.freshness import refresh as refresh_sessions
from ..store import LeaseBusy, Store
from .generate import (
    HISTORY_LIMIT,
    Generation,
    config_failure,
    generate,
    generate_waiting,
    last_run,
    record_run,
    retry_state,
)
from .history import VERSIONS_LIMIT, profile_versions
from .model import MAX_CLAIM_CHARS, edit_entry, remove_entry
from .removals import Removal, removals, undo_removal
from .signal_views import SignalHits, SignalTotals, signal_hits, signal_sessions, signal_totals
from .signals import DETAILS, SignalConfig, SignalsReport, Unstored, collect_signals, configured
from .size import SizeRow, size_table
from .state import (
    Effective,
    Mode,
    ProfileState,
    latest_version,
    save_person_version,
)
from .wire import (
    ConsoleStateJson,
    CopiedSnapshotJson,
    DeltaSizeRowJson,
    EffectiveProfileJson,
    Entry,
    EntryChangeJson,
    GenerationJson,
    LastRunJson,
    ProfileShowJson,
    ProfileStatusJson,
    ProfileVersionsJson,
    ProfileViewJson,
    RetryJson,
    SignalSessionsJson,
    VersionJson,
)

CONTRACT = 1
# The prompt hall: '' means not configured, shown as null
# (docs/design/profile.md#the-prompt-hall-is-optional).
HALL_URL = ""
JOB_KIND = "profile"


# -- results -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EffectiveProfile:
    """The one text the agent is given now (the hooks inject exactly these characters), where
    it comes from, the entries left out to fit the budget and why stored text is withheld."""

    mode: Mode
    text: str
    source: str  # "profile" or "customText"
    dropped: tuple[str, ...]
    withheld: str | None

    @classmethod
    def of(cls, effective: Effective) -> EffectiveProfile:
        return cls(
            effective.mode, effective.text, effective.source, effective.dropped, effective.withheld
        )

    def as_json(self) -> EffectiveProfileJson:
        return {
            "text": self.text,
            "mode": self.mode.value,
            "source": self.source,
            "dropped": list(self.dropped),
            "withheld": self.withheld,
        }


@dataclass(frozen=True)
class ProfileShow:
    """What the agent is told and from where, the newest version behind it, the last run."""

    effective: EffectiveProfile
    profile: ProfileViewJson | None  # the newest version as `ProfileState.profile_view` shows it
    last_run: LastRunJson | None

    def as_json(self) -> ProfileShowJson:
        return {
            "mode": self.effective.mode.value,
            "effectiveText": self.effective.text,
            "effectiveSource": self.effective.source,
            "withheld": self.effective.withheld,
            "profile": self.profile,
            "lastRun": self.last_run,
        }


@dataclass(frozen=True)
class ProfileStatus:
    """The latest version, how many are kept, and the last run (why it did or did not update)."""

    version: int | None
    entries: list[Entry]
    versions_kept: int
    last_run: LastRunJson | None
    retry: RetryJson | None = None  # when the hooks' refreshes may next ask the model

    def as_json(self) -> ProfileStatusJson:
        return {
            "version": self.version,
            "entries": self.entries,
            "versionsKept": self.versions_kept,
            "lastRun": self.last_run,
            "retry": self.retry,
        }


@dataclass(frozen=True)
class ConsoleState:
    """Everything the console's profile view shows, and whether a background run is going."""

    effective: EffectiveProfile
    custom_text: str
    auto_extra_text: str
    profile: ProfileViewJson | None
    last_run: LastRunJson | None
    copied_snapshot: CopiedSnapshotJson | None
    # For the console's own bookkeeping only: a rewording also makes it true, so it must
    # never become a "copy again" prompt
    # (docs/design/profile.md#a-copy-goes-stale-only-when-its-evidence-changes).
    stale_copy: bool
    running: bool
    removed: list[Removal]  # the entries the person removed, newest first (undo restores)
    retry: RetryJson | None = None  # when the hooks' refreshes may next ask the model

    def as_json(self) -> ConsoleStateJson:
        return {
            "contract": CONTRACT,
            "mode": self.effective.mode.value,
            "effectiveText": self.effective.text,
            "effectiveSource": self.effective.source,
            "customText": self.custom_text,
            "autoExtraText": self.auto_extra_text,
            "profile": self.profile,
            "lastRun": self.last_run,
            "copiedSnapshot": self.copied_snapshot,
            "staleCopy": self.stale_copy,
            "hallUrl": HALL_URL or None,
            "running": self.running,
            "removed": [r.as_json() for r in self.removed],
            "retry": self.retry,
        }


@dataclass(frozen=True)
class EntryChange:
    """What a person's change to one entry made: the version it stored, the entry as it now
    stands (None once removed) and what was done."""

    version: int
    action: str
    entry_id: str
    entry: Entry | None

    def as_json(self) -> EntryChangeJson:
        return {
            "version": self.version,
            "action": self.action,
            "id": self.entry_id,
            "entry": self.entry,
        }


@dataclass(frozen=True)
class ProfileVersions:
    """The newest kept versions, newest first, each with its diff; `kept` counts them all."""

    kept: int
    versions: list[VersionJson]

    def as_json(self) -> ProfileVersionsJson:
        return {"kept": self.kept, "versions": self.versions}


@dataclass(frozen=True)
class Copied:
    """The text a person copied, and the snapshot kept of it (its time and version are ours)."""

    text: str
    snapshot: CopiedSnapshotJson

    def as_json(self) -> CopiedSnapshotJson:
        return self.snapshot


@dataclass(frozen=True)
class DeltaSize:
    """How much the model must write under the full contract and the delta one (static)."""

    rows: list[SizeRow]

    def as_json(self) -> list[DeltaSizeRowJson]:
        return [
            {
                "entries": r.entries,
                "changed": r.changed,
                "fullTokens": r.full_tokens,
                "deltaTokens": r.delta_tokens,
                "saved": round(r.saved, 3),
            }
            for r in self.rows
        ]


# -- progress ------------------------------------------------------------------------------


# "restore" undoes the person's removal of an entry: a later regeneration may write it again.
ENTRY_ACTIONS = ("edit", "pin", "unpin", "remove", "restore")


def check_claim(claim: Any) -> str:
    """A claim a person typed, as the profile keeps it (one line), within MAX_CLAIM_CHARS."""
    if not isinstance(claim, str):
        raise Invalid("claim must be a string", field="claim")
    text = " ".join(claim.split())
    if not text:
        raise Invalid("the claim is empty", field="claim")
    if len(text) > MAX_CLAIM_CHARS:
        raise TooLarge(
            f"the claim is {len(text)} characters; at most {MAX_CLAIM_CHARS}", field="claim"
        )
    if "{{" in text or "}}" in text:
        raise Invalid("the claim contains '{{' or '}}' (DSH reads a template)", field="claim")
    return text


class ScanProgress(scanning.Progress):
    """Told how the refresh before a use case goes; every method may be left as it is."""

    def scanned(self, report: ScanReport) -> None:
        """Called once the refresh has scanned (not when it did not), with its report."""


class GenerationProgress(ScanProgress):
    """Told how a generation goes: its refresh, then the wait and the model's answer."""

    def waiting(self, pid: int) -> None:
        """Another generation (dshkit process `pid`) runs: this one waits for it to end."""

    def generating(self) -> None:
        """The sessions are read: the trigger is checked, and the model asked when it fires."""

    def answer(self, delta: str) -> None:
        """The next piece of the model's streamed answer."""


# -- the service ---------------------------------------------------------------------------


class ProfileService:
    """Every use case of the profile and the friction signals, over one state directory.

    `sources` are the session roots a refresh scans (each harness's own by default); `jobs`
    runs the background runs (a runner of its own by default).
    """

    def __init__(
        self,
        state_dir: Path,
        *,
        jobs: JobRunner | None = None,
        sources: Sequence[Source] | None = None,
        busy_timeout: float = 30.0,
    ) -> None:
        self.state_dir = Path(state_dir)
        self._sources = list(sources) if sources is not None else None
        self.jobs = jobs if jobs is not None else JobRunner()
        self.busy_timeout = busy_timeout
        # What reads counted of sessions no scan has stored signals for: a read writes nothing.
        self._unstored = Unstored()

    @property
    def sources(self) -> list[Source]:
        if self._sources is None:
            self._sources = default_sources()
        return self._sources

    def _open(self) -> Store:
        return Store(self.state_dir, busy_timeout=self.busy_timeout)

    # -- what the agent is told ------------------------------------------------------------

    def effective(self) -> EffectiveProfile:
        """The text the hooks inject and the MCP server's instructions carry, byte for byte."""
        with self._open() as store:
            return EffectiveProfile.of(ProfileState(store).effective())

    def show(self) -> ProfileShow:
        with self._open() as store:
            state = ProfileState(store)
            return ProfileShow(
                EffectiveProfile.of(state.effective()), state.profile_view(), last_run(store)
            )

    def status(self) -> ProfileStatus:
        with self._open() as store:
            latest = ProfileState(store).latest()
            kept = profile_versions(store, 1)["kept"]
            return ProfileStatus(
                latest[0] if latest else None,
                latest[1] if latest else [],
                int(kept),
                last_run(store),
                retry_state(store),
            )

    def state(self) -> ConsoleState:
        """What the console's profile view shows."""
        with self._open() as store:
            profile = ProfileState(store)
            return ConsoleState(
                effective=EffectiveProfile.of(profile.effective()),
                custom_text=profile.custom_text,
                auto_extra_text=profile.auto_extra_text,
                profile=profile.profile_view(),
                last_run=last_run(store),
                copied_snapshot=profile.copied_snapshot(),
                stale_copy=profile.stale_copy(),
                running=self.running,
                removed=removals(store),
                retry=retry_state(store),
            )

    def versions(self, limit: int = 50) -> ProfileVersions:
        """The newest `limit` kept versions (1 to VERSIONS_LIMIT), with their diffs."""
        if not 1 <= limit <= VERSIONS_LIMIT:
            raise Invalid(f"limit must be from 1 to {VERSIONS_LIMIT}, got {limit}", field="limit")
        with self._open() as store:
            found = profile_versions(store, limit)
        return ProfileVersions(found["kept"], found["versions"])

    @staticmethod
    def delta_size() -> DeltaSize:
        """Static: no state is read."""
        return DeltaSize(size_table())

    # -- the person's choices --------------------------------------------------------------

    def set_mode(self, mode: str) -> Mode:
        if mode not in {m.value for m in Mode}:
            raise Invalid(f"mode must be 'auto' or 'custom', got {mode!r}", field="mode")
        with self._open() as store:
            return ProfileState(store).set_mode(mode)

    def set_custom(self, text: Any) -> str:
        """Set the text injected in custom mode; TextRejected (TextTooLong) when it could not
        reach the agent whole."""
        with self._open() as store:
            return ProfileState(store).set_custom_text(text)

    def set_extra(self, text: Any) -> str:
        """Set the text added after the generated profile in auto mode (as `set_custom`)."""
        with self._open() as store:
            return ProfileState(store).set_auto_extra_text(text)

    def copy(self, text: str | None = None, entries: Any = None) -> Copied:
        """Remember that the person copied `text` (the effective text when None), with the
        entries it was made of (the newest version's when not a list)."""
        with self._open() as store:
            state = ProfileState(store)
            copied = state.effective().text if text is None else text
            snapshot = state.mark_copied(copied, entries if isinstance(entries, list) else None)
        return Copied(copied, snapshot)

    # -- one entry, by the person --------------------------------------------------------

    def change_entry(
        self,
        entry_id: str,
        action: str,
        *,
        claim: str | None = None,
        category: str | None = None,
    ) -> EntryChange:
        """Edit (`claim` and/or `category`; the entry is then pinned), pin, unpin or remove one
        entry of the newest version, stored as a new version. A pinned entry is kept as the
        person left it by every later regeneration; a removed one is never written again by
        one, until the person restores it (`restore`: the removal is undone, no version is
        stored, and a later regeneration may bring the entry back)."""
        if action not in ENTRY_ACTIONS:
            raise Invalid(f"action must be one of {', '.join(ENTRY_ACTIONS)}", field="action")
        if action == "edit" and claim is None and category is None:
            raise Invalid("an edit needs a claim or a category", field="claim")
        if claim is not None:
            claim = check_claim(claim)
        if action == "restore":
            return self.restore_entry(entry_id)
        with self._open() as store:
            newest = latest_version(store)
            if newest is None:
                raise NotFound("there is no profile yet: generate one first", field="id")
            _, entries = newest
            now = int(time.time() * 1000)
            removed = None
            if action == "remove":
                changed = remove_entry(entries, entry_id)
                removed = next(e for e in entries if e["id"] == entry_id)
            else:
                pinned = {"pin": True, "unpin": False}.get(action)
                changed = edit_entry(
                    entries, entry_id, now, claim=claim, category=category, pinned=pinned
                )
            version = save_person_version(
                store, changed, f"{action} {entry_id} by the person", removed
            )
        entry = next((e for e in changed if e["id"] == entry_id), None)
        return EntryChange(version, action, entry_id, entry)

    def removals(self) -> list[Removal]:
        """The entries the person removed, newest first: no regeneration writes them again."""
        with self._open() as store:
            return removals(store)

    def restore_entry(self, entry_id: str) -> EntryChange:
        """Undo the person's removal of the entry `entry_id` (NotFound when none is recorded):
        the profile is not changed now, but a later regeneration may write the entry again."""
        with self._open() as store:
            undo_removal(store, entry_id)
            newest = latest_version(store)
        return EntryChange(newest[0] if newest else 0, "restore", entry_id, None)

    # -- generation ------------------------------------------------------------------------

    def generate(
        self,
        force: bool = False,
        history: int = HISTORY_LIMIT,
        refresh: Refresh = Refresh.WAIT,
        progress: GenerationProgress | None = None,
        *,
        wait_turn: bool = True,
    ) -> Generation:
        """Refresh the sessions as asked, then generate a new version when enough is new (or
        `force`), keeping `history` versions. One generation runs per state directory at a
        time: `wait_turn` waits for one already running and then checks the trigger again;
        otherwise this run is "skipped" at once, without a model call. Every outcome is kept
        in lastRun, a configuration problem included; Busy when the refresh could not scan."""
        if history < 1:
            raise Invalid(f"history must be at least 1, got {history}", field="history")
        progress = progress or GenerationProgress()
        with self._open() as store:
            keys = self._refreshed(store, refresh, progress)
            progress.generating()
            try:
                llm = LLMConfig.load(store.state_dir)
            except LLMConfigError as exc:
                return config_failure(store, exc)
            scanner = Scanner(store)
            if wait_turn:
                return generate_waiting(
                    scanner,
                    keys,
                    llm,
                    on_wait=progress.waiting,
                    force=force,
                    history_limit=history,
                    on_delta=progress.answer,
                )
            return generate(
                scanner, keys, llm, force=force, history_limit=history, on_delta=progress.answer
            )

    def start_generate(self, force: bool) -> Submitted:
        """Begin a run in the background (forced regeneration, or rescan and trigger check);
        `started` is False when one is already running (its job is returned)."""
        label = "forced regeneration" if force else "rescan and trigger check"
        return self.jobs.submit(
            JOB_KIND, self.state_dir, lambda progress: self._job(force, progress), label=label
        )

    @property
    def running(self) -> bool:
        return self.jobs.current(JOB_KIND, self.state_dir) is not None

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the latest background run to end."""
        job = self.jobs.latest(JOB_KIND, self.state_dir)
        if job is not None:
            job.wait(timeout)

    def _job(self, force: bool, progress: Progress) -> GenerationJson:
        """One background run; whatever stops it is written to lastRun rather than lost in a
        thread. It gives way to a generation already running (background runs never queue)."""
        progress("scanning", "reading what is new in the session logs", 0.0)
        try:
            run = self.generate(force, progress=_JobProgress(progress), wait_turn=False)
        except (DshkitError, LLMConfigError, OSError, ValueError) as exc:
            run = self._failed(str(exc))
        except Exception as exc:  # a bug: keep the service up, say what happened
            run = self._failed(f"internal error: {type(exc).__name__}: {exc}")
        if run.error:
            raise JobFailed(run.error, run.as_json())
        return run.as_json()

    def _failed(self, error: str) -> Generation:
        run = Generation(at=int(time.time() * 1000), error=error, triggered=True)
        with self._open() as store:
            record_run(store, run)
        return run

    # -- friction signals ------------------------------------------------------------------

    def signal_config(
        self,
        *,
        long_tool_ms: int | None = None,
        repeat_fail_min: int | None = None,
        answer_window_ms: int | None = None,
    ) -> SignalConfig:
        """The knobs the signals are counted with: config.toml's delegate patterns (every
        reader counts with them), the thresholds given over the defaults."""
        config = configured(self.state_dir)
        return replace(
            config,
            long_tool_ms=config.long_tool_ms if long_tool_ms is None else long_tool_ms,
            repeat_fail_min=config.repeat_fail_min if repeat_fail_min is None else repeat_fail_min,
            answer_window_ms=(
                config.answer_window_ms if answer_window_ms is None else answer_window_ms
            ),
        )

    def signals(
        self,
        config: SignalConfig | None = None,
        refresh: Refresh = Refresh.WAIT,
        details: int = DETAILS,
        progress: ScanProgress | None = None,
    ) -> SignalsReport:
        """The signals of the sessions (those the refresh found; every stored one when it
        did not scan), the first `details` hits of each kept in the report."""
        if details < 0:
            raise Invalid(f"details must not be negative, got {details}", field="details")
        with self._open() as store:
            keys = self._refreshed(store, refresh, progress or ScanProgress())
            return collect_signals(
                Catalog(store),
                keys,
                config or self.signal_config(),
                details,
                memo=refresh is not Refresh.NONE,  # it scanned: the counts are kept with it
                unstored=self._unstored,
            )

    def signal_totals(
        self, config: SignalConfig | None = None, refresh: Refresh = Refresh.NONE
    ) -> SignalTotals:
        """Totals of every signal over every stored session, per harness and per day; it
        writes nothing unless it was asked to refresh (then the counts are kept too)."""
        with self._open() as store:
            self._refreshed(store, refresh, ScanProgress())
            return signal_totals(
                store,
                config or self.signal_config(),
                memo=refresh is not Refresh.NONE,
                unstored=self._unstored,
            )

    def signal_sessions(
        self, harness: str | None = None, session: str | None = None
    ) -> SignalSessionsJson:
        """Each session with friction (of a harness, a session id): its count of every signal,
        with its harness, project and day; from what the last scan stored, writing nothing."""
        with self._open() as store:
            return signal_sessions(
                store, self.signal_config(), harness, session, unstored=self._unstored
            )

    def signal_hits(
        self,
        signal: str,
        *,
        harness: str | None = None,
        session: str | None = None,
        day: str | None = None,
        offset: int = 0,
        limit: int = 50,
        config: SignalConfig | None = None,
        refresh: Refresh = Refresh.NONE,
    ) -> SignalHits:
        """One page of the hits of `signal` (of a harness, a session id, a day)."""
        with self._open() as store:
            self._refreshed(store, refresh, ScanProgress())
            return signal_hits(
                store,
                config or self.signal_config(),
                signal,
                harness=harness,
                session=session,
                day=day,
                offset=offset,
                limit=limit,
                memo=refresh is not Refresh.NONE,
                unstored=self._unstored,
            )

    # -- shared ----------------------------------------------------------------------------

    def _refreshed(self, store: Store, mode: Refresh, progress: ScanProgress) -> list[SessionKey]:
        """Refresh as `mode` asks; the sessions to read: every one found under the sources
        when it scanned, every stored one when it was not asked to. Busy when it was asked
        to scan and could not (another scan holds the store)."""
        if mode is not Refresh.NONE:
            if not self.sources:
                return []  # nothing can be found under no roots
            try:
                report = refresh_sessions(
                    store, self.sources, mode, progress=progress, wait=self.busy_timeout
                )
            except LeaseBusy as exc:
                raise Busy(str(exc)) from exc
            if report is not None:
                progress.scanned(report)
                return report.keys
            raise Busy("another scan is running")  # TRY, and another process is scanning
        return [info.key for info in Catalog(store).recent(None, None)]


class _JobProgress(GenerationProgress):
    """A background run's progress as job stages: the scan's byte fraction as "scanning"
    (one event per percent), the model's answer as "generating" (one per 2,000 characters)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.total = self.done = self.reported = 0
        self.received = self.told = 0

    def start(self, total_bytes: int, files: int) -> None:
        self.total = total_bytes
        if total_bytes:
            self.progress("scanning", f"reading up to {total_bytes:,} bytes", 0.0)
        else:
            self.progress("scanning", "nothing new in the session logs", 1.0)

    def advance(self, nbytes: int) -> None:
        self.done += nbytes
        percent = min(100, self.done * 100 // self.total) if self.total else 100
        if percent > self.reported:
            self.reported = percent
            self.progress("scanning", f"read {self.done:,} of {self.total:,} bytes", percent / 100)

    def generating(self) -> None:
        self.progress("generating", "checking the trigger; the model is asked when it fires")

    def answer(self, delta: str) -> None:
        self.received += len(delta)
        if self.received - self.told >= 2000:
            self.told = self.received
            self.progress("generating", f"{self.received:,} characters of the answer received")
