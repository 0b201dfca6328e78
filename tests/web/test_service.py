"""The local service, run for real on 127.0.0.1 and driven by a real HTTP client (seed §6-2.4)."""

from __future__ import annotations

import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from dshkit.web.app import new_token

from ..support.cli import COMMAND, environment
from ..support.corpus import Corpus
from ..support.fakes import FakeOpenAI, Reply
from ..support.readonly import snapshot
from ..support.web import Running


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    server = Running(tmp_path)
    yield server
    server.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Running]:
    """On a socket: what is sent as raw bytes, and the body's deadline."""
    server = Running(tmp_path, served=True)
    yield server
    server.close()


def test_state_is_json_uncached_and_holds_no_secret(running: Running) -> None:
    response = running.send("GET", "/state", token=False)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "no-store"
    state = response.json()
    assert (state["contract"], state["mode"], state["hallUrl"]) == (1, "auto", None)
    assert state["effectiveText"] == "" and state["effectiveSource"] == "profile"
    assert running.token not in response.text
    assert running.send("GET", "/state/").status_code == 200  # a trailing slash is fine


@pytest.mark.parametrize("host", ["evil.example", "127.evil.example:8765", "10.0.0.1", ""])
def test_only_loopback_host_names_are_served(running: Running, host: str) -> None:
    response = running.send("GET", "/state", headers={"host": host})
    assert response.status_code == 403 and "Host" in response.json()["error"]


def test_changes_need_the_token_and_no_foreign_origin(running: Running) -> None:
    assert running.bare("POST", "/mode", json={"mode": "custom"}).status_code == 401
    foreign = running.send(
        "POST", "/mode", json={"mode": "custom"}, headers={"origin": "https://evil.example"}
    )
    assert foreign.status_code == 403 and "origin" in foreign.json()["error"]
    local = running.send(
        "POST",
        "/mode",
        json={"mode": "custom"},
        headers={"origin": f"http://localhost:{running.port}"},
    )
    assert local.status_code == 200 and local.json()["mode"] == "custom"


def test_mode_is_checked_before_anything_is_written(running: Running) -> None:
    bad = running.send("POST", "/mode", json={"mode": "both"})
    assert bad.status_code == 400 and running.send("GET", "/state").json()["mode"] == "auto"
    good = running.send("POST", "/mode", json={"mode": "custom"})
    assert good.json()["ok"] and good.json()["state"]["mode"] == "custom"


def test_custom_text_and_its_limits(running: Running) -> None:
    running.send("POST", "/mode", json={"mode": "custom"})
    text = "请始终用中文回答，不要用 emoji。"
    ok = running.send("PUT", "/custom", json={"text": text})
    assert ok.status_code == 200 and ok.json()["length"] == len(text)
    assert ok.json()["state"]["effectiveText"] == "请始终用中文回答，不要用 emoji。"
    not_text = running.send("PUT", "/custom", json={"text": 5})
    assert not_text.status_code == 400 and "string" in not_text.json()["error"]  # not 413
    assert running.send("PUT", "/custom", json={"text": "长" * 200_001}).status_code == 413
    assert running.send("PUT", "/custom", content=b"{not json").status_code == 400
    assert running.send("PUT", "/custom", json={"text": "{{x}}"}).status_code == 400
    assert running.send("GET", "/state").json()["customText"].startswith("请始终")


def test_bodies_are_bounded_three_ways(served: Running) -> None:
    running = served
    big = running.send("PUT", "/custom", content=b"x" * 1_000_001)
    assert big.status_code == 413
    chunked = running.send("PUT", "/custom", content=iter([b"x" * 600_000, b"x" * 600_000]))
    assert chunked.status_code == 413  # no declared length: counted as it arrives
    head = (
        f"PUT /api/profile/custom HTTP/1.1\r\nHost: 127.0.0.1\r\nx-dshkit-token: "
        f"{running.token}\r\ncontent-type: application/json\r\n"
    ).encode()
    declared = running.raw(head + b"content-length: 50000000\r\n\r\n")
    assert declared.startswith(b"HTTP/1.1 413")  # refused unread
    slow = running.raw(head + b'content-length: 100\r\n\r\n{"text":', wait=1.0)
    assert slow.startswith(b"HTTP/1.1 408")


def test_copied_is_stamped_by_the_server(running: Running) -> None:
    response = running.send("POST", "/copied", json={"text": "", "at": 1, "profileVersion": 99})
    snapshot = response.json()["copiedSnapshot"]
    assert snapshot["at"] > 1_700_000_000_000 and snapshot["profileVersion"] is None
    assert snapshot["algorithmVersion"] == "entries-v1"


def test_unknown_routes_are_json_404s_and_the_page_lists_the_state(running: Running) -> None:
    for method, path in (("GET", "/nope"), ("POST", "/state"), ("DELETE", "/custom")):
        response = running.send(method, path)
        assert response.status_code == 404 and response.json()["ok"] is False
    assert "GET /api/profile/state" in running.send("GET", "/").json()["endpoints"]
    page = running.http.get(f"http://127.0.0.1:{running.port}/")
    assert page.status_code == 200 and "/static/app.js" in page.text


def test_background_runs_answer_at_once_and_report_in_last_run(running: Running) -> None:
    started = time.monotonic()
    response = running.send("POST", "/regenerate")
    assert response.status_code == 202 and time.monotonic() - started < 2
    running.service.wait(30)
    run = running.send("GET", "/state").json()["lastRun"]
    assert not run["ok"] and "set DSHKIT_LLM_API_KEY" in run["error"]  # recorded, not lost
    with FakeOpenAI() as fake:
        fake.replies.append(
            Reply(
                deltas=[
                    orjson.dumps(
                        {
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
                    ).decode()
                ]
            )
        )
        (running.state_dir / "config.toml").write_text(
            f'[llm]\nbase_url = "{fake.base_url}"\napi_key = "sk-local"\n'
        )
        assert running.send("POST", "/regenerate").status_code == 202
        running.service.wait(30)
    state = running.send("GET", "/state").json()
    assert state["profile"]["version"] == 1 and "用中文沟通" in state["effectiveText"]
    assert running.send("POST", "/rescan").status_code == 202
    running.service.wait(30)
    assert "below both thresholds" in running.send("GET", "/state").json()["lastRun"]["reason"]
    assert "sk-local" not in running.send("GET", "/state").text


def test_token_file_is_private_and_drawn_anew_at_each_start(tmp_path: Path) -> None:
    token = new_token(tmp_path)
    assert stat.S_IMODE((tmp_path / "token").stat().st_mode) == 0o600 and len(token) >= 32
    again = new_token(tmp_path)
    assert again != token and (tmp_path / "token").read_text().strip() == again


@pytest.mark.process
def test_serve_command_and_session_roots_left_untouched(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    Corpus(root, seed=32).generate(sessions=2, frames=100)
    before = snapshot(root)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = subprocess.Popen(
        [*COMMAND, "serve", "--port", str(port), "--root", str(root)],
        env=environment(tmp_path),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/profile/state")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and child.poll() is None, "serve did not start"
                time.sleep(0.1)
        token = (tmp_path / ".dsh" / "dshkit" / "token").read_text().strip()
        auth = {"x-dshkit-token": token}
        state = httpx.get(f"http://127.0.0.1:{port}/api/profile/state", headers=auth).json()
        rescan = httpx.post(f"http://127.0.0.1:{port}/api/profile/rescan", headers=auth)
        assert state["mode"] == "auto" and rescan.status_code == 202
        for _ in range(100):
            current = httpx.get(f"http://127.0.0.1:{port}/api/profile/state", headers=auth).json()
            if current["lastRun"] and not current["running"]:
                break
            time.sleep(0.1)
        assert "first profile" in current["lastRun"]["reason"]
    finally:
        child.terminate()
        _, err = child.communicate(timeout=20)
    assert f"http://127.0.0.1:{port}/" in err
    assert snapshot(root) == before
