"""Who the service lets in: the owner only, by the token header or the console tab's header.

Every route (each router's endpoints as the routers list them, the page and its assets)
refuses a request without credentials; the page never holds the token; a login code signs
one tab in once, handing it its credential and a cookie that opens the page shell and no
API route; a connection another user of the machine opened is refused whatever it carries;
a page of another origin, in a browser signed in, can neither read nor start anything, and
the cookie it makes the browser send it opens nothing (the real browser, at the end).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response

from dshkit import chromium
from dshkit.app import App
from dshkit.sessions import Source
from dshkit.web.app import create_app, new_token
from dshkit.web.routers import ROUTERS, RouterFactory
from dshkit.web.routing import Router, json_response, read_json
from dshkit.web.security import Guard
from dshkit.web.server import make_server

from ..support.web import CONSOLE_META, call, exchange, login_code, sign_in, sign_in_page

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

    def __init__(self, tmp_path: Path, **guard: Any) -> None:
        self.state_dir = tmp_path / "state"
        root = tmp_path / "sessions"
        root.mkdir()
        self.token = new_token(self.state_dir)
        self.calls: list[Any] = []
        served = App(self.state_dir, [Source("dsh", root)])
        routers: dict[str, RouterFactory] = {
            **ROUTERS,
            "probe": lambda app: probe_router(self.calls),
        }
        self.routers = {name: factory(served) for name, factory in routers.items()}
        self.app = create_app(served, self.token, routers=routers)
        for name, value in guard.items():  # the guard's own settings, as a test wants them
            setattr(self.app, name, value)
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

    def signed_in(self) -> tuple[httpx.Client, str]:
        """A client that opened a login link and kept the cookie, and the tab's credential."""
        client = httpx.Client(base_url=self.url)
        return client, sign_in(self.url, self.token, client)

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
    browser, credential = served.signed_in()
    page, script = browser.get("/"), browser.get("/static/app.js")
    browser.close()
    assert page.status_code == 200 and "/static/app.js" in page.text
    assert served.token not in page.text and served.token not in script.text
    assert credential not in page.text  # a reload is handed nothing: the tab keeps it
    scripted = httpx.get(f"{served.url}/", headers={"x-dshkit-token": served.token})
    assert scripted.status_code == 200 and served.token not in scripted.text


def test_a_login_code_signs_one_tab_in_once(served: Served) -> None:
    browser = httpx.Client(base_url=served.url)
    code = login_code(served.url, served.token)
    signed = browser.get("/", params={"login": code})
    assert signed.status_code == 200 and signed.headers["cache-control"] == "no-store"
    found = CONSOLE_META.search(signed.text)
    assert found is not None and served.token not in signed.text
    credential = found.group(1)
    cookie = signed.headers["set-cookie"]
    attributes = {a.strip().split("=")[0].lower() for a in cookie.split(";")[1:]}
    assert attributes == {"path", "httponly", "samesite"}  # no Secure: plain HTTP here
    assert "SameSite=Strict" in cookie and served.token not in cookie and credential not in cookie
    # Spent: the same link again, or a code never minted, signs nothing in.
    for again in (code, "x" * 32, ""):
        refused = httpx.get(f"{served.url}/", params={"login": again})
        assert refused.status_code == 401 and "set-cookie" not in refused.headers
        assert "dshkit open" in refused.text
    # The cookie opens the page shell, and no API route: reads and changes alike.
    assert browser.get("/").status_code == 200
    assert browser.get("/static/app.js").status_code == 200
    for method, path in (("GET", "/api/probe/read"), ("GET", "/api/probe/start")):
        assert browser.request(method, path).status_code == 401
    own = {"origin": served.url, "x-dshkit-request": "1", "sec-fetch-site": "same-origin"}
    assert browser.post("/api/probe/poke", json=1, headers=own).status_code == 401
    # A request another origin's page made the browser send does not count even for the page.
    assert browser.get("/", headers={"sec-fetch-site": "same-site"}).status_code == 401
    assert served.calls == [] and served.mode() == "auto"
    # The tab's credential, as the console sends it, reads and changes.
    tab = {"x-dshkit-console": credential}
    assert httpx.get(f"{served.url}/api/probe/read", headers=tab).status_code == 200
    other_port = {**tab, "origin": "http://127.0.0.1:1"}  # a loopback origin, not ours
    assert httpx.post(f"{served.url}/api/probe/poke", json=1, headers=other_port).status_code == 403
    done = httpx.post(f"{served.url}/api/profile/mode", json={"mode": "custom"}, headers=tab)
    assert done.status_code == 200 and served.mode() == "custom"
    assert served.calls == ["read"]
    wrong = httpx.get(f"{served.url}/api/probe/read", headers={"x-dshkit-console": "x" * 43})
    assert wrong.status_code == 401 and "dshkit open" in wrong.json()["error"]


def test_login_codes_are_minted_with_the_token_only_and_expire(served: Served) -> None:
    minted = f"{served.url}/api/login-codes"
    _, credential = served.signed_in()
    assert httpx.post(minted).status_code == 401
    assert httpx.post(minted, headers={"x-dshkit-token": "no"}).status_code == 401
    # A signed-in tab mints nothing (the route is the token's alone).
    assert httpx.post(minted, headers={"x-dshkit-console": credential}).status_code == 404
    answer = httpx.post(minted, headers={"x-dshkit-token": served.token})
    assert answer.status_code == 201 and answer.json()["expiresInS"] > 0
    code = answer.json()["code"]
    assert httpx.get(f"{served.url}/static/app.js", params={"login": code}).status_code == 401
    assert httpx.get(f"{served.url}/", params={"login": code}).status_code == 401  # spent above
    expired = served.app.mint_login(ttl=-1.0)
    assert httpx.get(f"{served.url}/", params={"login": expired}).status_code == 401
    # The links of earlier versions carried the token: no longer a way in.
    old = httpx.get(f"{served.url}/", params={"token": served.token})
    assert old.status_code == 401 and "older dshkit" in old.text
    api = httpx.get(f"{served.url}/api/profile/state", params={"token": served.token})
    assert api.status_code == 401


def test_a_restarted_service_knows_no_old_credential(served: Served) -> None:
    browser, credential = served.signed_in()
    (value,) = browser.cookies.values()
    browser.close()
    again = create_app(App(served.state_dir), served.token, mount=[])  # a new process's own
    tab = {"x-dshkit-console": credential}
    status, answer = call(again, ("127.0.0.1", 50123), path="/api/status", headers=tab)
    assert status == 401 and "dshkit open" in answer["error"]
    cookie = {"cookie": f"dshkit-shell-8765={value}"}  # `call` names the server's port 8765
    assert call_page(again, ("127.0.0.1", 50123), "localhost:8765", "", cookie)[0] == 401


def call_page(
    app: Any, peer: tuple[str, int], host: str, query: str, headers: dict[str, str] | None = None
) -> tuple[int, str | None, bytes]:
    """A page GET of `/?query` handed to the ASGI app: its status, Set-Cookie and body."""
    status, answered, body = exchange(app, peer, host, path="/", headers=headers, query=query)
    cookies = [v.decode() for k, v in answered if k == b"set-cookie"]
    return status, cookies[0] if cookies else None, body


def remote_app(calls: list[Any]) -> Guard:
    """The probe capability alone, served with --allow-remote (no state directory needed)."""
    return create_app(
        App(Path("/nonexistent/dshkit-state")),
        TOKEN,
        mount=["probe"],
        allow_remote=True,
        routers={"probe": lambda app: probe_router(calls)},
    )


def test_allow_remote_signs_a_browser_in_the_same_way() -> None:
    calls: list[Any] = []
    app = remote_app(calls)
    remote, host = ("192.168.7.9", 50123), "192.168.7.2:8765"
    assert call(app, remote, host=host, path="/api/probe/read")[0] == 401
    assert call_page(app, remote, host, "login=" + "x" * 32)[:2] == (401, None)
    status, cookie, body = call_page(app, remote, host, f"login={app.mint_login()}")
    assert status == 200 and cookie is not None and "HttpOnly" in cookie
    found = CONSOLE_META.search(body.decode())
    assert found is not None
    tab = {"x-dshkit-console": found.group(1)}
    jar = {"cookie": cookie.split(";")[0]}
    assert call(app, remote, host=host, path="/api/probe/read", headers=jar)[0] == 401
    assert call(app, remote, host=host, path="/api/probe/read", headers=tab)[0] == 200
    post: dict[str, Any] = {"method": "POST", "path": "/api/probe/poke", "body": b"[1]"}
    assert (
        call(app, remote, host=host, headers={**tab, "origin": f"http://{host}"}, **post)[0] == 200
    )
    foreign = {**tab, "origin": "http://evil.example"}
    assert call(app, remote, host=host, headers=foreign, **post)[0] == 403
    assert calls == ["read", [1]]


def test_a_connection_another_user_opened_is_refused_whatever_it_carries(
    tmp_path: Path,
) -> None:
    """The kernel's word on who opened the connection (here: the test's own uid, told to the
    guard as somebody else's) overrides every credential."""
    served = Served(tmp_path, owner_uid=os.geteuid() + 4242)
    try:
        for headers in ({"x-dshkit-token": served.token}, {}):
            answer = httpx.get(f"{served.url}/api/probe/read", headers=headers)
            assert answer.status_code == 403, headers
            assert f"uid {os.geteuid()}" in answer.json()["error"]
        assert httpx.get(f"{served.url}/").status_code == 403
        assert served.calls == []
        # Where the kernel cannot be asked, the credentials decide as before.
        guard: Guard = served.app
        guard.peer_tables = (str(tmp_path / "no-such-table"),)
        read = httpx.get(f"{served.url}/api/probe/read", headers={"x-dshkit-token": served.token})
        assert read.status_code == 200 and served.calls == ["read"]
    finally:
        served.close()


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
    cookies: ClassVar[list[str]] = []  # what the owner's browser sent this other port

    def do_GET(self) -> None:
        self.cookies.append(self.headers.get("cookie") or "")
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

    stolen: list[str] = []
    page_bytes = EVIL_PAGE.format(target=served.url).encode()
    handler = type("Evil", (_Evil,), {"page": page_bytes, "cookies": stolen})
    evil = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    evil_url = f"http://127.0.0.1:{evil.server_address[1]}/"
    try:
        with Browser(loopback=True) as chrome:  # it drives the local service
            endpoint = asyncio.run(chrome.ready())
            with sync_playwright() as playwright:
                connected = playwright.chromium.connect_over_cdp(
                    endpoint, artifacts_dir=chrome.artifacts
                )
                context = connected.new_context()
                page = context.new_page()
                # The owner is signed in: the cookie is there for the evil page to ride on.
                sign_in_page(page, served.url, served.token)
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
    assert signed_in == (f"{served.url}/", [f"dshkit-shell-{served.port}"])
    # Browsers send a host's cookies to each of its ports: the other port received it...
    name = f"dshkit-shell-{served.port}"
    (cookie,) = {c for sent in stolen for c in sent.split("; ") if c.startswith(f"{name}=")}
    # ...and, replayed, it opens nothing of the API, reads or changes.
    jar = {"cookie": cookie, "sec-fetch-site": "same-origin", "origin": served.url}
    for method, path in (("GET", "/api/probe/read"), ("POST", "/api/profile/mode")):
        body = {"mode": "custom"} if method == "POST" else None
        replayed = httpx.request(method, f"{served.url}{path}", headers=jar, json=body)
        assert replayed.status_code == 401, (method, path)
    assert served.calls == [] and served.mode() == "auto"


def _row(local: tuple[str, int], remote: tuple[str, int], uid: int) -> str:
    """One line of /proc/net/tcp as the kernel writes it (IPv4, this machine's byte order)."""

    def hexed(address: tuple[str, int]) -> str:
        word = int.from_bytes(socket.inet_aton(address[0]), sys.byteorder)
        return f"{word:08X}:{address[1]:04X}"

    queues = "01 00000000:00000000 00:00000000 00000000"  # state, queues, timers: unread
    return f"   0: {hexed(local)} {hexed(remote)} {queues} {uid:5d} 0 1"


def test_allow_remote_still_refuses_another_local_user_on_another_address(
    tmp_path: Path,
) -> None:
    """With --allow-remote a client may come over this machine's own non-loopback address: a
    socket the kernel lists there is a local user's, refused unless it is the owner's; one it
    does not list is another machine's, and its credential decides."""
    calls: list[Any] = []
    app = remote_app(calls)
    table = tmp_path / "tcp"
    app.peer_tables = (str(table),)
    server, local, remote = ("192.0.2.2", 8765), ("192.0.2.2", 50123), ("192.0.2.9", 50124)
    host = "192.0.2.2:8765"
    rows = [_row(server, local, 1000), _row(local, server, 4242), _row(server, remote, 1000)]
    table.write_text("  sl  local_address rem_address ...\n" + "\n".join(rows) + "\n")
    app.owner_uid = 1000
    read: dict[str, Any] = {
        "host": host,
        "path": "/api/probe/read",
        "headers": {"x-dshkit-token": TOKEN},
        "server": server,
    }
    status, answer = call(app, local, **read)
    assert status == 403 and "uid 4242" in answer["error"]
    assert call(app, remote, **read)[0] == 200
    app.owner_uid = 4242  # the same local socket, now the owner's
    assert call(app, local, **read)[0] == 200
    assert calls == ["read", "read"]
