"""What the hooks read and write about handoffs: retirement, owed notices and the audit trail.

The lifecycle (`lifecycle.py`) writes these rows inside its own transactions; the hooks of a
source session only read them (`retirement`, `owed_notices`), mark notices shown once
delivered (`mark_shown`, in the store's one ledger of deliveries) and append audit records
(`audit`). Everything is in the store: there is no in-memory copy anywhere to fall out of
step with it, so un-retiring a source is one transaction and nothing else.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import orjson

from .. import harnesses
from ..store import GRAFT_NOTICE_DELIVERY, Store
from ..store import audit as audit  # the trail's one writer, shared with the guard
from . import marker
from .wire import AuditRecordJson, ExclusionJson, ForceFailureJson, RetirementJson

TRANSFERRING = "transferring"  # a handoff of the source is under way
RETIRED = "retired"  # the source handed off: its target carries the work
PENDING_STATE = "PENDING"  # lifecycle.State.PENDING (that module imports this one)
AUDIT_LIMIT = 10_000  # most records one `audit_records` call returns


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class Retirement:
    """Why a source session takes no more work, and where the work went.

    `target_id` is None while the target is not known yet: being started, or (`pending`)
    waiting for the next session started in `cwd`. `command` is how a person continues the
    work, where there is one."""

    kind: str  # TRANSFERRING or RETIRED
    txn_id: int
    target_harness: str
    target_id: str | None
    cwd: str
    pending: bool
    command: str | None

    def pointer(self) -> str:
        """The Chinese sentence the blocked prompt or tool call answers with."""
        if self.pending:
            where = f"交接内容会交给下一个在 {self.cwd} 启动的会话（交接 #{self.txn_id}）"
        elif self.target_id is None:
            where = f"新会话正在 {self.cwd} 中启动（交接 #{self.txn_id}）"
        else:
            label = harnesses.get(self.target_harness).label
            where = f"新会话是 {label} 会话 {self.target_id}（交接 #{self.txn_id}）"
        status = "正在交接" if self.kind == TRANSFERRING else "已交接完毕"
        tail = f"；继续工作请用：{self.command}" if self.command else ""
        if self.kind == TRANSFERRING and self.target_id is None:
            # Nothing started yet: the person may still take the handoff back.
            tail += f"；不想交接了可以撤销：{cancel_command(self.txn_id)}"
        return f"[dshkit 交接] 本会话{status}，不再接收新的请求或工具调用。{where}{tail}"

    def as_json(self) -> RetirementJson:
        return {
            "kind": self.kind,
            "txnId": self.txn_id,
            "targetHarness": self.target_harness,
            "targetSessionId": self.target_id,
            "cwd": self.cwd,
            "pending": self.pending,
            "command": self.command,
        }


def cancel_command(txn_id: int) -> str:
    """The shell command that withdraws handoff `txn_id` while its target is not started."""
    return f"dshkit graft cancel --txn {txn_id}"


def continue_command(
    target_harness: str, cwd: str, target_id: str | None, pending: bool
) -> str | None:
    """The shell command a person continues the work with: for a pending handoff, the harness
    started in `cwd` (its next session there picks the handoff up); for a known target,
    reopening it where the harness can; else none."""
    import shlex  # only for a pointer's resume command: off the hot path

    launcher = harnesses.get(target_harness).launcher
    if pending:
        return f"cd {shlex.quote(cwd)} && {shlex.quote(launcher.program)}"
    launch = None if target_id is None else launcher.reopen(cwd, target_id)
    if launch is None:
        return None
    return f"cd {shlex.quote(cwd)} && {shlex.join(launch.argv)}"


def retirement(store: Store, harness: str, session_id: str) -> Retirement | None:
    """Whether the session `harness`/`session_id` is transferring or retired, or None when it
    may work (never handed off, or its handoff was rolled back)."""
    row = store.db.execute(
        "SELECT l.kind, l.txn_id, l.target_harness, l.target_id, t.cwd, t.state "
        "FROM graft_ledger l "
        "JOIN graft_txns t ON t.id = l.txn_id WHERE l.harness = ? AND l.session_id = ?",
        (harness, session_id),
    ).fetchone()
    if row is None:
        return None
    kind, txn_id, target_harness, target_id, cwd, state = row
    pending = state == PENDING_STATE
    return Retirement(
        kind,
        txn_id,
        target_harness,
        target_id,
        cwd,
        pending,
        continue_command(target_harness, cwd, target_id, pending),
    )


@dataclass(frozen=True, slots=True)
class Owed:
    """Notices owed to a session: their text, and the handoffs they come from."""

    text: str
    txn_ids: tuple[int, ...]


def owed_notices(store: Store, harness: str, session_id: str) -> Owed | None:
    """The notices not yet shown to a session (e.g. a rolled-back handoff), oldest first."""
    rows = [
        row
        for row in store.db.execute(
            "SELECT txn_id, text FROM graft_notices "
            "WHERE harness = ? AND session_id = ? ORDER BY txn_id",
            (harness, session_id),
        ).fetchall()
        if not shown(store, harness, session_id, row[0])
    ]
    if not rows:
        return None
    return Owed("\n".join(row[1] for row in rows), tuple(row[0] for row in rows))


def mark_shown(store: Store, harness: str, session_id: str, txn_ids: tuple[int, ...]) -> None:
    """Record that these notices reached the session (they are not shown again)."""
    for txn_id in txn_ids:
        if not shown(store, harness, session_id, txn_id):
            store.mark_delivered((harness, session_id), GRAFT_NOTICE_DELIVERY, str(txn_id))


def shown(store: Store, harness: str, session_id: str, txn_id: int) -> bool:
    """Whether the notice of handoff `txn_id` owed to the session was shown to it."""
    return store.delivered((harness, session_id), GRAFT_NOTICE_DELIVERY, str(txn_id))


def queue_notice(store: Store, harness: str, session_id: str, txn_id: int, text: str) -> bool:
    """Owe `text` to the session, once per handoff; False when it was already owed."""
    cursor = store.db.execute(
        "INSERT OR IGNORE INTO graft_notices (harness, session_id, txn_id, text, at) "
        "VALUES (?, ?, ?, ?, ?)",
        (harness, session_id, txn_id, text, now_ms()),
    )
    return cursor.rowcount == 1


@dataclass(frozen=True, slots=True)
class AuditRecord:
    id: int
    at: int
    kind: str
    harness: str | None
    session_id: str | None
    txn_id: int | None
    detail: dict[str, Any]

    def as_json(self) -> AuditRecordJson:
        return {
            "id": self.id,
            "at": self.at,
            "kind": self.kind,
            "harness": self.harness,
            "sessionId": self.session_id,
            "txnId": self.txn_id,
            "detail": self.detail,
        }


def audit_records(store: Store, limit: int = 100, session: str | None = None) -> list[AuditRecord]:
    """The latest `limit` audit records, oldest first; of one session id when given."""
    if not 1 <= limit <= AUDIT_LIMIT:
        raise ValueError(f"limit must be between 1 and {AUDIT_LIMIT}, not {limit}")
    where, args = ("WHERE session_id = ?", (session,)) if session is not None else ("", ())
    rows = store.db.execute(
        "SELECT id, at, kind, harness, session_id, txn_id, detail FROM graft_audit "
        f"{where} ORDER BY id DESC LIMIT ?",
        (*args, limit),
    ).fetchall()
    return [
        AuditRecord(row[0], row[1], row[2], row[3], row[4], row[5], orjson.loads(row[6]))
        for row in reversed(rows)
    ]


# -- forced cuts that failed -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ForceFailure:
    """The forced handoffs of a session that failed in a row: how many, the last one's error
    and when, whether its model was told, and when the next one may start."""

    failures: int
    error: str
    at: int
    told: bool
    retry_at: int

    def as_json(self) -> ForceFailureJson:
        return {
            "failures": self.failures,
            "error": self.error,
            "at": self.at,
            "told": self.told,
            "retryAt": self.retry_at,
        }


def force_backoff_ms(failures: int, base_s: float, cap_s: float) -> int:
    """How long after the last forced handoff the next may start: `base_s`, doubled after each
    failure in a row, never more than `cap_s`."""
    return int(min(cap_s, base_s * 2 ** max(0, failures)) * 1000)


def force_failure(
    store: Store, harness: str, session_id: str, base_s: float, cap_s: float
) -> ForceFailure | None:
    """The session's failing forced handoffs, or None when the last one did not fail."""
    row = store.db.execute(
        "SELECT force_failures, force_error, force_error_at, force_told, forced_at "
        "FROM graft_watch WHERE harness = ? AND session_id = ?",
        (harness, session_id),
    ).fetchone()
    if row is None or not row[0]:
        return None
    failures, error, at, told, forced_at = row
    since = max(at or 0, forced_at or 0)
    # The wait after the last try counts the failures before it: the first retry comes after
    # base_s, the next after twice that, and so on up to the cap.
    retry = since + force_backoff_ms(failures - 1, base_s, cap_s)
    return ForceFailure(failures, error or "", at or 0, bool(told), retry)


def record_force_failure(
    store: Store, harness: str, session_id: str, error: str, *, told: bool = False
) -> None:
    """A forced handoff of the session failed with `error` (`told`: its model already hears
    of it, e.g. by a rollback notice); audited `force-graft-failed`."""
    at = now_ms()
    with store.transaction() as db:
        db.execute(
            "INSERT INTO graft_watch (harness, session_id, digest, state, updated_at, "
            "force_failures, force_error, force_error_at, force_told) "
            "VALUES (?, ?, '{}', '{}', ?, 1, ?, ?, ?) ON CONFLICT (harness, session_id) DO UPDATE "
            "SET force_failures = force_failures + 1, force_error = excluded.force_error, "
            "force_error_at = excluded.force_error_at, force_told = excluded.force_told, "
            "updated_at = excluded.updated_at",
            (harness, session_id, at, error, at, int(told)),
        )
        (failures,) = db.execute(
            "SELECT force_failures FROM graft_watch WHERE harness = ? AND session_id = ?",
            (harness, session_id),
        ).fetchone()
        audit(
            store,
            "force-graft-failed",
            harness=harness,
            session_id=session_id,
            error=error,
            failures=failures,
        )


def clear_force_failures(store: Store, harness: str, session_id: str) -> None:
    """A forced handoff of the session began well: the failures before it no longer count."""
    store.db.execute(
        "UPDATE graft_watch SET force_failures = 0, force_error = NULL, force_error_at = NULL, "
        "force_told = 1 WHERE harness = ? AND session_id = ? AND force_failures > 0",
        (harness, session_id),
    )


def mark_force_told(store: Store, harness: str, session_id: str) -> None:
    store.db.execute(
        "UPDATE graft_watch SET force_told = 1 WHERE harness = ? AND session_id = ?",
        (harness, session_id),
    )


# -- what a session born from a handoff received -------------------------------------------------


def received(store: Store, harness: str, session_id: str) -> tuple[dict[str, Any], str] | None:
    """The identity (as JSON) and first message of the committed handoff whose target is this
    session, or None: what it was given, wherever that went (a message of its own, or hook
    context, which its log may not keep as a message)."""
    row = store.db.execute(
        "SELECT plan FROM graft_txns WHERE target_harness = ? AND target_id = ? "
        "AND state = 'COMMITTED' ORDER BY id DESC LIMIT 1",
        (harness, session_id),
    ).fetchone()
    if row is None:
        return None
    plan = orjson.loads(row[0])
    return plan["identity"], plan["firstMessage"]


# -- a person's choices: sessions kept from the forced cut, whether targets start at once ------

EXCLUDE_KEY = marker.EXCLUDE_KEY  # + harness + ":" + session id → {at, by, reason}
IGNITE_KEY = "graft.ignite"  # "on" | "off"; absent: `[graft] ignite_target`


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A session a person kept from the forced cut: when, by which surface, and why."""

    harness: str
    session_id: str
    at: int
    by: str
    reason: str | None

    @property
    def key(self) -> tuple[str, str]:
        return self.harness, self.session_id

    def as_json(self) -> ExclusionJson:
        return {
            "harness": self.harness,
            "sessionId": self.session_id,
            "at": self.at,
            "by": self.by,
            "reason": self.reason,
        }


def excluded(store: Store, harness: str, session_id: str) -> bool:
    """Whether a person kept the session from the forced cut (one read of the store)."""
    return store.get_meta(f"{EXCLUDE_KEY}{harness}:{session_id}") is not None


def exclusions(store: Store) -> list[Exclusion]:
    """Every session kept from the forced cut, oldest first."""
    rows = store.db.execute(
        "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ? ORDER BY key",
        (len(EXCLUDE_KEY), EXCLUDE_KEY),
    ).fetchall()
    found = []
    for key, value in rows:
        harness, _, session_id = key[len(EXCLUDE_KEY) :].partition(":")
        detail = orjson.loads(value)
        found.append(
            Exclusion(harness, session_id, detail["at"], detail["by"], detail.get("reason"))
        )
    return sorted(found, key=lambda each: each.at)


def set_excluded(
    store: Store, harness: str, session_id: str, keep: bool, *, by: str, reason: str | None
) -> bool:
    """Keep the session from the forced cut (`keep`) or give it back to it; audited
    `forced-cut-excluded` / `forced-cut-included` when it changes anything. Whether it did."""
    key = f"{EXCLUDE_KEY}{harness}:{session_id}"
    with store.transaction() as db:
        was = store.get_meta(key) is not None
        if was == keep:
            return False
        if keep:
            detail = {"at": now_ms(), "by": by, "reason": reason}
            store.set_meta(key, orjson.dumps(detail).decode())
        else:
            db.execute("DELETE FROM meta WHERE key = ?", (key,))
        kind = "forced-cut-excluded" if keep else "forced-cut-included"
        audit(store, kind, harness=harness, session_id=session_id, by=by, reason=reason)
    return True


def ignition_choice(store: Store) -> bool | None:
    """Whether a person chose that handoffs start their target at once (True), wait for the
    next session in the directory (False), or left it to `[graft] ignite_target` (None)."""
    value = store.get_meta(IGNITE_KEY)
    return {"on": True, "off": False}.get(value or "")


def set_ignition_choice(store: Store, ignite: bool | None, *, by: str) -> None:
    """Record the person's choice (None: back to the config), audited `ignition-switched`."""
    with store.transaction() as db:
        if ignite is None:
            db.execute("DELETE FROM meta WHERE key = ?", (IGNITE_KEY,))
        else:
            store.set_meta(IGNITE_KEY, "on" if ignite else "off")
        audit(store, "ignition-switched", ignite=ignite, by=by)
