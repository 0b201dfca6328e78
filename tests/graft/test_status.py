"""The read side of graft: `debug-status` (core and CLI), `audit`, `handoffs`, and `recover`."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.graft import GraftService, ledger, live
from dshkit.graft.ledger import queue_notice
from dshkit.graft.lifecycle import ROLLBACK_NOTICE, State, begin, handoff, lease_name, load
from dshkit.graft.settings import GraftSettings
from dshkit.graft.status import audit_page, debug_status
from dshkit.sessions import Scanner, SessionNotFound, Source
from dshkit.store import Store

from ..support.cli import run_dshkit
from ..support.graft_driver import FAST, Transcript, World, make_world, plan_for, take_notice


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # tables unwrapped, so lines can be asserted whole


def scanned_source(world: World, store: Store, words: str) -> str:
    """A real (fake) Claude Code session in the world's cwd, scanned into the store: its id."""
    before = set(world.claude.glob("projects/*/*.jsonl"))
    world.run_cli(words, world.cwd)
    (path,) = set(world.claude.glob("projects/*/*.jsonl")) - before
    Scanner(store).scan([Source("claude", world.claude / "projects")])
    return path.stem


def graft(world: World, *args: str, check: bool = True) -> Any:
    return run_dshkit("graft", *args, "--state-dir", str(world.state), home=world.cwd, check=check)


@pytest.mark.process
def test_the_panel_shows_every_kind_of_handoff_and_changes_nothing(
    world: World,
) -> None:
    with Store(world.state) as store:
        source = scanned_source(world, store, "把登录页的测试补齐")
        committed = handoff(store, plan_for(source, str(world.cwd)), ignition=FAST)
        waiting = begin(store, plan_for("source-pending", str(world.cwd)), ignite=False)
        stuck = begin(store, plan_for("source-stuck", str(world.cwd)))
        driven = begin(store, plan_for("source-driven", str(world.cwd)))
        queue_notice(store, "claude", "source-old", 99, ROLLBACK_NOTICE)
        audited = len(ledger.audit_records(store))

        with store.lease(lease_name(driven.id)):  # this process drives it
            panel = debug_status(store, source[:8])
            shown = orjson.loads(graft(world, "debug-status", "--json").stdout)
            text = graft(world, "debug-status", "--session", source[:8]).stdout

        assert committed.state == State.COMMITTED
        assert [t["id"] for t in panel["transactions"]] == [stuck.id, driven.id]
        drivers = {t["id"]: t["driver"] for t in panel["transactions"]}
        assert drivers == {stuck.id: None, driven.id: os.getpid()}
        assert all(t["state"] == "PREPARING" and t["ageMs"] >= 0 for t in panel["transactions"])
        counts = panel["counts"]
        assert (counts["transferring"], counts["retired"], counts["targets"]) == (3, 1, 1)
        assert counts["byState"]["PREPARING"] == 2 and counts["byState"]["PENDING"] == 1
        [pending] = panel["pending"]
        assert (pending["txnId"], pending["sessionId"]) == (waiting.id, "source-pending")
        assert pending["cwd"] == str(world.cwd) and pending["targetHarness"] == "claude"
        [notice] = panel["notices"]
        assert (notice["sessionId"], notice["txnId"]) == ("source-old", 99)

        part = panel["session"]
        assert part is not None
        assert (part["harness"], part["sessionId"]) == ("claude", source)
        decision = part["decision"]
        assert decision is not None
        assert decision["pressure"]["source"] == "estimated"  # no window in the log
        assert decision["pressure"]["tokens"] is not None
        assert decision["watermark"]["mode"] == "dynamic"
        retired = part["retirement"]
        assert retired is not None
        assert (
            retired["kind"] == ledger.RETIRED and retired["targetSessionId"] == committed.target_id
        )
        assert retired["command"] is not None and committed.target_id is not None
        assert f"--resume {committed.target_id}" in retired["command"]
        assert committed.target_id in retired["pointer"]
        [own] = part["handoffs"]
        assert (own["id"], own["state"], own["attempts"]) == (committed.id, "COMMITTED", 1)
        assert part["targetOf"] == [] and part["notices"] == []

        # The CLI prints the same panel (the session part only when asked for).
        assert shown["session"] is None
        assert shown["counts"] == counts and shown["notices"] == panel["notices"]
        assert [p["txnId"] for p in shown["pending"]] == [waiting.id]
        assert {t["id"]: t["driver"] for t in shown["transactions"]} == drivers
        assert f"retirement: retired by handoff #{committed.id}" in text
        assert "decision" in text and "source: estimated" in text
        assert f"pid {os.getpid()}" in text and "no live process" in text
        assert "sources transferring: 3, retired: 1; targets: 1" in text
        assert "notices not yet shown: 1" in text

        # Read-only: nothing recovered, no attempt made, no notice handed out, no record.
        assert (
            load(store, stuck.id).state == State.PREPARING and load(store, stuck.id).attempts == 0
        )
        assert len(world.calls()) == 2  # the source made, and the committed handoff
        assert len(ledger.audit_records(store)) == audited
        assert take_notice(store, "claude", "source-old") == ROLLBACK_NOTICE
        assert store.lease_holder(lease_name(stuck.id)) is None


@pytest.mark.process
def test_the_target_knows_where_it_came_from_and_unknown_sessions_are_refused(
    world: World,
) -> None:
    with Store(world.state) as store:
        source = scanned_source(world, store, "整理发布说明")
        txn = handoff(store, plan_for(source, str(world.cwd)), ignition=FAST)
        Scanner(store).scan([Source("claude", world.claude / "projects")])
        target = debug_status(store, txn.target_id)["session"]
        assert target is not None
        assert target["targetOf"] == [txn.id] and target["retirement"] is None
        assert target["handoffs"] == []
        with pytest.raises(SessionNotFound):
            debug_status(store, "no-such-session")
    refused = graft(world, "debug-status", "--session", "no-such-session", check=False)
    assert refused.returncode == 2 and "--session" in refused.stderr
    lone = graft(world, "debug-status", "--harness", "claude", check=False)
    assert lone.returncode == 2 and "give --session too" in lone.stderr


@pytest.mark.process
def test_a_bad_config_leaves_the_rest_of_the_panel(world: World) -> None:
    with Store(world.state) as store:
        source = scanned_source(world, store, "修复构建")
        (world.state / "config.toml").write_text("[graft]\nreserve_turns = 'many'\n")
        part = debug_status(store, source)["session"]
    assert part is not None and part["settingsError"] is not None
    assert "reserve_turns" in part["settingsError"]
    # Decided on the default for the refused value, as the hooks decide.
    assert part["decision"] is not None and part["retirement"] is None


def test_an_empty_store_has_an_empty_panel(tmp_path: Path) -> None:
    shown = orjson.loads(
        run_dshkit(
            "graft", "debug-status", "--json", "--state-dir", str(tmp_path / "s"), home=tmp_path
        ).stdout
    )
    assert shown["transactions"] == [] and shown["pending"] == [] and shown["notices"] == []
    assert shown["counts"]["targets"] == 0 and shown["session"] is None
    text = run_dshkit("graft", "debug-status", "--state-dir", str(tmp_path / "s"), home=tmp_path)
    assert "no unfinished handoffs" in text.stdout and "no pending handoffs" in text.stdout


def test_audit_lists_oldest_first_and_says_what_the_limit_left_out(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with Store(state) as store:
        for n in range(5):
            ledger.audit(
                store, "model-nudge", harness="claude", session_id="a", ratio=0.7 + n / 100
            )
        ledger.audit(store, "command-blocked", harness="codex", session_id="b", command="rm -rf /")
        page = audit_page(store, 3, "a")
        assert [r.detail["ratio"] for r in page.records] == [0.72, 0.73, 0.74]
        assert page.more == 2 and audit_page(store, 100).more == 0
        assert audit_page(store, 1, "nobody").as_json() == {"records": [], "more": 0}

    def run(*args: str, check: bool = True) -> Any:
        return run_dshkit(
            "graft", "audit", *args, "--state-dir", str(state), home=tmp_path, check=check
        )

    everything = orjson.loads(run("--json").stdout)
    assert [r["kind"] for r in everything] == ["model-nudge"] * 5 + ["command-blocked"]
    assert everything[-1]["detail"] == {"command": "rm -rf /"}
    assert everything[-1]["sessionId"] == "b" and everything[-1]["harness"] == "codex"
    limited = run("--json", "--session", "a", "--limit", "2")
    assert [r["detail"]["ratio"] for r in orjson.loads(limited.stdout)] == [0.73, 0.74]
    assert "3 older record(s) not shown" in limited.stderr and "at most 10000" in limited.stderr
    assert "not shown" not in run("--json").stderr  # nothing left out, nothing said
    text = run("--limit", "1").stdout
    assert "command-blocked" in text and "command=rm -rf /" in text and "model-nudge" not in text
    assert "no audit records of session z" in run("--session", "z").stdout
    for bad in ("0", "10001"):
        refused = run("--limit", bad, check=False)
        assert refused.returncode == 2 and "1<=x<=10000" in refused.stderr


def test_handoffs_newest_first(world: World) -> None:
    with Store(world.state) as store:
        first = begin(store, plan_for("source-a", str(world.cwd)), ignite=False)
        second = begin(store, plan_for("source-b", str(world.cwd)))
    listed = orjson.loads(graft(world, "handoffs", "--json").stdout)
    assert [(t["id"], t["state"]) for t in listed] == [
        (second.id, "PREPARING"),
        (first.id, "PENDING"),
    ]
    assert listed[1]["sessionId"] == "source-a" and listed[1]["attempts"] == 0
    text = graft(world, "handoffs").stdout
    assert f"#{second.id}" in text and "claude source-b" in text
    assert (
        "no handoffs"
        in run_dshkit(
            "graft", "handoffs", "--state-dir", str(world.state / "empty"), home=world.cwd
        ).stdout
    )


@pytest.mark.process
def test_recover_finishes_what_a_stopped_process_left(tmp_path: Path) -> None:
    # Claude Code's default root under HOME, which the `dshkit` helper's environment keeps.
    home = tmp_path / "home"
    world = dataclasses.replace(make_world(tmp_path), claude=home / ".claude")
    gone = tmp_path / "gone"
    gone.mkdir()
    with Store(world.state) as store:
        adoptable = plan_for("source-adopt", str(world.cwd))
        world.run_cli(adoptable.first_message, world.cwd)  # its target started before a crash
        [target] = world.targets(adoptable.identity)
        adopt = begin(store, adoptable)
        lost = begin(store, plan_for("source-lost", str(gone)))
        driven = begin(store, plan_for("source-driven", str(world.cwd)))
        gone.rmdir()
        with store.lease(lease_name(driven.id)):
            ended = orjson.loads(
                run_dshkit(
                    "graft", "recover", "--json", "--state-dir", str(world.state), home=home
                ).stdout
            )
        assert [(t["id"], t["state"]) for t in ended["recovered"]] == [
            (adopt.id, "COMMITTED"),
            (lost.id, "FAILED"),
        ]
        assert ended["recovered"][0]["targetSessionId"] == target
        assert "is gone" in ended["recovered"][1]["lastError"]
        assert ended["driven"] == [driven.id]
        assert ledger.retirement(store, "claude", "source-lost") is None  # works again
        assert load(store, driven.id).state == State.PREPARING
        assert len(world.calls()) == 1  # the target was adopted, never started twice
        with store.lease(lease_name(driven.id)):
            text = run_dshkit("graft", "recover", "--state-dir", str(world.state), home=home).stdout
    assert "nothing to recover" in text and f"driven by live processes: #{driven.id}" in text


def test_the_panel_decides_as_the_hooks_would_from_the_stored_watch_state(world: World) -> None:
    (world.state).mkdir(exist_ok=True)
    (world.state / "config.toml").write_text('[graft]\nmode = "fixed"\nwindow_tokens = 100000\n')
    transcript = Transcript(world, "c-warned").prompt("把登录页的测试补齐")
    transcript.step(72_000)
    service = GraftService(world.state, sources=[Source("claude", world.claude / "projects")])
    with Store(world.state) as store:
        Scanner(store).scan([Source("claude", world.claude / "projects")])
        fresh = service.status("c-warned").decision
        assert fresh.action == "nudge" and fresh.text and 'sessionId="c-warned"' in fresh.text
        settings = GraftSettings.load(world.state)
        watched = live.watch(
            store, "claude", "c-warned", str(transcript.path), settings, str(world.state)
        )
        watched.commit(store)  # the hook told the model

    after = service.status("c-warned").decision
    assert (after.action, after.reason) == ("none", "warned in this turn already")
    part = service.session_status("c-warned")
    assert part["decision"] is not None and part["decision"]["action"] == "none"
    assert part["handoff"] is None and part["forcedCutFailure"] is None


@pytest.mark.process
def test_the_panel_lists_stale_locks_exclusions_and_the_ignition_and_takes_nothing(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    state = tmp_path / "state"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    with Store(state) as store:
        with store.transaction():
            store.set_meta("lease.graft-txn-7", f"{int(dead.stdout)}:9999999999")
        ledger.set_excluded(store, "dsh", "kept-1", True, by="cli", reason=None)
        ledger.set_ignition_choice(store, False, by="cli")
    (state / "config.toml").write_text("[graft]\nwarning_margin = 2\n")
    shown = orjson.loads(graft_cli(state, "debug-status", "--json").stdout)
    assert shown["staleLeases"] == [
        {"name": "graft-txn-7", "pid": int(dead.stdout), "why": "holder dead"}
    ]
    assert [x["sessionId"] for x in shown["exclusions"]] == ["kept-1"]
    assert shown["ignition"] == {"ignite": False, "chosen": False, "config": True}
    assert "warning_margin = 2" in shown["settingsError"]
    text = graft_cli(state, "debug-status").stdout
    assert "ignition: off (your choice)" in text and "dsh kept-1" in text
    assert "graft-txn-7: pid" in text and "settings refused" in text
    with Store(state) as store:  # read-only: the stale lock is still there
        assert store.get_meta("lease.graft-txn-7") == f"{int(dead.stdout)}:9999999999"


def graft_cli(state: Path, *args: str) -> Any:
    return run_dshkit("graft", *args, "--state-dir", str(state), home=state.parent)
