"""The one security layer: it guards every router, including one that checks nothing itself;
the peer address, remote access with the token, and request heads that never finish (who
signs in and how: tests/test_web_auth.py)."""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import Response

from dshkit.app import App
from dshkit.web.app import create_app
from dshkit.web.routers import RouterFactory
from dshkit.web.routing import Router, json_response, read_json

from ..support.web import Running, call

TOKEN = "t" * 43


def dummy_router(calls: list[Any]) -> Router:
    """A capability that checks nothing: every refusal below is the guard's."""
    api = Router("dummy")

    @api.post("/poke")
    async def poke(request: Request) -> Response:
        calls.append(await read_json(request))
        return json_response({"ok": True})

    @api.get("/peek")
    async def peek(request: Request) -> Response:
        return json_response({"calls": len(calls)})

    @api.get("/items/{item}")
    async def item(request: Request) -> Response:
        return json_response({"item": request.path_params["item"]})

    return api


@pytest.fixture
def dummy(tmp_path: Path) -> Iterator[tuple[Running, list[Any]]]:
    calls: list[Any] = []
    server = Running(  # served: raw bytes on a socket, a body's deadline
        tmp_path, extra={"dummy": calls}, routers={"dummy": dummy_router}, served=True
    )
    server.http.base_url = f"http://127.0.0.1:{server.port}/api/dummy"
    yield server, calls
    server.close()


# The app builds nothing until asked: these tests mount only routers of their own.
NOWHERE = Path("/nonexistent/dshkit-state")


def own(name: str, data: list[Any]) -> dict[str, RouterFactory]:
    """The test's dummy router, mounted as `name` and built from `data`."""
    return {name: lambda app: dummy_router(data)}


def test_a_new_router_is_guarded_without_checks_of_its_own(
    dummy: tuple[Running, list[Any]],
) -> None:
    server, calls = dummy
    assert server.bare("POST", "/poke", json={"n": 1}).status_code == 401
    assert server.bare("GET", "/peek").status_code == 401
    foreign = server.send("POST", "/poke", json={"n": 2}, headers={"origin": "http://evil.example"})
    assert foreign.status_code == 403
    rebound = server.send("GET", "/peek", headers={"host": "evil.example"})
    assert rebound.status_code == 403 and "Host" in rebound.json()["error"]
    assert server.send("POST", "/poke", content=b"[" * 1_000_001).status_code == 413
    chunked = server.send("POST", "/poke", content=iter([b"[" * 600_000, b"[" * 600_000]))
    assert chunked.status_code == 413
    head = (
        f"POST /api/dummy/poke HTTP/1.1\r\nHost: 127.0.0.1\r\nx-dshkit-token: {server.token}\r\n"
    ).encode()
    assert server.raw(head + b"content-length: 50000000\r\n\r\n").startswith(b"HTTP/1.1 413")
    slow = server.raw(head + b"content-length: 100\r\n\r\n[1,", wait=1.0)
    assert slow.startswith(b"HTTP/1.1 408")
    assert server.send("POST", "/poke", content=b"{nope").status_code == 400
    assert calls == []  # nothing refused reached the handler
    ok = server.send("POST", "/poke", json={"n": 3})
    assert ok.status_code == 200 and calls == [{"n": 3}]
    assert server.send("GET", "/peek", token=False).json() == {"calls": 1}
    assert server.send("GET", "/items/a1/").json() == {"item": "a1"}
    missing = server.send("GET", "/items")
    assert missing.status_code == 404 and missing.json()["error"] == "no GET /api/dummy/items"
    page = server.send("GET", f"http://127.0.0.1:{server.port}/")
    assert "POST /api/dummy/poke" in page.text and "/static/app.js" in page.text


def test_unknown_or_misnamed_capabilities_are_refused() -> None:
    with pytest.raises(ValueError, match="no router for capability 'nope'"):
        create_app(App(NOWHERE), TOKEN, mount=["nope"])
    with pytest.raises(ValueError, match="is named 'dummy'"):
        create_app(App(NOWHERE), TOKEN, mount=["other"], routers=own("other", []))


def test_other_machines_are_refused_whatever_host_they_name() -> None:
    app = create_app(App(NOWHERE), TOKEN, mount=["dummy"], routers=own("dummy", []))
    token = {"x-dshkit-token": TOKEN}
    status, answer = call(app, ("192.168.7.9", 50123))  # Host: localhost, from elsewhere
    assert status == 403 and "other machines" in answer["error"]
    assert call(app, ("192.168.7.9", 50123), headers=token)[0] == 403
    assert call(app, None, headers=token)[0] == 403  # a peer we cannot name is not trusted
    assert call(app, ("127.0.0.1", 50123), headers=token) == (200, {"calls": 0})
    assert call(app, ("::1", 50123), host="[::1]:8765", headers=token) == (200, {"calls": 0})
    assert call(app, ("127.0.0.1", 50123), host="127.evil.example", headers=token)[0] == 403


def test_allow_remote_lets_other_machines_in_with_the_token_only() -> None:
    calls: list[Any] = []
    app = create_app(
        App(NOWHERE), TOKEN, mount=["dummy"], allow_remote=True, routers=own("dummy", calls)
    )
    remote = ("192.168.7.9", 50123)
    status, answer = call(app, remote, host="192.168.7.2:8765")  # a read, no token
    assert status == 401 and "x-dshkit-token" in answer["error"]
    token = {"x-dshkit-token": TOKEN}
    assert call(app, remote, host="192.168.7.2:8765", headers=token) == (200, {"calls": 0})
    # A rebinding page in a local browser names a foreign host: it needs the token too.
    assert call(app, ("127.0.0.1", 50123), host="evil.example")[0] == 401
    assert call(app, ("127.0.0.1", 50123), headers=token) == (200, {"calls": 0})
    same_origin = {**token, "origin": "http://192.168.7.2:8765"}
    post: dict[str, Any] = {"method": "POST", "path": "/api/dummy/poke", "body": b"[1]"}
    assert call(app, remote, host="192.168.7.2:8765", headers=same_origin, **post)[0] == 200
    foreign = {**token, "origin": "http://evil.example"}
    assert call(app, remote, host="192.168.7.2:8765", headers=foreign, **post)[0] == 403
    assert calls == [[1]]


def read_until_closed(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a hang fails the test)."""
    conn.settimeout(10)
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    return data


def test_a_request_head_that_never_finishes_is_dropped(running: Running) -> None:
    token = f"x-dshkit-token: {running.token}\r\n".encode()
    partial = b"GET /api/profile/state HTTP/1.1\r\nHost: 127.0.0.1\r\n" + token + b"x-slow: "
    with socket.create_connection(("127.0.0.1", running.port)) as conn:
        conn.sendall(partial)
        assert read_until_closed(conn) == b""
    # Also after a first request answered on a kept-alive connection.
    with socket.create_connection(("127.0.0.1", running.port)) as conn:
        conn.sendall(b"GET /api/profile/state HTTP/1.1\r\nHost: 127.0.0.1\r\n" + token + b"\r\n")
        conn.settimeout(10)
        first = conn.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        conn.sendall(partial)
        read_until_closed(conn)


def test_an_idle_kept_alive_connection_outlives_the_head_deadline(running: Running) -> None:
    # The head deadline runs from a head's first byte, not from the end of the last response:
    # closing an idle connection then raced a client's next request (reset by peer).
    conn = http.client.HTTPConnection("127.0.0.1", running.port, timeout=10)

    def state() -> int:
        conn.request("GET", "/api/profile/state", headers={"x-dshkit-token": running.token})
        answer = conn.getresponse()
        answer.read()
        assert not answer.will_close
        return answer.status

    try:
        assert state() == 200
        kept = conn.sock
        time.sleep(1.0)  # twice the test server's 0.5 s head deadline
        assert state() == 200 and conn.sock is kept  # answered on the same connection
    finally:
        conn.close()


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    server = Running(tmp_path, served=True)  # the head deadline of a connection: a socket
    yield server
    server.close()
