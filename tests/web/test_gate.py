"""The delivery gate over HTTP: a run followed live as a job, then listed among the recent
verdicts; bad requests refused before anything starts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dshkit.gate import GateService
from dshkit.jobs import JobRunner

from ..support.paths import PAGES
from ..support.web import Running, events


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    def capabilities(state: Path, jobs: JobRunner) -> dict[str, object]:
        return {"gate": GateService(state, jobs=jobs)}

    server = Running(tmp_path, capabilities=capabilities)
    yield server
    server.close()


def api(running: Running) -> httpx.Client:
    return running.client(
        base_url=f"{running.url}/api/gate",
        headers={"x-dshkit-token": running.token},
        timeout=60,
    )


@pytest.mark.browser
def test_a_run_is_followed_live_then_listed(running: Running) -> None:
    with api(running) as client:
        assert client.get("/").json() == {"verdicts": []}
        page = str(PAGES / "console-error.html")
        started = client.post("/run", json={"path": page, "budget": 2})
        assert started.status_code == 202 and started.json()["started"] is True
        url = f"http://127.0.0.1:{running.port}{started.headers['location']}/events"
        with running.http.stream("GET", url, timeout=60) as stream:
            seen = list(events(stream))
        stages = [e["data"].get("stage") for e in seen if e.get("event") == "progress"]
        assert stages == ["queued", "judging", "done"]
        result = seen[-1]["data"]["result"]
        assert result["verdict"] == "page-error" and result["path"] == page
        (listed,) = client.get("/").json()["verdicts"]
        assert listed["id"] == result["id"] and listed["errors"] == result["errors"]
        assert client.get("/", params={"limit": "0"}).status_code == 400


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"path": "/nowhere/page.html"}, "no such file"),
        ({"path": str(PAGES.parent / "fakes.py")}, "not a web deliverable"),
        ({"path": str(PAGES / "tank.html"), "budget": 0}, "budget 0 s is out of range"),
        ({"path": str(PAGES / "tank.html"), "budget": "5"}, "budget must be a number"),
        ({}, "path must name the file"),
    ],
)
def test_bad_runs_are_refused(running: Running, body: dict[str, object], message: str) -> None:
    with api(running) as client:
        refused = client.post("/run", json=body)
    assert refused.status_code == 400 and message in refused.json()["error"]


def test_rework_is_switched_per_session_and_a_get_changes_nothing(running: Running) -> None:
    with api(running) as client:
        wanted = {"session": "s1", "harness": "claude"}
        shown = client.get("/rework", params=wanted).json()
        assert shown == {"harness": "claude", "session": "s1", "rework": True, "source": "config"}
        assert client.get("/rework", params=wanted).json() == shown  # nothing was stored
        off = client.post("/rework", json=wanted | {"rework": False}).json()
        assert off["rework"] is False and off["source"] == "session"
        assert client.get("/rework", params=wanted).json() == off
        back = client.post("/rework", json=wanted | {"rework": None}).json()
        assert back == shown
        assert client.post("/rework", json=wanted | {"rework": "no"}).status_code == 400
        assert client.post("/rework", json={"rework": False}).status_code == 400
        unknown = client.post("/rework", json={"session": "s1", "harness": "vim", "rework": True})
        assert unknown.status_code == 400
        assert client.get("/rework", params={"session": "nobody"}).status_code == 404


def test_a_session_id_longer_than_any_is_refused_not_echoed(running: Running) -> None:
    from dshkit.errors import MAX_ID

    huge = "s" * 5_000
    with api(running) as client:
        posted = client.post("/rework", json={"session": huge, "harness": "claude", "rework": True})
        shown = client.get("/rework", params={"session": huge})
    for answer in (posted, shown):
        assert answer.status_code == 400, answer.text
        assert huge not in answer.text and f"at most {MAX_ID:,}" in answer.text
