"""Only the MCP servers a harness would start itself are ever started by dshkit: a cloned
project's `.mcp.json` (or `.codex/config.toml`) server nobody approved is listed as not
started and never run, through a real `dshkit hook SessionStart` too; each rule is checked
against what the real Claude Code and Codex decide (`claude mcp list`, `codex mcp list`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import harnesses
from dshkit.harnesses.mcp_trust import NOT_APPROVED, SWITCHED_OFF
from dshkit.store import Store

from ..support.capability import MARKER_SERVER, TRUSTED, hook, wait_for_probes
from ..support.hooks import claude, context
from ..support.real import binary


# A stdio MCP server that leaves a marker file the moment it is started, then answers.
@dataclass
class Case:
    """Where a person (or a repository) wrote what, and what Claude Code then does with the
    project's server `good`: "" (starts it), or why not."""

    name: str
    project: dict[str, Any]  # the ~/.claude.json entry of the project
    files: dict[str, Any] = field(default_factory=dict)  # path under the root → JSON
    expected: str = ""
    repository: bool = False  # the project is a git repository, the session in its `sub`


CLAUDE_CASES = [
    Case("nothing recorded", {}, expected=NOT_APPROVED),
    Case(
        "the repository's own settings, the folder not trusted",
        {},
        {
            "project/.claude/settings.json": {"enableAllProjectMcpServers": True},
            "project/.claude/settings.local.json": {"enabledMcpjsonServers": ["good"]},
        },
        NOT_APPROVED,
    ),
    Case(
        "approved in ~/.claude.json, the folder not trusted",
        {"enabledMcpjsonServers": ["good"]},
        expected=NOT_APPROVED,
    ),
    Case(
        "approved in ~/.claude.json, the folder trusted",
        {**TRUSTED, "enableAllProjectMcpServers": True},
    ),
    Case(
        "approved in the local settings, the folder trusted",
        TRUSTED,
        {"project/.claude/settings.local.json": {"enabledMcpjsonServers": ["good"]}},
    ),
    Case(
        "another server approved",
        TRUSTED,
        {"project/.claude/settings.local.json": {"enabledMcpjsonServers": ["other"]}},
        NOT_APPROVED,
    ),
    Case(
        "the shared settings, the folder trusted",
        TRUSTED,
        {"project/.claude/settings.json": {"enableAllProjectMcpServers": True}},
    ),
    Case(
        "approved in the user's settings",
        {},
        {"home/.claude/settings.json": {"enabledMcpjsonServers": ["good"]}},
    ),
    Case(
        "rejected in the user's settings",
        {},
        {
            "home/.claude/settings.json": {
                "enableAllProjectMcpServers": True,
                "disabledMcpjsonServers": ["good"],
            }
        },
        NOT_APPROVED,
    ),
    Case(
        "approved by the user, rejected in the local settings",
        TRUSTED,
        {
            "home/.claude/settings.json": {"enabledMcpjsonServers": ["good"]},
            "project/.claude/settings.local.json": {"disabledMcpjsonServers": ["good"]},
        },
        NOT_APPROVED,
    ),
    Case(
        "approved, then switched off in /mcp",
        {"disabledMcpServers": ["good"]},
        {"home/.claude/settings.json": {"enabledMcpjsonServers": ["good"]}},
        SWITCHED_OFF,
    ),
    Case(
        "a repository's subdirectory, its root trusted, approved beside the session",
        TRUSTED,
        {"project/sub/.claude/settings.local.json": {"enabledMcpjsonServers": ["good"]}},
        repository=True,
    ),
    Case(
        "a repository's subdirectory, its root not trusted",
        {},
        {"project/sub/.claude/settings.local.json": {"enabledMcpjsonServers": ["good"]}},
        NOT_APPROVED,
        repository=True,
    ),
]


def environ(home: Path) -> dict[str, str]:
    """Each harness's configuration under `home`, none of anyone's."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    return {**env, "HOME": str(home), "DSH_HOME": str(home / ".dsh")}


def lay_out_claude(root: Path, case: Case) -> Path:
    """The case's files under `root` (`home`, `project`); the session's working directory."""
    project = root / "project"
    cwd = project / "sub" if case.repository else project
    cwd.mkdir(parents=True)
    (root / "home" / ".claude").mkdir(parents=True)
    if case.repository:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    # `true` exits at once: the real CLI's health check that starts it is quick to fail.
    servers = {"good": {"command": "true"}}
    (cwd / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    user = {
        "mcpServers": {"mine": {"command": "true"}},
        "projects": {str(project): {**case.project, "mcpServers": {"local": {"command": "true"}}}},
    }
    (root / "home" / ".claude.json").write_text(json.dumps(user))
    for path, content in case.files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(json.dumps(content))
    return cwd


def judged(harness: str, cwd: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """What dshkit decides of each server `harness` configures in `cwd`: name → withheld."""
    with monkeypatch.context() as patched:
        for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
            patched.delenv(name, raising=False)
        patched.setenv("HOME", str(home))
        patched.setenv("DSH_HOME", str(home / ".dsh"))
        capability = harnesses.get(harness).capability
        assert capability is not None
        errors: list[str] = []
        servers = capability.mcp_servers(str(cwd), errors)
    assert errors == []
    return {server.name: server.withheld for server in servers}


@pytest.mark.parametrize("case", CLAUDE_CASES, ids=[c.name for c in CLAUDE_CASES])
@pytest.mark.process
def test_claude_starts_a_project_server_only_once_the_person_approved_it(
    tmp_path: Path, case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = lay_out_claude(tmp_path, case)
    found = judged("claude", cwd, tmp_path / "home", monkeypatch)
    # The user's and the local scope are the person's own: always started.
    assert found == {"mine": "", "local": "", "good": case.expected}


def claude_decides(cwd: Path, home: Path) -> dict[str, str]:
    """What the real Claude Code says of each server (`claude mcp list`): "" when it starts
    it (connected or failed to), or why not (a rejected one it does not list at all)."""
    done = subprocess.run(
        [binary("claude", "node_modules", ".bin", "claude"), "mcp", "list"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **environ(home),
            "ANTHROPIC_API_KEY": "dummy",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
        },
    )
    assert done.returncode == 0, done.stderr
    found = {"good": NOT_APPROVED}
    for line in done.stdout.splitlines():
        name, colon, rest = line.partition(": ")
        if not colon or name not in ("mine", "local", "good"):
            continue
        status = rest.rpartition(" - ")[2]
        if "Pending approval" in status:
            found[name] = NOT_APPROVED
        elif "Disabled" in status:
            found[name] = SWITCHED_OFF
        else:
            assert "Connected" in status or "Failed to connect" in status, line
            found[name] = ""
    return found


@pytest.mark.real
def test_the_real_claude_code_decides_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number, case in enumerate(CLAUDE_CASES):
        root = tmp_path / str(number)
        cwd = lay_out_claude(root, case)
        home = root / "home"
        ours = judged("claude", cwd, home, monkeypatch)
        assert claude_decides(cwd, home) == ours, case.name
        # It may carry approvals over to the local settings as it starts: the same still.
        assert judged("claude", cwd, home, monkeypatch) == ours, case.name


# --- Codex --------------------------------------------------------------------------------


def lay_out_codex(root: Path, trust: str | None, repository: bool) -> Path:
    """Codex's own config (one server started, one switched off) and a project whose
    `.codex/config.toml` configures `projsrv` (and, in a repository's `sub`, `subsrv`)."""
    project = root / "project"
    cwd = project / "sub" if repository else project
    (cwd / ".codex").mkdir(parents=True)
    (root / "home" / ".codex").mkdir(parents=True)
    if repository:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        (cwd / ".codex" / "config.toml").write_text('[mcp_servers.subsrv]\ncommand = "true"\n')
    (project / ".codex").mkdir(exist_ok=True)
    (project / ".codex" / "config.toml").write_text('[mcp_servers.projsrv]\ncommand = "true"\n')
    config = textwrap.dedent(
        """
        check_for_update_on_startup = false
        [features]
        plugins = false
        remote_plugin = false
        apps = false
        plugin_sharing = false
        [analytics]
        enabled = false
        [mcp_servers.mine]
        command = "true"
        [mcp_servers.off]
        command = "true"
        enabled = false
        """
    )
    if trust is not None:
        config += f'[projects."{project}"]\ntrust_level = "{trust}"\n'
    (root / "home" / ".codex" / "config.toml").write_text(config)
    return cwd


CODEX_CASES = [
    ("not trusted", None, False, NOT_APPROVED),
    ("trusted", "trusted", False, ""),
    ("explicitly untrusted", "untrusted", False, NOT_APPROVED),
    ("a repository's subdirectory, its root trusted", "trusted", True, ""),
]


@pytest.mark.parametrize(
    ("trust", "repository", "expected"),
    [c[1:] for c in CODEX_CASES],
    ids=[c[0] for c in CODEX_CASES],
)
@pytest.mark.process
def test_codex_reads_a_project_layer_only_in_a_trusted_project(
    tmp_path: Path,
    trust: str | None,
    repository: bool,
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cwd = lay_out_codex(tmp_path, trust, repository)
    found = judged("codex", cwd, tmp_path / "home", monkeypatch)
    project = {"projsrv": expected, **({"subsrv": expected} if repository else {})}
    assert found == {"mine": "", "off": SWITCHED_OFF, **project}


def codex_decides(cwd: Path, home: Path) -> dict[str, str]:
    """What the real Codex lists (`codex mcp list`): a project server it does not list is
    one it does not start."""
    done = subprocess.run(
        [binary("codex", "node_modules", ".bin", "codex"), "mcp", "list"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=environ(home),
    )
    assert done.returncode == 0, done.stderr
    found = {"projsrv": NOT_APPROVED}
    if (cwd / ".codex" / "config.toml").read_text().startswith("[mcp_servers.subsrv]"):
        found["subsrv"] = NOT_APPROVED
    for line in done.stdout.splitlines():
        words = line.split()
        if words and words[0] in ("mine", "off", "projsrv", "subsrv"):
            found[words[0]] = SWITCHED_OFF if "disabled" in words else ""
    return found


@pytest.mark.real
def test_the_real_codex_decides_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for number, (name, trust, repository, _) in enumerate(CODEX_CASES):
        root = tmp_path / str(number)
        cwd = lay_out_codex(root, trust, repository)
        home = root / "home"
        assert codex_decides(cwd, home) == judged("codex", cwd, home, monkeypatch), name


def test_dsh_starts_its_own_servers_unless_switched_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layer = tmp_path / "home" / ".dsh" / "profiles" / "headless" / "cordis.patch.yml"
    layer.parent.mkdir(parents=True)
    layer.write_text(
        textwrap.dedent(
            """
            - insert:
                - id: mcp-on
                  name: '@deepseek-ai/dsh-mcp-client'
                  config: {serverName: on, command: /opt/on}
                - id: mcp-off
                  name: '@deepseek-ai/dsh-mcp-client'
                  disabled: true
                  config: {serverName: off, command: /opt/off}
            """
        )
    )
    found = judged("dsh", tmp_path, tmp_path / "home", monkeypatch)
    assert found == {"on": "", "off": SWITCHED_OFF}


# --- through a real hook: SessionStart never starts what nobody approved ------------------


def tool_servers(state: Path) -> list[dict[str, Any]]:
    """The MCP servers of every cached probe's tool-server channel."""
    with Store(state) as store:
        rows = store.db.execute("SELECT channels FROM capability_probes").fetchall()
    found = []
    for (channels,) in rows:
        for result in orjson.loads(channels or b"[]"):
            if result["channel"] == "toolServers":
                found += result["servers"]
    return found


@pytest.mark.process
def test_session_start_in_a_cloned_project_never_starts_its_servers_until_approved(
    tmp_path: Path,
) -> None:
    state = tmp_path / ".dsh" / "dshkit"  # HOME is tmp_path (`hook` runs as the harness would)
    project = tmp_path / "cloned"
    (project / ".claude").mkdir(parents=True)
    marker = tmp_path / "marker"
    (project / "server.py").write_text(MARKER_SERVER)
    servers = {
        "evil": {"command": sys.executable, "args": [str(project / "server.py"), str(marker)]}
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    # The repository approves its own servers: that is no approval of the person's.
    (project / ".claude" / "settings.json").write_text('{"enableAllProjectMcpServers": true}')

    def session(event: str, **extra: Any) -> dict[str, Any]:
        payload = claude("c1", cwd=str(project), permission_mode="default", **extra)
        return {**payload, "hook_event_name": event}

    first = context(hook(tmp_path, "SessionStart", session("SessionStart", source="startup")))
    assert first is not None and "通道实测正在后台进行" in first  # a probe started, detached
    wait_for_probes(state)
    assert not marker.exists()
    (listed,) = tool_servers(state)
    assert listed["name"] == "evil" and listed["started"] is False
    assert listed["reason"] == "not started: not approved in Claude Code"
    results = context(hook(tmp_path, "UserPromptSubmit", session("UserPromptSubmit", prompt="hi")))
    assert results is not None
    assert "- 外部工具服务器（MCP）：—（没有启动任何服务器）" in results
    assert "evil（未启动：未在 Claude Code 中批准）" in results
    assert not marker.exists()

    # The person trusts the folder and approves the server, as Claude Code records it.
    (tmp_path / ".claude.json").write_text(json.dumps({"projects": {str(project): TRUSTED}}))
    approved = {"enabledMcpjsonServers": ["evil"]}
    (project / ".claude" / "settings.local.json").write_text(json.dumps(approved))
    news = context(hook(tmp_path, "UserPromptSubmit", session("UserPromptSubmit", prompt="go")))
    assert news is not None and "通道实测正在后台进行" in news  # other servers: probed afresh
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert time.monotonic() < deadline, "the background probe never started the server"
        time.sleep(0.1)
    wait_for_probes(state)
    later = context(hook(tmp_path, "UserPromptSubmit", session("UserPromptSubmit", prompt="on")))
    assert later is not None and "evil ✓ initialize answered (marker)" in later
    assert "未启动" not in later
