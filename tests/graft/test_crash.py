"""The handoff lifecycle across processes: SIGKILL at every state transition, then recovery,
and many processes handing off at once on one store. After recovery the source or the
target can always carry the work (`sourceUsable ∨ targetUsable`), and nothing is started
twice. A target's CLI dies with a driver killed before its transcript showed, and outlives
one killed after."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from dshkit.graft import ledger
from dshkit.graft.ledger import audit_records, retirement
from dshkit.graft.lifecycle import (
    KILL_AFTER_ENV,
    LAUNCHED,
    ROLLBACK_NOTICE,
    SOURCE_ALREADY_MIGRATED,
    Ignition,
    State,
    load,
    recover,
    transactions,
)
from dshkit.store import Store

from ..support import graft_driver
from ..support.graft_driver import World, gone, take_notice
from ..support.procs import left, wait_until, watchdog_of

pytestmark = pytest.mark.process

DRIVER = Path(graft_driver.__file__)  # run by path, as its own process
PATIENT = Ignition(timeout=60, poll=0.05)  # success comes long before the timeout


def drive(
    world: World, source: str, *, timeout: float = 60, kill_after: str | None = None
) -> subprocess.Popen[bytes]:
    env = {**os.environ, **world.env()}
    if kill_after is not None:
        env[KILL_AFTER_ENV] = kill_after
    return subprocess.Popen(
        [sys.executable, str(DRIVER), str(world.state), source, str(world.cwd), str(timeout)],
        env=env,
        stdout=subprocess.PIPE,
    )


def ended(pid: int) -> bool:
    """Whether the process `pid` (not our child: nobody here can wait for it) ends within a
    generous while after being killed; SIGKILL is delivered asynchronously."""
    deadline = time.monotonic() + 30
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return gone(pid)


def killed(process: subprocess.Popen[bytes]) -> None:
    process.communicate()
    assert process.returncode == -signal.SIGKILL


def assert_invariant(store: Store, world: World, source: str) -> State:
    """The source's handoff has ended, and exactly one of source and target carries the work."""
    [txn_id] = [
        row[0]
        for row in store.db.execute("SELECT id FROM graft_txns WHERE session_id = ?", (source,))
    ]
    txn = load(store, txn_id)
    targets = world.targets(txn.plan.identity)
    retired = retirement(store, "claude", source)
    if txn.state == State.COMMITTED:  # targetUsable: one target, and the source points at it
        assert targets == [txn.target_id]
        assert retired is not None and retired.kind == ledger.RETIRED
        assert retired.target_id == txn.target_id
    else:  # sourceUsable: no mark left on it, and it is told once
        assert txn.state in (State.ROLLED_BACK, State.FAILED)
        assert retired is None and targets == []
        assert take_notice(store, "claude", source) == ROLLBACK_NOTICE
        assert take_notice(store, "claude", source) is None
    return txn.state


@pytest.mark.parametrize(
    "point",
    [State.PREPARING, State.TARGET_STARTED, LAUNCHED, State.VERIFIED, State.COMMITTED],
)
def test_kill_at_each_transition_then_recover(world: World, store: Store, point: str) -> None:
    # Once its transcript showed the CLI outlives its driver (it is the target's own run):
    # recovery must adopt it, not relaunch.
    world.script("slow")
    killed(drive(world, "source-1", kill_after=point))

    before = transactions(store)
    if point == State.COMMITTED:
        assert before == []
    else:
        [txn] = before
        assert txn.state == point if point != LAUNCHED else State.TARGET_STARTED
        blocked = retirement(store, "claude", "source-1")
        assert blocked is not None and blocked.kind == ledger.TRANSFERRING

    recover(store, PATIENT)

    assert assert_invariant(store, world, "source-1") == State.COMMITTED
    # Started once, by the driver or, if it never ran it, here; killed right after starting
    # it, the driver took the CLI along, perhaps before it even began: then it ran again here.
    assert len(world.calls()) == 1 if point != LAUNCHED else len(world.calls()) <= 2
    kinds = [r.kind for r in audit_records(store)]
    assert kinds.count("handoff-committed") == 1
    assert kinds.count("ignite") + kinds.count("ignite-skipped") == 1
    if point == State.TARGET_STARTED:
        assert "ignite-failed" in kinds  # the attempt that never ran is counted and said


def test_kill_during_a_hung_attempt_takes_the_cli_along(world: World, store: Store) -> None:
    world.script("hang")
    killed(drive(world, "source-1", kill_after=LAUNCHED))
    [txn] = transactions(store)
    assert txn.child is not None
    assert ended(txn.child["pid"])  # its watchdog killed the half-started CLI with the driver

    recover(store, Ignition(timeout=1, attempts=1, poll=0.05))

    assert assert_invariant(store, world, "source-1") == State.ROLLED_BACK
    assert len(world.calls()) <= 1  # and started none


def test_a_cli_that_outlived_its_driver_is_killed_by_recovery(world: World, store: Store) -> None:
    # Its watchdog gone first (as if the driver died before it began), the hung CLI outlives
    # its driver: recovery waits for it, then kills it once its time is up.
    world.script("hang")
    process = drive(world, "source-1")
    while not world.calls():  # the hung CLI has begun
        time.sleep(0.01)
    [txn] = transactions(store)
    assert txn.child is not None
    pid = txn.child["pid"]
    wait_until(lambda: watchdog_of(pid), "the CLI has no watchdog")
    for watchdog in watchdog_of(pid):
        os.kill(watchdog, signal.SIGKILL)
    assert left(lambda: watchdog_of(pid)) == []
    process.kill()
    process.communicate()
    assert not gone(pid)

    recover(store, Ignition(timeout=1, attempts=1, poll=0.05))

    assert assert_invariant(store, world, "source-1") == State.ROLLED_BACK
    assert ended(pid)  # recovery killed it once its time was up
    assert len(world.calls()) == 1  # and started none


def test_kill_after_rollback_leaves_it_rolled_back(world: World, store: Store) -> None:
    world.script("hang", "hang", "hang")
    killed(drive(world, "source-1", timeout=1, kill_after=State.ROLLED_BACK))

    assert recover(store, PATIENT) == []
    assert assert_invariant(store, world, "source-1") == State.ROLLED_BACK


def test_recovery_leaves_a_live_driver_alone(world: World, store: Store) -> None:
    world.script("hang", "ok")
    process = drive(world, "source-1", timeout=5)
    while not world.calls():  # wait until the driver is in its first (hung) attempt
        time.sleep(0.01)
    assert recover(store, PATIENT) == []  # it holds the handoff's lease
    [live] = transactions(store)  # and it was unfinished while recovery ran
    assert live.state == State.TARGET_STARTED

    out, _ = process.communicate()
    assert orjson.loads(out)["state"] == "COMMITTED"
    assert assert_invariant(store, world, "source-1") == State.COMMITTED


def test_eight_processes_eight_sources(world: World, store: Store) -> None:
    processes = [drive(world, f"source-{n}") for n in range(8)]
    results = [orjson.loads(p.communicate()[0]) for p in processes]

    assert [r["state"] for r in results] == ["COMMITTED"] * 8
    assert len({r["targetSessionId"] for r in results}) == 8
    for n in range(8):
        assert assert_invariant(store, world, f"source-{n}") == State.COMMITTED
    assert len(world.calls()) == 8
    kinds = [r.kind for r in audit_records(store)]
    assert kinds.count("handoff-begin") == kinds.count("handoff-committed") == 8


def test_eight_processes_one_source(world: World, store: Store) -> None:
    processes = [drive(world, "source-1") for _ in range(8)]
    results = [orjson.loads(p.communicate()[0]) for p in processes]

    assert sorted(r.get("state", r.get("error")) for r in results) == [
        "COMMITTED",
        *[SOURCE_ALREADY_MIGRATED] * 7,
    ]
    assert assert_invariant(store, world, "source-1") == State.COMMITTED
    assert len(world.calls()) == 1
