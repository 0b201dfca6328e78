"""Graft's read side over HTTP, through the one guard: the audit trail and the debug panel."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dshkit.graft import GraftService, ledger
from dshkit.graft.lifecycle import begin, claim_pending
from dshkit.jobs import JobRunner
from dshkit.sessions import Catalog, Scanner, Source
from dshkit.store import Store

from ..support.graft_driver import plan_for
from ..support.web import Running


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    def capabilities(state: Path, jobs: JobRunner) -> dict[str, object]:
        return {"graft": GraftService(state)}

    server = Running(tmp_path, capabilities=capabilities)
    yield server
    server.close()


def get(running: Running, path: str, **params: str) -> httpx.Response:
    """A read as a local page makes it: no token."""
    return running.http.get(f"http://127.0.0.1:{running.port}/api/graft{path}", params=params)


def test_audit_pages_with_the_limit_said(running: Running) -> None:
    with Store(running.state_dir) as store:
        for n in range(4):
            ledger.audit(store, "model-nudge", harness="claude", session_id="a", turn=n)
        ledger.audit(store, "command-blocked", harness="codex", session_id="b", command="rm -rf /")

    everything = get(running, "/audit").json()
    assert everything["more"] == 0
    assert [r["kind"] for r in everything["records"]] == ["model-nudge"] * 4 + ["command-blocked"]
    limited = get(running, "/audit", session="a", limit="3")
    assert limited.headers["cache-control"] == "no-store"
    assert [r["detail"]["turn"] for r in limited.json()["records"]] == [1, 2, 3]
    assert limited.json()["more"] == 1
    assert get(running, "/audit", session="b").json()["records"][0]["detail"] == {
        "command": "rm -rf /"
    }
    for bad in ("0", "10001", "ten", "-1"):
        refused = get(running, "/audit", limit=bad)
        assert refused.status_code == 400
        assert "from 1 to 10000" in refused.json()["error"] and refused.json()["ok"] is False


def test_status_is_the_panel_or_one_sessions_part(running: Running) -> None:
    with Store(running.state_dir) as store:
        Scanner(store).scan([Source("dsh", running.root)])
        session = Catalog(store).recent("dsh", limit=1)[0]
        plan = dataclasses.replace(
            plan_for(session.session_id, str(running.root)), harness="dsh", target_harness="dsh"
        )
        txn = begin(store, plan, ignite=False)

    panel = get(running, "/status")
    assert panel.status_code == 200 and panel.headers["cache-control"] == "no-store"
    shown = panel.json()
    assert shown["session"] is None and shown["transactions"] == []
    assert [p["txnId"] for p in shown["pending"]] == [txn.id]
    assert shown["counts"]["transferring"] == 1 and shown["counts"]["byState"]["PENDING"] == 1

    part = get(running, "/status", session=session.session_id[:10]).json()
    assert (part["harness"], part["sessionId"]) == ("dsh", session.session_id)
    assert part["retirement"]["kind"] == ledger.TRANSFERRING and part["retirement"]["pending"]
    assert [h["id"] for h in part["handoffs"]] == [txn.id]
    pressure = part["decision"]["pressure"]  # the corpus's DSH logs announce their window
    assert pressure["source"] == "usage" and pressure["windowSource"] == "log"
    assert pressure["tokens"] > 0 and part["decision"]["action"] == "none"

    missing = get(running, "/status", session="no-such-session")
    assert missing.status_code == 404 and "no-such-session" in missing.json()["error"]


def test_the_guard_stands_in_front(running: Running) -> None:
    url = f"http://127.0.0.1:{running.port}/api/graft/status"
    foreign = running.http.get(url, headers={"host": "evil.example"})
    assert foreign.status_code == 403
    # A change needs a credential: none at all is 401.
    assert running.bare("POST", url, json={}).status_code == 401
    tokened = running.http.post(url, json={}, headers={"x-dshkit-token": running.token})
    assert tokened.status_code == 404  # and there is no change to make here


def post(running: Running, path: str, body: object) -> httpx.Response:
    return running.send("POST", f"http://127.0.0.1:{running.port}/api/graft{path}", json=body)


def test_cancel_and_release_from_the_console(running: Running) -> None:
    with Store(running.state_dir) as store:
        waiting = begin(store, plan_for("c-waiting", str(running.root)), ignite=False)
        stuck = begin(store, plan_for("c-stuck", str(running.root)))
        # A committed handoff (its target picked it up): its source is retired.
        committed = begin(store, plan_for("c-done", str(running.root)), ignite=False)
        claim_pending(store, committed.id, "claude", "c-target")

    for bad, why in (
        ({}, "txn must be"),
        ({"txn": "1"}, "txn must be"),
        ({"txn": 1, "by": "me"}, "unknown fields"),
        ([1], "JSON object"),
    ):
        refused = post(running, "/cancel", bad)
        assert refused.status_code == 400 and why in refused.json()["error"], refused.text
    for txn in (waiting, stuck):
        done = post(running, "/cancel", {"txn": txn.id, "reason": "not now"})
        assert done.status_code == 200, done.text
        assert done.json()["state"] == "ROLLED_BACK"
    again = post(running, "/cancel", {"txn": waiting.id})
    assert again.status_code == 409 and again.json()["code"] == "NOT_CANCELLABLE"
    unknown = post(running, "/cancel", {"txn": committed.id + 100})
    assert unknown.status_code == 404, unknown.text  # names nothing: not a refusal
    assert unknown.json()["kind"] == "not-found" and unknown.json()["field"] == "txn"
    assert "code" not in unknown.json()
    unsigned = running.bare(
        "POST", f"http://127.0.0.1:{running.port}/api/graft/cancel", json={"txn": committed.id}
    )
    assert unsigned.status_code == 401  # a change needs a credential

    part = get(running, "/status", session="c-done")
    assert part.status_code == 404  # not scanned: the panel knows scanned sessions only
    released = post(running, "/release", {"session": "c-done", "reason": "two forks"})
    assert released.status_code == 200, released.text
    assert released.json()["id"] == committed.id
    missing = post(running, "/release", {})
    assert missing.status_code == 400 and "session is required" in missing.json()["error"]
    twice = post(running, "/release", {"session": "c-done"})
    assert twice.status_code == 409 and twice.json()["code"] == "NOT_RETIRED"

    with Store(running.state_dir) as store:
        assert ledger.retirement(store, "claude", "c-done") is None
        records = [r for r in ledger.audit_records(store) if r.kind != "handoff-begin"]
    by = {(r.kind, r.session_id): r.detail["by"] for r in records if "by" in r.detail}
    assert by == {
        ("handoff-cancelled", "c-waiting"): "console",
        ("handoff-cancelled", "c-stuck"): "console",
        ("source-released", "c-done"): "console",
    }


def test_the_ignition_switch_is_an_owner_only_write(running: Running) -> None:
    shown = get(running, "/ignition")
    assert shown.status_code == 200
    assert shown.json() == {"ignite": True, "chosen": None, "config": True}
    url = f"http://127.0.0.1:{running.port}/api/graft/ignition"
    assert running.bare("POST", url, json={"ignite": False}).status_code == 401
    for bad, why in (({}, "ignite is required"), ({"ignite": "off"}, "true, false or null")):
        refused = post(running, "/ignition", bad)
        assert refused.status_code == 400 and why in refused.json()["error"], refused.text
    off = post(running, "/ignition", {"ignite": False})
    assert off.status_code == 200 and off.json() == {
        "ignite": False,
        "chosen": False,
        "config": True,
    }
    assert get(running, "/status").json()["ignition"]["ignite"] is False

    back = post(running, "/ignition", {"ignite": None})
    assert back.json() == {"ignite": True, "chosen": None, "config": True}
    with Store(running.state_dir) as store:
        switched = [r.detail for r in ledger.audit_records(store) if r.kind == "ignition-switched"]
    assert switched == [{"ignite": False, "by": "console"}, {"ignite": None, "by": "console"}]


def test_a_session_is_kept_from_the_forced_cut_from_the_console(running: Running) -> None:
    with Store(running.state_dir) as store:
        Scanner(store).scan([Source("dsh", running.root)])
        session = Catalog(store).recent("dsh", limit=1)[0]
    url = f"http://127.0.0.1:{running.port}/api/graft/exclude"
    body = {"session": session.session_id, "harness": "dsh", "exclude": True}
    assert running.bare("POST", url, json=body).status_code == 401
    kept = post(running, "/exclude", {**body, "reason": "long refactor"})
    assert kept.status_code == 200, kept.text
    assert [x["sessionId"] for x in kept.json()] == [session.session_id]
    part = get(running, "/status", session=session.session_id).json()
    assert part["excludedFromForcedCut"] is True
    assert [x["reason"] for x in get(running, "/status").json()["exclusions"]] == ["long refactor"]
    back = post(running, "/exclude", {**body, "exclude": False})
    assert back.status_code == 200 and back.json() == []
    refused = post(running, "/exclude", {**body, "exclude": "yes"})
    assert refused.status_code == 400 and "true or false" in refused.json()["error"]
