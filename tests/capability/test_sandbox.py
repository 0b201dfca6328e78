"""Capability facts inside the session's own sandbox: the modes each harness really runs the
session in (Codex's latest turn context, Claude Code's sandbox setting), the probes run
through the harness's sandbox runner where it has one (Codex's `codex sandbox`), and the text
saying plainly where they ran and that the delivery gate runs outside the sandbox."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from dshkit.capability import UNKNOWN, Facts, read_facts
from dshkit.capability.probes import SCREENSHOT, SUBPROCESS
from dshkit.capability.service import probe, sandbox_runner
from dshkit.capability.text import GATE_OUTSIDE, OUTSIDE, render
from dshkit.store import Store

from ..support.real import CODEX_SPARES_TMP, binary

CHANNELS: list[dict[str, Any]] = [
    {"channel": "subprocess", "ok": True, "reason": "sh -c echo: exit 0"},
    {"channel": "screenshot", "ok": True, "reason": "chromium: PNG 3000 B"},
    {"channel": "toolServers", "ok": None, "reason": "no MCP server configured"},
]
# A stand-in for `codex sandbox`: records how it was called, refuses a browser the way the
# real sandbox does (the raw line Chromium prints there), runs anything else.
FAKE_CODEX = """#!/bin/sh
printf '%s\\n' "$@" > "$(dirname "$0")/argv"
while [ "$1" != "--" ]; do shift; done
shift
case "$1" in
  *chrom*) echo "ERROR:socket.cc:45] setsockopt: Operation not permitted (1)" >&2; exit 1 ;;
esac
exec "$@"
"""


def turn_context(sandbox: str, approval: str) -> str:
    payload = {"sandbox_policy": {"type": sandbox}, "approval_policy": approval, "cwd": "/p"}
    return json.dumps({"timestamp": "t", "type": "turn_context", "payload": payload})


def test_codex_runs_in_the_mode_of_its_latest_turn_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "config.toml").write_text('sandbox_mode = "read-only"\n')
    rollout = tmp_path / "rollout-2026-12-01T10-00-00-x.jsonl"
    lines = [
        '{"type":"session_meta","payload":{"cwd":"/p"}}',
        turn_context("workspace-write", "on-request"),
        '{"type":"response_item","payload":{"type":"message","role":"user","content":[]}}',
    ]
    rollout.write_text("\n".join(lines) + "\n")
    payload = {"session_id": "x1", "transcript_path": str(rollout)}
    with Store(tmp_path / "state") as store:
        first = read_facts(store, "codex", payload)
        assert (first.sandbox, first.approval) == ("workspace-write", "on-request")
        assert first.sources["sandbox"] == "rollout turn context" and first.restricted
        # The person switched to full access mid-session: the latest turn context wins.
        with rollout.open("a") as log:
            log.write(turn_context("danger-full-access", "never") + "\n")
        switched = read_facts(store, "codex", payload)
        assert switched.sandbox == "danger-full-access" and switched.full_access
        assert switched.key != first.key  # another cache key: probed again
        # No rollout to read: the config's mode, and the reason the log could not be read.
        errors: list[str] = []
        gone = read_facts(store, "codex", payload | {"transcript_path": "/no/such"}, errors)
        assert gone.sandbox == "read-only" and errors and errors[0].startswith("/no/such")


def test_claude_codes_bash_sandbox_setting_is_read_the_last_file_winning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (project / ".claude").mkdir(parents=True)
    payload = {"session_id": "c1", "cwd": str(project)}
    with Store(tmp_path / "state") as store:
        assert read_facts(store, "claude", payload).sandbox == UNKNOWN  # nothing says: unknown
        (home / ".claude").mkdir(parents=True)
        (home / ".claude" / "settings.json").write_text('{"sandbox": {"enabled": true}}')
        on = read_facts(store, "claude", payload)
        assert on.sandbox == "bash-sandbox" and on.restricted is True
        local = project / ".claude" / "settings.local.json"
        local.write_text('{"sandbox": {"enabled": false}}')
        off = read_facts(store, "claude", payload)
        assert off.sandbox == "off" and off.sources["sandbox"] == str(local)
        assert off.restricted is False


def test_the_text_says_where_the_probes_ran_and_that_the_gate_runs_outside() -> None:
    restricted = Facts("claude", sandbox="bash-sandbox")
    text = render(restricted, CHANNELS)
    assert OUTSIDE in text and GATE_OUTSIDE in text  # no runner: ✓ measured outside
    inside = [c | {"inside": "codex sandbox (workspace-write)"} for c in CHANNELS]
    codex = render(Facts("codex", sandbox="workspace-write"), inside)
    assert "经 codex sandbox (workspace-write) 在本会话自己的沙箱里实测" in codex
    assert OUTSIDE not in codex and GATE_OUTSIDE in codex
    unknown = render(Facts("dsh"), None)  # a mode nobody reported may be restricted
    assert GATE_OUTSIDE in unknown
    full = render(Facts("codex", sandbox="danger-full-access"), inside)
    assert GATE_OUTSIDE not in full and OUTSIDE not in full


@pytest.mark.process
def test_probes_run_through_codex_sandbox_for_the_sessions_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin" / "codex"
    fake.parent.mkdir()
    fake.write_text(FAKE_CODEX)
    fake.chmod(0o755)
    monkeypatch.setenv("CODEX_BIN", str(fake))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("DSHKIT_CHROMIUM", "/usr/bin/chromium")
    facts = Facts("codex", sandbox="workspace-write")
    prefix, name = sandbox_runner(facts, str(tmp_path))
    assert prefix == [str(fake), "sandbox", "-c", 'sandbox_mode="workspace-write"', "--"]
    assert name == "codex sandbox (workspace-write)"
    assert sandbox_runner(Facts("codex"), str(tmp_path)) == (None, "")  # unknown: not entered
    assert sandbox_runner(Facts("claude", sandbox="bash-sandbox"), "/p") == (None, "")
    with Store(tmp_path / "state") as store:
        channels = {c["channel"]: c for c in probe(store, facts, str(tmp_path))}
    assert channels[SUBPROCESS]["ok"] is True and channels[SUBPROCESS]["inside"] == name
    shot = channels[SCREENSHOT]
    assert shot["ok"] is False and "setsockopt: Operation not permitted" in shot["reason"]
    recorded = (fake.parent / "argv").read_text().splitlines()
    assert recorded[:4] == ["sandbox", "-c", 'sandbox_mode="workspace-write"', "--"]


@pytest.mark.real
@pytest.mark.browser
def test_the_real_codex_sandbox_refuses_the_screenshot_in_workspace_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = binary("codex", "node_modules", ".bin", "codex")
    monkeypatch.setenv("CODEX_BIN", codex)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("DSHKIT_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "config.toml").write_text(CODEX_SPARES_TMP)
    found: dict[str, dict[str, Any]] = {}
    with Store(tmp_path / "state") as store:
        for mode in ("workspace-write", "danger-full-access"):
            channels = probe(store, Facts("codex", sandbox=mode), str(tmp_path))
            found[mode] = {c["channel"]: c for c in channels}
    restricted, full = found["workspace-write"], found["danger-full-access"]
    assert restricted[SUBPROCESS]["ok"] is True
    assert restricted[SCREENSHOT]["ok"] is False, restricted[SCREENSHOT]
    assert "Operation not permitted" in restricted[SCREENSHOT]["reason"]
    assert full[SCREENSHOT]["ok"] is True, full[SCREENSHOT]


def test_the_codex_running_the_hook_is_found_without_codex_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An npm install of Codex: the native binary in vendor/<target>/bin, its hooks' PATH
    # starting with vendor/<target>/codex-path (which holds only rg), the package named.
    vendor = tmp_path / "node_modules" / "@openai" / "codex-linux-x64" / "vendor" / "x86_64"
    (vendor / "codex-path").mkdir(parents=True)
    (vendor / "bin").mkdir()
    native = vendor / "bin" / "codex"
    native.write_text(FAKE_CODEX)
    native.chmod(0o755)
    monkeypatch.delenv("CODEX_BIN", raising=False)
    monkeypatch.setenv("PATH", f"{vendor / 'codex-path'}:/usr/bin:/bin")
    facts = Facts("codex", sandbox="read-only")
    assert sandbox_runner(facts, "/p")[0] == [
        str(native),
        "sandbox",
        "-c",
        'sandbox_mode="read-only"',
        "--",
    ]
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert sandbox_runner(facts, "/p") == (None, "")  # no Codex to be found: not entered
    package = tmp_path / "node_modules" / "@openai" / "codex"
    package.mkdir()
    monkeypatch.setenv("CODEX_MANAGED_PACKAGE_ROOT", str(package))
    prefix = sandbox_runner(facts, "/p")[0]
    assert prefix is not None and Path(prefix[0]).resolve() == native.resolve()
