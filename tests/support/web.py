"""The local service as a test runs it: on 127.0.0.1 in a thread, driven over real HTTP; the
server-sent events of a job followed as they arrive; one request handed to the app directly."""

from __future__ import annotations

import asyncio
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson

from dshkit.app import App
from dshkit.jobs import JobRunner
from dshkit.sessions import Source
from dshkit.web.app import create_app, ensure_token
from dshkit.web.routers import ROUTERS, RouterFactory
from dshkit.web.routing import Router
from dshkit.web.server import make_server

from .corpus import Corpus


def _built_from(factory: Callable[[Any], Router], data: object) -> RouterFactory:
    """A router factory of the app's kind for a test router built from `data`."""
    return lambda app: factory(data)


class Running:
    """The service as `dshkit serve` runs it (plus any `extra` capabilities), on 127.0.0.1."""

    def __init__(
        self,
        tmp_path: Path,
        extra: dict[str, object] | None = None,
        routers: dict[str, Callable[[Any], Router]] | None = None,
        capabilities: Callable[[Path, JobRunner], dict[str, object]] | None = None,
    ) -> None:
        self.state_dir = tmp_path / "state"
        self.state_dir.mkdir()
        self.root = tmp_path / "sessions"
        Corpus(self.root, seed=31).generate(sessions=3, frames=240)
        self.token = ensure_token(self.state_dir)
        self.jobs = JobRunner()
        served = App(self.state_dir, [Source("dsh", self.root)], jobs=self.jobs)
        self.service = served.profile
        mount = ["jobs", "profile"]
        if capabilities is not None:  # services that share the state dir and the job runner
            made = capabilities(self.state_dir, self.jobs)
            served.use(**{name: s for name, s in made.items() if name != "signals"})
            mount += made
        # Routers of the test's own, each built from the data given under its name.
        own = {
            name: _built_from(factory, (extra or {}).get(name))
            for name, factory in (routers or {}).items()
        }
        app = create_app(
            served,
            self.token,
            mount=[*mount, *own],
            read_timeout=0.5,
            routers={**ROUTERS, **own},
        )
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = make_server(app, head_timeout=0.5)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]})
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        # Signed in as the console is, through a one-time login link: the page is handed the
        # tab's credential, which the console sends as a header with every call.
        self.console = sign_in(f"http://127.0.0.1:{self.port}", self.token)
        self.http = httpx.Client(
            base_url=f"http://127.0.0.1:{self.port}/api/profile",
            headers={"x-dshkit-console": self.console},
        )

    def send(self, method: str, path: str, token: bool = True, **kw: Any) -> httpx.Response:
        """A request with the token header (as scripts send it), or, `token` False, with the
        console tab's credential (as the console's page sends it)."""
        headers = {"x-dshkit-token": self.token} if token else {}
        return self.http.request(method, path, headers={**headers, **kw.pop("headers", {})}, **kw)

    def bare(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """A request with no credential at all (what another user's client sends)."""
        return httpx.request(method, self.http.base_url.join(path), **kw)

    def raw(self, request: bytes, wait: float = 0) -> bytes:
        with socket.create_connection(("127.0.0.1", self.port)) as conn:
            conn.sendall(request)
            time.sleep(wait)
            conn.settimeout(5)
            return conn.recv(65536)

    def close(self) -> None:
        self.http.close()
        self.server.should_exit = True
        self.thread.join(10)


CONSOLE_META = re.compile(r'<meta name="dshkit-console" content="([^"]+)">')


def login_code(url: str, token: str) -> str:
    """A one-time login code from the service at `url`, asked with `token` (as `dshkit open`)."""
    minted = httpx.post(f"{url}/api/login-codes", headers={"x-dshkit-token": token})
    assert minted.status_code == 201, minted.text
    return str(minted.json()["code"])


def sign_in(url: str, token: str, client: httpx.Client | None = None) -> str:
    """The console tab's credential, from signing in with a fresh login code (with `client`,
    which then holds the shell cookie)."""
    page = (client or httpx).get(f"{url}/", params={"login": login_code(url, token)})
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


def call(
    app: Any,
    peer: tuple[str, int] | None,
    host: str = "localhost:8765",
    method: str = "GET",
    path: str = "/api/dummy/peek",
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    server: tuple[str, int] = ("0.0.0.0", 8765),
) -> tuple[int, dict[str, Any]]:
    """One request handed to the ASGI app as uvicorn would, from the peer `peer` to `server`."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
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
    return sent[0]["status"], orjson.loads(payload)
