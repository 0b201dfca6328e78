"""Graft's read side over HTTP, through the one guard: the audit trail and the debug panel."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dshkit.graft import GraftService, ledger
from dshkit.graft.lifecycle import begin
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
    # A change needs the token (the console's cookie alone, without its header, is not enough).
    assert running.http.post(url, json={}).status_code == 403
    tokened = running.http.post(url, json={}, headers={"x-dshkit-token": running.token})
    assert tokened.status_code == 404  # and there is no change to make here
