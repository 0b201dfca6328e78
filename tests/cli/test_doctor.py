"""`dshkit doctor`: true about installs, the database and the service, and exit 1 when broken."""

from __future__ import annotations

import json
import os
import shlex
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
from dshkit.web import link

from ..support.cli import BARE_PATH, run_at_home
from ..support.disks import read_only, small_disk
from ..support.install import fake_dsh

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
    program = shlex.split(settings["hooks"]["Stop"][0]["hooks"][0]["command"])[0]
    path.write_text(json.dumps(settings).replace(program, "/gone/venv/bin/python3"))
    code, report = doctor(tmp_path)
    found = check(report, "hooks", harness="claude", scope="user")
    assert code == 1 and report["ok"] is False and found["status"] == "broken"
    assert "lacks SessionEnd" in found["message"]
    assert "runs /gone/venv/bin/python3, which does not exist" in found["message"]
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


@pytest.mark.process
def test_dsh_hooks_count_only_with_the_bridge_in_the_profile(tmp_path: Path) -> None:
    (tmp_path / ".dsh").mkdir()  # DSH is here, its `dsh plugin add` does not take
    path = fake_dsh(tmp_path / "bin", adds=False)
    assert dshkit(tmp_path, "install-hooks", "--harness", "dsh", path=path).returncode == 0
    code, report = doctor(tmp_path, path=path)
    found = check(report, "hooks", harness="dsh", scope="user")
    assert code == 1 and found["status"] == "broken"
    assert "the hook bridge is not added to profile 'headless'" in found["message"]
    assert report["harnesses"]["dsh"]["hooksInstalled"] is False
    bridge = harnesses.get("dsh").bridge
    assert bridge is not None
    profile = tmp_path / ".dsh" / "profiles" / "headless"
    manifest = {"dependencies": {bridge.plugin_name: "0.0.1-rc.5"}}
    (profile / "package.json").write_text(json.dumps(manifest))
    code, report = doctor(tmp_path, path=path)  # listed but not there: cannot tell, not "yes"
    assert code == 0 and check(report, "hooks", harness="dsh", scope="user")["status"] == "unknown"
    assert report["harnesses"]["dsh"]["hooksInstalled"] is None
    package = profile / "node_modules" / bridge.plugin_name / "package.json"
    package.parent.mkdir(parents=True)
    package.write_text("{}")
    code, report = doctor(tmp_path, path=path)
    assert code == 0 and report["harnesses"]["dsh"]["hooksInstalled"] is True
    (tmp_path / ".dsh" / "dshkit" / "dsh-hooks.json").unlink()  # the block mounts nothing now
    code, report = doctor(tmp_path, path=path)
    assert code == 1 and check(report, "hooks", harness="dsh", scope="user")["status"] == "broken"


@pytest.mark.process
def test_a_harness_gone_from_this_machine_is_absent_not_broken(tmp_path: Path) -> None:
    (tmp_path / ".dsh" / "sessions").mkdir(parents=True)
    path = fake_dsh(tmp_path / "bin")
    assert dshkit(tmp_path, "install-hooks", "--harness", "dsh", path=path).returncode == 0
    assert doctor(tmp_path, path=path)[0] == 0
    # DSH's CLI is gone since (its sessions are still there): its hooks can run no more.
    code, report = doctor(tmp_path)
    assert code == 0 and report["ok"] is True
    harness = check(report, "harness", harness="dsh")
    assert harness["status"] == "absent" and "no `dsh` on PATH" in harness["message"]
    for name in ("hooks", "mcpServer"):
        found = check(report, name, harness="dsh", scope="user")
        assert found["status"] == "absent", found
        assert "dshkit's entries left in" in found["message"]
    assert report["harnesses"]["dsh"]["found"] is None
    assert report["harnesses"]["dsh"]["hooksInstalled"] is False
    text = dshkit(tmp_path, "doctor")
    assert text.returncode == 0 and "broken" not in text.stdout


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
def http_server(status: int) -> Iterator[int]:
    """A real HTTP server on 127.0.0.1 answering every GET with `status` (401: what the
    service says to a request without its token); its port."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def service(home: Path, *args: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """doctor's exit code, its service check and its report's `service`."""
    done = dshkit(home, "doctor", "--json", *args)
    report = orjson.loads(done.stdout)
    return done.returncode, check(report, "service"), report["service"]


def test_the_service_is_where_this_state_dirs_serve_recorded_it(tmp_path: Path) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    state.mkdir(parents=True)
    code, found, shown = service(tmp_path)  # no serve running: nothing is probed
    assert code == 0 and found["status"] == "absent" and "`dshkit serve`" in found["message"]
    assert shown == {"url": None, "reachable": False, "servesThisStateDir": False}
    with http_server(401) as port:  # as the service answers a request without its token
        url = f"http://127.0.0.1:{port}/"
        served = link.record(state, url, port)  # as a running `dshkit serve` records itself
        code, found, shown = service(tmp_path)
        assert code == 0 and found["status"] == "ok" and found["message"].endswith(url)
        assert shown == {"url": url, "reachable": True, "servesThisStateDir": True}
        assert service(tmp_path, "--port", str(port))[1]["status"] == "ok"
        # Another port named: whatever answers there is not this state directory's service.
        with http_server(200) as other:
            code, found, shown = service(tmp_path, "--port", str(other))
            assert code == 0 and found["status"] == "warn" and url in found["message"]
            assert shown["reachable"] is True and shown["servesThisStateDir"] is False
    # Recorded by a process that is still there, answering no more: cannot tell.
    code, found, shown = service(tmp_path)
    assert code == 0 and found["status"] == "unknown"
    assert f"(pid {served.pid}) recorded {url} but does not answer" in found["message"]
    assert shown == {"url": url, "reachable": False, "servesThisStateDir": None}
    link.forget(state, served)
    code, found, _ = service(tmp_path, "--port", str(port))
    assert found["status"] == "absent" and found["message"] == f"nothing answers at {url}"


@pytest.mark.process
def test_a_read_only_file_system_is_said_as_such_not_chmod(tmp_path: Path) -> None:
    with small_disk(tmp_path) as disk:
        state, fresh = disk / "state", disk / "fresh"
        with Store(state):
            pass
        read_only(disk)
        remedy = "remount it read-write, or point --state-dir at a writable directory"
        for where, said, holding in (
            (state, f"cannot open the state database {state / 'dshkit.db'}", state),
            (fresh, f"{fresh / 'dshkit.db'} cannot be created", disk),  # none there yet
        ):
            code, report = doctor(tmp_path, "--state-dir", str(where))
            found = check(report, "database")
            assert code == 1 and found["status"] == "broken"
            assert found["message"] == (
                f"{said}: the file system holding {holding} is mounted read-only; {remedy}"
            )
