"""The console's read API over real HTTP: sessions, signals, the overview, profile versions,
gate screenshots, and the page itself, which never holds the token."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from unittest.mock import ANY

import httpx
import orjson
import pytest

from dshkit import harnesses
from dshkit.app import App
from dshkit.gate import GateService
from dshkit.graft import GraftService
from dshkit.jobs import JobRunner
from dshkit.overview import StatusService
from dshkit.profile import ProfileService
from dshkit.sessions.service import TEXT_LIMIT, SessionsService
from dshkit.store import Store
from dshkit.web.app import create_app
from dshkit.web.server import make_server

from ..support.cli import run_dshkit
from ..support.console import LONG_OUTPUT, PNG, SESSION, build_world
from ..support.fakes import FakeOpenAI, Reply
from ..support.logs import MINUTE
from ..support.web import Running


def console_services(state: Path, jobs: JobRunner) -> dict[str, object]:
    return {
        "sessions": SessionsService(state),
        "signals": ProfileService(state),
        "status": StatusService(state),
        "gate": GateService(state, jobs=jobs),
        "graft": GraftService(state),
    }


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of the test's own: the hooks the overview inspects are nobody's real ones."""
    home = tmp_path / "home"
    home.mkdir()
    for name in ("HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "DSH_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    for name in ("DSHKIT_LLM_API_KEY", "DSHKIT_LLM_BASE_URL", "DSHKIT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def running(tmp_path: Path, home: Path) -> Iterator[Running]:
    server = Running(tmp_path, capabilities=console_services)
    server.world = build_world(server.state_dir, server.root)  # type: ignore[attr-defined]
    yield server
    server.close()


def get(running: Running, path: str, **params: str) -> httpx.Response:
    """A read as the page makes it: local, with the login link's cookie."""
    return running.http.get(f"http://127.0.0.1:{running.port}{path}", params=params)


# -- sessions ---------------------------------------------------------------------------------


def test_sessions_are_listed_newest_first_and_filtered(running: Running) -> None:
    listed = get(running, "/api/sessions").json()["sessions"]
    assert len(listed) == 4 and {s["harness"] for s in listed} == {"dsh"}
    times = [s["lastTime"] for s in listed]
    assert times == sorted(times, reverse=True)
    assert len(get(running, "/api/sessions", limit="2").json()["sessions"]) == 2
    assert get(running, "/api/sessions", harness="codex").json()["sessions"] == []
    for params in ({"harness": "vim"}, {"limit": "0"}, {"limit": "x"}):
        refused = get(running, "/api/sessions", **params)
        assert refused.status_code == 400 and refused.json()["ok"] is False


def test_a_session_opens_with_messages_and_tool_calls_with_results(running: Running) -> None:
    view = get(running, f"/api/sessions/dsh/{SESSION}").json()
    assert view["session"]["id"] == SESSION and view["turns"] == 2
    humans = view["humanMessages"]
    assert humans["total"] == 2 and [m["text"] for m in humans["items"]] == [
        "帮我把构建修好，用中文回答",
        "继续",
    ]
    assert [m["turn"] for m in humans["items"]] == [1, 2]
    calls = view["toolCalls"]["items"]
    assert [c["name"] for c in calls] == ["write", "write", "write", "bash"]
    assert calls[0]["failed"] and calls[0]["result"]["errorCode"] == "E_WRITE"
    assert calls[0]["result"]["text"] == "写入失败：权限不足"
    assert orjson.loads(calls[0]["arguments"]["text"]) == {"path": "src/main.py"}
    bash = calls[3]
    assert bash["durationMs"] == 2 * MINUTE and not bash["failed"]
    # Nothing cut silently: the long output is cut at the limit and the rest is counted.
    assert len(bash["result"]["text"]) == TEXT_LIMIT
    assert bash["result"]["cutChars"] == len(LONG_OUTPUT) - TEXT_LIMIT


def test_a_quote_leads_back_to_the_human_message_it_came_from(running: Running) -> None:
    found = get(running, "/api/sessions/quote", text="把构建修好").json()
    assert found["total"] == 1
    assert found["matches"] == [
        {"harness": "dsh", "sessionId": SESSION, "seq": found["matches"][0]["seq"], "time": ANY}
    ]
    assert get(running, "/api/sessions/quote", text="nobody said this").json() == {
        "matches": [],
        "total": 0,
    }
    refused = get(running, "/api/sessions/quote", text=" ")
    assert refused.status_code == 400 and "text must be 1 to 500" in refused.text


def test_session_lists_are_windows_with_their_totals(running: Running) -> None:
    first = get(running, f"/api/sessions/dsh/{SESSION}", limit="1").json()["toolCalls"]
    assert (first["total"], first["offset"], len(first["items"])) == (4, 0, 1)
    later = get(running, f"/api/sessions/dsh/{SESSION}", limit="2", offset="2").json()
    assert [c["name"] for c in later["toolCalls"]["items"]] == ["write", "bash"]
    bash_seq = later["toolCalls"]["items"][1]["seq"]
    around = get(running, f"/api/sessions/dsh/{SESSION}", limit="1", around=str(bash_seq)).json()
    assert around["toolCalls"]["items"][0]["seq"] == bash_seq
    assert around["toolCalls"]["offset"] == 3


def test_unknown_sessions_and_bad_windows_are_refused(running: Running) -> None:
    missing = get(running, "/api/sessions/dsh/no-such-session")
    assert missing.status_code == 404 and "no-such-session" in missing.json()["error"]
    assert get(running, f"/api/sessions/vim/{SESSION}").status_code == 400
    for params in ({"limit": "501"}, {"limit": "0"}, {"offset": "-1"}, {"around": "x"}):
        refused = get(running, f"/api/sessions/dsh/{SESSION}", **params)
        assert refused.status_code == 400, params


# -- signals ----------------------------------------------------------------------------------


def test_signal_totals_per_harness_and_day(running: Running) -> None:
    totals = get(running, "/api/signals").json()
    mine = {"delegateRuns": 1, "longTools": 1, "repeatFailures": 1}
    for name, count in mine.items():
        assert totals["totals"][name] >= count
        assert totals["harnesses"]["dsh"][name] == totals["totals"][name]
    day = time.strftime("%Y-%m-%d", time.gmtime(1_790_000_000))  # the friction session's day
    on_day = [d for d in totals["days"] if d["day"] == day]
    assert on_day and all(on_day[0]["totals"][name] == n for name, n in mine.items())
    assert sum(d["totals"]["longTools"] for d in totals["days"]) == totals["totals"]["longTools"]


def test_hits_say_where_each_one_happened(running: Running) -> None:
    failures = get(running, "/api/signals/hits", signal="repeatFailures", session=SESSION).json()
    assert failures["total"] == 1
    (hit,) = failures["hits"]
    assert (hit["harness"], hit["sessionId"], hit["turn"]) == ("dsh", SESSION, 1)
    assert (hit["tool"], hit["failures"], hit["errorCode"]) == ("write", 3, "E_WRITE")
    long = get(running, "/api/signals/hits", signal="longTools", session=SESSION).json()["hits"]
    assert long[0]["tool"] == "bash" and long[0]["durationMs"] == 2 * MINUTE
    delegate = get(running, "/api/signals/hits", signal="delegateRuns", session=SESSION).json()
    assert delegate["hits"][0]["text"] == "请你重试一下构建命令，然后告诉我结果。"
    assert delegate["hits"][0]["match"] == "请你重试"


def test_hits_are_paged_with_the_total_said(running: Running) -> None:
    everything = get(running, "/api/signals/hits", signal="longTools", limit="500").json()
    total = everything["total"]
    assert total == len(everything["hits"]) >= 1
    page = get(running, "/api/signals/hits", signal="longTools", limit="1", offset="0").json()
    assert page["total"] == total and len(page["hits"]) == 1
    assert page["hits"][0] == everything["hits"][0]
    for params in ({"signal": "nope"}, {}, {"signal": "longTools", "limit": "501"}):
        refused = get(running, "/api/signals/hits", **params)
        assert refused.status_code == 400 and refused.json()["ok"] is False, params


# -- the overview -------------------------------------------------------------------------------


def test_overview_says_what_is_known_and_what_to_do(running: Running) -> None:
    status = get(running, "/api/status").json()
    assert status["sessions"]["dsh"] == 4 and status["humanMessages"] > 2
    assert status["harnesses"] == list(harnesses.NAMES)  # the page builds its pickers from it
    assert status["llm"]["configured"] is False
    assert "DSHKIT_LLM_API_KEY" in status["llm"]["nextStep"]
    hooks = {h["harness"]: h for h in status["hooks"]}
    assert set(hooks) == set(harnesses.NAMES)
    assert hooks["claude"]["installed"] is False
    assert hooks["claude"]["nextStep"] == "dshkit install-hooks --harness claude"
    assert status["profile"] == {"mode": "auto", "version": None}

    (running.state_dir / "config.toml").write_text('[llm]\napi_key = "sk-never-shown-123"\n')
    configured = get(running, "/api/status")
    assert configured.json()["llm"]["configured"] is True
    assert "sk-never-shown" not in configured.text


# -- profile versions ---------------------------------------------------------------------------


def test_profile_versions_keep_each_diff(running: Running) -> None:
    assert get(running, "/api/profile/versions").json() == {"kept": 0, "versions": []}
    with FakeOpenAI() as fake:
        entry = {"id": "A1", "category": "A", "claim": "用中文沟通", "evidence": ["[1]"]}
        for claim in ("用中文沟通", "始终用中文沟通"):
            reply = {"entries": [{**entry, "claim": claim, "confidence": "high"}]}
            fake.replies.append(Reply(deltas=[orjson.dumps(reply).decode()]))
        (running.state_dir / "config.toml").write_text(
            f'[llm]\nbase_url = "{fake.base_url}"\napi_key = "sk-local"\n'
        )
        for _ in range(2):
            assert running.send("POST", "/regenerate").status_code == 202
            running.service.wait(30)
    history = get(running, "/api/profile/versions").json()
    assert history["kept"] == 2
    newest, first = history["versions"]
    assert (newest["version"], first["version"]) == (2, 1)
    assert first["diff"]["added"] == ["A1"] and newest["diff"]["modified"] == ["A1"]
    assert newest["entries"][0]["claim"] == "始终用中文沟通"
    assert get(running, "/api/profile/versions", limit="1").json()["versions"][0]["version"] == 2
    assert get(running, "/api/profile/versions", limit="0").status_code == 400


# -- gate screenshots ---------------------------------------------------------------------------


def test_a_verdicts_screenshot_is_served_and_only_from_the_shots(running: Running) -> None:
    verdict = running.world["verdict"]  # type: ignore[attr-defined]
    shot = get(running, f"/api/gate/{verdict}/screenshot")
    assert shot.status_code == 200 and shot.headers["content-type"] == "image/png"
    assert shot.content == PNG
    outside = running.state_dir / "token"  # a stored path elsewhere is never served
    with Store(running.state_dir) as store, store.transaction() as db:
        db.execute("UPDATE gate_verdicts SET screenshot = ? WHERE id = ?", (str(outside), verdict))
    assert get(running, f"/api/gate/{verdict}/screenshot").status_code == 404
    assert get(running, "/api/gate/999/screenshot").status_code == 404
    assert get(running, "/api/gate/x/screenshot").status_code == 404


# -- the page ---------------------------------------------------------------------------------


def test_the_page_never_carries_the_token(running: Running) -> None:
    page = get(running, "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert running.token not in page.text and "dshkit-token" not in page.text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY" and page.headers["cache-control"] == "no-store"
    assert "access-control-allow-origin" not in page.headers
    named = running.http.get(
        f"http://localhost:{running.port}/", headers={"x-dshkit-token": running.token}
    )
    assert named.status_code == 200 and running.token not in named.text
    # A page of another origin, rebinding its name to 127.0.0.1, is refused outright.
    refused = running.http.get(
        f"http://127.0.0.1:{running.port}/", headers={"host": "evil.example"}
    )
    assert refused.status_code == 403 and running.token not in refused.text


def test_a_remote_request_never_gets_the_token_in_the_page(tmp_path: Path) -> None:
    token = "t" * 43
    app = create_app(App(tmp_path / "state"), token, mount=[], allow_remote=True)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = make_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    thread.start()
    try:
        while not server.started:
            time.sleep(0.01)
        url = f"http://127.0.0.1:{port}/"
        # Allowed in by --allow-remote with the token, under a name that is not loopback: the
        # page is served without the token inside, as it is locally.
        remote = httpx.get(url, headers={"host": "console.example:8765", "x-dshkit-token": token})
        assert remote.status_code == 200 and "dshkit-token" not in remote.text
        assert token not in remote.text
        local = httpx.get(url, headers={"x-dshkit-token": token})
        assert local.status_code == 200 and token not in local.text
    finally:
        server.should_exit = True
        thread.join(10)


def test_the_static_assets_are_served_with_the_same_policy(running: Running) -> None:
    script = get(running, "/static/app.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "x-dshkit-request" in script.text
    style = get(running, "/static/app.css")
    assert style.headers["content-type"].startswith("text/css")
    assert "content-security-policy" in style.headers
    assert get(running, "/static/index.html").status_code == 404
    assert get(running, "/static/../token").status_code == 404


def test_the_command_line_and_the_web_say_a_session_in_the_same_json(
    running: Running, tmp_path: Path
) -> None:
    state = ["--state-dir", str(running.state_dir)]
    listed = run_dshkit("sessions", "list", "--json", *state, home=tmp_path).stdout
    assert orjson.loads(listed) == get(running, "/api/sessions").json()["sessions"]
    shown = run_dshkit("sessions", "show", SESSION[:12], "--json", *state, home=tmp_path).stdout
    assert orjson.loads(shown) == SessionsService(running.state_dir).show(SESSION).as_json()
    # The web resolves a session as the command line does: an id or a unique prefix.
    whole = get(running, f"/api/sessions/dsh/{SESSION}").json()
    assert get(running, f"/api/sessions/dsh/{SESSION[:12]}").json() == whole
    assert {key: orjson.loads(shown)[key] for key in whole["session"]} == whole["session"]
    ambiguous = get(running, "/api/sessions/dsh/session-")  # the corpus's three sessions
    assert ambiguous.status_code == 400 and ambiguous.json()["kind"] == "ambiguous"
