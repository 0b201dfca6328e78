"""Graft at a live session's hooks: the watermark every step, retirement, notices, pickups.

What the hooks ask, answered from the store and the session's own transcript
(docs/design/graft.md#the-hooks-watch-every-step):

- `watch`: after each tool call and at each prompt, the new part of the transcript is folded
  into the session's digest (`watermark.Digest`, kept in `graft_watch` with the decisions'
  state) and the watermark decides: a nudge or an escalation is told to the model once per
  turn (its state saved only once the text was delivered), the plan-first nudge once per
  session, and a forced cut starts the handoff itself in a detached process.
- `retired`: a source that is transferring or retired takes no new prompt and no tool call;
  the pointer names where the work went.
- `notices`: what a session is owed once (the rollback notice).
- `pickup`: a session started where a handoff waits for one (no headless start) receives it.

Every decision that reaches the model is audited (`model-nudge`, `nudge-escalation`,
`force-graft`, …) when it is delivered, not when it is computed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import orjson

from .. import harnesses
from ..sessions.tail import read_tail
from ..store import Store
from .identity import Identity
from .settings import GraftSettings
from .texts import naming
from .watermark import PROTECTED_TURNS, Decision, Digest, GraftState, decide_digest

CONSUMER = "graft"  # this capability's cursor over live transcripts (sessions.tail)
_AUDITED = {"nudge": "model-nudge", "escalate": "nudge-escalation", "plan": "plan-nudge"}
FORCE_TEXT = (
    "[dshkit 交接] 上下文已到强制切断水位，系统正在把工作交接给一个新会话。"
    "请不要再调用工具，用一两句话说明你停在了哪里，然后结束本轮。"
)


def force_failed_text(error: str, retry_in_s: float) -> str:
    """What the model is told when the forced handoff it was asked to stop for failed."""
    minutes = max(1, round(retry_in_s / 60))
    return (
        f"[dshkit 交接] 刚才的强制切断没有完成，原因：{error}。本会话没有被交接，"
        f"请忽略“不要再调用工具”的要求，继续当前的工作；系统约 {minutes} 分钟后会再试一次。"
    )


class Watch:
    """The watermark's answer for one step: the decision, the text for the model (None when
    there is nothing to say), and what to record once that text was delivered (a plain class:
    building a dataclass costs the hot path more than the class is worth)."""

    __slots__ = ("commit", "decision", "text")

    def __init__(
        self, decision: Decision, text: str | None, commit: Callable[[Store], None]
    ) -> None:
        self.decision, self.text = decision, text
        self.commit = commit  # given a store open at the time of the call


def watch(
    store: Store,
    harness: str,
    session_id: str,
    transcript_path: str,
    settings: GraftSettings,
    state_dir: str,
) -> Watch:
    """Fold the transcript's new events and decide (see the module docstring)."""
    with store.transaction() as db:
        tail = read_tail(store, transcript_path, harness, consumer=CONSUMER)
        row = db.execute(
            "SELECT digest, state, forced_at FROM graft_watch WHERE harness = ? AND session_id = ?",
            (harness, session_id),
        ).fetchone()
        digest = Digest() if row is None or tail.reset else Digest.from_json(orjson.loads(row[0]))
        state = GraftState() if row is None else GraftState.from_json(orjson.loads(row[1]))
        forced_at = None if row is None else row[2]
        digest.extend(tail.events)
        _save(db, harness, session_id, digest=digest, state=state)
    watched = _decide(
        store, harness, session_id, transcript_path, settings, state_dir, digest, state, forced_at
    )
    failed = None
    if forced_at is not None:  # only a session a forced cut was started for can have failed
        from . import ledger

        failed = ledger.force_failure(
            store, harness, session_id, settings.force_retry_s, settings.force_retry_cap_s
        )
    if failed is None or failed.told:
        return watched
    # The model was told to stop for a cut that did not happen: tell it to carry on, once
    # (unless a new cut is due right now: its own words say what to do).
    retry_in = max(0.0, (failed.retry_at - ledger.now_ms()) / 1000)
    note = force_failed_text(failed.error, retry_in)
    if watched.decision.action == "force" and watched.text is not None:
        text = watched.text
    else:
        text = note if watched.text is None else f"{note}\n\n{watched.text}"

    def told(store: Store) -> None:
        with store.transaction():
            ledger.mark_force_told(store, harness, session_id)
        watched.commit(store)

    return Watch(watched.decision, text, told)


def _decide(
    store: Store,
    harness: str,
    session_id: str,
    transcript_path: str,
    settings: GraftSettings,
    state_dir: str,
    digest: Digest,
    state: GraftState,
    forced_at: int | None,
) -> Watch:
    """The watermark's decision on the session's digest and state, and what it says."""
    decision = decide_stored(store, harness, session_id, digest, state, settings)
    new_state = replace(decision.state, migrated=False)
    action = decision.action
    if action == "force":
        from . import ledger  # (here and below: a check with nothing to say needs none)

        now = ledger.now_ms()
        if forced_at is not None and now - forced_at < settings.force_retry_s * 1000:
            return Watch(decision, None, _nothing)
        failed = ledger.force_failure(
            store, harness, session_id, settings.force_retry_s, settings.force_retry_cap_s
        )
        if failed is not None and now < failed.retry_at:
            return Watch(decision, None, _nothing)  # backing off after failed cuts

        def force(store: Store) -> None:
            from ..procs import spawn_detached  # only when a cut is due: off the hot path
            from .lifecycle import person_env
            from .marker import mark

            # Before the handoff (detached) begins: the end of this turn asks where it went.
            mark(state_dir)

            with store.transaction() as db:
                _save(db, harness, session_id, state=new_state, forced_at=now)
                ledger.audit(
                    store,
                    "force-graft",
                    harness=harness,
                    session_id=session_id,
                    reason=decision.reason,
                    pressure=decision.pressure.as_json(),
                    mark=decision.mark,
                )
            forced = (
                ["--forced-mark", orjson.dumps(decision.mark).decode()] if decision.mark else []
            )
            spawn_detached(
                "graft",
                "slice",
                "--session",
                session_id,
                "--harness",
                harness,
                "--transcript",
                transcript_path,
                "--state-dir",
                state_dir,
                "--forced",
                *forced,
                # What the harness withheld from this hook (its credentials), for the target
                # the cut starts: read now, while the harness is this process's ancestor.
                env=person_env(harness),
            )

        return Watch(decision, FORCE_TEXT, force)
    if decision.text is None:
        if new_state != state:
            with store.transaction() as db:
                _save(db, harness, session_id, state=new_state)
        return Watch(decision, None, _nothing)

    def delivered(store: Store) -> None:
        from . import ledger

        with store.transaction() as db:
            _save(db, harness, session_id, state=new_state)
            ledger.audit(
                store,
                _AUDITED[action],
                harness=harness,
                session_id=session_id,
                reason=decision.reason,
                ratio=decision.pressure.ratio,
            )

    text = decision.text
    if action in ("nudge", "escalate"):
        text = naming(text, session_id)
    return Watch(decision, text, delivered)


def decide_stored(
    store: Store,
    harness: str,
    session_id: str,
    digest: Digest,
    state: GraftState,
    settings: GraftSettings,
) -> Decision:
    """The decision on a digest with the session's stored state, as its hooks make it: with no
    forced cut when a person excluded the session from it, handed off already by the ledger
    (a rolled-back or released handoff frees it again), and born from a handoff by what it
    received, where its log keeps no identity (hook context)."""
    from .marker import EXCLUDE_KEY  # (ledger.excluded, without loading the ledger)

    if store.get_meta(f"{EXCLUDE_KEY}{harness}:{session_id}") is not None:
        # A person kept it from the forced cut: as with no forced cut at all, its warning band
        # runs to the end (docs/design/graft.md#a-person-may-keep-a-session-from-the-cut).
        settings = replace(settings, forced=False)
    if not _ever_begun(store):  # no handoff ever began here: none handed this one off or in
        return decide_digest(digest, settings, replace(state, migrated=False))
    from . import ledger

    migrated = ledger.retirement(store, harness, session_id) is not None
    if digest.identity is None and digest.ordinal <= PROTECTED_TURNS:
        got = ledger.received(store, harness, session_id)
        if got is not None:
            digest = replace(digest, identity=Identity.from_json(got[0]))
    return decide_digest(digest, settings, replace(state, migrated=migrated))


def _nothing(store: Store) -> None:
    pass


def _save(
    db: Any,
    harness: str,
    session_id: str,
    *,
    digest: Digest | None = None,
    state: GraftState | None = None,
    forced_at: int | None = None,
) -> None:
    """Upsert what is given of the session's watch row (inside the caller's transaction)."""
    now = int(time.time() * 1000)  # (ledger.now_ms, without importing the ledger)
    db.execute(
        "INSERT INTO graft_watch (harness, session_id, digest, state, forced_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (harness, session_id) DO UPDATE SET "
        "digest = COALESCE(?, digest), state = COALESCE(?, state), "
        "forced_at = COALESCE(?, forced_at), updated_at = excluded.updated_at",
        (
            harness,
            session_id,
            _dump(digest or Digest()),
            _dump(state or GraftState()),
            forced_at,
            now,
            None if digest is None else _dump(digest),
            None if state is None else _dump(state),
            forced_at,
        ),
    )


def _dump(value: Digest | GraftState) -> str:
    return orjson.dumps(value.as_json()).decode()


class Notice:
    """Text a session is owed (a notice, a waiting handoff), and how to record that it was
    delivered."""

    __slots__ = ("commit", "text")

    def __init__(self, text: str, commit: Callable[[Store], None]) -> None:
        self.text, self.commit = text, commit


def notices(store: Store, harness: str, session_id: str) -> Notice | None:
    """What the session is owed once (a rolled-back handoff's notice), or None."""
    from . import ledger

    owed = ledger.owed_notices(store, harness, session_id)
    if owed is None:
        return None

    def shown(store: Store) -> None:
        ledger.mark_shown(store, harness, session_id, owed.txn_ids)

    return Notice(owed.text, shown)


def retired(store: Store, harness: str, session_id: str) -> str | None:
    """The pointer a transferring or retired source answers new work with, or None."""
    from . import ledger

    found = ledger.retirement(store, harness, session_id)
    return None if found is None else found.pointer()


def driver_gone(store: Store, harness: str, session_id: str) -> bool:
    """Whether this transferring source's handoff has no live process driving it (its driver
    was killed, or never started): its own hook then starts a recovery at once, instead of
    the source waiting blocked for a session to start somewhere."""
    from . import ledger
    from .lifecycle import load, stalled  # only for a source that is transferring

    found = ledger.retirement(store, harness, session_id)
    if found is None or found.kind != ledger.TRANSFERRING or found.pending:
        return False
    return stalled(store, load(store, found.txn_id))


RECOVERING = (
    "推动这次交接的进程已经停止，系统已立即开始恢复：新会话会被启动，"
    "或者交接被撤销、本会话恢复可用。"
)


def pickup(store: Store, harness: str, session_id: str, cwd: str) -> Notice | None:
    """The first message of a handoff waiting for a session started in `cwd`, and the commit
    that hands it to this session once the message was delivered (a failed delivery leaves it
    waiting for the next session, rather than lost), or None."""
    if not harnesses.HARNESSES.get(harness) or not cwd or not _ever_begun(store):
        return None
    from .lifecycle import claim_pending, pending_for_cwd  # not on the per-tool-call path

    pending = pending_for_cwd(store, harness, cwd)
    if pending is None or pending.source_session_id == session_id:
        return None

    def claimed(store: Store) -> None:
        claim_pending(store, pending.txn_id, harness, session_id)

    return Notice(pending.first_message, claimed)


def recovery_due(store: Store) -> bool:
    """Whether an unfinished handoff waits with no live process driving it (a start should
    run `dshkit graft recover`, detached)."""
    if not _ever_begun(store):
        return False
    from .lifecycle import UNFINISHED, lease_name, transactions  # not on the per-tool-call path

    return any(
        store.lease_holder(lease_name(txn.id)) is None for txn in transactions(store, UNFINISHED)
    )


def _ever_begun(store: Store) -> bool:
    """Whether a handoff ever began in this store's state directory (`marker.used`: written
    before the first one's ledger row): without one nothing waits, and the lifecycle (with
    its imports) is not loaded on a prompt or a session's start."""
    from .marker import used

    return used(str(store.state_dir))


# -- after a forced cut: where the work went, for the person ------------------------------------

FORCED_HEAD = "[dshkit 交接] 上下文到了强制切断水位，"
# A forced cut is reported at the end of the turn it cut; one older than this is not reported
# as under way (its turn ended long ago: the pointer and `graft status` say where it went).
REPORT_WINDOW_MS = 10 * 60 * 1000
RELAY = (
    "[dshkit 交接] 请把下面这段话原样转告用户（它说明工作交接到了哪里），不要调用任何工具，"
    "说完就结束本轮：\n"
)


def forced_report(
    store: Store, harness: str, session_id: str, wait_s: float, poll_s: float = 0.2
) -> Notice | None:
    """Where the work of the session's forced cut went, in the person's words, once per
    handoff (None: no forced cut, or told already): the target and the command to go on
    there, or where it waits, or that it was rolled back. The handoff runs detached: it is
    waited for up to `wait_s` seconds to begin and to settle (its target known, or ended);
    still starting then, it says so with how to look and how to cancel
    (docs/design/graft.md#after-a-forced-cut-the-person-is-told-where-the-work-went)."""
    from ..store import GRAFT_PERSON_DELIVERY
    from .lifecycle import UNFINISHED, State, load

    row = store.db.execute(
        "SELECT forced_at, force_error_at FROM graft_watch WHERE harness = ? AND session_id = ?",
        (harness, session_id),
    ).fetchone()
    if row is None or row[0] is None:
        return None
    forced_at = int(row[0])
    # A cut that failed before its handoff began is told to the model (`force_failed_text`),
    # and one long past left its report to the turn it ended: neither is under way now.
    failed_since = row[1] is not None and int(row[1]) >= forced_at
    if time.time() * 1000 - forced_at > REPORT_WINDOW_MS:
        return None
    deadline = time.monotonic() + wait_s
    while True:
        found = store.db.execute(
            "SELECT id FROM graft_txns WHERE harness = ? AND session_id = ? AND created_at >= ? "
            "ORDER BY id DESC LIMIT 1",
            (harness, session_id, forced_at),
        ).fetchone()
        late = time.monotonic() >= deadline
        if found is not None:
            txn = load(store, found[0])
            if store.delivered((harness, session_id), GRAFT_PERSON_DELIVERY, str(txn.id)):
                return None
            settled = txn.target_id is not None or txn.state not in UNFINISHED
            if settled or late:
                break
        elif failed_since:
            return None
        elif late:
            # The detached handoff has not begun yet: say where to look, once per cut.
            what = f"forced-{forced_at}"
            if store.delivered((harness, session_id), GRAFT_PERSON_DELIVERY, what):
                return None
            text = (
                f"{FORCED_HEAD}工作正在交接给一个新会话。新会话的 id 和继续工作的命令请用 "
                f"dshkit graft status --session {session_id} 查看。"
            )
            return _told(text, harness, session_id, what)
        # (never past the deadline: the handler's budget is the wait and little more)
        time.sleep(max(0.0, min(poll_s, deadline - time.monotonic())))
    if txn.state in (State.ROLLED_BACK, State.FAILED):
        text = (
            f"{FORCED_HEAD}但这次交接没有完成（交接 #{txn.id}：{txn.last_error or '未知原因'}），"
            "已撤销：本会话恢复可用，工作就在这里继续。"
        )
    else:
        from . import ledger

        found_retirement = ledger.retirement(store, harness, session_id)
        if found_retirement is None:  # released or cancelled since: it works again
            text = f"{FORCED_HEAD}交接 #{txn.id} 已被撤销或释放：本会话恢复可用。"
        else:
            pointer = found_retirement.pointer()
            text = FORCED_HEAD + pointer.removeprefix("[dshkit 交接] ")
            if txn.target_id is None and txn.state != State.PENDING:
                text += f"；查看去向：dshkit graft status --session {session_id}"
    return _told(text, harness, session_id, str(txn.id))


def _told(text: str, harness: str, session_id: str, what: str) -> Notice:
    """`text` for the person, recorded as told (`what`) once it was delivered."""
    from ..store import GRAFT_PERSON_DELIVERY

    def told(store: Store) -> None:
        store.mark_delivered((harness, session_id), GRAFT_PERSON_DELIVERY, what)

    return Notice(text, told)
