"""`dshkit service install|uninstall|status` in a home of its own: the systemd user unit it
writes, a reversible install through a `systemctl` that records what it is asked (no systemd
needed), and a clear refusal where no user manager answers."""

from __future__ import annotations

import os
import socket
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest

from dshkit.install import resident

from ..support.cli import SCRIPT, run_at_home

pytestmark = pytest.mark.skipif(resident.system() != "systemd", reason="Linux's systemd unit")

FAKE_SYSTEMCTL = """#!/bin/sh
echo "$*" >> "{log}"
case "$*" in
  *show-environment*)
    if [ -n "$NO_USER_MANAGER" ]; then
      echo "Failed to connect to bus: No medium found" >&2; exit 1
    fi
    echo "HOME=$HOME" ;;
  *is-active*)
    if [ -f "$HOME/.config/systemd/user/dshkit.service" ]; then echo active; exit 0; fi
    echo inactive; exit 3 ;;
esac
exit 0
"""


def fake_systemctl(tmp_path: Path) -> tuple[str, Path]:
    """A `systemctl` on a PATH of its own; returns that PATH and the log of its calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "systemctl.log"
    script = bin_dir / "systemctl"
    script.write_text(FAKE_SYSTEMCTL.format(log=log))
    script.chmod(0o755)
    return f"{bin_dir}:/usr/bin:/bin", log


def test_the_unit_runs_this_dshkit_for_this_state_and_port(tmp_path: Path) -> None:
    state = tmp_path / "state dir"
    text = resident.unit_text(state, 8799)
    (line,) = [x for x in text.splitlines() if x.startswith("ExecStart=")]
    assert line == f'ExecStart={resident.program()} serve --port 8799 --state-dir "{state}"'
    assert "Restart=on-failure" in text and "WantedBy=default.target" in text
    assert "UMask=0077" in text
    unit = tmp_path / "dshkit.service"
    unit.write_text(text)
    assert resident.installed_port(unit) == 8799
    agent = resident.agent_text(state, 8799)
    assert f"<string>{state}</string>" in agent and "<string>8799</string>" in agent


@pytest.mark.process
def test_install_is_reversible_and_leaves_the_home_as_it_was(tmp_path: Path) -> None:
    path, log = fake_systemctl(tmp_path)
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    done = run_at_home(tmp_path, "service", "install", "--port", "8799", "--json", PATH=path)
    report = orjson.loads(done.stdout)
    unit = tmp_path / ".config" / "systemd" / "user" / "dshkit.service"
    assert report == {
        "system": "systemd",
        "path": str(unit),
        "installed": True,
        "active": True,
        "port": 8799,
        "detail": "active",
    }
    assert f"ExecStart={SCRIPT} serve --port 8799 --state-dir {tmp_path}/.dsh/dshkit" in (
        unit.read_text()
    )
    assert stat.S_IMODE(unit.stat().st_mode) == 0o600
    token = tmp_path / ".dsh" / "dshkit" / resident.HOOK_TOKEN_FILE
    assert stat.S_IMODE(token.stat().st_mode) == 0o600 and len(token.read_text().strip()) > 30
    calls = log.read_text().splitlines()
    assert "--user daemon-reload" in calls and "--user enable --now dshkit.service" in calls
    said = run_at_home(tmp_path, "service", "status", PATH=path).stdout
    assert "installed" in said and "port 8799" in said and "running" in said
    # Installing again keeps the hook credential (Claude Code's environment holds it).
    kept = token.read_text()
    run_at_home(tmp_path, "service", "install", "--port", "8799", PATH=path)
    assert token.read_text() == kept
    run_at_home(tmp_path, "service", "uninstall", PATH=path)
    assert not unit.exists()
    assert "--user disable --now dshkit.service" in log.read_text()
    assert "not installed" in run_at_home(tmp_path, "service", "status", PATH=path).stdout
    after = sorted(
        str(p.relative_to(tmp_path))
        for p in tmp_path.rglob("*")
        if not str(p.relative_to(tmp_path)).startswith((".dsh", "systemctl.log")) and p.is_file()
    )
    assert after == [p for p in before if (tmp_path / p).is_file()]


@pytest.mark.process
def test_no_user_manager_is_said_and_nothing_is_written(tmp_path: Path) -> None:
    path, _ = fake_systemctl(tmp_path)
    done = run_at_home(
        tmp_path, "service", "install", "--json", PATH=path, NO_USER_MANAGER="1", check=False
    )
    assert done.returncode != 0
    error = orjson.loads(done.stdout)["error"]
    assert "systemd's user manager does not answer here" in error
    assert "No medium found" in error and "dshkit serve --port 8765" in error
    assert not (tmp_path / ".config" / "systemd").exists()
    bare = run_at_home(tmp_path, "service", "install", PATH="/nonexistent", check=False)
    assert bare.returncode != 0 and "systemctl is not on PATH" in bare.stderr
    assert os.listdir(tmp_path / "bin") == ["systemctl"]


@pytest.mark.process
def test_resident_hooks_post_to_the_service_and_the_guard_stays_a_command(
    tmp_path: Path,
) -> None:
    path, _ = fake_systemctl(tmp_path)
    (tmp_path / ".claude").mkdir()
    refused = run_at_home(
        tmp_path, "install-hooks", "--harness", "claude", "--resident", PATH=path, check=False
    )
    assert refused.returncode == 2 and "dshkit service install" in refused.stderr
    run_at_home(tmp_path, "service", "install", "--port", "8799", PATH=path)
    run_at_home(tmp_path, "install-hooks", "--harness", "claude", "--resident", PATH=path)
    settings = tmp_path / ".claude" / "settings.json"
    hooks = orjson.loads(settings.read_bytes())["hooks"]
    for event in ("UserPromptSubmit", "PostToolUse", "Stop"):
        (group,) = hooks[event]
        (hook,) = group["hooks"]
        assert hook == {
            "type": "http",
            "url": f"http://127.0.0.1:8799/api/hooks/{event}",
            "headers": {"X-Dshkit-Hook": "${DSHKIT_HOOK_TOKEN}"},
            "allowedEnvVars": ["DSHKIT_HOOK_TOKEN"],
            "timeout": 30,
        }
    for event in ("SessionStart", "PreToolUse", "SessionEnd"):  # not over HTTP
        assert hooks[event][0]["hooks"][0]["type"] == "command", event
    token = (tmp_path / ".dsh" / "dshkit" / resident.HOOK_TOKEN_FILE).read_text().strip()
    assert token not in settings.read_text()  # the credential is never in the settings
    again = run_at_home(tmp_path, "install-hooks", "--harness", "claude", "--resident", PATH=path)
    assert "already installed" in again.stdout
    run_at_home(tmp_path, "install-hooks", "--harness", "claude", PATH=path)  # back
    hooks = orjson.loads(settings.read_bytes())["hooks"]
    assert all(g["hooks"][0]["type"] == "command" for gs in hooks.values() for g in gs)
    assert all(
        set(g["hooks"][0]) == {"type", "command", "timeout"} for gs in hooks.values() for g in gs
    )
    run_at_home(tmp_path, "install-hooks", "--harness", "claude", "--resident", PATH=path)
    run_at_home(tmp_path, "uninstall-hooks", "--harness", "claude", PATH=path)
    assert not settings.exists() or "hooks" not in orjson.loads(settings.read_bytes())


@pytest.mark.process
def test_doctor_puts_the_command_hooks_back_when_the_service_does_not_answer(
    tmp_path: Path,
) -> None:
    path, _ = fake_systemctl(tmp_path)
    (tmp_path / ".claude").mkdir()
    held = socket.socket()  # bound, never listening: a connection there is refused
    held.bind(("127.0.0.1", 0))
    port = str(held.getsockname()[1])
    try:
        run_at_home(tmp_path, "service", "install", "--port", port, PATH=path)
        run_at_home(tmp_path, "install-hooks", "--harness", "claude", "--resident", PATH=path)
        settings = tmp_path / ".claude" / "settings.json"
        assert '"type": "http"' in settings.read_text()
        done = run_at_home(tmp_path, "doctor", "--json", PATH=path, check=False)
    finally:
        held.close()
    (check,) = [c for c in orjson.loads(done.stdout)["checks"] if c["check"] == "residentHooks"]
    assert check["status"] == "warn" and check["fellBack"] is True
    assert f"does not answer at http://127.0.0.1:{port}/api/hooks/" in check["message"]
    assert "the command hooks are back" in check["message"]
    hooks = orjson.loads(settings.read_bytes())["hooks"]
    assert all(g["hooks"][0]["type"] == "command" for gs in hooks.values() for g in gs)
    said = run_at_home(tmp_path, "doctor", PATH=path, check=False).stdout
    assert "residentHooks" not in said or "back" not in said  # once back, nothing to say


@pytest.mark.process
def test_doctor_leaves_resident_hooks_the_service_answers(tmp_path: Path) -> None:
    path, _ = fake_systemctl(tmp_path)
    (tmp_path / ".claude").mkdir()

    class Refusing(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(401)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = str(server.server_address[1])
        run_at_home(tmp_path, "service", "install", "--port", port, PATH=path)
        run_at_home(tmp_path, "install-hooks", "--harness", "claude", "--resident", PATH=path)
        done = run_at_home(tmp_path, "doctor", "--json", PATH=path, check=False)
    finally:
        server.shutdown()
        server.server_close()
    (check,) = [c for c in orjson.loads(done.stdout)["checks"] if c["check"] == "residentHooks"]
    assert check["status"] == "ok" and port in check["message"]
    settings = (tmp_path / ".claude" / "settings.json").read_text()
    assert f"http://127.0.0.1:{port}/api/hooks/Stop" in settings
