"""What graft is doing now, read-only: the debug panel and the audit trail
(docs/design/graft.md#a-debug-panel-reads-and-changes-nothing).

`debug_status` answers for the whole store — unfinished handoffs and whether a live process
drives each, the ledger's counts, pending handoffs, notices not yet shown — and, given a
session, for it: its watermark (what `dshkit graft status` shows), its retirement and its
handoffs. Nothing here writes: no recovery, no notice handed out, no lease taken. The
surfaces reach these through `GraftService` (`service.py`), which opens the store for them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import orjson

from ..sessions.catalog import Catalog, SessionInfo
from ..store import Store
from . import ledger, live
from .lifecycle import (
    UNFINISHED,
    State,
    Txn,
    lease_name,
    load,
    outcome_counts,
    stalled,
    transactions,
)
from .settings import GraftSettings
from .texts import naming
from .watermark import Decision, Digest, GraftState
from .wire import (
    AuditPageJson,
    ForceFailureJson,
    IgnitionJson,
    NoticeRow,
    OutcomeJson,
    Panel,
    PendingRow,
    SessionPart,
)


def session_decision(store: Store, info: SessionInfo, settings: GraftSettings) -> Decision:
    """The decision the session's hooks would make now: on what the last scan stored, with
    the state its hooks keep (what it was told already), its retirement and what it was born
    from; the text as they would say it (naming the session). Nothing is recorded."""
    events = Catalog(store).conversation((info.harness, info.session_id))
    row = store.db.execute(
        "SELECT state FROM graft_watch WHERE harness = ? AND session_id = ?", info.key
    ).fetchone()
    state = GraftState() if row is None else GraftState.from_json(orjson.loads(row[0]))
    decision = live.decide_stored(store, *info.key, Digest.of(events), state, settings)
    if decision.action in ("nudge", "escalate") and decision.text is not None:
        decision = replace(decision, text=naming(decision.text, info.session_id))
    return decision


def outcome(store: Store, key: tuple[str, str]) -> OutcomeJson | None:
    """What became of the session's latest handoff, for a person: its state, the target and
    the command to go on with it, or why it was rolled back; None when it never handed off."""
    row = store.db.execute(
        "SELECT id FROM graft_txns WHERE harness = ? AND session_id = ? ORDER BY id DESC LIMIT 1",
        key,
    ).fetchone()
    if row is None:
        return None
    txn = load(store, row[0])
    retired = ledger.retirement(store, *key)
    return {
        "txnId": txn.id,
        "state": str(txn.state),
        "targetHarness": txn.plan.target,
        "targetSessionId": txn.target_id,
        "continueCommand": txn.continue_command(),
        "model": txn.plan.model,
        "mode": txn.plan.mode,
        "error": txn.last_error,
        "attempts": txn.attempts,
        "stalled": stalled(store, txn),
        "released": txn.state == State.COMMITTED and retired is None,
        "summary": summary(txn),
    }


def summary(txn: Txn) -> str:
    """One English sentence on where the handoff stands and what a person does next."""
    target = f"{txn.plan.target} session {txn.target_id}"
    command = txn.continue_command()
    go_on = f"; continue it with: {command}" if command else ""
    if txn.state == State.COMMITTED and txn.target_id:
        return f"handed off to {target}{go_on}"
    if txn.state == State.VERIFIED:
        return f"the new {target} started; committing{go_on}"
    if txn.state == State.PENDING:
        return f"waiting for the next {txn.plan.target} session started in {txn.plan.cwd}{go_on}"
    if txn.state in UNFINISHED:
        tried = f" (attempt {txn.attempts}, last error: {txn.last_error})" if txn.attempts else ""
        return f"starting the new session{tried}"
    why = txn.last_error or "unknown"
    return f"rolled back: {why}; the source session works again"


def debug_status(store: Store, session: str | None = None, harness: str | None = None) -> Panel:
    """The panel: `session` (an id or a unique prefix, of `harness` when given) gets its own
    part under "session" (SessionNotFound when it names no scanned session, or several)."""
    info = None if session is None else Catalog(store).find(session, harness)
    now = ledger.now_ms()
    counts = outcome_counts(store)
    settings, settings_error = GraftSettings.resolve(store.state_dir)
    return {
        "session": None if info is None else session_status(store, info),
        "transactions": [
            {**txn.as_json(), "ageMs": now - txn.created_at, "driver": _driver(store, txn)}
            for txn in transactions(store, UNFINISHED)
        ],
        "counts": {
            "transferring": counts.get(ledger.TRANSFERRING, 0),
            "retired": counts.get(ledger.RETIRED, 0),
            "targets": counts[State.VERIFIED] + counts[State.COMMITTED],
            "byState": {str(state): counts[state] for state in State},
        },
        "pending": _pending(store, now),
        "notices": _notices(store),
        "exclusions": [each.as_json() for each in ledger.exclusions(store)],
        "ignition": ignition(store, settings),
        "settingsError": settings_error,
        # What `graft recover` would reclaim (read-only here: nothing is taken over).
        "staleLeases": [
            {"name": name, "pid": pid, "why": why} for name, pid, why in store.stale_leases()
        ],
    }


def ignition(store: Store, settings: GraftSettings) -> IgnitionJson:
    """Whether a handoff starts its target at once now: the person's choice (the console's
    switch), else `[graft] ignite_target`."""
    chosen = ledger.ignition_choice(store)
    return {
        "ignite": settings.ignite_target if chosen is None else chosen,
        "chosen": chosen,
        "config": settings.ignite_target,
    }


def session_status(store: Store, info: SessionInfo) -> SessionPart:
    """One session's part of the panel."""
    key = (info.harness, info.session_id)
    # A refused value takes its default, as at the hooks: the decision shown is the one they
    # make, and the refusal is shown beside it.
    settings, settings_error = GraftSettings.resolve(store.state_dir)
    decision = session_decision(store, info, settings).as_json()
    retired = ledger.retirement(store, *key)
    ids = store.db.execute(
        "SELECT id FROM graft_txns WHERE harness = ? AND session_id = ? ORDER BY id", key
    ).fetchall()
    born = store.db.execute(
        "SELECT id FROM graft_txns WHERE target_harness = ? AND target_id = ? ORDER BY id", key
    ).fetchall()
    return {
        "harness": info.harness,
        "sessionId": info.session_id,
        "cwd": info.cwd,
        "decision": decision,
        "settingsError": settings_error,
        "retirement": None
        if retired is None
        else {**retired.as_json(), "pointer": retired.pointer()},
        "handoffs": [load(store, row[0]).as_json() for row in ids],
        "targetOf": [row[0] for row in born],
        "notices": _notices(store, key),
        "handoff": outcome(store, key),
        "forcedCutFailure": _force_failure(store, key),
        "excludedFromForcedCut": ledger.excluded(store, *key),
    }


def _force_failure(store: Store, key: tuple[str, str]) -> ForceFailureJson | None:
    settings, _ = GraftSettings.resolve(store.state_dir)
    failed = ledger.force_failure(store, *key, settings.force_retry_s, settings.force_retry_cap_s)
    return None if failed is None else failed.as_json()


def _driver(store: Store, txn: Txn) -> int | None:
    """The pid of the live process driving the handoff, or None (recovery would take it)."""
    return store.lease_holder(lease_name(txn.id))


def _pending(store: Store, now: int) -> list[PendingRow]:
    rows = store.db.execute(
        "SELECT p.txn_id, p.harness, p.cwd, p.at, t.harness, t.session_id FROM graft_pending p "
        "JOIN graft_txns t ON t.id = p.txn_id ORDER BY p.txn_id"
    ).fetchall()
    return [
        {
            "txnId": row[0],
            "targetHarness": row[1],
            "cwd": row[2],
            "at": row[3],
            "ageMs": now - row[3],
            "harness": row[4],
            "sessionId": row[5],
        }
        for row in rows
    ]


def _notices(store: Store, key: tuple[str, str] | None = None) -> list[NoticeRow]:
    """Notices owed and not yet shown (of one session when `key` is given)."""
    where, args = ("AND harness = ? AND session_id = ?", key) if key else ("", ())
    rows = store.db.execute(
        "SELECT harness, session_id, txn_id, at, text FROM graft_notices "
        f"WHERE 1 {where} ORDER BY at, txn_id",
        args,
    ).fetchall()
    return [
        {"harness": row[0], "sessionId": row[1], "txnId": row[2], "at": row[3], "text": row[4]}
        for row in rows
        if not ledger.shown(store, row[0], row[1], row[2])
    ]


@dataclass(frozen=True, slots=True)
class AuditPage:
    """The latest records of the audit trail, oldest first, and how many older ones the limit
    left out (so a limited listing is never cut silently)."""

    records: list[ledger.AuditRecord]
    more: int

    def as_json(self) -> AuditPageJson:
        return {"records": [record.as_json() for record in self.records], "more": self.more}


def audit_page(store: Store, limit: int = 100, session: str | None = None) -> AuditPage:
    """The latest `limit` audit records (of the session id `session`, exactly, when given);
    ValueError naming the bounds when `limit` is out of them."""
    records = ledger.audit_records(store, limit, session)
    if not records:
        return AuditPage(records, 0)
    where, args = ("AND session_id = ?", (session,)) if session is not None else ("", ())
    (older,) = store.db.execute(
        f"SELECT count(*) FROM graft_audit WHERE id < ? {where}", (records[0].id, *args)
    ).fetchone()
    return AuditPage(records, older)
