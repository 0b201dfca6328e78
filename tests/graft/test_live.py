"""Graft at a live session's hooks: the words name the session, a failed forced cut is told and
backed off, a session born from a pickup is protected, and a source whose driver was killed
recovers from its own next hook."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from dshkit.graft import ledger, live
from dshkit.graft.ledger import force_backoff_ms, force_failure, record_force_failure
from dshkit.graft.lifecycle import (
    KILL_AFTER_ENV,
    State,
    begin,
    claim_pending,
    lease_name,
    load,
)
from dshkit.graft.settings import GraftSettings
from dshkit.store import Store

from ..support import graft_driver
from ..support.graft_driver import Transcript, World, plan_for
from ..support.graft_hooks import hook
from ..support.procs import left, running_in_group

FIXED = GraftSettings(mode="fixed", window_tokens=100_000)  # warn at 70%, cut at 75%


def watch(
    store: Store, world: World, transcript: Transcript, settings: GraftSettings = FIXED
) -> live.Watch:
    return live.watch(
        store, "claude", transcript.session, str(transcript.path), settings, str(world.state)
    )


def test_the_nudge_and_the_escalation_name_the_session(world: World, store: Store) -> None:
    transcript = Transcript(world, "c-named").prompt("把登录页的测试补齐")
    transcript.step(72_000)
    nudged = watch(store, world, transcript)
    assert nudged.decision.action == "nudge" and nudged.text is not None
    assert 'sessionId="c-named"' in nudged.text
    nudged.commit(store)

    transcript.step(73_000)  # the warning ignored for a step
    escalated = watch(store, world, transcript)
    assert escalated.decision.action == "escalate" and escalated.text is not None
    assert 'sessionId="c-named"' in escalated.text


def test_the_backoff_doubles_up_to_its_cap() -> None:
    assert [force_backoff_ms(n, 120, 1_800) for n in range(6)] == [
        120_000,
        240_000,
        480_000,
        960_000,
        1_800_000,
        1_800_000,
    ]


def test_a_failed_forced_cut_reaches_the_model_once_and_backs_off(
    world: World, store: Store
) -> None:
    transcript = Transcript(world, "c-forced").prompt("把登录页的测试补齐")
    transcript.step(80_000)
    forced = watch(store, world, transcript)
    assert forced.decision.action == "force"
    # The cut was started 200 s ago and failed twice since (as `graft slice --forced` records).
    long_ago = ledger.now_ms() - 200_000
    with store.transaction():
        store.db.execute(
            "UPDATE graft_watch SET forced_at = ? WHERE session_id = 'c-forced'", (long_ago,)
        )
    record_force_failure(store, "claude", "c-forced", "first failure")
    record_force_failure(store, "claude", "c-forced", "GRAFT_ABORTED: constraints truncated")

    told = watch(store, world, transcript)
    assert told.text is not None
    assert "强制切断没有完成" in told.text and "constraints truncated" in told.text
    assert "继续当前的工作" in told.text
    # No new cut yet: two failures in a row wait 240 s, not the 2 minutes of a first try.
    assert told.decision.action == "force" and live.FORCE_TEXT not in told.text
    told.commit(store)
    failed = force_failure(store, "claude", "c-forced", 120, 1_800)
    assert failed is not None and failed.told and failed.failures == 2
    assert failed.retry_at - failed.at == 240_000
    assert watch(store, world, transcript).text is None  # told once, still backing off
    kinds = [r.kind for r in ledger.audit_records(store)]
    assert kinds.count("force-graft-failed") == 2


def test_a_session_born_from_a_pickup_is_protected(world: World, store: Store) -> None:
    pending = begin(store, plan_for("c-source", str(world.cwd)), ignite=False)
    assert claim_pending(store, pending.id, "claude", "c-picked") is not None
    # Its log keeps the handoff as hook context only: its first prompt is the person's.
    transcript = Transcript(world, "c-picked").prompt("继续")
    transcript.step(90_000)
    watched = watch(store, world, transcript)
    assert watched.decision.action == "none" and "born from a handoff" in watched.decision.reason


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.mark.process
def test_driver_gone_is_a_dead_holder_or_a_handoff_that_never_moved(
    world: World, store: Store
) -> None:
    txn = begin(store, plan_for("c-source", str(world.cwd)))
    assert not live.driver_gone(store, "claude", "c-source")  # its driver is on its way
    with store.lease(lease_name(txn.id)):
        assert not live.driver_gone(store, "claude", "c-source")  # a live one drives it
    store.set_meta(f"lease.{lease_name(txn.id)}", f"{dead_pid()}:{int(time.time()) + 600}")
    assert live.driver_gone(store, "claude", "c-source")
    store.set_meta(f"lease.{lease_name(txn.id)}", "")
    with store.transaction():
        store.db.execute("UPDATE graft_txns SET updated_at = 0 WHERE id = ?", (txn.id,))
    assert live.driver_gone(store, "claude", "c-source")  # never taken: stalled
    assert not live.driver_gone(store, "claude", "another")


@pytest.mark.process
def test_a_killed_driver_is_recovered_by_the_sources_next_hook(world: World) -> None:
    transcript = Transcript(world, "c-killed").prompt("把登录页的测试补齐")
    transcript.step(20_000)
    world.script("hang")  # the first start hangs: the driver is killed while it waits
    driver = subprocess.Popen(
        [
            sys.executable,
            str(Path(graft_driver.__file__)),
            str(world.state),
            "c-killed",
            str(world.cwd),
            "60",
        ],
        env={**os.environ, **world.env(), KILL_AFTER_ENV: "LAUNCHED"},
        stdout=subprocess.PIPE,
    )
    driver.communicate()
    assert driver.returncode == -signal.SIGKILL
    with Store(world.state) as store:
        child = load(store, 1).child
    assert child is not None
    # The half-started CLI dies with its driver (its watchdog kills it): no target from it.
    assert left(lambda: running_in_group(int(child["pid"]))) == []

    answer = hook(world, "UserPromptSubmit", transcript.payload(prompt="还在吗？"))
    assert answer["decision"] == "block"
    assert live.RECOVERING in answer["reason"]

    deadline = time.monotonic() + 90
    with Store(world.state) as store:
        while time.monotonic() < deadline:
            txn = load(store, 1)
            if txn.state not in (State.PREPARING, State.TARGET_STARTED, State.VERIFIED):
                break
            time.sleep(0.2)
        assert txn.state == State.COMMITTED, orjson.dumps(txn.as_json())
        # The killed attempt counts; its CLI may have died before it took the hanging call,
        # leaving that call to the next attempt.
        assert txn.attempts >= 2 and world.targets(txn.plan.identity) == [txn.target_id]
        retired = ledger.retirement(store, "claude", "c-killed")
        assert retired is not None and retired.target_id == txn.target_id


@pytest.fixture(autouse=True)
def quick_recovery(world: World) -> None:
    world.state.mkdir(exist_ok=True)
    (world.state / "config.toml").write_text(
        "[graft]\nignite_timeout_s = 5\nignite_spacing_s = 0\n"
    )


def test_the_turns_end_waits_for_a_handoff_no_longer_than_it_was_told(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait is the Stop handler's budget but for a little: a poll that slept past the
    deadline (a whole poll after a check just before it) left too little of the budget on
    a loaded machine, and the handler was stopped with nothing told. Each nap is at most
    what is left; the cut whose handoff never began is then told where to look."""
    with store.transaction() as db:
        live._save(db, "claude", "cut", forced_at=ledger.now_ms())
    naps: list[tuple[float, float]] = []  # (asked, left of the wait)
    deadline = time.monotonic() + 0.3
    sleep = time.sleep

    def nap(seconds: float) -> None:
        naps.append((seconds, deadline - time.monotonic()))
        sleep(min(seconds, 0.05))

    monkeypatch.setattr(time, "sleep", nap)  # (the module live naps with)
    report = live.forced_report(store, "claude", "cut", 0.3, poll_s=10.0)
    assert report is not None and "dshkit graft status --session cut" in report.text
    assert naps and all(asked <= max(0.0, left) + 0.01 for asked, left in naps), naps
