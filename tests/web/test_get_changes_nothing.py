"""No GET changes or starts anything: every GET route of every router, called against a real
`dshkit serve`-like service over a state directory holding sessions, a profile and cached
probes, leaves every table's rows and every file under the state directory as they were, and
starts no process (an MCP server that would leave a marker never runs). Probing is a POST,
and even then only the servers their harness would start are started."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from dshkit.app import App
from dshkit.jobs import JobRunner
from dshkit.sessions import Source
from dshkit.store import Store
from dshkit.web.app import create_app, new_token
from dshkit.web.routers import ROUTERS
from dshkit.web.security import TOKEN_HEADER
from dshkit.web.server import make_server

from ..support.capability import MARKER_SERVER, TRUSTED
from ..support.corpus import Corpus
from ..support.profile import PROFILE, store_version
from ..support.web import sign_in_page

# The store's own files: SQLite may create and drop the WAL and its index as connections
# come and go; what they hold is compared as rows.
DATABASE = re.compile(r"^dshkit\.db(-wal|-shm|-journal)?$")
Snapshot = tuple[dict[str, Any], dict[str, Any]]


class World:
    """A service over a state directory with something in every capability, a project whose
    `.mcp.json` configures a server the person approved (`good`) and one nobody did (`evil`),
    each leaving a marker file when started."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir()
        self.state = root / "state"
        self.state.mkdir()
        sessions = root / "sessions"
        Corpus(sessions, seed=31).generate(sessions=2, frames=60)
        self.project = root / "project"
        (self.project / ".claude").mkdir(parents=True)
        (self.project / "server.py").write_text(MARKER_SERVER)
        self.markers = {name: root / f"{name}-started" for name in ("good", "evil")}
        servers = {
            name: {"command": sys.executable, "args": [str(self.project / "server.py"), str(m)]}
            for name, m in self.markers.items()
        }
        (self.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
        (self.home / ".claude.json").write_text(
            json.dumps({"projects": {str(self.project): TRUSTED}})
        )
        approved = {"enabledMcpjsonServers": ["good"]}
        (self.project / ".claude" / "settings.local.json").write_text(json.dumps(approved))
        self.token = new_token(self.state)
        self.app = App(self.state, [Source("dsh", sessions)], jobs=JobRunner())
        self.app.sessions.scan()
        with Store(self.state) as store:
            store_version(store, PROFILE)
            # An expired probe of a mode: a GET shows it, and must not probe it again.
            store.db.execute(
                "INSERT INTO capability_probes (key, at, channels) VALUES (?, ?, ?)",
                ("expired", int((time.time() - 86_400) * 1000), "[]"),
            )
        (self.session,) = self.app.sessions.recent("dsh", 1)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = make_server(create_app(self.app, self.token), head_timeout=0.5)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]})
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        # (a probe starts a browser and MCP servers: seconds on a loaded machine, not 5)
        self.http = httpx.Client(
            base_url=f"http://127.0.0.1:{self.port}",
            headers={TOKEN_HEADER: self.token},
            timeout=60,
        )

    def close(self) -> None:
        self.http.close()
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home" / ".dsh"))
    built = World(tmp_path)
    yield built
    built.close()


def rows(state: Path) -> dict[str, str]:
    """Every table's rows, hashed, by table."""
    with Store(state) as store:
        tables = [
            name
            for (name,) in store.db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        found = {}
        for table in tables:
            content = sorted(repr(tuple(r)) for r in store.db.execute(f'SELECT * FROM "{table}"'))
            found[table] = hashlib.sha256("\n".join(content).encode()).hexdigest()
    return found


def files(state: Path) -> dict[str, tuple[int, str]]:
    """Every file under the state directory but the database's: its mode and its bytes'
    hash (a file made, removed or written differs)."""
    found = {}
    for path in sorted(state.rglob("*")):
        if path.is_file() and not DATABASE.match(path.name):
            found[str(path.relative_to(state))] = (
                path.stat().st_mode,
                hashlib.sha256(path.read_bytes()).hexdigest(),
            )
    return found


def processes_naming(needle: str) -> set[int]:
    """The processes whose command line names `needle` (a detached probe names the state
    directory)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                line = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if needle.encode() in line:
                found.add(int(entry))
    return found


def gets(world: World) -> list[tuple[str, dict[str, Any]]]:
    """Every GET endpoint of every router (a path parameter filled with something the store
    holds where one fits), each with the queries that make it read the most."""
    session = world.session
    params = {"harness": session.harness, "id": session.session_id, "run_id": "1"}
    project = str(world.project)
    queries: dict[str, list[dict[str, Any]]] = {
        "/api/capability/": [
            {"harness": "claude", "cwd": project},
            {"harness": "claude", "cwd": project, "mode": "workspace-write"},
            {"harness": "codex", "cwd": project},
            {"harness": "dsh", "cwd": project},
            {},
        ],
        "/api/inject/": [
            {"session": session.session_id, "harness": session.harness},
            {"harness": "claude", "cwd": project},
            {"harness": "codex", "cwd": project},
            {"harness": "dsh", "cwd": project, "event": "UserPromptSubmit"},
        ],
        "/api/graft/status": [{}, {"session": session.session_id}],
        "/api/graft/audit": [{}, {"session": session.session_id}],
        "/api/sessions/": [{}, {"harness": session.harness}],
        "/api/sessions/quote": [{"text": "the"}],
        "/api/optimizer/settings": [
            {"session": session.session_id, "harness": session.harness},
            {"project": project},
        ],
    }
    found = []
    for factory in ROUTERS.values():
        for endpoint in factory(world.app).endpoints:
            method, _, path = endpoint.partition(" ")
            if method != "GET":
                continue
            filled = re.sub(r"\{(\w+)\}", lambda m: params.get(m.group(1), "1"), path)
            found += [(filled, query) for query in queries.get(path, [{}])]
    return found


def test_no_get_changes_the_store_the_state_directory_or_starts_a_process(world: World) -> None:
    state = world.state
    before = rows(state), files(state)
    called = gets(world)
    # Every router is there: one added later is called too (the resident hooks' router
    # answers POSTs only: it has no GET to call).
    posting_only = {"hooks"}
    assert {path.split("/")[2] for path, _ in called} == set(ROUTERS) - posting_only
    hooks = ROUTERS["hooks"](world.app).endpoints
    assert hooks and not any(endpoint.startswith("GET ") for endpoint in hooks)
    for path, query in called:
        answer = world.http.get(path, params=query)
        assert answer.status_code < 500, (path, query, answer.text)
        assert processes_naming(str(state)) == set(), (path, query)
        assert changes(before, (rows(state), files(state))) == [], (path, query)
    time.sleep(1.0)  # a detached start would have shown itself by now
    assert processes_naming(str(state)) == set()
    assert not any(marker.exists() for marker in world.markers.values())
    assert changes(before, (rows(state), files(state))) == []


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """The tables and files that differ: none may (no memo is filled by a read either)."""
    found = []
    for was, now in zip(before, after, strict=True):
        found += [n for n in {**was, **now} if was.get(n) != now.get(n)]
    return found


@pytest.mark.browser
def test_a_get_says_what_is_cached_and_a_post_probes_the_approved_servers_only(
    world: World,
) -> None:
    where = {"harness": "claude", "cwd": str(world.project), "mode": "workspace-write"}
    nothing = world.http.get("/api/capability/", params=where).json()
    assert nothing["pending"] and nothing["cached"] is None and not nothing["started"]
    assert not nothing["probing"] and nothing["channels"] is None
    # A POST without a credential is refused before anything is probed.
    refused = httpx.post(f"http://127.0.0.1:{world.port}/api/capability/probe", json=where)
    assert refused.status_code == 401
    probed = world.http.post("/api/capability/probe", json=where).json()
    assert world.markers["good"].exists() and not world.markers["evil"].exists()
    servers = {s["name"]: s for s in probed["channels"][2]["servers"]}
    assert servers["good"]["ok"] and servers["good"]["started"]
    assert servers["evil"]["reason"] == "not started: not approved in Claude Code"
    world.markers["good"].unlink()
    shown = world.http.get("/api/capability/", params=where).json()
    assert shown["channels"] == probed["channels"] and not shown["pending"]
    assert shown["cached"]["fresh"] and shown["cached"]["ageS"] < 60
    assert orjson.dumps(shown["cached"]["channels"]) == orjson.dumps(probed["channels"])
    assert not world.markers["good"].exists()  # the GET read; it probed nothing


@pytest.mark.browser
def test_the_console_shows_the_cache_by_a_get_and_probes_by_a_post(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The capability view in real Chromium: "Show cached" reads, "Probe now" probes."""
    from playwright.sync_api import sync_playwright

    from dshkit.gate.browser import Browser

    monkeypatch.chdir(world.project)  # the console names no directory: the service's own
    url = f"http://127.0.0.1:{world.port}"
    asked: list[str] = []
    with Browser(loopback=True) as browser:
        endpoint = asyncio.run(browser.ready())
        with sync_playwright() as playwright:
            connected = playwright.chromium.connect_over_cdp(
                endpoint, artifacts_dir=browser.artifacts
            )
            context = connected.new_context()
            page = context.new_page()
            page.on(
                "request",
                lambda r: asked.append(r.method) if "/api/capability" in r.url else None,
            )
            sign_in_page(page, url, world.token)
            page.goto(f"{url}/#gate")
            page.wait_for_selector('[data-view="gate"][data-ready="1"]', timeout=30_000)
            page.select_option('select[aria-label="Harness"]', "claude")
            page.click("text=Show cached")
            page.wait_for_selector("#capability >> text=nothing cached for this mode")
            assert asked == ["GET"]
            assert processes_naming(str(world.state)) == set()
            page.click("text=Probe now")
            page.wait_for_selector("#capability td.ok", timeout=60_000)
            assert asked == ["GET", "POST"]
            assert world.markers["good"].exists() and not world.markers["evil"].exists()
            shown = page.text_content("#capability") or ""
            assert "evil — not started: not approved in Claude Code" in shown
            context.close()
            connected.close()
