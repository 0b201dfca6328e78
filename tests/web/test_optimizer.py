"""The optimizer over HTTP: an optimization followed live as server-sent events, runs,
outcomes and per-session settings, behind the same guard as every route."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dshkit.jobs import JobRunner
from dshkit.optimizer import OptimizerService
from dshkit.sessions import Refresh, Scanner, Source
from dshkit.store import Store

from ..support.fakes import FakeOpenAI, Reply
from ..support.logs import exchange_events, human, session_dir, write_log
from ..support.web import Running, events

REFINED = "开工前先问用户：无\n把登录按钮改成蓝色。\n收尾自检：打开登录页看按钮。"


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    def capabilities(state: Path, jobs: JobRunner) -> dict[str, object]:
        return {"optimizer": OptimizerService(state, jobs=jobs)}

    server = Running(tmp_path, capabilities=capabilities)
    yield server
    server.close()


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """A DSH sessions root of its own, which the service is told to read."""
    return tmp_path / "dsh-sessions"


@pytest.fixture
def reading(tmp_path: Path, sessions: Path) -> Iterator[Running]:
    def capabilities(state: Path, jobs: JobRunner) -> dict[str, object]:
        return {"optimizer": OptimizerService(state, jobs=jobs, sources=[Source("dsh", sessions)])}

    server = Running(tmp_path, capabilities=capabilities)
    yield server
    server.close()


def api(running: Running) -> httpx.Client:
    return running.client(
        base_url=f"{running.url}/api/optimizer",
        headers={"x-dshkit-token": running.token},
    )


def test_an_optimization_is_followed_live_then_judged(running: Running) -> None:
    with FakeOpenAI() as fake, api(running) as client:
        (running.state_dir / "config.toml").write_text(
            f'[llm]\nbase_url = "{fake.base_url}"\napi_key = "sk-local"\n'
        )
        fake.replies.append(Reply(deltas=[REFINED]))
        started = client.post("/optimize", json={"raw": "把按钮改蓝", "tier": "basic"})
        assert started.status_code == 202 and started.json()["started"] is True
        url = f"http://127.0.0.1:{running.port}{started.headers['location']}/events"
        with running.http.stream("GET", url) as stream:
            seen = list(events(stream))
        stages = [e["data"].get("stage") for e in seen if e.get("event") == "progress"]
        assert stages[0] == "queued" and "model" in stages and stages[-1] == "done"
        end = seen[-1]["data"]
        assert end["state"] == "done" and end["result"]["output"] == REFINED
        run_id = end["result"]["runId"]
        listed = client.get("/runs").json()
        assert listed["runs"][0]["runId"] == run_id and listed["rates"]["basic"]["runs"] == 1
        assert client.get(f"/runs/{run_id}").json()["raw"] == "把按钮改蓝"
        judged = client.post("/outcome", json={"runId": run_id, "outcome": "ok"})
        assert judged.status_code == 200 and judged.json()["outcome"] == "ok"
        rate = client.get("/runs").json()["rates"]["basic"]
        # One judged run: counted, never a rate (under the minimum sample).
        assert (rate["ok"], rate["judged"], rate["successRate"], rate["interval"]) == (
            1,
            1,
            None,
            None,
        )


def test_bad_requests_are_named_and_changes_need_the_token(running: Running) -> None:
    with api(running) as client:
        assert client.post("/optimize", json={"raw": " "}).status_code == 400
        bad = client.post("/optimize", json={"raw": "x", "tier": "max"})
        assert bad.status_code == 400 and "[optimizer] tier" in bad.json()["error"]
        unknown = client.post("/optimize", json={"raw": "x", "session": "nope"})
        # a name that matches nothing is the error tree's NotFound: 404 on every route
        assert unknown.status_code == 404 and "no single session" in unknown.json()["error"]
        assert unknown.json()["kind"] == "not-found" and unknown.json()["field"] == "session"
        assert client.get("/runs/999").status_code == 404
        assert client.get("/runs?limit=0").status_code == 400
        assert client.post("/outcome", json={"runId": 1, "outcome": "meh"}).status_code == 400
        assert client.post("/outcome", json={"runId": 999, "outcome": "ok"}).status_code == 404
        assert client.get("/settings").json()["tier"] == "off"
        refused = client.post(
            "/outcome", json={"runId": 1, "outcome": "ok"}, headers={"x-dshkit-token": "no"}
        )
        assert refused.status_code == 401  # a wrong token signs no one in


def test_a_named_session_is_read_as_it_is_now_not_as_last_scanned(
    reading: Running, sessions: Path
) -> None:
    log = session_dir(sessions, "fresh-1") / "session.v4.jsonl.zstd"
    write_log(log, [exchange_events(0, 1, "把登录按钮改成蓝色", "好的，改好了。")])
    with Store(reading.state_dir) as store:
        assert Scanner(store).scan([Source("dsh", sessions)]).errors == []
    # The person goes on after that scan: the newest exchange is only in the log.
    write_log(log, [exchange_events(10, 2, "标题也换成「欢迎回来」", "标题已换。")], mode="ab")
    with FakeOpenAI() as fake, api(reading) as client:
        (reading.state_dir / "config.toml").write_text(
            f'[llm]\nbase_url = "{fake.base_url}"\napi_key = "sk-local"\n'
        )
        fake.replies.append(Reply(deltas=[REFINED]))
        body = {"raw": "按刚才说的再检查一遍", "tier": "basic", "turns": 3, "session": "fresh"}
        started = client.post("/optimize", json=body)
        assert started.status_code == 202, started.text
        url = f"http://127.0.0.1:{reading.port}{started.headers['location']}/events"
        with reading.http.stream("GET", url) as stream:
            end = list(events(stream))[-1]["data"]
        assert end["state"] == "done", end
        (request,) = fake.requests
        material = request.body["messages"][1]["content"]
        assert "把登录按钮改成蓝色" in material and "标题也换成「欢迎回来」" in material


def test_an_ambiguous_session_prefix_is_refused_naming_the_matches(
    reading: Running, sessions: Path
) -> None:
    for session_id in ("dup-1", "dup-2"):
        log = session_dir(sessions, session_id) / "session.v4.jsonl.zstd"
        write_log(log, [[human(0, "hi")]])
    with api(reading) as client:
        refused = client.post("/optimize", json={"raw": "x", "tier": "basic", "session": "dup"})
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert "'dup' matches 2 sessions" in error
        assert "dsh:dup-1" in error and "dsh:dup-2" in error
        unsettled = client.get("/settings", params={"session": "dup"})
        assert unsettled.status_code == 400 and "dsh:dup-1" in unsettled.json()["error"]


def test_settings_change_per_project_and_per_key(running: Running, tmp_path: Path) -> None:
    project = tmp_path / "work"
    project.mkdir()
    with api(running) as client:
        changed = client.put("/settings", json={"project": str(project), "tier": "advanced"})
        assert changed.status_code == 200, changed.text
        assert changed.json()["settings"]["tier"] == "advanced"
        again = client.put("/settings", json={"project": str(project), "permission": "review"})
        assert (again.json()["settings"]["tier"], again.json()["settings"]["permission"]) == (
            "advanced",
            "review",
        )  # the key not given is kept
        shown = client.get("/settings", params={"project": str(project)}).json()
        assert shown["tier"] == "advanced" and client.get("/settings").json()["tier"] == "off"
        removed = client.put("/settings", json={"project": str(project), "tier": None})
        assert removed.json()["settings"]["tier"] == "off"  # a null removes that one key
        assert client.put("/settings", json={"tier": "basic"}).status_code == 400
        missing = client.put("/settings", json={"project": str(tmp_path / "nope"), "tier": "basic"})
        assert missing.status_code == 400 and "no directory" in missing.json()["error"]


def test_the_last_run_of_a_session_is_marked_and_the_stats_show_cost_and_rates(
    reading: Running, sessions: Path
) -> None:
    log = session_dir(sessions, "mark-1") / "session.v4.jsonl.zstd"
    write_log(log, [exchange_events(0, 1, "把登录按钮改成蓝色", "好的，改好了。")])
    with Store(reading.state_dir) as store:
        assert Scanner(store).scan([Source("dsh", sessions)]).errors == []
    service = OptimizerService(reading.state_dir)
    with FakeOpenAI() as fake, api(reading) as client:
        (reading.state_dir / "config.toml").write_text(
            f'[llm]\nbase_url = "{fake.base_url}"\napi_key = "sk-local"\n'
        )
        fake.replies.append(Reply(deltas=[REFINED]))
        key = ("dsh", "mark-1")
        run = service.optimize(
            "把按钮改蓝", typed_in=key, overrides={"tier": "basic"}, refresh=Refresh.NONE
        )
        settings = service.settings(typed_in=key)
        service.record_passed("继续", settings, "continuation", typed_in=key, cwd=None, started=0)
        marked = client.post("/outcome/last", json={"session": "mark", "outcome": "ok"})
        assert marked.status_code == 200, marked.text
        assert marked.json()["runId"] == run.id and marked.json()["outcome"] == "ok"
        assert (
            client.post("/outcome/last", json={"session": "mark", "outcome": "x"}).status_code
            == 400
        )
        assert (
            client.post("/outcome/last", json={"session": "zz", "outcome": "ok"}).status_code == 404
        )
        stats = client.get("/stats").json()["rates"]
        assert stats["basic"]["judged"] == 1 and stats["basic"]["latency"]["p50Ms"] is not None
        assert stats["off"]["latency"]["skipped"] == 1  # the continuation, cost shown
        assert stats["basic"]["vsRawWords"] is None  # no judged raw words to compare with
