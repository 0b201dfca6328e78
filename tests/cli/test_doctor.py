"""`dshkit doctor`: true about installs, the database and the service, and exit 1 when broken."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import harnesses
from dshkit.store import Store

from ..support.cli import BARE_PATH, SCRIPT, run_at_home

BIN = str(Path(sys.executable).parent)


def dshkit(home: Path, *args: str, path: str = BARE_PATH) -> subprocess.CompletedProcess[str]:
    return run_at_home(home, *args, check=False, PATH=path)


def doctor(home: Path, *args: str, path: str = BARE_PATH) -> tuple[int, dict[str, Any]]:
    done = dshkit(home, "doctor", "--json", "--port", "1", *args, path=path)
    return done.returncode, orjson.loads(done.stdout)


def check(report: dict[str, Any], name: str, **where: str) -> dict[str, Any]:
    (found,) = [
        c
        for c in report["checks"]
        if c["check"] == name and all(c.get(k) == v for k, v in where.items())
    ]
    return found


def test_a_clean_machine_is_not_broken(tmp_path: Path) -> None:
    code, report = doctor(tmp_path)
    assert code == 0 and report["ok"] is True
    names = {(c["check"], c.get("harness"), c.get("scope")) for c in report["checks"]}
    for harness in harnesses.NAMES:
        assert ("hooks", harness, "user") in names and ("sessionsRoot", harness, None) in names
    assert ("hooks", "claude", "project") in names
    assert {"database", "llm", "service"} <= {c["check"] for c in report["checks"]}
    assert check(report, "hooks", harness="claude", scope="user")["status"] == "absent"
    assert not (tmp_path / ".dsh").exists()  # looking creates nothing
    text = dshkit(tmp_path, "doctor", "--port", "1")
    assert text.returncode == 0 and "hooks" in text.stdout and "absent" in text.stdout


def test_a_stale_install_is_reported_broken(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()  # Claude Code is here
    assert dshkit(tmp_path, "install-hooks", "--harness", "claude").returncode == 0
    code, report = doctor(tmp_path)
    assert code == 0 and check(report, "hooks", harness="claude", scope="user")["status"] == "ok"
    assert report["harnesses"]["claude"]["hooksInstalled"] is True
    # As left by a venv since deleted, from before a handler was added to the registry.
    path = tmp_path / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    del settings["hooks"]["SessionEnd"]
    path.write_text(json.dumps(settings).replace(SCRIPT, "/gone/venv/bin/dshkit"))
    code, report = doctor(tmp_path)
    found = check(report, "hooks", harness="claude", scope="user")
    assert code == 1 and report["ok"] is False and found["status"] == "broken"
    assert "lacks SessionEnd" in found["message"]
    assert "runs /gone/venv/bin/dshkit, which does not exist" in found["message"]
    assert report["harnesses"]["claude"]["hooksInstalled"] is False
    assert dshkit(tmp_path, "install-hooks", "--harness", "claude").returncode == 0
    assert doctor(tmp_path)[0] == 0  # installing again repairs it


def test_another_state_directory_is_reported(tmp_path: Path) -> None:
    other = tmp_path / "other-state"
    (tmp_path / ".codex").mkdir()
    assert (
        dshkit(
            tmp_path, "install-hooks", "--harness", "codex", "--state-dir", str(other)
        ).returncode
        == 0
    )
    code, report = doctor(tmp_path)
    found = check(report, "hooks", harness="codex", scope="user")
    assert code == 1 and found["status"] == "broken"
    assert f"feeds another state directory ({other}" in found["message"]
    assert doctor(tmp_path, "--state-dir", str(other))[0] == 0


def test_project_scope_installs_are_seen(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    install = (
        "install-hooks",
        "--harness",
        "claude",
        "--scope",
        "project",
        "--project",
        str(project),
    )
    assert dshkit(tmp_path, *install).returncode == 0
    # The project's hooks run `dshkit` from PATH: without one there, they cannot run here.
    code, report = doctor(tmp_path, "--project", str(project))
    found = check(report, "hooks", harness="claude", scope="project")
    assert code == 1 and "runs dshkit, which is not on PATH here" in found["message"]
    code, report = doctor(tmp_path, "--project", str(project), path=f"{BIN}:/usr/bin:/bin")
    assert code == 0 and check(report, "hooks", harness="claude", scope="project")["status"] == "ok"
    assert report["harnesses"]["claude"]["hooksInstalled"] is True


def test_dsh_hooks_count_only_with_the_bridge_in_the_profile(tmp_path: Path) -> None:
    (tmp_path / ".dsh").mkdir()  # DSH is here
    assert dshkit(tmp_path, "install-hooks", "--harness", "dsh").returncode == 0
    code, report = doctor(tmp_path)
    found = check(report, "hooks", harness="dsh", scope="user")
    assert code == 1 and found["status"] == "broken"
    assert "the hook bridge is not added to profile 'headless'" in found["message"]
    assert report["harnesses"]["dsh"]["hooksInstalled"] is False
    bridge = harnesses.get("dsh").bridge
    assert bridge is not None
    profile = tmp_path / ".dsh" / "profiles" / "headless"
    manifest = {"dependencies": {bridge.plugin_name: "0.0.1-rc.5"}}
    (profile / "package.json").write_text(json.dumps(manifest))
    code, report = doctor(tmp_path)  # listed but not there: cannot tell, so not "yes"
    assert code == 0 and check(report, "hooks", harness="dsh", scope="user")["status"] == "unknown"
    assert report["harnesses"]["dsh"]["hooksInstalled"] is None
    package = profile / "node_modules" / bridge.plugin_name / "package.json"
    package.parent.mkdir(parents=True)
    package.write_text("{}")
    code, report = doctor(tmp_path)
    assert code == 0 and report["harnesses"]["dsh"]["hooksInstalled"] is True
    (tmp_path / ".dsh" / "dshkit" / "dsh-hooks.json").unlink()  # the block mounts nothing now
    code, report = doctor(tmp_path)
    assert code == 1 and check(report, "hooks", harness="dsh", scope="user")["status"] == "broken"


def test_a_newer_or_truncated_database_is_broken(tmp_path: Path) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    with Store(state) as store, store.transaction() as db:
        db.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?)",
            [(f"k{n}", "x" * 500) for n in range(2000)],
        )
    code, report = doctor(tmp_path)
    assert code == 0 and check(report, "database")["status"] == "ok"
    database = state / "dshkit.db"
    with sqlite3.connect(database) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = database.stat().st_size
    os.truncate(database, size // 2)
    code, report = doctor(tmp_path)
    assert code == 1 and check(report, "database")["status"] == "broken"
    database.unlink()
    with sqlite3.connect(database) as db:
        db.execute("PRAGMA user_version = 999")
    code, report = doctor(tmp_path)
    found = check(report, "database")
    assert code == 1 and found["status"] == "broken" and "newer dshkit" in found["message"]


@pytest.mark.parametrize("broken", ["empty", "truncated", "damaged"])
def test_a_broken_database_says_how_to_recover_and_is_left_as_it_is(
    tmp_path: Path, broken: str
) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    with Store(state) as store, store.transaction() as db:
        db.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?)",
            [(f"k{n}", "x" * 500) for n in range(2000)],
        )
    database = state / "dshkit.db"
    with closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = database.stat().st_size
    if broken == "damaged":  # pages in the middle overwritten, as by a stray write
        with open(database, "r+b") as file:
            file.seek(size // 2 // 4096 * 4096)
            file.write(bytes(range(256)) * 128)
    else:
        os.truncate(database, 0 if broken == "empty" else size // 2)
    before = database.read_bytes()
    code, report = doctor(tmp_path)
    found = check(report, "database")
    assert code == 1 and found["status"] == "broken"
    said = {"empty": "is empty (0 bytes)", "truncated": "is truncated", "damaged": "is damaged"}
    assert said[broken] in found["message"]
    assert "restore dshkit.db from a backup" in found["message"]
    assert "mv dshkit.db dshkit.db.broken" in found["message"]
    assert (".recover" in found["message"]) is (broken != "empty")  # nothing to salvage
    assert database.read_bytes() == before  # looking repairs nothing, replaces nothing


@contextmanager
def identity_server(body: dict[str, Any]) -> Iterator[int]:
    """A real HTTP server on 127.0.0.1 answering GET /api/profile/ with `body`."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            data = orjson.dumps(body)
            self.send_response(200 if self.path == "/api/profile/" else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("served", "status", "ours"),
    [("this", "ok", True), ("other", "warn", False), (None, "unknown", None)],
)
def test_the_service_is_up_only_for_this_state_dir(
    tmp_path: Path, served: str | None, status: str, ours: bool | None
) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    body: dict[str, Any] = {"name": "dshkit", "contract": 1, "endpoints": []}
    if served is not None:
        body["stateDir"] = str(state if served == "this" else tmp_path / "elsewhere")
    with identity_server(body) as port:
        done = dshkit(tmp_path, "doctor", "--json", "--port", str(port))
    report = orjson.loads(done.stdout)
    assert check(report, "service")["status"] == status
    assert report["service"]["reachable"] is True
    assert report["service"]["servesThisStateDir"] is ours
