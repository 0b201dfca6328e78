"""The local service as a test runs it: in this process, each request handed to the app through
httpx's ASGI transport (no server, no socket); or, where sockets, deadlines or a stream
followed as it comes are the point, served by uvicorn on 127.0.0.1 in a thread and driven over
real HTTP. The server-sent events of a job; one request handed to the app directly."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
from starlette.types import ASGIApp

from dshkit.app import App
from dshkit.jobs import JobRunner
from dshkit.sessions import Source
from dshkit.web.app import create_app, new_token
from dshkit.web.routers import ROUTERS, RouterFactory
from dshkit.web.routing import Router
from dshkit.web.server import make_server

from .corpus import Corpus


def _built_from(factory: Callable[[Any], Router], data: object) -> RouterFactory:
    """A router factory of the app's kind for a test router built from `data`."""
    return lambda app: factory(data)


class InProcess(httpx.BaseTransport):
    """httpx's ASGI transport for a client that is not async: each request handed to the app
    on one event loop of its own (in a thread, as uvicorn runs the app on one loop), its
    whole response read there. The scope's server is the URL's host and port and its client
    a loopback address: both ports are held bound by this transport (not listening), so no
    connection between them exists and the guard's peer check finds none (the kernel cannot
    tell: let through, as on a platform without /proc/net/tcp). The request's read timeout is
    the app's time to answer."""

    def __init__(self, app: ASGIApp) -> None:
        self._held = [_reserved(), _reserved()]
        self.port = self._held[0].getsockname()[1]
        client = ("127.0.0.1", int(self._held[1].getsockname()[1]))
        self._asgi = httpx.ASGITransport(app, raise_app_exceptions=False, client=client)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()

        async def answer() -> tuple[int, list[tuple[bytes, bytes]], bytes]:
            sent = httpx.Request(request.method, request.url, headers=request.headers, content=body)
            got = await self._asgi.handle_async_request(sent)
            raw = b"".join([chunk async for chunk in got.aiter_raw()])
            return got.status_code, got.headers.raw, raw

        future = asyncio.run_coroutine_threadsafe(answer(), self._loop)
        timeout = request.extensions.get("timeout", {}).get("read")
        try:
            status, headers, raw = future.result(timeout)
        except concurrent.futures.TimeoutError as exc:
            future.cancel()
            raise httpx.ReadTimeout(f"no answer within {timeout} s", request=request) from exc
        return httpx.Response(status, headers=headers, stream=httpx.ByteStream(raw))

    def close(self) -> None:
        """Nothing: a client closing leaves the loop running (one transport, many clients)."""

    def stop(self) -> None:
        """The loop stopped and the ports let go."""
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()
        for held in self._held:
            held.close()


def _reserved() -> socket.socket:
    """A socket bound to a free loopback port and kept: the port is no one else's."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


class Running:
    """The service as `dshkit serve` runs it (plus any `extra` capabilities): in this process
    through `InProcess`, or with `served` on 127.0.0.1 by uvicorn in a thread."""

    def __init__(
        self,
        tmp_path: Path,
        extra: dict[str, object] | None = None,
        routers: dict[str, Callable[[Any], Router]] | None = None,
        capabilities: Callable[[Path, JobRunner], dict[str, object]] | None = None,
        served: bool = False,
    ) -> None:
        self.state_dir = tmp_path / "state"
        self.state_dir.mkdir()
        self.root = tmp_path / "sessions"
        Corpus(self.root, seed=31).generate(sessions=3, frames=240)
        self.token = new_token(self.state_dir)
        self.jobs = JobRunner()
        served_app = App(self.state_dir, [Source("dsh", self.root)], jobs=self.jobs)
        self.service = served_app.profile
        mount = ["jobs", "profile"]
        if capabilities is not None:  # services that share the state dir and the job runner
            made = capabilities(self.state_dir, self.jobs)
            served_app.use(**{name: s for name, s in made.items() if name != "signals"})
            mount += made
        # Routers of the test's own, each built from the data given under its name.
        own = {
            name: _built_from(factory, (extra or {}).get(name))
            for name, factory in (routers or {}).items()
        }
        app = create_app(
            served_app,
            self.token,
            mount=[*mount, *own],
            read_timeout=0.5,
            routers={**ROUTERS, **own},
        )
        self.served = served
        self.transport: InProcess | None = None
        self.server: Any = None
        if served:
            self.sock = socket.socket()
            self.sock.bind(("127.0.0.1", 0))
            self.port = self.sock.getsockname()[1]
            self.server = make_server(app, head_timeout=0.5)
            self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]})
            self.thread.start()
            while not self.server.started:
                time.sleep(0.01)
        else:
            self.transport = InProcess(app)
            self.port = self.transport.port
        self.url = f"http://127.0.0.1:{self.port}"
        self.http = self.client(base_url=f"{self.url}/api/profile")
        try:
            # Signed in as the console is, through a one-time login link: the page is handed
            # the tab's credential, which the console sends as a header with every call.
            with self.client() as signing:
                self.console = sign_in(self.url, self.token, signing)
        except BaseException:
            self.close()  # a server thread left running would keep pytest from exiting
            raise
        self.http.headers["x-dshkit-console"] = self.console

    def client(self, **options: Any) -> httpx.Client:
        """A client of this service (base URL the service's own unless given): through the
        app in this process, or over HTTP when served."""
        options.setdefault("base_url", self.url)
        return httpx.Client(transport=self.transport, **options)

    def send(self, method: str, path: str, token: bool = True, **kw: Any) -> httpx.Response:
        """A request with the token header (as scripts send it), or, `token` False, with the
        console tab's credential (as the console's page sends it)."""
        headers = {"x-dshkit-token": self.token} if token else {}
        return self.http.request(method, path, headers={**headers, **kw.pop("headers", {})}, **kw)

    def bare(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """A request with no credential at all (what another user's client sends)."""
        with self.client() as stranger:
            return stranger.request(method, self.http.base_url.join(path), **kw)

    def raw(self, request: bytes, wait: float = 0) -> bytes:
        """What the server answers `request` sent as bytes on a socket (served only)."""
        assert self.served, "raw bytes need a socket: Running(..., served=True)"
        with socket.create_connection(("127.0.0.1", self.port)) as conn:
            conn.sendall(request)
            time.sleep(wait)
            conn.settimeout(5)
            return conn.recv(65536)

    def close(self) -> None:
        self.http.close()
        if self.transport is not None:
            self.transport.stop()
        else:
            self.server.should_exit = True
            self.thread.join(10)


CONSOLE_META = re.compile(r'<meta name="dshkit-console" content="([^"]+)">')


def login_code(url: str, token: str, client: httpx.Client | None = None) -> str:
    """A one-time login code from the service at `url`, asked with `token` (as `dshkit open`;
    through `client` when given)."""
    minted = (client or httpx).post(f"{url}/api/login-codes", headers={"x-dshkit-token": token})
    assert minted.status_code == 201, minted.text
    return str(minted.json()["code"])


def sign_in(url: str, token: str, client: httpx.Client | None = None) -> str:
    """The console tab's credential, from signing in with a fresh login code (with `client`,
    which then holds the shell cookie)."""
    page = (client or httpx).get(f"{url}/", params={"login": login_code(url, token, client)})
    assert page.status_code == 200, page.text
    found = CONSOLE_META.search(page.text)
    assert found is not None, page.text[:300]
    return found.group(1)


def sign_in_page(page: Any, url: str, token: str) -> None:
    """A Playwright page signed in as the person signs in: a one-time login link opened, then
    the console with the spent code out of its address."""
    page.goto(f"{url}/?login={login_code(url, token)}")
    page.wait_for_function("() => !location.search.includes('login=')")


def events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """Server-sent events as they arrive: {"event", "id", "data"}."""
    current: dict[str, Any] = {}
    for line in response.iter_lines():
        if line == "":
            if current:
                yield current
            current = {}
        elif line.startswith(":"):
            continue  # a keep-alive comment
        else:
            field, _, value = line.partition(": ")
            current[field] = orjson.loads(value) if field == "data" else value


def exchange(
    app: Any,
    peer: tuple[str, int] | None,
    host: str = "localhost:8765",
    method: str = "GET",
    path: str = "/api/dummy/peek",
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    server: tuple[str, int] = ("0.0.0.0", 8765),
    query: str = "",
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One request handed to the ASGI app as uvicorn would, from the peer `peer` to `server`:
    the answer's status, headers and body."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", host.encode())]
        + [(k.encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": peer,
        "server": server,
        "state": {},
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    payload = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], list(sent[0]["headers"]), payload


def call(app: Any, peer: tuple[str, int] | None, **request: Any) -> tuple[int, dict[str, Any]]:
    """`exchange` of an API request: its status and JSON body."""
    status, _, payload = exchange(app, peer, **request)
    return status, orjson.loads(payload)
