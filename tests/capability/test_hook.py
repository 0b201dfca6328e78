"""Capability facts through the surfaces: the hooks (delivered once, again when the mode
changed), `dshkit capability`, `GET /api/capability/` (the cache) and `POST …/probe`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.capability import CapabilityService, read_facts
from dshkit.capability.text import FULL_ACCESS, HEADING, PENDING
from dshkit.store import Store
from dshkit.web.security import TOKEN_HEADER

from ..support.capability import hook, wait_for_probes
from ..support.cli import run_dshkit
from ..support.hooks import claude, context, dsh
from ..support.hooks import hook as hooks_hook
from ..support.mcp import MCP_SERVER
from ..support.web import Running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A working directory whose .mcp.json names one good stdio server and one that is gone,
    both approved by the person the way Claude Code records it (the folder trusted in
    `~/.claude.json`, HOME being `tmp_path`, the servers in its local settings): a server
    nobody approved is never started (tests/test_mcp_trust.py)."""
    directory = tmp_path / "project"
    directory.mkdir()
    (directory / "tiny_mcp.py").write_text(MCP_SERVER)
    servers = {
        "tiny": {"command": sys.executable, "args": [str(directory / "tiny_mcp.py")]},
        "godot": {"command": str(directory / "godot-mcp")},
    }
    (directory / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    trusted = {"projects": {str(directory): {"hasTrustDialogAccepted": True}}}
    (tmp_path / ".claude.json").write_text(json.dumps(trusted))
    (directory / ".claude").mkdir()
    approved = {"enabledMcpjsonServers": ["tiny", "godot"]}
    (directory / ".claude" / "settings.local.json").write_text(json.dumps(approved))
    return directory


@pytest.mark.browser
def test_claude_gets_the_facts_at_start_then_results_then_again_on_a_mode_change(
    tmp_path: Path, project: Path
) -> None:
    state = tmp_path / ".dsh" / "dshkit"

    def session(**extra: Any) -> dict[str, Any]:
        return claude("c1", cwd=str(project), permission_mode="default", **extra)

    first = context(hook(tmp_path, "SessionStart", session(source="startup")))
    assert first is not None and first.startswith(HEADING)
    assert "- 权限模式：default" in first and "- 权限档：unknown" in first
    assert PENDING in first and FULL_ACCESS not in first
    wait_for_probes(state)
    # The results that were pending reach the agent with its next prompt, once.
    results = context(hook(tmp_path, "UserPromptSubmit", session(prompt="hi")))
    assert results is not None and PENDING not in results
    assert "- 子进程：✓（sh -c echo: exit 0）" in results
    assert "- 视觉截图（无头浏览器）：✓（chromium: PNG" in results
    assert (
        "- 外部工具服务器（MCP）：✗（tiny ✓ initialize answered (tiny); godot ✗ cannot start"
        in (results)
    )
    assert hook(tmp_path, "UserPromptSubmit", session(prompt="more")) == {}
    assert hook(tmp_path, "SessionStart", session(source="resume")) == {}
    # The person switches to full access: the old conclusions are void, new facts delivered.
    # (its bash sandbox said off: full access needs every layer to say so)
    settings = project / ".claude" / "settings.json"
    settings.write_text('{"sandbox": {"enabled": false}}')
    full = claude("c1", cwd=str(project), permission_mode="bypassPermissions", prompt="go")
    switched = context(hook(tmp_path, "UserPromptSubmit", full))
    assert switched is not None and "- 权限模式：bypassPermissions" in switched
    assert PENDING in switched and FULL_ACCESS in switched
    # A compaction drops what was injected: delivered again.
    assert context(hook(tmp_path, "SessionStart", session(source="compact"))) is not None
    wait_for_probes(state)


@pytest.mark.browser
def test_a_start_that_reports_no_mode_is_no_change_of_it(tmp_path: Path, project: Path) -> None:
    # As the real Claude Code sends them (2.1.x): its SessionStart has no permission_mode, its
    # prompts do; `claude -p --resume` runs a start and a prompt in every process.
    def start(source: str) -> dict[str, Any]:
        return claude("c1", cwd=str(project), source=source)

    def prompt(mode: str = "default") -> dict[str, Any]:
        words = {"hook_event_name": "UserPromptSubmit", "prompt": "go on"}
        return claude("c1", cwd=str(project), permission_mode=mode, **words)

    first = context(hook(tmp_path, "SessionStart", start("startup")))
    assert first is not None and "- 权限模式：unknown" in first  # nothing reported it yet
    wait_for_probes(tmp_path / ".dsh" / "dshkit")
    told = context(hook(tmp_path, "UserPromptSubmit", prompt()))  # now it is: news
    assert told is not None and "- 权限模式：default" in told
    for _ in range(2):  # a resumed process: its start says no mode, its prompt the same one
        assert hook(tmp_path, "SessionStart", start("resume")) == {}
        assert hook(tmp_path, "UserPromptSubmit", prompt()) == {}
    planned = context(hook(tmp_path, "UserPromptSubmit", prompt("plan")))  # a real change
    assert planned is not None and "- 权限模式：plan" in planned
    # A compaction drops what was injected: given again, with the mode last reported.
    again = context(hook(tmp_path, "SessionStart", start("compact")))
    assert again is not None and "- 权限模式：plan" in again
    wait_for_probes(tmp_path / ".dsh" / "dshkit")


@pytest.mark.browser
def test_dsh_gets_them_with_the_first_prompt_and_unknown_modes_stay_unknown(
    tmp_path: Path,
) -> None:
    assert hook(tmp_path, "SessionStart", dsh("d1", source="startup")) == {}
    first = context(hook(tmp_path, "UserPromptSubmit", dsh("d1", prompt="fix it")))
    # Its log does not exist (yet): nothing reported a mode, so nothing is guessed.
    assert first is not None and "- 权限档：unknown\n- 审批策略：unknown" in first
    assert hook(tmp_path, "UserPromptSubmit", dsh("d1", prompt=first)) == {}
    wait_for_probes(tmp_path / ".dsh" / "dshkit")


# A browser that never writes its screenshot: it says it started, then waits to be ended.
STUCK_BROWSER = """#!/bin/sh
echo $$ > "$(dirname "$0")/started"
exec sleep 120
"""


@pytest.mark.process
def test_the_first_answer_comes_from_the_cache_while_the_probe_still_runs(
    tmp_path: Path,
) -> None:
    stuck = tmp_path / "bin" / "chromium"
    stuck.parent.mkdir()
    stuck.write_text(STUCK_BROWSER)
    stuck.chmod(0o755)
    payload = claude("c1", cwd=str(tmp_path), source="startup")
    out, log = hooks_hook(
        tmp_path, "SessionStart", payload, DSHKIT_CAPABILITY="on", DSHKIT_CHROMIUM=str(stuck)
    )
    text = context(out)
    assert text is not None and PENDING in text and "✓" not in text, log
    # The probe started in the background reaches the browser after the answer was given
    # and is still stuck in it: the answer was never waiting on it.
    started = stuck.parent / "started"
    deadline = time.monotonic() + 60
    while not started.exists():
        assert time.monotonic() < deadline, "the background probe never started the browser"
        time.sleep(0.1)
    with Store(tmp_path / ".dsh" / "dshkit") as store:
        rows = store.db.execute("SELECT at, started FROM capability_probes").fetchall()
    assert [(at, started_at is not None) for at, started_at in rows] == [(None, True)]
    os.killpg(int(started.read_text()), signal.SIGKILL)  # the probe's browser, its own group
    wait_for_probes(tmp_path / ".dsh" / "dshkit")


def test_switched_off_means_nothing(tmp_path: Path) -> None:
    done = run_dshkit(
        "hook",
        "SessionStart",
        home=tmp_path,
        env={"DSHKIT_CAPABILITY": "off"},
        input=orjson.dumps(claude("c1", source="startup")),
        text=False,
        timeout=60,
        check=False,
    )
    assert done.stdout == b"" or orjson.loads(done.stdout) == {}


def cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_dshkit(
        "capability", "--state-dir", str(home / "state"), *args, home=home, check=False, env=env
    )


def _probes(state: Path) -> list[Any]:
    with Store(state) as store:
        return [tuple(r) for r in store.db.execute("SELECT * FROM capability_probes")]


@pytest.mark.parametrize("switch", ["on", "off"])
def test_a_read_starts_nothing(tmp_path: Path, switch: str) -> None:
    args = ("--harness", "codex", "--cwd", str(tmp_path), "--mode", "read-only", "--json")
    read = cli(tmp_path, *args, DSHKIT_CAPABILITY=switch)
    assert read.returncode == 0, read.stderr
    found = json.loads(read.stdout)
    assert found["pending"] and not found["started"] and not found["probing"]
    assert _probes(tmp_path / "state") == []  # no probe claimed, none started
    shown = cli(tmp_path, *args[:-1], DSHKIT_CAPABILITY=switch).stdout
    assert "probe with `dshkit capability --probe`" in shown


def test_the_cli_reads_the_projects_settings_as_the_hook_does(
    tmp_path: Path, project: Path
) -> None:
    (project / ".claude" / "settings.json").write_text('{"sandbox": {"enabled": true}}')
    args = ("--harness", "claude", "--cwd", str(project), "--permission-mode", "bypassPermissions")
    found = json.loads(cli(tmp_path, *args, "--json").stdout)
    assert found["facts"]["sandbox"] == "bash-sandbox"
    assert found["facts"]["sources"]["sandbox"] == str(project / ".claude" / "settings.json")
    assert not found["facts"]["fullAccess"] and FULL_ACCESS not in found["text"]
    with Store(tmp_path / "hooked") as store:  # the hook's own read of the same session
        hooked = read_facts(store, "claude", {"cwd": str(project)})
    assert hooked.sandbox == found["facts"]["sandbox"]


@pytest.mark.browser
def test_the_cli_answers_at_once_then_probes(tmp_path: Path, project: Path) -> None:
    args = ("--harness", "claude", "--cwd", str(project), "--mode", "workspace-write")
    first = cli(tmp_path, *args, "--json")
    assert first.returncode == 0, first.stderr
    found = json.loads(first.stdout)
    # A read: nothing cached, nothing started (probing is --probe).
    assert found["pending"] and not found["started"] and found["channels"] is None
    assert found["facts"]["sandbox"] == "workspace-write"
    assert found["facts"]["sources"] == {"sandbox": "given"}
    probed = json.loads(cli(tmp_path, *args, "--probe", "--json").stdout)
    assert not probed["pending"]
    assert [c["ok"] for c in probed["channels"]] == [True, True, False]
    shown = cli(tmp_path, *args).stdout
    assert "sandbox mode:     workspace-write  (given)" in shown
    assert "screenshot   ok     chromium: PNG" in shown
    assert "toolServers  FAILED tiny ✓" in shown
    bad = cli(tmp_path, "--harness", "nope")
    assert bad.returncode == 2 and "nope" in bad.stderr
    wait_for_probes(tmp_path / "state")


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    server = Running(
        tmp_path, capabilities=lambda state, jobs: {"capability": CapabilityService(state)}
    )
    yield server
    server.close()


@pytest.mark.browser
def test_the_service_reports_and_probes_on_request(
    running: Running, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(project / "no-codex-home"))
    with running.client(
        base_url=f"{running.url}/api/capability",
        headers={TOKEN_HEADER: running.token},  # every route needs the owner's token
    ) as client:
        query = {"harness": "codex", "mode": "danger-full-access", "cwd": str(project)}
        # Nothing cached: a GET says so and starts nothing (probing is a POST).
        before = client.get("/", params=query)
        assert before.status_code == 200 and before.headers["cache-control"] == "no-store"
        assert before.json()["pending"] and before.json()["cached"] is None
        assert not before.json()["started"] and not before.json()["probing"]
        answer = client.post("/probe", json=query)
        assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
        found = answer.json()
        assert found["facts"]["fullAccess"] and FULL_ACCESS in found["text"]
        # Codex configures no server here (its config file is absent): nothing to probe.
        assert [c["ok"] for c in found["channels"]] == [True, True, None]
        cached = client.get("/", params=query).json()
        assert cached["channels"] == found["channels"] and not cached["started"]
        assert cached["cached"]["fresh"] and cached["cached"]["channels"] == found["channels"]
        assert 0 <= cached["cached"]["ageS"] < 60
        for params, message in (
            ({"harness": "nope"}, "harness must be one of"),
            ({"cwd": "relative"}, "cwd must be an absolute path"),
            ({"probe": "1"}, "probe with POST /api/capability/probe"),
            ({"mode": "x" * 101}, "mode must be 1 to 100 characters"),
        ):
            refused = client.get("/", params=params)
            assert refused.status_code == 400 and message in refused.json()["error"]
        for body, message in (
            ({"harness": "nope"}, "harness must be one of"),
            ({"cwd": "relative"}, "cwd must be an absolute path"),
            ({"probe": True}, "unknown field 'probe'"),
            ([], "must be a JSON object"),
        ):
            refused = client.post("/probe", json=body)
            assert refused.status_code == 400 and message in refused.json()["error"]
