"""Carrying a handoff out: start the target through its harness's CLI, verify it, retire the source.

A handoff is a durable transaction in the store
(docs/design/graft.md#a-handoff-is-one-durable-transaction)::

    PREPARING → TARGET_STARTED → VERIFIED → COMMITTED      (ROLLED_BACK, FAILED: terminal)
    PREPARING → PENDING → COMMITTED                         (no headless start: the next
                                                             SessionStart in cwd picks it up)

Each transition is one SQLite transaction, together with the ledger rows the source's hooks
read and the audit record of the step. The source is marked transferring in the transaction
that creates the handoff, so from then on it takes no new work; the target is started with
the handoff's first message (identity line and card) by the harness's own CLI in the same
directory (given what its harness withheld from this process: its credentials), and counts as
started once its transcript, read back through the session layer, shows that message and the
model answering it: until then its CLI dies with the process driving it, from then on it is
the target's own run and outlives it. A target whose first turn did not run is kept, marked
FAILED_MARK, and never taken for the target. A start that fails or hangs (each attempt bounded, its
process group killed) is tried again; when the attempts are spent the source is un-retired,
told once, and the handoff rolled back. A target that was started is never rolled back: that
would revive a session the work has left. `recover` finishes or rolls back what a dead process
left, so that at any time the source or the target can carry the work.

One process drives a handoff at a time: it holds the store lease `graft-txn-<id>`, and a
process that died holding it loses it.
"""

from __future__ import annotations

import contextlib
import enum
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson

from .. import harnesses
from ..errors import Busy, NotFound, Refused
from ..paths import dir_key
from ..procs import alive, ancestor_env, kill_group, start_watched
from ..sessions.events import human_messages
from ..sessions.reader import read_head
from ..store import Lease, LeaseBusy, Store
from . import ledger, marker
from .identity import Identity, session_identity
from .wire import PlanJson, TxnJson

SOURCE_ALREADY_MIGRATED = "SOURCE_ALREADY_MIGRATED"
BAD_PLAN = "BAD_PLAN"
# Names the handoff in the environment of the CLI started for it: recovery kills a process
# left by a dead driver only when it carries this mark (its pid may have been reused).
TXN_ENV = "DSHKIT_GRAFT_TXN"
# Test seam: the process SIGKILLs itself right after entering this state (or LAUNCHED: the
# CLI started and recorded), to prove that recovery keeps the invariant at every step.
KILL_AFTER_ENV = "DSHKIT_GRAFT_KILL_AFTER"
LAUNCHED = "LAUNCHED"
# The longest first message a command line carries (Linux caps one argument at 128 KiB).
MESSAGE_LIMIT = 100_000
# How much of a new transcript is read to find its first human message.
HEAD_BYTES = 1 << 20
# File times are coarse on some filesystems: a transcript may look this much older.
MTIME_SLACK_MS = 2_000
ROLLBACK_NOTICE = (
    "[dshkit 交接回滚] 新会话没能启动，交接已撤销：本会话恢复可用，工作就在这里继续。"
    "需要交接时请重新发起一次。"
)
CANCEL_NOTICE = "[dshkit 交接撤销] 这次交接已被撤销：本会话恢复可用，工作就在这里继续。"
RELEASE_NOTICE = (
    "[dshkit 交接释放] 本会话已被手动恢复可用：此前交接出去的新会话仍然存在，"
    "如果两边都在工作，请注意不要做重复或冲突的修改。"
)
# How a target whose first turn did not run is marked wherever dshkit names it (the handoff's
# error, its audit, what the source's model is told): kept, never taken for the one to go on
# in (its own log is the harness's, which dshkit only reads).
FAILED_MARK = "[点火失败]"
NOT_CANCELLABLE = "NOT_CANCELLABLE"
NOT_RETIRED = "NOT_RETIRED"
# An unfinished handoff whose lease was never taken (or was let go by a driver that failed)
# is stalled once it has not moved for this long: the detached driver starts well within it.
STALL_MS = 15_000


class State(enum.StrEnum):
    PREPARING = "PREPARING"
    PENDING = "PENDING"
    TARGET_STARTED = "TARGET_STARTED"
    VERIFIED = "VERIFIED"
    COMMITTED = "COMMITTED"
    ROLLED_BACK = "ROLLED_BACK"
    FAILED = "FAILED"


# Unfinished handoffs that `recover` drives on (a PENDING one waits for a session instead).
UNFINISHED = (State.PREPARING, State.TARGET_STARTED, State.VERIFIED)
LIVE = (*UNFINISHED, State.PENDING)


class GraftError(Refused):
    """A handoff refused by a rule of graft's; `code` (SOURCE_ALREADY_MIGRATED, BAD_PLAN,
    NOT_CANCELLABLE, NOT_RETIRED) is stable for callers (MCP tools, CLI, web)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)


class HandoffNotFound(NotFound, LookupError):
    """No handoff has the number asked for: bad input (the caller named nothing), not a rule
    refusing a handoff that exists."""

    def __init__(self, txn_id: int) -> None:
        super().__init__(f"no handoff #{txn_id}", field="txn")
        self.txn_id = txn_id


@dataclass(frozen=True, slots=True)
class Plan:
    """The handoff to carry out, as the engine built it: whose it is, where, and the target's
    first message (identity line and card)."""

    harness: str
    session_id: str
    cwd: str
    first_message: str
    identity: Identity
    card: str
    target_harness: str | None = None  # the source's harness when None
    # The source's model and permission mode, as its log names them: the target runs on them.
    model: str | None = None
    mode: str | None = None

    @property
    def target(self) -> str:
        return self.target_harness or self.harness

    def as_json(self) -> PlanJson:
        return {
            "harness": self.harness,
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "firstMessage": self.first_message,
            "identity": self.identity.as_json(),
            "card": self.card,
            "targetHarness": self.target_harness,
            "model": self.model,
            "mode": self.mode,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Plan:
        return cls(
            value["harness"],
            value["sessionId"],
            value["cwd"],
            value["firstMessage"],
            Identity.from_json(value["identity"]),
            value["card"],
            value.get("targetHarness"),
            value.get("model"),
            value.get("mode"),
        )

    def check(self) -> None:
        """GraftError BAD_PLAN naming what is wrong with this plan."""
        for name in (self.harness, self.target):
            try:
                harnesses.get(name)
            except harnesses.UnknownHarness as exc:
                raise GraftError(BAD_PLAN, str(exc)) from None
        if not self.session_id:
            raise GraftError(BAD_PLAN, "the plan names no source session")
        if not os.path.isabs(self.cwd) or not os.path.isdir(self.cwd):
            raise GraftError(BAD_PLAN, f"cwd {self.cwd!r} is not an existing absolute directory")
        if self.identity.source_session_id != self.session_id:
            raise GraftError(
                BAD_PLAN,
                f"the identity names source {self.identity.source_session_id!r}, "
                f"the plan {self.session_id!r}",
            )
        if self.identity.render() not in self.first_message:
            raise GraftError(BAD_PLAN, "the first message does not carry the identity line")
        size = len(self.first_message.encode())
        if size > MESSAGE_LIMIT:
            raise GraftError(
                BAD_PLAN,
                f"the first message is {size} bytes; a command line carries at most "
                f"{MESSAGE_LIMIT}",
            )


@dataclass(frozen=True, slots=True)
class Ignition:
    """How the target is started: each attempt waits `timeout` seconds for the target's
    transcript, at most `attempts` attempts, the next one starting no sooner than `spacing`
    seconds after the one before began (an instant failure does not spend every chance at
    once), the transcript looked for every `poll`."""

    timeout: float = 20.0
    attempts: int = 3
    poll: float = 0.2
    spacing: float = 0.0

    @property
    def budget(self) -> float:
        """The longest one handoff's ignition can take (a generous bound for waiting on it)."""
        # Each attempt waits for the transcript, then for the first turn's answer.
        return self.attempts * (max(2 * self.timeout, self.spacing) + 5.0) + 30.0


@dataclass(frozen=True, slots=True)
class Txn:
    """One handoff as stored."""

    id: int
    state: State
    plan: Plan
    target_id: str | None
    attempts: int
    last_error: str | None
    created_at: int
    updated_at: int
    child: dict[str, Any] | None

    def as_json(self) -> TxnJson:
        return {
            "id": self.id,
            "state": str(self.state),
            "harness": self.plan.harness,
            "sessionId": self.plan.session_id,
            "cwd": self.plan.cwd,
            "targetHarness": self.plan.target,
            "targetSessionId": self.target_id,
            "identity": self.plan.identity.as_json(),
            "model": self.plan.model,
            "mode": self.plan.mode,
            "attempts": self.attempts,
            "lastError": self.last_error,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "continueCommand": self.continue_command(),
        }

    def continue_command(self) -> str | None:
        """How a person goes on with the work: the target reopened interactively once it is
        known, the harness started in the directory while the handoff waits for a session."""
        if self.state in (State.ROLLED_BACK, State.FAILED):
            return None
        pending = self.state == State.PENDING
        if self.target_id is None and not pending:
            return None
        return ledger.continue_command(self.plan.target, self.plan.cwd, self.target_id, pending)


_COLUMNS = "id, state, plan, target_id, attempts, last_error, created_at, updated_at, child"


def _txn(row: Any) -> Txn:
    return Txn(
        row[0],
        State(row[1]),
        Plan.from_json(orjson.loads(row[2])),
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        orjson.loads(row[8]) if row[8] else None,
    )


def load(store: Store, txn_id: int) -> Txn:
    """The handoff `txn_id` as stored (HandoffNotFound when there is none)."""
    row = store.db.execute(f"SELECT {_COLUMNS} FROM graft_txns WHERE id = ?", (txn_id,)).fetchone()
    if row is None:
        raise HandoffNotFound(txn_id)
    return _txn(row)


def transactions(store: Store, states: tuple[State, ...] = LIVE) -> list[Txn]:
    """The handoffs in `states` (by default the live ones), oldest first."""
    marks = ", ".join("?" * len(states))
    rows = store.db.execute(
        f"SELECT {_COLUMNS} FROM graft_txns WHERE state IN ({marks}) ORDER BY id",
        tuple(str(s) for s in states),
    ).fetchall()
    return [_txn(row) for row in rows]


# -- the transitions -----------------------------------------------------------------------


def begin(store: Store, plan: Plan, *, ignite: bool = True, allow_reslice: bool = False) -> Txn:
    """Record the handoff and mark its source transferring, in one transaction: PREPARING, or
    PENDING (waiting for the next session in its cwd) when `ignite` is off.

    GraftError SOURCE_ALREADY_MIGRATED when the source has a live handoff, or a committed one
    and `allow_reslice` is off; BAD_PLAN when the plan cannot be carried out."""
    plan.check()
    marker.mark(str(store.state_dir))  # before the ledger row: see marker.py
    at = ledger.now_ms()
    with store.transaction() as db:
        prior = db.execute(
            "SELECT l.txn_id, l.kind, l.target_harness, l.target_id, l.at, t.state "
            "FROM graft_ledger l JOIN graft_txns t ON t.id = l.txn_id "
            "WHERE l.harness = ? AND l.session_id = ?",
            (plan.harness, plan.session_id),
        ).fetchone()
        if prior is not None and (not allow_reslice or prior[5] != State.COMMITTED):
            raise GraftError(
                SOURCE_ALREADY_MIGRATED,
                f"session {plan.session_id} is already {prior[1]} (handoff #{prior[0]}); "
                + (
                    "a handoff is under way" if prior[5] != State.COMMITTED else "pass allowReslice"
                ),
            )
        cursor = db.execute(
            "INSERT INTO graft_txns (harness, session_id, cwd, target_harness, state, plan, "
            "boundary_seq, generation, prior, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                plan.harness,
                plan.session_id,
                plan.cwd,
                plan.target,
                State.PREPARING if ignite else State.PENDING,
                orjson.dumps(plan.as_json()).decode(),
                plan.identity.boundary_seq,
                plan.identity.generation,
                orjson.dumps(list(prior[:5])).decode() if prior else None,
                at,
                at,
            ),
        )
        txn_id = int(cursor.lastrowid or 0)
        db.execute(
            "INSERT OR REPLACE INTO graft_ledger "
            "(harness, session_id, txn_id, kind, target_harness, target_id, at) "
            "VALUES (?, ?, ?, ?, ?, NULL, ?)",
            (plan.harness, plan.session_id, txn_id, ledger.TRANSFERRING, plan.target, at),
        )
        if not ignite:
            db.execute(
                "INSERT INTO graft_pending (txn_id, harness, cwd, at) VALUES (?, ?, ?, ?)",
                (txn_id, plan.target, dir_key(plan.cwd), at),
            )
        _audit(store, "handoff-begin", plan, txn_id, ignite=ignite, reslice=prior is not None)
    _killpoint(State.PREPARING if ignite else State.PENDING)
    return load(store, txn_id)


def handoff(
    store: Store,
    plan: Plan,
    *,
    ignite: bool = True,
    allow_reslice: bool = False,
    ignition: Ignition | None = None,
) -> Txn:
    """Carry the handoff out: begin it, then start and verify the target and commit, or roll
    back; with `ignite` off, leave it PENDING for the next session started in its cwd."""
    txn = begin(store, plan, ignite=ignite, allow_reslice=allow_reslice)
    # A recovery in another process may have taken the handoff just after `begin`: `drive`
    # waits for it.
    return drive(store, txn.id, ignition) if ignite else txn


def drive(store: Store, txn_id: int, ignition: Ignition | None = None) -> Txn:
    """Carry a begun handoff to its end (a detached process's job after `begin`); a handoff
    another live process drives is waited for."""
    ignition = ignition or Ignition()
    with store.lease(lease_name(txn_id), wait=ignition.budget, ttl=_ttl(ignition)) as lease:
        return _drive(store, lease, txn_id, ignition)


def recover(store: Store, ignition: Ignition | None = None) -> list[Txn]:
    """Finish or roll back every unfinished handoff no live process is driving (run at every
    start). Returns them as they ended."""
    ignition = ignition or Ignition()
    # Handoff leases a dead driver left are let go of first, each audited `lock-reclaimed`
    # (a live driver's are left alone): the trail says which process died holding which.
    store.reclaim_stale_leases(LEASE_PREFIX)
    done = []
    for txn in transactions(store, UNFINISHED):
        try:
            with store.lease(lease_name(txn.id), wait=0, ttl=_ttl(ignition)) as lease:
                done.append(_drive(store, lease, txn.id, ignition))
        except LeaseBusy:
            continue  # a live process drives it
    return done


def _drive(store: Store, lease: Lease, txn_id: int, ignition: Ignition) -> Txn:
    """Take the handoff from whatever state it is in to an end (or PENDING)."""
    while True:
        txn = load(store, txn_id)
        if txn.state == State.VERIFIED:
            _commit(store, lease, txn)
        elif txn.state in (State.PREPARING, State.TARGET_STARTED):
            _ignite(store, lease, txn, ignition)
        else:
            return txn


def _ignite(store: Store, lease: Lease, txn: Txn, ignition: Ignition) -> None:
    """One step toward a started target: settle an attempt a dead driver left in flight, adopt
    a target that exists, make one attempt, or, when the attempts are spent, roll back.

    TARGET_STARTED means an attempt is in flight; a failed one returns it to PREPARING."""
    finder = _Finder(txn)
    if txn.state == State.TARGET_STARTED:
        error = (
            _await_orphan(txn, finder, ignition, lease)
            if txn.child is not None
            else "the process starting it stopped before the CLI ran"
        )
        if error is not None and finder.find() is None:
            _fail_attempt(store, lease, txn, error, ignition)
            return
    target = finder.find()
    if target is not None:
        # Started by an attempt whose driver died: it is this handoff's ignition. Otherwise a
        # target with this identity exists already and is never started twice. Either way
        # it counts only once its first turn ran (whatever runs it now was given its time).
        running = txn.child is not None and "pid" in txn.child and alive(int(txn.child["pid"]))
        failed = _first_turn(finder, ignition, lease, running=running)
        if failed is not None:
            _fail_attempt(store, lease, txn, failed, ignition, target=target)
        elif txn.state == State.TARGET_STARTED:
            _verified(store, lease, txn, target, "ignite", attempt=txn.attempts, recovered=True)
        else:
            _verified(store, lease, txn, target, "ignite-skipped", reason="the target exists")
        return
    if not os.path.isdir(txn.plan.cwd):
        _rollback(store, txn, f"cwd {txn.plan.cwd} is gone", State.FAILED)
        return
    if txn.attempts >= ignition.attempts:
        failed = "".join(f"{FAILED_MARK} {target}; " for target in _failed(txn))
        _rollback(
            store,
            txn,
            f"{failed}ignition failed {txn.attempts} times; last: {txn.last_error}",
            failedTargets=_failed(txn),
        )
        return
    _space(txn, ignition, lease)
    if _cancelled(store, txn):
        return
    attempt = txn.attempts + 1
    with store.transaction():
        kept = orjson.dumps({"failed": _failed(txn)}).decode() if _failed(txn) else None
        _update(store, txn.id, state=State.TARGET_STARTED, attempts=attempt, child=kept)
        lease.renew()
    _killpoint(State.TARGET_STARTED)
    target, error = _launch(store, txn, finder, ignition, lease)
    if error == CANCELLED and target is None and _cancelled(store, load(store, txn.id)):
        return
    if target is not None and error is None:
        _verified(store, lease, txn, target, "ignite", attempt=attempt)
    else:
        error = error or "unknown failure"
        _fail_attempt(store, lease, load(store, txn.id), error, ignition, target=target)


def _launch(
    store: Store, txn: Txn, finder: _Finder, ignition: Ignition, lease: Lease
) -> tuple[str | None, str | None]:
    """Start the target's CLI and wait for its transcript: (target id, None) or (None, error).

    The CLI runs in its own session with its output in an unlinked 0600 file, watched until
    its transcript shows: a driver that dies before that (killed, crashed) takes the
    half-started CLI with it, and one that gives up on it kills its whole group. Once the
    transcript shows it is the target's own headless run: let go, it outlives this process
    (docs/design/graft.md#a-handoff-is-one-durable-transaction)."""
    plan = txn.plan
    # The source's model and mode carry over only within one harness: another's differ.
    same = plan.target == plan.harness
    launch = harnesses.get(plan.target).launcher.start(
        plan.cwd,
        plan.first_message,
        model=plan.model if same else None,
        mode=plan.mode if same else None,
    )
    env = {**person_env(plan.target), **os.environ, **launch.env, TXN_ENV: _mark(store, txn.id)}
    with (
        tempfile.TemporaryFile(dir=store.state_dir) as errors,
        _stdin(store, launch.stdin) as stdin,
    ):
        try:
            watched = start_watched(
                launch.argv,
                cwd=launch.cwd,
                env=env,
                stdin=stdin,
                stdout=subprocess.DEVNULL,
                stderr=errors,
            )
        except OSError as exc:
            return None, f"cannot run {launch.argv[0]}: {exc.strerror or exc}"
        process = watched.process
        try:
            with store.transaction():
                child = {"pid": process.pid, "at": ledger.now_ms(), "mark": env[TXN_ENV]}
                if _failed(txn):
                    child["failed"] = _failed(txn)
                _update(store, txn.id, child=orjson.dumps(child).decode())
                lease.renew()
            _killpoint(LAUNCHED)
            deadline = time.monotonic() + ignition.timeout
            while True:
                target = finder.find()
                if target is not None:
                    # Its first turn must run (the model answered, no error) before the
                    # source retires; until then the CLI dies with this process.
                    failed = _first_turn(finder, ignition, lease, process=process)
                    if failed is not None:
                        return target, f"{failed}{_tail(errors)}"
                    # The CLI goes on with the target's turn; a thread reaps it when it ends.
                    watched.release()
                    threading.Thread(target=process.wait, daemon=True).start()
                    return target, None
                code = process.poll()
                if code is None and cancel_request(store, txn.id) is not None:
                    watched.end()  # withdrawn before its transcript showed: no target
                    return finder.find(), CANCELLED
                if code is None and time.monotonic() < deadline:
                    time.sleep(ignition.poll)
                    continue
                watched.end()  # what it left running, or all of it when its time is up
                # The transcript may have been written just before it ended.
                target = finder.find()
                if target is not None:
                    return target, _first_turn(finder, ignition, lease)
                if code is None:
                    return None, f"no transcript after {ignition.timeout:g} s{_tail(errors)}"
                return None, f"{launch.argv[0]} exited with {code}{_tail(errors)}"
        finally:
            watched.end()  # an error on the way (the store, the lease): nothing half-started


@contextlib.contextmanager
def _stdin(store: Store, text: str | None) -> Iterator[int | IO[bytes]]:
    """What the CLI reads on stdin: its first message in an unlinked 0600 file of the state
    directory (never its command line, which every local user can read in /proc; a file,
    not a pipe, so a CLI slow to read it cannot block the driver), or nothing."""
    if text is None:
        yield subprocess.DEVNULL
        return
    with tempfile.TemporaryFile(dir=store.state_dir) as handle:
        handle.write(text.encode())
        handle.seek(0)
        yield handle


def _space(txn: Txn, ignition: Ignition, lease: Lease) -> None:
    """Wait until `spacing` seconds have passed since the last attempt began (kept on the
    handoff when it failed, so a recovery in another process spaces its attempt too)."""
    began = (txn.child or {}).get("lastStart")
    if not isinstance(began, int | float) or ignition.spacing <= 0:
        return
    until = began / 1000 + ignition.spacing
    while (left := until - time.time()) > 0:
        time.sleep(min(left, 1.0))
        lease.renew()
        if cancel_request(lease.store, txn.id) is not None:
            return  # `_ignite` withdraws it next


def _await_orphan(txn: Txn, finder: _Finder, ignition: Ignition, lease: Lease) -> str | None:
    """Wait out the attempt a dead driver started: None once its target's transcript shows,
    else why it failed (its group killed when its time ran out). Its watchdog kills a CLI
    that had not shown its transcript with the driver: one still running here outlived
    that (the driver died in the moment between starting it and its watchdog)."""
    assert txn.child is not None
    pid = int(txn.child["pid"])
    deadline = txn.child["at"] / 1000 + ignition.timeout
    while alive(pid):
        if finder.find() is not None:
            return None
        if time.time() >= deadline:
            if _carries(pid, f"{TXN_ENV}={txn.child['mark']}"):
                kill_group(pid)
            return f"no transcript after {ignition.timeout:g} s (started by a stopped process)"
        lease.renew()
        time.sleep(ignition.poll)
    return "the CLI started by a stopped process ended without a transcript"


def _mark(store: Store, txn_id: int) -> str:
    return f"{store.path}#{txn_id}"


def _carries(pid: int, entry: str) -> bool:
    """Whether the process `pid` has `entry` in its environment: the CLI a dead driver started
    is killed only when it is surely that one (its pid may have been reused; where the
    environment cannot be read, nothing is killed)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return entry.encode() in handle.read().split(b"\0")
    except OSError:
        return False


def _fail_attempt(
    store: Store,
    lease: Lease,
    txn: Txn,
    error: str,
    ignition: Ignition,
    *,
    target: str | None = None,
) -> None:
    """End an attempt that failed; `target`: the session it started, whose first turn did not
    run (kept, marked as failed, never taken for this handoff's target again)."""
    # When the attempt began (its CLI's start, else the failure): the next one is spaced
    # from it. Back in PREPARING the child column holds only this, and the failed targets.
    began = (txn.child or {}).get("at", ledger.now_ms())
    failed = [*_failed(txn), *([target] if target and target not in _failed(txn) else [])]
    if target is not None:
        error = f"{FAILED_MARK} {target}: {error}"
    with store.transaction():
        _update(
            store,
            txn.id,
            state=State.PREPARING,
            child=orjson.dumps({"lastStart": began, "failed": failed}).decode(),
            last_error=error,
        )
        _audit(
            store,
            "ignite-failed",
            txn.plan,
            txn.id,
            attempt=txn.attempts,
            error=error,
            exhausted=txn.attempts >= ignition.attempts,
            **({"failedTarget": target, "mark": f"{FAILED_MARK} {target}"} if target else {}),
        )
        lease.renew()


def _failed(txn: Txn) -> list[str]:
    """The targets this handoff started whose first turn did not run."""
    return [str(target) for target in (txn.child or {}).get("failed", ())]


def person_env(harness: str) -> dict[str, str]:
    """What the harness `harness` withholds from the processes it starts (its credentials)
    as the person's own run of it has them: read from the nearest ancestor process that has
    them, for a target's CLI (or the detached driver that starts one) to be given in its
    environment only. {} for a harness that withholds nothing."""
    withheld = harnesses.get(harness).launcher.withheld
    return ancestor_env(withheld) if withheld is not None else {}


def _first_turn(
    finder: _Finder,
    ignition: Ignition,
    lease: Lease,
    *,
    process: subprocess.Popen[bytes] | None = None,
    running: bool = False,
) -> str | None:
    """Wait for the first turn of the target `finder` found: None once the model answered it,
    else why it did not run (an error in its log; the CLI ended, or `ignition.timeout` passed,
    with no answer). Waited for while `process` (or, `running`, whatever runs it) runs."""
    deadline = time.monotonic() + ignition.timeout
    while True:
        ended = process.poll() is not None if process is not None else not running
        outcome = first_turn_outcome(finder.events())
        if outcome is not None:
            return None if outcome is ANSWERED else outcome
        if ended:
            return "its first turn ended with no answer from the model"
        if time.monotonic() >= deadline:
            return f"no answer from the model in its first turn after {ignition.timeout:g} s"
        lease.renew()
        time.sleep(ignition.poll)


ANSWERED = "answered"


def first_turn_outcome(events: list[dict[str, Any]]) -> str | None:
    """How a target's first turn went, from its log's events: ANSWERED once the model answered
    (a message or a tool call of the assistant), the error's text when the turn ended in one
    or the harness wrote an error in the model's place (Claude Code's "API Error" message),
    None while neither shows."""
    for event in events:
        kind, data = event.get("type"), event.get("data") or {}
        if kind == "assistant/message" and data.get("error"):
            # The harness's stand-in for a failed request (Claude Code's "API Error: …"):
            # the model never answered.
            error = data["error"]
            code, message = error.get("code"), error.get("message") or "an error"
            return f"its first turn failed: {f'{code}: ' if code else ''}{message}"[:400]
        if kind == "assistant/message" and data.get("synthetic"):
            continue  # the harness's words, not the model's: no answer yet
        if kind in ("assistant/message", "tool/call"):
            return ANSWERED
        if kind == "turn/end":
            reason = data.get("reason") or {}
            if reason.get("kind") != "error":
                return ANSWERED
            error = reason.get("error") or {}
            code, message = error.get("code"), error.get("message") or "an error"
            return f"its first turn failed: {f'{code}: ' if code else ''}{message}"[:400]
    return None


def _verified(store: Store, lease: Lease, txn: Txn, target: str, kind: str, **detail: Any) -> None:
    with store.transaction() as db:
        _update(store, txn.id, state=State.VERIFIED, target_id=target, child=None)
        # A cancel asked too late: its new session showed first (it stays the target).
        db.execute("DELETE FROM meta WHERE key = ?", (f"{CANCEL_KEY}{txn.id}",))
        store.db.execute("UPDATE graft_ledger SET target_id = ? WHERE txn_id = ?", (target, txn.id))
        _audit(store, kind, txn.plan, txn.id, target=target, **detail)
        lease.renew()
    _killpoint(State.VERIFIED)


def _commit(store: Store, lease: Lease, txn: Txn) -> None:
    with store.transaction():
        _retire(store, txn, txn.target_id)
        _update(store, txn.id, state=State.COMMITTED)
        _audit(store, "handoff-committed", txn.plan, txn.id, target=txn.target_id)
        lease.renew()
    _killpoint(State.COMMITTED)


def _retire(store: Store, txn: Txn, target: str | None) -> None:
    store.db.execute(
        "UPDATE graft_ledger SET kind = ?, target_id = ?, at = ? WHERE txn_id = ?",
        (ledger.RETIRED, target, ledger.now_ms(), txn.id),
    )


def _rollback(
    store: Store,
    txn: Txn,
    reason: str,
    end: State = State.ROLLED_BACK,
    *,
    kind: str = "ignite-rollback",
    notice: str = ROLLBACK_NOTICE,
    **detail: Any,
) -> None:
    """Un-retire the source, owe it the notice, and end the handoff (its target failed).

    The store is the only place a source's retirement lives (the hooks read it on every call,
    nothing keeps a copy in memory), so this one transaction is the whole un-retirement. A
    handoff whose target was started (VERIFIED or later) is never rolled back."""
    with store.transaction() as db:
        state = db.execute("SELECT state FROM graft_txns WHERE id = ?", (txn.id,)).fetchone()[0]
        if state not in (State.PREPARING, State.TARGET_STARTED, State.PENDING):
            return
        restored = _unretire(store, txn)
        queued = ledger.queue_notice(store, txn.plan.harness, txn.plan.session_id, txn.id, notice)
        _update(store, txn.id, state=end, child=None, last_error=reason)
        _audit(
            store,
            kind,
            txn.plan,
            txn.id,
            sourceRestored=restored,
            noticeQueued=queued,
            targetFailed=kind == "ignite-rollback",
            reason=reason,
            **detail,
        )
    _killpoint(end)


def cancel(
    store: Store,
    txn_id: int,
    *,
    by: str = "api",
    reason: str | None = None,
    wait_s: float = 15.0,
) -> Txn:
    """Withdraw a handoff whose target has not started: one PENDING (no session picked it up),
    one stuck unfinished (no live process drives it; the CLI a dead driver left is ended), or
    one a live process is starting (it is asked to, and does before its next step: its CLI
    ended before the new session's transcript shows). The source works again and is told so
    once; audited `handoff-cancelled` with `by`.

    GraftError NOT_CANCELLABLE when its target started or it ended; Busy when the live
    process driving it has not withdrawn it within `wait_s` seconds (the request stands)."""
    txn = load(store, txn_id)
    why = reason or "cancelled by a person"
    if txn.state == State.PENDING:
        _rollback(store, txn, why, kind="handoff-cancelled", notice=CANCEL_NOTICE, by=by)
        return load(store, txn_id)
    if txn.state not in UNFINISHED or txn.state == State.VERIFIED:
        committed = txn.state == State.COMMITTED
        raise GraftError(
            NOT_CANCELLABLE,
            f"handoff #{txn_id} is {txn.state}: only a pending or stuck handoff whose target has "
            "not started can be cancelled"
            + (" (a committed source is released instead)" if committed else ""),
        )
    try:
        with store.lease(lease_name(txn_id), wait=0, ttl=60.0):
            txn = load(store, txn_id)
            if txn.state == State.TARGET_STARTED and txn.child is not None:
                pid = int(txn.child["pid"])
                if alive(pid) and _carries(pid, f"{TXN_ENV}={txn.child['mark']}"):
                    kill_group(pid)
            if txn.state in (State.PREPARING, State.TARGET_STARTED) and _Finder(txn).find():
                raise GraftError(
                    NOT_CANCELLABLE,
                    f"handoff #{txn_id}: its target started already (run `dshkit graft recover` "
                    "to commit it, then release the source if it should work again)",
                )
            _rollback(store, txn, why, kind="handoff-cancelled", notice=CANCEL_NOTICE, by=by)
    except LeaseBusy as exc:
        return _ask_driver(store, txn_id, exc.pid, why, by, wait_s)
    return load(store, txn_id)


# A cancel asked of the live process driving a handoff: store meta `<CANCEL_KEY><txn id>`.
CANCEL_KEY = "graft.cancel:"
CANCELLED = "cancelled by a person while its new session was starting"


def cancel_request(store: Store, txn_id: int) -> dict[str, Any] | None:
    """The person's request to withdraw handoff `txn_id` (why, by whom), or None."""
    raw = store.get_meta(f"{CANCEL_KEY}{txn_id}")
    return None if not raw else dict(orjson.loads(raw))


def _cancelled(store: Store, txn: Txn) -> bool:
    """Withdraw the handoff when a person asked to and no target shows (the driver holds the
    lease): rolled back as `cancel` does. Whether it was."""
    asked = cancel_request(store, txn.id)
    if asked is None or _Finder(txn).find() is not None:
        return False
    _rollback(
        store,
        txn,
        str(asked.get("reason") or CANCELLED),
        kind="handoff-cancelled",
        notice=CANCEL_NOTICE,
        by=asked.get("by", "api"),
    )
    with store.transaction() as db:
        db.execute("DELETE FROM meta WHERE key = ?", (f"{CANCEL_KEY}{txn.id}",))
    return True


def _ask_driver(store: Store, txn_id: int, pid: int, why: str, by: str, wait_s: float) -> Txn:
    """Ask the live process driving the handoff to withdraw it (it does before its next
    attempt, or while it waits for the new session's transcript) and wait up to `wait_s`
    seconds for it to: the handoff as it ended, or Busy when it had not yet (the request
    stands: it is withdrawn unless its new session showed first)."""
    with store.transaction():
        store.set_meta(f"{CANCEL_KEY}{txn_id}", orjson.dumps({"reason": why, "by": by}).decode())
        _audit(
            store, "handoff-cancel-requested", load(store, txn_id).plan, txn_id, by=by, driver=pid
        )
    deadline = time.monotonic() + wait_s
    while True:
        txn = load(store, txn_id)
        if txn.state not in UNFINISHED or txn.state == State.VERIFIED:
            if txn.state != State.ROLLED_BACK:  # its new session won the race
                with store.transaction() as db:
                    db.execute("DELETE FROM meta WHERE key = ?", (f"{CANCEL_KEY}{txn_id}",))
                raise GraftError(
                    NOT_CANCELLABLE,
                    f"handoff #{txn_id}: its new session started before the cancel reached "
                    "the process driving it (release the source if it should work again)",
                )
            return txn
        if time.monotonic() >= deadline:
            raise Busy(
                f"handoff #{txn_id} is being driven by the live process {pid}: it was asked to "
                "withdraw it and does so before its next step (unless its new session shows "
                "first); see `dshkit graft handoffs`",
                field="txn",
            )
        time.sleep(0.2)


def release(
    store: Store, harness: str, session_id: str, *, by: str = "api", reason: str | None = None
) -> Txn:
    """Un-retire a source whose handoff committed, on purpose: it takes work again (the target
    stays as it is), is told so once, and the release is audited `source-released`.

    GraftError NOT_RETIRED when the session is not retired (a live handoff is cancelled
    instead)."""
    with store.transaction() as db:
        row = db.execute(
            "SELECT l.txn_id, l.kind FROM graft_ledger l WHERE l.harness = ? AND l.session_id = ?",
            (harness, session_id),
        ).fetchone()
        if row is None or row[1] != ledger.RETIRED:
            state = "not handed off" if row is None else f"{row[1]} (handoff #{row[0]})"
            raise GraftError(
                NOT_RETIRED,
                f"session {session_id} is {state}: only a retired source can be released"
                + ("; cancel the handoff instead" if row is not None else ""),
            )
        txn = load(store, row[0])
        db.execute(
            "DELETE FROM graft_ledger WHERE harness = ? AND session_id = ?", (harness, session_id)
        )
        queued = ledger.queue_notice(store, harness, session_id, txn.id, RELEASE_NOTICE)
        _audit(
            store,
            "source-released",
            txn.plan,
            txn.id,
            by=by,
            reason=reason or "released by a person",
            target=txn.target_id,
            noticeQueued=queued,
        )
    return load(store, txn.id)


def stalled(store: Store, txn: Txn) -> bool:
    """Whether an unfinished handoff has no live process driving it: its driver died holding
    the lease (a zombie is dead), or nobody took the lease and it has not moved for STALL_MS."""
    if txn.state not in UNFINISHED or store.lease_holder(lease_name(txn.id)) is not None:
        return False
    held = bool(store.get_meta(f"lease.{lease_name(txn.id)}"))
    return held or ledger.now_ms() - txn.updated_at >= STALL_MS


def _unretire(store: Store, txn: Txn) -> bool:
    """Clear every mark the source's hooks read for this handoff: its ledger row (back to the
    committed handoff a reslice replaced, if any) and a pending pickup."""
    db = store.db
    db.execute("DELETE FROM graft_pending WHERE txn_id = ?", (txn.id,))
    gone = db.execute("DELETE FROM graft_ledger WHERE txn_id = ?", (txn.id,)).rowcount
    prior = db.execute("SELECT prior FROM graft_txns WHERE id = ?", (txn.id,)).fetchone()[0]
    if prior:
        prior_txn, kind, target_harness, target_id, at = orjson.loads(prior)
        db.execute(
            "INSERT OR REPLACE INTO graft_ledger "
            "(harness, session_id, txn_id, kind, target_harness, target_id, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (txn.plan.harness, txn.plan.session_id, prior_txn, kind, target_harness, target_id, at),
        )
    return gone > 0 and not prior


# -- pending handoffs (no headless start) --------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pending:
    """A handoff waiting for the next session started in its directory."""

    txn_id: int
    source_harness: str
    source_session_id: str
    first_message: str


def pending_for_cwd(store: Store, harness: str, cwd: str) -> Pending | None:
    """The oldest handoff waiting for a `harness` session started in `cwd` (the same directory
    by `dir_key`, however either side spells it), or None."""
    here = dir_key(cwd)
    rows = store.db.execute(
        "SELECT t.id, t.harness, t.session_id, t.plan, p.cwd FROM graft_pending p "
        "JOIN graft_txns t ON t.id = p.txn_id WHERE p.harness = ? ORDER BY p.txn_id",
        (harness,),
    ).fetchall()
    # Both sides through dir_key: rows stored before it keep a normpath spelling (a symlink
    # they were registered through), and waiting handoffs are few.
    row = next((row for row in rows if dir_key(row[4]) == here), None)
    if row is None:
        return None
    return Pending(row[0], row[1], row[2], orjson.loads(row[3])["firstMessage"])


def claim_pending(store: Store, txn_id: int, harness: str, session_id: str) -> str | None:
    """Hand the pending handoff `txn_id` to the session `harness`/`session_id` that just started
    (its hook injects the returned first message), once: the handoff commits with that session
    as its target. None when it was claimed already, or is no longer pending."""
    with store.transaction() as db:
        taken = db.execute(
            "DELETE FROM graft_pending WHERE txn_id = ? AND harness = ?", (txn_id, harness)
        ).rowcount
        if not taken:
            return None
        txn = load(store, txn_id)
        _update(store, txn_id, state=State.COMMITTED, target_id=session_id)
        _retire(store, txn, session_id)
        _audit(store, "handoff-claimed", txn.plan, txn_id, target=session_id)
    return txn.plan.first_message


# -- finding the target ---------------------------------------------------------------------


class _Finder:
    """Finds the target session a handoff started: a transcript of the target harness, written
    since the handoff began, whose first human message carries the handoff's identity and
    whose recorded cwd is the handoff's. Session directories are only read."""

    def __init__(self, txn: Txn) -> None:
        plan = txn.plan
        self.target = plan.target
        self.harness = harnesses.get(plan.target)
        self.identity = plan.identity
        self.cwd = dir_key(plan.cwd)
        # The source, and the targets whose first turn did not run, are never the target.
        self.exclude = {*_failed(txn), *([plan.session_id] if plan.target == plan.harness else [])}
        self.since_ns = (txn.created_at - MTIME_SLACK_MS) * 1_000_000
        self.others: set[str] = set()  # transcripts whose first message is someone else's
        self.path: str | None = None  # the target's transcript, once found

    def events(self) -> list[dict[str, Any]]:
        """The events of the found target's transcript, from its start ([] until found)."""
        if self.path is None:
            return []
        try:
            return list(read_head(self.target, self.path, HEAD_BYTES).events)
        except OSError:
            return []

    def find(self) -> str | None:
        adapter = self.harness.adapter
        for log in adapter.discover(self.harness.sessions_root()):
            if log.session_id in self.exclude or log.path in self.others:
                continue
            try:
                if os.stat(log.path).st_mtime_ns < self.since_ns:
                    continue
                head = read_head(self.target, log.path, HEAD_BYTES)
            except OSError:
                continue
            identity = session_identity(head.events)
            if identity is None:
                if human_messages(head.events):
                    self.others.add(log.path)
                continue
            if identity == self.identity and self._here(head.cwd):
                self.path = log.path
                return str(log.session_id)
        return None

    def _here(self, cwd: str | None) -> bool:
        # A log that records no cwd is judged by its identity alone.
        return not cwd or dir_key(cwd) == self.cwd


# -- helpers ----------------------------------------------------------------------------------


def _update(store: Store, txn_id: int, **values: Any) -> None:
    values["updated_at"] = ledger.now_ms()
    assignments = ", ".join(f"{name} = ?" for name in values)
    store.db.execute(
        f"UPDATE graft_txns SET {assignments} WHERE id = ?",
        (*(str(v) if isinstance(v, State) else v for v in values.values()), txn_id),
    )


def _audit(store: Store, kind: str, plan: Plan, txn_id: int, **detail: Any) -> None:
    ledger.audit(
        store, kind, harness=plan.harness, session_id=plan.session_id, txn_id=txn_id, **detail
    )


def _tail(stream: IO[bytes], limit: int = 400) -> str:
    """The end of the CLI's error output, to say why an attempt failed."""
    size = stream.seek(0, os.SEEK_END)
    stream.seek(max(0, size - limit))
    text = stream.read().decode(errors="replace").strip()
    return f": {text}" if text else ""


LEASE_PREFIX = "graft-txn-"


def lease_name(txn_id: int) -> str:
    return f"{LEASE_PREFIX}{txn_id}"


def _ttl(ignition: Ignition) -> float:
    # Renewed at every step and while waiting: it must outlast the longest single wait.
    return ignition.timeout + 60.0


def _killpoint(name: str) -> None:
    if os.environ.get(KILL_AFTER_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def outcome_counts(store: Store) -> dict[str, int]:
    """Handoffs by state, and the ledger's transferring / retired sources (debug-status)."""
    counts = {str(s): 0 for s in State}
    for state, count in store.db.execute(
        "SELECT state, count(*) FROM graft_txns GROUP BY state"
    ).fetchall():
        counts[state] = count
    for kind, count in store.db.execute(
        "SELECT kind, count(*) FROM graft_ledger GROUP BY kind"
    ).fetchall():
        counts[kind] = count
    return counts
