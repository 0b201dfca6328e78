"""The handoff lifecycle with a real (fake) Claude Code CLI: start, verify, commit, roll back."""

from __future__ import annotations

import dataclasses
import itertools
import os
import stat
import time
from typing import Any

import pytest

from dshkit.errors import Busy, NotFound, Refused
from dshkit.graft import ledger
from dshkit.graft.identity import Identity
from dshkit.graft.ledger import audit, audit_records, retirement
from dshkit.graft.lifecycle import (
    ANSWERED,
    BAD_PLAN,
    CANCEL_NOTICE,
    FAILED_MARK,
    NOT_CANCELLABLE,
    NOT_RETIRED,
    RELEASE_NOTICE,
    ROLLBACK_NOTICE,
    SOURCE_ALREADY_MIGRATED,
    GraftError,
    HandoffNotFound,
    Ignition,
    Plan,
    State,
    begin,
    cancel,
    cancel_request,
    claim_pending,
    drive,
    first_turn_outcome,
    handoff,
    lease_name,
    load,
    outcome_counts,
    pending_for_cwd,
    recover,
    release,
)
from dshkit.store import SCHEMA_VERSION, Store, StoreError

from ..support.graft_driver import FAST, World, gone, plan_for, take_notice

HANGS = Ignition(timeout=1, poll=0.05)  # a hung CLI is given up on quickly


def kinds(store: Store) -> list[str]:
    return [record.kind for record in audit_records(store)]


@pytest.mark.process
def test_happy_path_starts_verifies_and_retires(world: World, store: Store) -> None:
    plan = plan_for("source-1", str(world.cwd))
    txn = handoff(store, plan, ignition=FAST)

    assert txn.state == State.COMMITTED and txn.target_id is not None
    assert world.targets(plan.identity) == [txn.target_id]
    assert txn.attempts == 1 and len(world.calls()) == 1
    retired = retirement(store, "claude", "source-1")
    assert retired is not None and retired.kind == ledger.RETIRED
    assert retired.target_id == txn.target_id and not retired.pending
    # What a person types to go on there: the harness's own interactive resume.
    assert retired.command == f"cd {world.cwd} && claude --resume {txn.target_id}"
    assert txn.target_id in retired.pointer()
    assert retirement(store, "claude", txn.target_id or "") is None  # the target works
    assert take_notice(store, "claude", "source-1") is None
    assert kinds(store) == ["handoff-begin", "ignite", "handoff-committed"]
    assert outcome_counts(store)["COMMITTED"] == 1


def test_source_is_blocked_from_the_start(world: World, store: Store) -> None:
    txn = begin(store, plan_for("source-1", str(world.cwd)))

    blocked = retirement(store, "claude", "source-1")
    assert blocked is not None and blocked.kind == ledger.TRANSFERRING
    assert blocked.txn_id == txn.id and blocked.target_id is None and blocked.command is None
    assert "交接" in blocked.pointer()


@pytest.mark.process
def test_ignition_exhausted_rolls_back_once(world: World, store: Store) -> None:
    world.script("hang", "hang", "hang")
    plan = plan_for("source-1", str(world.cwd))
    txn = handoff(store, plan, ignition=HANGS)

    assert txn.state == State.ROLLED_BACK and txn.attempts == 3 and txn.target_id is None
    assert retirement(store, "claude", "source-1") is None  # the source works again
    assert take_notice(store, "claude", "source-1") == ROLLBACK_NOTICE
    assert take_notice(store, "claude", "source-1") is None  # told once
    calls = world.calls()
    assert [step for _, step in calls] == ["hang"] * 3
    assert all(gone(pid) for pid, _ in calls)  # each hung CLI's group was killed
    assert world.targets(plan.identity) == []
    assert kinds(store) == ["handoff-begin", *["ignite-failed"] * 3, "ignite-rollback"]
    records = audit_records(store)
    assert [r.detail["exhausted"] for r in records[1:4]] == [False, False, True]
    assert records[-1].detail["sourceRestored"] is True
    assert records[-1].detail["noticeQueued"] is True
    assert records[-1].detail["targetFailed"] is True
    # Nothing left for recovery to do, and it does not roll back twice.
    assert recover(store, HANGS) == []
    assert take_notice(store, "claude", "source-1") is None


@pytest.mark.process
def test_fail_once_then_succeed_commits(world: World, store: Store) -> None:
    world.script("fail", "ok")
    txn = handoff(store, plan_for("source-1", str(world.cwd)), ignition=FAST)

    assert txn.state == State.COMMITTED and txn.attempts == 2
    assert kinds(store) == ["handoff-begin", "ignite-failed", "ignite", "handoff-committed"]
    failed = audit_records(store)[1]
    assert "exited with 1" in failed.detail["error"]
    assert "the API is unreachable" in failed.detail["error"]  # the CLI's own words
    assert take_notice(store, "claude", "source-1") is None


@pytest.mark.process
def test_a_target_whose_first_turn_did_not_run_is_no_target(world: World, store: Store) -> None:
    # Its transcript shows the handoff's first message, but the model never answered (the
    # seed's P0: a target without credentials): the source must not retire for it.
    world.script("mute", "ok")
    plan = plan_for("source-1", str(world.cwd))
    txn = handoff(store, plan, ignition=FAST)

    assert txn.state == State.COMMITTED and txn.attempts == 2
    failed = audit_records(store)[1]
    assert failed.kind == "ignite-failed"
    # Both sessions are kept; the one that never answered is marked, never the target.
    assert sorted(world.targets(plan.identity)) == sorted(
        [txn.target_id, failed.detail["failedTarget"]]
    )
    assert txn.target_id != failed.detail["failedTarget"]
    assert failed.detail["mark"] == f"{FAILED_MARK} {failed.detail['failedTarget']}"
    assert "no answer from the model" in failed.detail["error"]
    assert "no credentials for the API" in failed.detail["error"]  # the CLI's own words
    assert kinds(store) == ["handoff-begin", "ignite-failed", "ignite", "handoff-committed"]


@pytest.mark.process
def test_targets_that_never_answer_roll_the_handoff_back(world: World, store: Store) -> None:
    world.script("mute", "mute", "mute")
    plan = plan_for("source-1", str(world.cwd))
    txn = handoff(store, plan, ignition=FAST)

    assert txn.state == State.ROLLED_BACK and txn.attempts == 3 and txn.target_id is None
    assert retirement(store, "claude", "source-1") is None  # the source works again
    assert take_notice(store, "claude", "source-1") == ROLLBACK_NOTICE
    failed = world.targets(plan.identity)
    assert len(failed) == 3  # kept, each marked where dshkit names it
    assert all(f"{FAILED_MARK} {target}" in str(txn.last_error) for target in failed)
    rollback = audit_records(store)[-1]
    assert rollback.kind == "ignite-rollback" and sorted(
        rollback.detail["failedTargets"]
    ) == sorted(failed)
    assert all(gone(pid) for pid, _ in world.calls())
    assert recover(store, FAST) == []  # nothing left, and the failed targets are not adopted


def test_a_first_turn_is_read_from_its_events() -> None:
    user = {"type": "user/message", "data": {"source": {"kind": "user"}}}
    assert first_turn_outcome([user]) is None  # still running
    assert first_turn_outcome([user, {"type": "assistant/message", "data": {}}]) == ANSWERED
    assert first_turn_outcome([user, {"type": "tool/call", "data": {}}]) == ANSWERED
    done = {"type": "turn/end", "data": {"reason": {"kind": "completed"}}}
    assert first_turn_outcome([user, done]) == ANSWERED
    # DSH rc.8 with no key (run for real): the turn ends in an error, nothing answered.
    error = {
        "type": "turn/end",
        "data": {
            "turn": 1,
            "reason": {
                "kind": "error",
                "error": {"message": "llm-deepseek: no API key", "code": "MISSING_CREDENTIAL"},
            },
        },
    }
    said = first_turn_outcome([user, error])
    assert said is not None and said != ANSWERED
    assert "MISSING_CREDENTIAL: llm-deepseek: no API key" in said


@pytest.mark.process
def test_a_started_target_is_never_started_twice(world: World, store: Store) -> None:
    plan = plan_for("source-1", str(world.cwd))
    world.run_cli(plan.first_message, world.cwd)  # delivered once already
    [existing] = world.targets(plan.identity)

    txn = handoff(store, plan, ignition=FAST)

    assert txn.state == State.COMMITTED and txn.target_id == existing
    assert len(world.calls()) == 1 and txn.attempts == 0
    assert kinds(store) == ["handoff-begin", "ignite-skipped", "handoff-committed"]


@pytest.mark.process
def test_a_session_in_another_directory_is_not_the_target(world: World, store: Store) -> None:
    plan = plan_for("source-1", str(world.cwd))
    elsewhere = world.cwd.parent / "elsewhere"
    elsewhere.mkdir()
    world.run_cli(plan.first_message, elsewhere)

    txn = handoff(store, plan, ignition=FAST)

    assert txn.state == State.COMMITTED and len(world.calls()) == 2
    assert world.targets(plan.identity) == [txn.target_id]


@pytest.mark.process
def test_second_handoff_of_a_source_is_refused(world: World, store: Store) -> None:
    first = handoff(store, plan_for("source-1", str(world.cwd)), ignition=FAST)
    assert first.state == State.COMMITTED

    with pytest.raises(GraftError) as refused:
        begin(store, plan_for("source-1", str(world.cwd), boundary=50))
    assert refused.value.code == SOURCE_ALREADY_MIGRATED

    again = handoff(
        store, plan_for("source-1", str(world.cwd), boundary=50), allow_reslice=True, ignition=FAST
    )
    assert again.state == State.COMMITTED and again.target_id != first.target_id
    retired = retirement(store, "claude", "source-1")
    assert retired is not None and retired.target_id == again.target_id


def test_a_live_handoff_refuses_even_a_reslice(world: World, store: Store) -> None:
    begin(store, plan_for("source-1", str(world.cwd)), ignite=False)
    with pytest.raises(GraftError) as refused:
        begin(store, plan_for("source-1", str(world.cwd), boundary=50), allow_reslice=True)
    assert refused.value.code == SOURCE_ALREADY_MIGRATED


@pytest.mark.process
def test_failed_reslice_restores_the_earlier_retirement(world: World, store: Store) -> None:
    first = handoff(store, plan_for("source-1", str(world.cwd)), ignition=FAST)
    world.script("ok", "hang", "hang", "hang")

    again = handoff(
        store, plan_for("source-1", str(world.cwd), boundary=50), allow_reslice=True, ignition=HANGS
    )

    assert again.state == State.ROLLED_BACK
    retired = retirement(store, "claude", "source-1")
    assert retired is not None and retired.kind == ledger.RETIRED
    assert (retired.txn_id, retired.target_id) == (first.id, first.target_id)
    assert audit_records(store)[-1].detail["sourceRestored"] is False


def test_pending_handoff_is_handed_out_once(world: World, store: Store) -> None:
    plan = plan_for("source-1", str(world.cwd))
    txn = handoff(store, plan, ignite=False)

    assert txn.state == State.PENDING and world.calls() == []
    waiting = retirement(store, "claude", "source-1")
    assert waiting is not None and waiting.pending and waiting.target_id is None
    assert waiting.command == f"cd {world.cwd} && claude"
    assert pending_for_cwd(store, "codex", str(world.cwd)) is None
    assert pending_for_cwd(store, "claude", str(world.cwd.parent)) is None
    pending = pending_for_cwd(store, "claude", f"{world.cwd}/")
    assert pending is not None and pending.txn_id == txn.id
    assert pending.source_session_id == "source-1"
    assert recover(store, FAST) == []  # waiting for a session is not unfinished work

    assert claim_pending(store, txn.id, "claude", "new-session") == plan.first_message
    assert claim_pending(store, txn.id, "claude", "another") is None
    assert pending_for_cwd(store, "claude", str(world.cwd)) is None
    assert load(store, txn.id).state == State.COMMITTED
    retired = retirement(store, "claude", "source-1")
    assert retired is not None and retired.target_id == "new-session"
    assert kinds(store) == ["handoff-begin", "handoff-claimed"]


def test_cancelled_pending_handoff_frees_the_source(world: World, store: Store) -> None:
    txn = handoff(store, plan_for("source-1", str(world.cwd)), ignite=False)

    assert cancel(store, txn.id).state == State.ROLLED_BACK
    assert retirement(store, "claude", "source-1") is None
    assert pending_for_cwd(store, "claude", str(world.cwd)) is None
    notice = take_notice(store, "claude", "source-1")
    assert notice is not None and "撤销" in notice
    with pytest.raises(GraftError):
        cancel(store, txn.id)


def test_an_unknown_handoff_is_not_found_not_refused(world: World, store: Store) -> None:
    # A number no handoff has is the caller's bad input (each surface says it as such: exit
    # 2, HTTP 404), not a rule refusing a handoff that exists.
    begin(store, plan_for("source-1", str(world.cwd)), ignite=False)
    for call in (load, cancel, lambda store, txn_id: drive(store, txn_id, FAST)):
        with pytest.raises(HandoffNotFound) as missing:
            call(store, 999)
        assert isinstance(missing.value, NotFound) and not isinstance(missing.value, Refused)
        assert missing.value.field == "txn" and missing.value.message == "no handoff #999"
    assert world.calls() == []  # nothing was started for it


def test_vanished_directory_fails_the_handoff(world: World, store: Store) -> None:
    txn = begin(store, plan_for("source-1", str(world.cwd)))
    world.cwd.rmdir()

    [ended] = recover(store, FAST)

    assert ended.id == txn.id and ended.state == State.FAILED
    assert retirement(store, "claude", "source-1") is None
    assert take_notice(store, "claude", "source-1") == ROLLBACK_NOTICE


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"first_message": "no identity here"}, "does not carry the identity line"),
        ({"cwd": "relative/dir"}, "not an existing absolute directory"),
        ({"harness": "vim"}, "unknown harness 'vim'"),
        ({"session_id": "someone-else"}, "the identity names source"),
        ({"first_message": "x" * 100_001}, "a command line carries at most 100000"),
    ],
)
def test_bad_plans_are_refused_before_anything_is_stored(
    world: World, store: Store, change: dict[str, str], message: str
) -> None:
    good = plan_for("source-1", str(world.cwd))
    values = {
        "harness": good.harness,
        "session_id": good.session_id,
        "cwd": good.cwd,
        "first_message": good.first_message,
        "identity": good.identity,
        "card": good.card,
    }
    if "first_message" in change and len(change["first_message"]) > 1000:
        change = {"first_message": good.first_message + change["first_message"]}
    plan = Plan(**{**values, **change})  # type: ignore[arg-type]

    with pytest.raises(GraftError, match=message) as refused:
        begin(store, plan)
    assert refused.value.code == BAD_PLAN
    assert store.db.execute("SELECT count(*) FROM graft_txns").fetchone()[0] == 0
    assert retirement(store, "claude", "source-1") is None


def test_audit_records_filter_and_limit(store: Store) -> None:
    audit(store, "model-nudge", harness="claude", session_id="a", ratio=0.71)
    audit(store, "command-blocked", harness="claude", session_id="b", command="rm -rf /")
    audit(store, "force-graft", harness="claude", session_id="a")

    assert [r.kind for r in audit_records(store, session="a")] == ["model-nudge", "force-graft"]
    assert [r.kind for r in audit_records(store, limit=1)] == ["force-graft"]
    assert audit_records(store, session="b")[0].detail == {"command": "rm -rf /"}
    assert audit_records(store)[0].as_json()["sessionId"] == "a"
    with pytest.raises(ValueError, match="limit must be between 1 and 10000"):
        audit_records(store, limit=0)
    with pytest.raises(ValueError, match="needs a kind"):
        audit(store, "")


def test_notices_are_owed_once_per_handoff(store: Store) -> None:
    assert ledger.queue_notice(store, "claude", "s", 1, "一") is True
    assert ledger.queue_notice(store, "claude", "s", 1, "一") is False
    assert ledger.queue_notice(store, "claude", "s", 2, "二") is True
    assert take_notice(store, "claude", "other") is None
    assert take_notice(store, "claude", "s") == "一\n二"
    assert take_notice(store, "claude", "s") is None


def test_store_keeps_the_lifecycle_tables_private(world: World, store: Store) -> None:
    tables = {
        row[0] for row in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    assert {"graft_txns", "graft_ledger", "graft_pending", "graft_notices", "graft_audit"} <= tables
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600


def test_a_newer_store_is_refused_before_its_handoffs_are_read(world: World) -> None:
    with Store(world.state) as store:
        begin(store, plan_for("source-1", str(world.cwd)))
        store.db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer dshkit"):
        Store(world.state)


def test_identity_round_trips_through_the_stored_plan(world: World, store: Store) -> None:
    plan = plan_for("source-1", str(world.cwd))
    txn = begin(store, plan)
    assert load(store, txn.id).plan == plan
    assert load(store, txn.id).plan.identity == Identity("source-1", 42, 1)


@pytest.mark.process
def test_attempts_are_spaced_from_the_start_of_the_one_before(world: World, store: Store) -> None:
    world.script("fail", "fail", "ok")  # instant failures: back to back without spacing
    spaced = Ignition(timeout=30, poll=0.05, spacing=1.5)
    txn = handoff(store, plan_for("source-1", str(world.cwd)), ignition=spaced)

    assert txn.state == State.COMMITTED and txn.attempts == 3
    began = [call["began"] for call in world.call_args()]
    assert len(began) == 3
    # Each CLI's own start lags its launch by its interpreter's start-up, which varies a
    # little: a margin well under the spacing, and far above back to back (about 0.2 s).
    assert all(later - earlier >= 1.0 for earlier, later in itertools.pairwise(began))


@pytest.mark.process
def test_the_target_starts_on_the_sources_model_and_mode(world: World, store: Store) -> None:
    plan = dataclasses.replace(
        plan_for("source-1", str(world.cwd)), model="claude-opus-test", mode="acceptEdits"
    )
    txn = handoff(store, plan, ignition=FAST)

    assert txn.state == State.COMMITTED
    [call] = world.call_args()
    assert call["options"] == {"--model": "claude-opus-test", "--permission-mode": "acceptEdits"}
    shown = txn.as_json()
    assert (shown["model"], shown["mode"]) == ("claude-opus-test", "acceptEdits")
    assert shown["continueCommand"] == f"cd {world.cwd} && claude --resume {txn.target_id}"


@pytest.mark.process
def test_a_stuck_handoff_is_cancelled_and_a_driven_one_is_not(world: World, store: Store) -> None:
    stuck = begin(store, plan_for("source-1", str(world.cwd)))  # its driver never came
    driven = begin(store, plan_for("source-2", str(world.cwd)))

    with store.lease(lease_name(driven.id)), pytest.raises(Busy):
        cancel(store, driven.id, by="cli", wait_s=0)
    assert retirement(store, "claude", "source-2") is not None
    # The live driver was asked to withdraw it: the request stands for its next step.
    assert cancel_request(store, driven.id) == {"reason": "cancelled by a person", "by": "cli"}

    ended = cancel(store, stuck.id, by="cli", reason="the person changed their mind")
    assert ended.state == State.ROLLED_BACK
    assert ended.last_error == "the person changed their mind"
    assert retirement(store, "claude", "source-1") is None
    notice = take_notice(store, "claude", "source-1")
    assert notice is not None and "撤销" in notice
    record = audit_records(store)[-1]
    assert (record.kind, record.txn_id) == ("handoff-cancelled", stuck.id)
    assert record.detail["by"] == "cli" and record.detail["sourceRestored"] is True
    assert world.calls() == []  # nothing was started for it

    done = handoff(store, plan_for("source-3", str(world.cwd)), ignition=FAST)
    with pytest.raises(GraftError) as refused:
        cancel(store, done.id)
    assert refused.value.code == NOT_CANCELLABLE and "released" in str(refused.value)


@pytest.mark.process
def test_a_committed_source_is_released_on_purpose(world: World, store: Store) -> None:
    done = handoff(store, plan_for("source-1", str(world.cwd)), ignition=FAST)
    assert retirement(store, "claude", "source-1") is not None

    released = release(store, "claude", "source-1", by="console", reason="two forks wanted")
    assert released.id == done.id and released.state == State.COMMITTED  # the target stays
    assert retirement(store, "claude", "source-1") is None
    assert take_notice(store, "claude", "source-1") == RELEASE_NOTICE
    record = audit_records(store)[-1]
    assert record.kind == "source-released" and record.detail["by"] == "console"
    assert record.detail["reason"] == "two forks wanted"
    assert record.detail["target"] == done.target_id

    with pytest.raises(GraftError) as again:
        release(store, "claude", "source-1")
    assert again.value.code == NOT_RETIRED
    begin(store, plan_for("source-2", str(world.cwd)), ignite=False)
    with pytest.raises(GraftError) as live:
        release(store, "claude", "source-2")
    assert live.value.code == NOT_RETIRED and "cancel" in str(live.value)
    # Released, it may hand off again without allowReslice.
    assert begin(store, plan_for("source-1", str(world.cwd), boundary=60)).state == State.PREPARING


def test_claude_codes_api_error_message_is_no_answer_to_the_first_turn() -> None:
    from dshkit.sessions.claude import ClaudeAdapter

    records: list[dict[str, Any]] = [
        {"type": "user", "message": {"role": "user", "content": "交接内容"}},
        {  # what Claude Code writes when the request failed: in the model's place
            "type": "assistant",
            "isApiErrorMessage": True,
            "error": "authentication_failed",
            "message": {
                "role": "assistant",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": "API Error: 401 invalid x-api-key"}],
            },
        },
    ]
    said = first_turn_outcome(ClaudeAdapter().normalize(records, {}))
    assert said is not None and said != ANSWERED
    assert "authentication_failed: API Error: 401 invalid x-api-key" in said
    stand_in: dict[str, Any] = {**records[1], "isApiErrorMessage": False, "error": None}
    stand_in["message"] = {**records[1]["message"], "content": [{"type": "text", "text": "x"}]}
    # A stand-in that is no error is no answer either: the turn is still running.
    assert first_turn_outcome(ClaudeAdapter().normalize([records[0], stand_in], {})) is None


def test_the_pointer_while_the_target_starts_offers_the_cancel_command(
    world: World, store: Store
) -> None:
    txn = begin(store, plan_for("source-c", str(world.cwd)))
    starting = retirement(store, "claude", "source-c")
    assert starting is not None
    assert f"dshkit graft cancel --txn {txn.id}" in starting.pointer()
    waiting = begin(store, plan_for("source-p", str(world.cwd)), ignite=False)
    pending = retirement(store, "claude", "source-p")
    assert pending is not None and f"dshkit graft cancel --txn {waiting.id}" in pending.pointer()


@pytest.mark.process
def test_a_lease_a_dead_driver_left_is_reclaimed_and_audited(world: World, store: Store) -> None:
    import subprocess
    import sys

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    txn = begin(store, plan_for("source-l", str(world.cwd)), ignite=False)
    with store.transaction():
        store.set_meta(f"lease.{lease_name(txn.id)}", f"{pid}:9999999999")
        store.set_meta("lease.graft-txn-999", f"{os.getpid()}:9999999999")  # a live holder
    assert store.stale_leases("graft-txn-") == [(lease_name(txn.id), pid, "holder dead")]
    recover(store, FAST)
    records = [r for r in audit_records(store) if r.kind == "lock-reclaimed"]
    assert [(r.detail["lease"], r.detail["pid"], r.detail["why"]) for r in records] == [
        (lease_name(txn.id), pid, "holder dead")
    ]
    assert store.get_meta("lease.graft-txn-999") == f"{os.getpid()}:9999999999"  # left alone
    # A lease taken over directly (no recovery first) is audited the same way.
    with store.transaction():
        store.set_meta("lease.scan", f"{pid}:9999999999")
    with store.lease("scan", wait=0):
        pass
    assert [r.detail["lease"] for r in audit_records(store) if r.kind == "lock-reclaimed"] == [
        lease_name(txn.id),
        "scan",
    ]


@pytest.mark.process
def test_a_handoff_whose_new_session_is_starting_is_cancelled_by_its_live_driver(
    world: World, store: Store
) -> None:
    import threading

    world.script("hang", "hang", "hang")
    plan = plan_for("source-c2", str(world.cwd))
    txn = begin(store, plan)
    slow = Ignition(timeout=60, poll=0.05)  # the hung CLI would be waited for a minute
    ended: list[Any] = []

    def drive_it() -> None:
        with Store(world.state) as own:
            ended.append(drive(own, txn.id, slow))

    driver = threading.Thread(target=drive_it)
    driver.start()
    deadline = time.monotonic() + 30
    while not world.calls() and time.monotonic() < deadline:  # its CLI started
        time.sleep(0.05)
    pointer = retirement(store, "claude", "source-c2")
    assert pointer is not None and f"dshkit graft cancel --txn {txn.id}" in pointer.pointer()
    done = cancel(store, txn.id, by="cli", reason="not now")
    driver.join(30)
    assert done.state == State.ROLLED_BACK and done.last_error == "not now"
    assert ended and ended[0].state == State.ROLLED_BACK
    assert retirement(store, "claude", "source-c2") is None  # the source works again
    assert take_notice(store, "claude", "source-c2") == CANCEL_NOTICE
    assert all(gone(pid) for pid, _ in world.calls())  # the starting CLI was ended
    assert [step for _, step in world.calls()] == ["hang"]  # no further attempt
    assert cancel_request(store, txn.id) is None
    assert kinds(store)[-2:] == ["handoff-cancel-requested", "handoff-cancelled"]
