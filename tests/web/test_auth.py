"""Who the service lets in: the owner only, by the token header or the login link's cookie.

Every route (each router's endpoints as the routers list them, the page and its assets)
refuses a request without credentials; the page never holds the token; the login link sets
an HttpOnly SameSite=Strict cookie and drops out of the URL; a change made with the cookie
needs the console's header and Origin; a page of another origin, in a browser signed in,
can neither read nor start anything (the real browser, at the end).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response

from dshkit import chromium
from dshkit.app import App
from dshkit.sessions import Source
from dshkit.web.app import create_app, ensure_token
from dshkit.web.routers import ROUTERS, RouterFactory
from dshkit.web.routing import Router, json_response, read_json
from dshkit.web.server import make_server

from ..support.web import call

TOKEN = "t" * 43


def probe_router(calls: list[Any]) -> Router:
    """A capability whose GET starts something (as `?probe=1` does): a refused request shows
    in `calls` if it got through."""
    api = Router("probe")

    @api.get("/start")
    async def start(request: Request) -> Response:
        calls.append("started")
        return json_response({"ok": True})

    @api.get("/read")
    async def read(request: Request) -> Response:
        calls.append("read")
        return json_response({"secret": "words people said"})

    @api.post("/poke")
    async def poke(request: Request) -> Response:
        calls.append(await read_json(request))
        return json_response({"ok": True})

    return api


class Served:
    """The app with a service for every router (and the probe capability), on 127.0.0.1."""

    def __init__(self, tmp_path: Path) -> None:
        self.state_dir = tmp_path / "state"
        root = tmp_path / "sessions"
        root.mkdir()
        self.token = ensure_token(self.state_dir)
        self.calls: list[Any] = []
        served = App(self.state_dir, [Source("dsh", root)])
        routers: dict[str, RouterFactory] = {
            **ROUTERS,
            "probe": lambda app: probe_router(self.calls),
        }
        self.routers = {name: factory(served) for name, factory in routers.items()}
        self.app = create_app(served, self.token, routers=routers)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = make_server(self.app)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]})
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)

    def mode(self) -> str:
        """The profile's mode, asked as a script does."""
        state = httpx.get(f"{self.url}/api/profile/state", headers={"x-dshkit-token": self.token})
        mode: str = state.json()["mode"]
        return mode

    def signed_in(self) -> httpx.Client:
        """A client that opened the login link and kept the cookie."""
        client = httpx.Client(base_url=self.url)
        assert client.get("/", params={"token": self.token}).status_code == 303
        return client

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    server = Served(tmp_path)
    yield server
    server.close()


def concrete(endpoint: str) -> tuple[str, str]:
    """ "METHOD /api/x/{id}" as a request that reaches it: ("METHOD", "/api/x/1")."""
    method, path = endpoint.split(" ", 1)
    parts = ["1" if p.startswith("{") else p for p in path.split("/")]
    return method, "/".join(parts)


def test_every_route_refuses_a_request_without_credentials(served: Served) -> None:
    # Every router the service can mount is mounted here: a new one cannot be left out.
    assert set(ROUTERS) <= set(served.routers), "add a service for the new router above"
    requests = [concrete(e) for router in served.routers.values() for e in router.endpoints]
    requests += [("GET", "/"), ("GET", "/static/app.js"), ("GET", "/static/app.css")]
    requests += [("GET", "/static/icon.svg"), ("GET", "/api/nope"), ("HEAD", "/")]
    assert len(requests) > 30
    stranger = httpx.Client(base_url=served.url)
    for method, path in requests:
        answer = stranger.request(method, path, json={} if method not in ("GET", "HEAD") else None)
        assert answer.status_code == 401, (method, path, answer.status_code)
        assert served.token not in answer.text
        if path.startswith("/api/"):
            assert answer.json()["ok"] is False and "x-dshkit-token" in answer.json()["error"]
    page = stranger.get("/")
    assert page.headers["content-type"].startswith("text/html")
    assert "dshkit open" in page.text and "dshkit serve" in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert served.calls == [] and served.mode() == "auto"  # nothing reached a handler


def test_the_page_never_holds_the_token(served: Served) -> None:
    browser = served.signed_in()
    page, script = browser.get("/"), browser.get("/static/app.js")
    browser.close()
    assert page.status_code == 200 and "/static/app.js" in page.text
    assert served.token not in page.text and served.token not in script.text
    scripted = httpx.get(f"{served.url}/", headers={"x-dshkit-token": served.token})
    assert scripted.status_code == 200 and served.token not in scripted.text


def test_the_login_link_sets_a_cookie_and_leaves_the_url(served: Served) -> None:
    browser = httpx.Client(base_url=served.url)
    signed = browser.get("/", params={"token": served.token})
    assert signed.status_code == 303 and signed.headers["location"] == "/"
    cookie = signed.headers["set-cookie"]
    attributes = {a.strip().split("=")[0].lower() for a in cookie.split(";")[1:]}
    assert attributes == {"path", "httponly", "samesite"}  # no Secure: plain HTTP here
    assert "SameSite=Strict" in cookie and "Path=/" in cookie
    assert served.token not in cookie and served.token not in signed.text
    assert signed.headers["cache-control"] == "no-store"
    # Other query parameters stay; only the token leaves the URL.
    kept = httpx.get(f"{served.url}/", params={"token": served.token, "view": "profile"})
    assert kept.status_code == 303 and kept.headers["location"] == "/?view=profile"
    # With the cookie, reads work: the page, its assets, the API, a job's event stream too.
    assert browser.get("/").status_code == 200
    assert browser.get("/static/app.js").status_code == 200
    assert browser.get("/api/profile/state").json()["mode"] == "auto"
    assert browser.get("/api/probe/read").status_code == 200
    # A change with the cookie alone is refused: it needs the console's header and Origin.
    own = {"origin": served.url}
    bare = browser.post("/api/profile/mode", json={"mode": "custom"}, headers=own)
    assert bare.status_code == 403 and "x-dshkit-request" in bare.json()["error"]
    marked = {"x-dshkit-request": "1"}
    unplaced = browser.post("/api/profile/mode", json={"mode": "custom"}, headers=marked)
    assert unplaced.status_code == 403 and "Origin" in unplaced.json()["error"]
    other_port = {**marked, "origin": "http://127.0.0.1:1"}  # a loopback origin, not ours
    assert browser.post("/api/probe/poke", json=1, headers=other_port).status_code == 403
    assert served.mode() == "auto" and served.calls == ["read"]
    done = browser.post("/api/profile/mode", json={"mode": "custom"}, headers={**marked, **own})
    assert done.status_code == 200 and served.mode() == "custom"
    # A request another origin's page made the browser send carries the cookie (another
    # port of 127.0.0.1 is the same site) but is not the console's: it counts for nothing.
    for site in ("same-site", "cross-site"):
        foreign = browser.get("/api/probe/start", headers={"sec-fetch-site": site})
        assert foreign.status_code == 401
    assert browser.get("/api/probe/start", headers={"sec-fetch-site": "same-origin"}).is_success
    assert served.calls == ["read", "started"]


def test_a_wrong_token_in_the_link_gets_nothing(served: Served) -> None:
    for wrong in ("x" * 43, served.token[:-1], ""):
        answer = httpx.get(f"{served.url}/", params={"token": wrong})
        assert answer.status_code == 401 and "set-cookie" not in answer.headers
        assert "wrong" in answer.text and "dshkit open" in answer.text
    # The token is a login link's, on a page: as a query of the API it is no credential.
    api = httpx.get(f"{served.url}/api/profile/state", params={"token": served.token})
    assert api.status_code == 401 and "set-cookie" not in api.headers
    forged = httpx.get(
        f"{served.url}/api/profile/state", cookies={f"dshkit-auth-{served.port}": served.token}
    )
    assert forged.status_code == 401  # the cookie is not the token
    wrong_header = httpx.get(f"{served.url}/api/profile/state", headers={"x-dshkit-token": "no"})
    assert wrong_header.status_code == 401


def test_a_restarted_service_does_not_know_the_old_cookie(served: Served) -> None:
    browser = served.signed_in()
    (value,) = browser.cookies.values()
    browser.close()
    again = create_app(App(served.state_dir), served.token, mount=[])  # a new process's key
    cookie = {"cookie": f"dshkit-auth-8765={value}"}  # `call` names the server's port 8765
    status, answer = call(again, ("127.0.0.1", 50123), path="/api/status", headers=cookie)
    assert status == 401 and "sign in" in answer["error"]


def sign_in(app: Any, peer: tuple[str, int], host: str, token: str) -> tuple[int, str | None]:
    """The login link's request handed to the ASGI app: its status and Set-Cookie."""
    scope = {
        "type": "http",
        "method": "GET",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": f"token={token}".encode(),
        "headers": [(b"host", host.encode())],
        "client": peer,
        "server": ("0.0.0.0", 8765),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    cookies = [v.decode() for k, v in sent[0]["headers"] if k == b"set-cookie"]
    return sent[0]["status"], cookies[0] if cookies else None


def test_allow_remote_signs_a_browser_in_the_same_way() -> None:
    calls: list[Any] = []
    app = create_app(
        App(Path("/nonexistent/dshkit-state")),
        TOKEN,
        mount=["probe"],
        allow_remote=True,
        routers={"probe": lambda app: probe_router(calls)},
    )
    remote, host = ("192.168.7.9", 50123), "192.168.7.2:8765"
    assert call(app, remote, host=host, path="/api/probe/read")[0] == 401
    assert sign_in(app, remote, host, "x" * 43) == (401, None)
    status, cookie = sign_in(app, remote, host, TOKEN)
    assert status == 303 and cookie is not None and "HttpOnly" in cookie
    jar = {"cookie": cookie.split(";")[0]}
    assert call(app, remote, host=host, path="/api/probe/read", headers=jar)[0] == 200
    change = {**jar, "x-dshkit-request": "1", "origin": f"http://{host}"}
    post: dict[str, Any] = {"method": "POST", "path": "/api/probe/poke", "body": b"[1]"}
    assert call(app, remote, host=host, headers=change, **post)[0] == 200
    foreign = {**change, "origin": "http://evil.example"}
    assert call(app, remote, host=host, headers=foreign, **post)[0] == 403
    assert calls == ["read", [1]]


# -- the real browser -----------------------------------------------------------------------

# A page of another origin (another port of 127.0.0.1: the same site, so SameSite lets the
# cookie go) tries everything a page can without the token: reads with and without
# credentials, a read with the console's header (a preflight), a form POST whose text/plain
# body is valid JSON, a no-cors POST, and images pointing at a route that starts something.
EVIL_PAGE = """<!doctype html><html><body>
<form id="form" method="POST" action="{target}/api/profile/mode" enctype="text/plain"
  target="sink"><input name='{{"mode":"custom","x":"' value='"}}'></form>
<iframe name="sink" id="sink"></iframe>
<script>
window.results = {{}};
const target = "{target}";
async function attempt(name, url, options) {{
  try {{
    const r = await fetch(url, options);
    results[name] = {{ status: r.status, type: r.type, body: await r.text() }};
  }} catch (e) {{ results[name] = {{ error: String(e) }}; }}
}}
function image(url) {{
  return new Promise((done) => {{
    const img = new Image();
    img.onload = img.onerror = () => done();
    img.src = url;
  }});
}}
(async () => {{
  await attempt("plain", `${{target}}/api/probe/read`, {{}});
  await attempt("include", `${{target}}/api/probe/read`, {{ credentials: "include" }});
  await attempt("marked", `${{target}}/api/probe/read`,
    {{ credentials: "include", headers: {{ "x-dshkit-request": "1" }} }});
  await attempt("nocors", `${{target}}/api/probe/poke`, {{ method: "POST", mode: "no-cors",
    credentials: "include", body: "1", headers: {{ "content-type": "text/plain" }} }});
  await image(`${{target}}/api/probe/start`);
  await image(`${{target}}/api/probe/read`);
  const sink = document.getElementById("sink");
  await new Promise((done) => {{ sink.onload = done; document.getElementById("form").submit(); }});
  results.done = true;
}})();
</script></body></html>
"""


class _Evil(BaseHTTPRequestHandler):
    page = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *args: Any) -> None:
        pass


# Needs Chromium (a `browser` marker is being added elsewhere; until then, the skip says so).
@pytest.mark.browser
@pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed")
def test_a_page_of_another_origin_can_neither_read_nor_start_anything(served: Served) -> None:
    from playwright.sync_api import sync_playwright

    from dshkit.gate.browser import Browser

    handler = type("Evil", (_Evil,), {"page": EVIL_PAGE.format(target=served.url).encode()})
    evil = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    evil_url = f"http://127.0.0.1:{evil.server_address[1]}/"
    try:
        with Browser(loopback=True) as chrome:  # it drives the local service
            endpoint = asyncio.run(chrome.ready())
            with sync_playwright() as playwright:
                connected = playwright.chromium.connect_over_cdp(endpoint)
                context = connected.new_context()
                page = context.new_page()
                # The owner is signed in: the cookie is there for the evil page to ride on.
                page.goto(f"{served.url}/?token={served.token}")
                signed_in = (page.url, [c["name"] for c in context.cookies(served.url)])
                page.goto(evil_url)
                page.wait_for_function(
                    "() => window.results && window.results.done", timeout=30_000
                )
                results = page.evaluate("window.results")
                context.close()
                connected.close()
    finally:
        evil.shutdown()
        evil.server_close()
    for name in ("plain", "include", "marked"):  # no answer is readable
        assert "error" in results[name], (name, results[name])
    assert results["nocors"].get("type") == "opaque" or "error" in results["nocors"]
    assert "words people said" not in str(results)
    assert served.calls == []  # nothing read, nothing started, nothing poked
    assert served.mode() == "auto"  # the form changed nothing
    assert signed_in == (f"{served.url}/", [f"dshkit-auth-{served.port}"])
