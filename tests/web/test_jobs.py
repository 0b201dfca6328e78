"""Background jobs over HTTP: a profile regeneration followed live as server-sent events, and
one job of a kind at a time."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.store import SCAN_LEASE, Lease, Store

from ..support.fakes import FakeOpenAI, Reply
from ..support.web import Running, events


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    server = Running(tmp_path)
    yield server
    server.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Running]:
    """On a socket: a stream read as it comes."""
    server = Running(tmp_path, served=True)
    yield server
    server.close()


PROFILE = {
    "entries": [
        {
            "id": "A1",
            "category": "A",
            "claim": "用中文沟通",
            "evidence": ["[1]"],
            "confidence": "high",
        }
    ]
}


def test_a_regeneration_is_followed_live_until_done(served: Running) -> None:
    running = served
    with FakeOpenAI() as fake, Store(running.state_dir) as store:
        fake.replies.append(Reply(deltas=[orjson.dumps(PROFILE).decode()]))
        (running.state_dir / "config.toml").write_text(
            f'[llm]\nbase_url = "{fake.base_url}"\napi_key = "sk-local"\n'
        )
        seen: list[dict[str, Any]] = []
        held = store.lease(SCAN_LEASE)
        held.__enter__()  # the job will wait at its scan until this test lets it go
        lease: AbstractContextManager[Lease] | None = held  # None once let go
        try:
            started = running.send("POST", "/regenerate")
            assert started.status_code == 202
            assert started.json() == {"started": True, "running": True}  # the shape it always had
            job_url = started.headers["location"]
            assert job_url.startswith("/api/jobs/profile-")
            url = f"http://127.0.0.1:{running.port}{job_url}/events"
            with running.http.stream("GET", url) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                for event in events(stream):
                    seen.append(event)
                    stage = event["data"].get("stage")
                    if stage == "scanning" and lease is not None:
                        # Seen while the job is still held at its scan: streamed, not batched.
                        assert running.service.running
                        # Held past the 0.5 s body timeout: an open stream is not a slow body.
                        time.sleep(1.0)
                        lease.__exit__(None, None, None)
                        lease = None
        finally:
            if lease is not None:
                lease.__exit__(None, None, None)
    progress = [e["data"] for e in seen if e["event"] == "progress"]
    stages = [p["stage"] for p in progress]
    assert stages[0] == "queued" and stages[-1] == "done"
    assert stages.index("scanning") < stages.index("generating") < stages.index("done")
    assert [int(e["id"]) for e in seen if e["event"] == "progress"] == [p["seq"] for p in progress]
    assert [p["seq"] for p in progress] == list(range(1, len(progress) + 1))
    scans = [p["fraction"] for p in progress if p["stage"] == "scanning"]
    assert scans == sorted(scans) and scans[-1] == 1.0  # the scan's bytes, as they were read
    end = seen[-1]
    assert end["event"] == "end" and end["data"]["state"] == "done"
    assert end["data"]["result"]["version"] == 1 and end["data"]["result"]["ok"] is True
    state = running.send("GET", "/state").json()
    assert state["lastRun"]["ok"] and "用中文沟通" in state["effectiveText"]
    listed = running.send("GET", f"http://127.0.0.1:{running.port}/api/jobs").json()["jobs"]
    assert [j["id"] for j in listed] == [job_url.rsplit("/", 1)[1]]
    # A late follower gets the whole story and the end, resuming after Last-Event-ID.
    replay = running.http.get(url, headers={"last-event-id": str(len(progress) - 1)})
    tail = list(events(replay))
    assert [e["event"] for e in tail] == ["progress", "end"]
    assert tail[0]["data"]["stage"] == "done"


def test_one_profile_job_at_a_time(running: Running) -> None:
    with Store(running.state_dir) as store, store.lease(SCAN_LEASE):
        first = running.send("POST", "/regenerate")
        second = running.send("POST", "/regenerate")
        rescan = running.send("POST", "/rescan")
        assert first.json() == {"started": True, "running": True}
        assert second.status_code == rescan.status_code == 202
        assert second.json() == rescan.json() == {"started": False, "running": True}
        assert first.headers["location"] == second.headers["location"] == rescan.headers["location"]
        jobs = running.send("GET", f"http://127.0.0.1:{running.port}/api/jobs?kind=profile")
        assert [j["state"] for j in jobs.json()["jobs"]] == ["running"]
        assert running.send("GET", "/state").json()["running"] is True
    running.service.wait(30)
    job = running.send("GET", f"http://127.0.0.1:{running.port}{first.headers['location']}").json()
    # No model configured: the job fails, and lastRun says so as it always did.
    assert job["state"] == "failed" and "set DSHKIT_LLM_API_KEY" in job["error"]
    assert running.send("GET", "/state").json()["lastRun"]["error"] == job["error"]
    again = running.send("POST", "/rescan")
    assert again.json()["started"] is True
    assert again.headers["location"] != first.headers["location"]


def test_unknown_jobs_and_bad_resume_points(running: Running) -> None:
    base = f"http://127.0.0.1:{running.port}/api/jobs"
    assert running.send("GET", f"{base}/profile-nope").status_code == 404
    assert running.send("GET", f"{base}/profile-nope/events").status_code == 404
    job = running.send("POST", "/rescan").headers["location"]
    bad = running.send("GET", f"http://127.0.0.1:{running.port}{job}/events?after=x")
    assert bad.status_code == 400
    running.service.wait(30)
