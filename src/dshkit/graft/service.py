"""Graft as one service: every use case of the context handoff, as each surface asks for it.

`GraftService` is what the CLI, the MCP tools and the web API call, and all they call: one
method per use case, each opening its own store (so it can run on any thread) and saying how
fresh it needs the sessions (`Refresh`) instead of each surface scanning on its own. A
handoff is `slice`: the settings, a scan, the session named or the caller, its handoff built
at that moment (never a stale preparation) and begun (from then on the source takes no new
work), then its target started now, in a detached process (`dshkit graft drive`: it may take
a minute), or not at all. Results are typed and give the JSON every surface shows
(`as_json()`, or a TypedDict that is that JSON); errors are the tree's (`dshkit.errors`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from .. import harnesses
from ..errors import DshkitError, Invalid, Unavailable
from ..procs import spawn_detached
from ..sessions.catalog import Catalog, SessionInfo, SessionNotFound
from ..sessions.freshness import Refresh
from ..sessions.freshness import refresh as refresh_store
from ..sessions.scanner import Source, default_sources, single_harness
from ..store import Store
from . import ledger, lifecycle, readback, status
from .handoff import Handoff, prepare_handoff
from .settings import GraftSettings
from .status import AuditPage
from .watermark import Decision
from .wire import (
    ExclusionJson,
    ForceFailureJson,
    IgnitionJson,
    OutcomeJson,
    Panel,
    ReadResult,
    RecoveryJson,
    SearchResult,
    SessionPart,
    SliceJson,
    TxnJson,
    WatermarkStatusJson,
)

if TYPE_CHECKING:
    from .context_use import ContextUse

# How `slice` carries the begun handoff on: start its target and wait (`now`), start a
# detached `dshkit graft drive` and return (`detached`), or leave it to `drive` (`none`).
Drive = Literal["now", "detached", "none"]
DRIVES: tuple[Drive, ...] = ("now", "detached", "none")


@dataclass(frozen=True, slots=True)
class WatermarkStatus:
    """A session's context pressure, watermark and the decision its hooks would make now
    (`dshkit graft status`), and what became of its handoffs: the latest one's outcome (for a
    person: the target and how to go on, or why it was rolled back) and failing forced cuts."""

    source: SessionInfo
    decision: Decision
    outcome: OutcomeJson | None = None  # `status.outcome`
    forced_failure: ForceFailureJson | None = None  # `ledger.ForceFailure.as_json()`
    excluded: bool = False  # a person kept it from the forced cut
    settings_error: str | None = None  # what in `[graft]` was refused (its default used)

    def as_json(self) -> WatermarkStatusJson:
        return {
            "harness": self.source.harness,
            "session": self.source.session_id,
            **self.decision.as_json(),
            "handoff": self.outcome,
            "forcedCutFailure": self.forced_failure,
            "excludedFromForcedCut": self.excluded,
            "settingsError": self.settings_error,
        }


@dataclass(frozen=True, slots=True)
class SliceResult:
    """A handoff begun: what it carries, and the transaction as it stood when `slice` returned
    (ended when driven `now`; PREPARING when its target starts detached or later; PENDING when
    it waits for the next session started in its directory)."""

    handoff: Handoff
    txn: lifecycle.Txn
    detached: bool  # a detached process was started to drive it

    def as_json(self) -> SliceJson:
        return {**self.txn.as_json(), "card": self.handoff.card.text}


@dataclass(frozen=True, slots=True)
class Recovery:
    """What `recover` finished or rolled back, and the unfinished handoffs live processes
    still drive (left to them)."""

    recovered: tuple[lifecycle.Txn, ...]
    driven: tuple[int, ...]

    def as_json(self) -> RecoveryJson:
        return {"recovered": [txn.as_json() for txn in self.recovered], "driven": list(self.driven)}


@dataclass(frozen=True, slots=True)
class Exclusions:
    """The sessions a person kept from the forced cut, oldest first."""

    sessions: tuple[ledger.Exclusion, ...]

    def as_json(self) -> list[ExclusionJson]:
        return [each.as_json() for each in self.sessions]


@dataclass(frozen=True, slots=True)
class Handoffs:
    """Every handoff, newest first."""

    txns: tuple[lifecycle.Txn, ...]

    def as_json(self) -> list[TxnJson]:
        return [txn.as_json() for txn in self.txns]


class GraftService:
    """The context handoff's use cases over the state directory `state_dir`, reading sessions
    from `sources` (each harness's own root when None); `busy_timeout` bounds each wait for
    another process's database lock. Nothing is opened or read on construction."""

    def __init__(
        self,
        state_dir: Path,
        *,
        sources: Sequence[Source] | None = None,
        busy_timeout: float = 30.0,
    ) -> None:
        self.state_dir = Path(state_dir)
        self._sources = None if sources is None else list(sources)
        self.busy_timeout = busy_timeout

    @property
    def sources(self) -> list[Source]:
        return default_sources() if self._sources is None else self._sources

    # -- reading: what a session's watermark says, what it would hand off ---------------------

    def status(self, session: str, harness: str | None = None) -> WatermarkStatus:
        """The watermark and the decision now for a scanned session (an id or a unique prefix),
        from what the last scan stored: read-only, and nothing recorded."""
        settings, refused = GraftSettings.resolve(self.state_dir)
        with self._store() as store:
            info = Catalog(store).find(session, self._harness(harness))
            failed = ledger.force_failure(
                store, *info.key, settings.force_retry_s, settings.force_retry_cap_s
            )
            return WatermarkStatus(
                info,
                status.session_decision(store, info, settings),
                status.outcome(store, info.key),
                None if failed is None else failed.as_json(),
                ledger.excluded(store, *info.key),
                refused,
            )

    def prepare(
        self,
        session: str | None = None,
        harness: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        *,
        refresh: Refresh,
    ) -> Handoff:
        """The handoff the session would get now (`session`, else the caller working in `cwd`):
        nothing is started or retired. GraftAborted when its rules do not fit whole."""
        settings = self._settings()
        with self._store() as store:
            catalog = self._refreshed(store, refresh)
            source = self._resolve(catalog, session, harness, cwd)
            return _build(catalog, source, settings, None)

    # -- handing off ---------------------------------------------------------------------------

    def slice(
        self,
        session: str | None = None,
        harness: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        *,
        forced_mark: Mapping[str, Any] | None = None,
        allow_reslice: bool = False,
        forced: bool = False,
        drive: Drive,
        refresh: Refresh,
    ) -> SliceResult:
        """Hand the session off now (`session`, else the caller working in `cwd`): build its
        handoff at this moment and begin it; with `[graft] ignite_target` off it waits for the
        next session started in its directory, else its target is started as `drive` says.

        `forced_mark`: a forced cut after an ignored warning, which the card states. `forced`:
        the watermark's forced cut started this (its failure is recorded for the session's
        hooks to tell the model, and the next try backs off). Raises GraftAborted when its
        rules do not fit, GraftError (SOURCE_ALREADY_MIGRATED, BAD_PLAN) when the handoff
        cannot begin."""
        if drive not in DRIVES:
            raise Invalid(f"drive must be one of {', '.join(DRIVES)}, got {drive!r}", field="drive")
        settings = self._settings()
        with self._store() as store:
            catalog = self._refreshed(store, refresh)
            source = self._resolve(catalog, session, harness, cwd)
            if not forced:
                return self._slice(
                    store, catalog, source, settings, forced_mark, allow_reslice, drive
                )
            try:
                sliced = self._slice(
                    store, catalog, source, settings, forced_mark, allow_reslice, drive
                )
            except DshkitError as exc:
                if getattr(exc, "code", None) != lifecycle.SOURCE_ALREADY_MIGRATED:
                    ledger.record_force_failure(store, *source.key, str(exc))
                raise
            if sliced.txn.state in (lifecycle.State.ROLLED_BACK, lifecycle.State.FAILED):
                # The rollback notice tells the model already; the retry still backs off.
                why = sliced.txn.last_error or str(sliced.txn.state)
                ledger.record_force_failure(store, *source.key, why, told=True)
            else:
                with store.transaction():
                    ledger.clear_force_failures(store, *source.key)
            return sliced

    def _slice(
        self,
        store: Store,
        catalog: Catalog,
        source: SessionInfo,
        settings: GraftSettings,
        forced_mark: Mapping[str, Any] | None,
        allow_reslice: bool,
        drive: Drive,
    ) -> SliceResult:
        handoff = _build(catalog, source, settings, forced_mark)
        plan = lifecycle.Plan(
            source.harness,
            source.session_id,
            source.cwd,
            handoff.first_message,
            handoff.identity,
            handoff.card.text,
            model=handoff.model,
            mode=handoff.mode,
        )
        # The console's switch, where a person set it, over `[graft] ignite_target`.
        ignite = status.ignition(store, settings)["ignite"]
        txn = lifecycle.begin(store, plan, ignite=ignite, allow_reslice=allow_reslice)
        detached = False
        if txn.state == lifecycle.State.PREPARING and drive == "now":
            txn = lifecycle.drive(store, txn.id, _ignition(settings))
        elif txn.state == lifecycle.State.PREPARING and drive == "detached":
            spawn_detached(
                "graft",
                "drive",
                "--txn",
                str(txn.id),
                "--state-dir",
                str(store.state_dir),
                # What the harness withheld from this process (its credentials), for the
                # target: read now, while the harness is this process's ancestor.
                env=lifecycle.person_env(plan.target),
            )
            detached = True
        return SliceResult(handoff, txn, detached)

    def settle(self, txn_id: int, wait_s: float | None = None) -> lifecycle.Txn:
        """The handoff once it ended, started its target, or `wait_s` seconds passed
        (`[graft] report_wait_s` by default): what the source's model is told to pass on."""
        settings = self._settings()
        wait = settings.report_wait_s if wait_s is None else wait_s
        deadline = time.monotonic() + wait
        while True:
            with self._store() as store:
                txn = lifecycle.load(store, txn_id)
            settled = txn.target_id is not None or txn.state not in lifecycle.UNFINISHED
            if settled or time.monotonic() >= deadline:
                return txn
            time.sleep(0.2)

    def cancel(self, txn_id: int, *, by: str, reason: str | None = None) -> lifecycle.Txn:
        """Withdraw a handoff whose target has not started (pending, stuck, or being started:
        its live driver withdraws it): its source works again (`lifecycle.cancel`).
        HandoffNotFound when no handoff has the number."""
        with self._store() as store:
            return lifecycle.cancel(store, txn_id, by=by, reason=reason)

    def release(
        self, session: str, harness: str | None = None, *, by: str, reason: str | None = None
    ) -> lifecycle.Txn:
        """Un-retire a source whose handoff committed, on purpose (`lifecycle.release`):
        `session` is an id or a unique prefix of a scanned session, or an exact id."""
        with self._store() as store:
            key = self._session_key(store, session, harness)
            return lifecycle.release(store, *key, by=by, reason=reason)

    def drive(self, txn_id: int) -> lifecycle.Txn:
        """Carry a begun handoff to its end: start and verify its target, or roll it back
        (blocks for the attempts; a handoff another live process drives is waited for).
        HandoffNotFound when no handoff has the number."""
        settings = self._settings()
        with self._store() as store:
            return lifecycle.drive(store, txn_id, _ignition(settings))

    def recover(self) -> Recovery:
        """Finish or roll back every unfinished handoff no live process drives (this may start
        a target through its harness's CLI and wait for it)."""
        settings = self._settings()
        with self._store() as store:
            done = lifecycle.recover(store, _ignition(settings))
            driven = lifecycle.transactions(store, lifecycle.UNFINISHED)
        return Recovery(tuple(done), tuple(txn.id for txn in driven))

    # -- a person's choices: sessions kept from the forced cut, starting targets at once -----

    def exclude(
        self,
        session: str,
        harness: str | None = None,
        *,
        keep: bool = True,
        by: str,
        reason: str | None = None,
    ) -> Exclusions:
        """Keep the session (an id or a unique prefix of a scanned one, or the exact id of a
        handoff's source) from the forced cut (`keep`), or give it back to it: its hooks then
        warn without end, and never cut it. Audited when it changes anything."""
        with self._store() as store:
            try:
                key = self._session_key(store, session, harness)
            except SessionNotFound:
                # One kept from the cut by its exact id (a session not scanned yet).
                kept = [
                    each.key
                    for each in ledger.exclusions(store)
                    if each.session_id == session and harness in (None, each.harness)
                ]
                if keep or len(kept) != 1:
                    raise
                key = kept[0]
            ledger.set_excluded(store, *key, keep, by=by, reason=reason)
            return Exclusions(tuple(ledger.exclusions(store)))

    def exclusions(self) -> Exclusions:
        """The sessions kept from the forced cut, oldest first."""
        with self._store() as store:
            return Exclusions(tuple(ledger.exclusions(store)))

    def ignition(self) -> IgnitionJson:
        """Whether a handoff starts its target at once now, and why (`status.ignition`)."""
        settings = self._settings()
        with self._store() as store:
            return status.ignition(store, settings)

    def set_ignition(self, ignite: bool | None, *, by: str) -> IgnitionJson:
        """The console's switch: handoffs start their target at once (True), or wait for the
        next session started in the directory (False); None leaves it to `[graft]
        ignite_target` again. Audited `ignition-switched`."""
        if ignite is not None and not isinstance(ignite, bool):
            raise Invalid(f"ignite must be true, false or null, got {ignite!r}", field="ignite")
        settings = self._settings()
        with self._store() as store:
            ledger.set_ignition_choice(store, ignite, by=by)
            return status.ignition(store, settings)

    # -- what happened and what is under way (read-only) ---------------------------------------

    def handoffs(self) -> Handoffs:
        with self._store() as store:
            txns = lifecycle.transactions(store, tuple(lifecycle.State))
        return Handoffs(tuple(reversed(txns)))

    def audit(self, limit: int = 100, session: str | None = None) -> AuditPage:
        """The latest `limit` audit records, oldest first (of the session id `session`,
        exactly, when given), and how many older ones the limit left out."""
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise Invalid(f"limit must be a whole number, got {limit!r}", field="limit")
        if not 1 <= limit <= ledger.AUDIT_LIMIT:
            raise Invalid(
                f"limit must be a whole number from 1 to {ledger.AUDIT_LIMIT}, got {limit}",
                field="limit",
            )
        with self._store() as store:
            return status.audit_page(store, limit, session)

    def debug_status(self, session: str | None = None, harness: str | None = None) -> Panel:
        """The debug panel; with `session` (an id or a unique prefix) also its part."""
        with self._store() as store:
            return status.debug_status(store, session, self._harness(harness))

    def session_status(self, session: str, harness: str | None = None) -> SessionPart:
        """Just one session's part of the panel (the web API's `?session=`)."""
        with self._store() as store:
            info = Catalog(store).find(session, self._harness(harness))
            return status.session_status(store, info)

    def context_use(self, session: str, harness: str | None = None) -> ContextUse:
        """The session's context use over its turns, the warning and forced lines of each and
        where a handoff cut it (`context_use.context_use`), from what the last scan stored:
        read-only."""
        from .context_use import context_use  # the console's alone: off the hooks' imports

        settings = self._settings()
        with self._store() as store:
            info = Catalog(store).find(session, self._harness(harness))
            return context_use(store, info, settings)

    # -- reading back a source session by the card's coordinates -------------------------------

    def read_result(
        self,
        source_session_id: str,
        seq: int,
        *,
        offset: int = 0,
        limit: int = 20_000,
        harness: str | None = None,
        refresh: Refresh,
    ) -> ReadResult:
        """The exact text of the event `seq` of the source session, a page of `limit`
        characters from `offset`. NotFound (ReadBackError) when the session or the seq is not
        there; Invalid naming the argument out of its bounds."""
        with self._store() as store:
            catalog = self._refreshed(store, refresh)
            with _invalid():
                found = readback.read_result(
                    catalog, source_session_id, seq, offset=offset, limit=limit, harness=harness
                )
        return cast(ReadResult, found)

    def search_history(
        self,
        source_session_id: str,
        query: str,
        *,
        limit: int = 20,
        context_chars: int = 120,
        harness: str | None = None,
        refresh: Refresh,
    ) -> SearchResult:
        """The messages, tool calls and results of the source session holding `query`, newest
        first. NotFound (ReadBackError) when the session is not there; Invalid naming the
        argument out of its bounds."""
        with self._store() as store:
            catalog = self._refreshed(store, refresh)
            with _invalid():
                found = readback.search_history(
                    catalog,
                    source_session_id,
                    query,
                    limit=limit,
                    context_chars=context_chars,
                    harness=harness,
                )
        return cast(SearchResult, found)

    # -- helpers -------------------------------------------------------------------------------

    @contextmanager
    def _store(self) -> Iterator[Store]:
        """The store, its own errors the tree's already (StoreError, LeaseBusy)."""
        try:
            store = Store(self.state_dir, busy_timeout=self.busy_timeout)
        except OSError as exc:  # the state directory cannot be made or opened
            raise Unavailable(str(exc)) from exc
        with store:
            yield store

    def _settings(self) -> GraftSettings:
        """The `[graft]` settings the hooks run on: a value that does not fit is refused (the
        panel and `status` say so) and its default used, so that a forced cut the hooks
        started is carried out with the settings that started it."""
        return GraftSettings.resolve(self.state_dir)[0]

    def _session_key(self, store: Store, session: str, harness: str | None) -> tuple[str, str]:
        """A session named by a person: a scanned one (id or unique prefix), else the exact id
        of a handoff's source (it may not have been scanned)."""
        try:
            return Catalog(store).find(session, self._harness(harness)).key
        except SessionNotFound:
            rows = store.db.execute(
                "SELECT DISTINCT harness, session_id FROM graft_txns WHERE session_id = ?"
                + (" AND harness = ?" if harness else ""),
                (session, harness) if harness else (session,),
            ).fetchall()
            if len(rows) != 1:
                raise
            return rows[0][0], rows[0][1]

    def _harness(self, harness: str | None) -> str | None:
        """The harness a session is looked up in: the one named, else the one every source is
        read by (a server reading only Claude Code's root means a Claude Code session)."""
        return harness or single_harness(self.sources)

    def _refreshed(self, store: Store, mode: Refresh) -> Catalog:
        refresh_store(store, self.sources, mode)
        return Catalog(store)

    def _resolve(
        self,
        catalog: Catalog,
        session: str | None,
        harness: str | None,
        cwd: str | os.PathLike[str] | None,
    ) -> SessionInfo:
        found = catalog.resolve(session, self._harness(harness), cwd=cwd)
        if found is None:
            raise SessionNotFound("name a session, or the directory it works in", field="session")
        return found


def transcript_sources(path: str | os.PathLike[str]) -> list[Source]:
    """The root to scan for the session whose log is `path` (as a hook names it); Invalid
    when no harness names its logs so."""
    name = harnesses.detect({"transcript_path": str(path)}, {})
    for harness in [harnesses.get(name)] if name != "unknown" else harnesses.all_harnesses():
        log = harness.adapter.log_file(os.path.abspath(path))
        if log is not None:
            return [Source(harness.name, log.root)]
    raise Invalid(f"{path} is not named like the log of any harness", field="transcript")


def _ignition(settings: GraftSettings) -> lifecycle.Ignition:
    return lifecycle.Ignition(
        settings.ignite_timeout_s, settings.ignite_attempts, spacing=settings.ignite_spacing_s
    )


def _build(
    catalog: Catalog,
    source: SessionInfo,
    settings: GraftSettings,
    forced_mark: Mapping[str, Any] | None,
) -> Handoff:
    try:
        return prepare_handoff(catalog, source, settings, forced_mark)
    except DshkitError:  # GraftAborted, a damaged inherited block (ConstraintBlockError)
        raise
    except ValueError as exc:  # a [graft] budget too small for the board's fixed lines
        raise Unavailable(str(exc)) from exc


@contextmanager
def _invalid() -> Iterator[None]:
    """Read-back's arguments out of their bounds (its ValueError names each) as Invalid."""
    try:
        yield
    except DshkitError:
        raise
    except ValueError as exc:
        raise Invalid(str(exc)) from exc
