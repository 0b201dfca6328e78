"""Capability facts: real probes (a command, headless Chromium, MCP servers over stdio and
HTTP on 127.0.0.1), facts read where each harness reports them, the cache per mode."""

from __future__ import annotations

import http.server
import json
import shutil
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dshkit import harnesses
from dshkit.capability import (
    TTL_S,
    UNKNOWN,
    CapabilityService,
    Facts,
    given_facts,
    lookup,
    probe,
    read_facts,
    report,
)
from dshkit.capability.mcp import Server
from dshkit.capability.mcp import probe as probe_server
from dshkit.capability.probes import (
    BROWSER_ENV,
    probe_screenshot,
    probe_servers,
    probe_subprocess,
)
from dshkit.capability.text import FULL_ACCESS, GATE_OUTSIDE, OUTSIDE, PENDING, RULES, render
from dshkit.harnesses.config_files import configured
from dshkit.sessions.dsh import project_key
from dshkit.store import Store

from ..support.logs import event, human, session_dir, write_log
from ..support.mcp import MCP_SERVER


@pytest.fixture
def mcp_script(tmp_path: Path) -> Path:
    path = tmp_path / "tiny_mcp.py"
    path.write_text(MCP_SERVER)
    return path


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        status = 200 if self.path == "/mcp" and body.get("method") == "initialize" else 404
        reply = json.dumps({"jsonrpc": "2.0", "id": body.get("id"), "result": {}}).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_mcp() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the three channels, for real ----------------------------------------------------------


@pytest.mark.process
def test_a_real_subprocess_runs() -> None:
    assert probe_subprocess() == {
        "channel": "subprocess",
        "ok": True,
        "reason": "sh -c echo: exit 0",
    }


@pytest.mark.browser
def test_headless_chromium_writes_a_real_png(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BROWSER_ENV, raising=False)
    assert shutil.which("chromium"), "chromium must be installed (apt-get install chromium)"
    result = probe_screenshot()
    assert result["ok"] is True, result
    assert result["reason"].startswith("chromium: PNG ") and result["reason"].endswith(" B")
    assert int(result["reason"].split()[2]) > 1000


def _browser(tmp_path: Path, body: str) -> str:
    """A stand-in browser executable (a shell script) with the given behaviour."""
    path = tmp_path / "browser.sh"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


@pytest.mark.process
def test_a_screenshot_that_lands_after_the_launcher_returned_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The seed's async-write pitfall: the launcher exits at once, the PNG lands later.
    script = """
for arg; do case "$arg" in --screenshot=*) out="${arg#--screenshot=}";; esac; done
( sleep 0.7; printf '\\211PNG\\r\\n\\032\\nrest-of-the-image' > "$out" ) &
exit 0
"""
    monkeypatch.setenv(BROWSER_ENV, _browser(tmp_path, script))
    result = probe_screenshot(timeout=10)
    assert result["ok"] is True and result["reason"] == "browser.sh: PNG 25 B"


@pytest.mark.process
def test_a_browser_that_fails_gives_its_raw_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = "echo 'Program failed to run: Access is denied' >&2\nexit 3\n"
    monkeypatch.setenv(BROWSER_ENV, _browser(tmp_path, script))
    result = probe_screenshot(timeout=10)
    assert result["ok"] is False
    assert "(exit status 3): Program failed to run: Access is denied" in result["reason"]
    monkeypatch.setenv(BROWSER_ENV, str(tmp_path / "no-such-browser"))
    missing = probe_screenshot(timeout=10)
    assert missing["ok"] is False and "No such file or directory" in missing["reason"]


@pytest.mark.process
def test_a_hung_browser_is_killed_with_its_whole_process_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    script = f"sleep 300 &\necho $! > {pids}\nexec sleep 300\n"
    monkeypatch.setenv(BROWSER_ENV, _browser(tmp_path, script))
    result = probe_screenshot(timeout=1.5)
    assert result["ok"] is False and "(still running)" in result["reason"]
    child = Path(f"/proc/{int(pids.read_text())}/stat")
    deadline = time.monotonic() + 5
    while _alive(child):  # the group's other member is gone too
        assert time.monotonic() < deadline, "the browser's child outlived the probe"
        time.sleep(0.1)


def _alive(stat: Path) -> bool:
    """Whether a process runs (a zombie waiting for init to reap it does not)."""
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.process
def test_stdio_mcp_servers_answer_or_say_why_not(tmp_path: Path, mcp_script: Path) -> None:
    good = Server("tiny", "cfg", "stdio", command=sys.executable, args=[str(mcp_script)])
    assert probe_server(good) == {
        "name": "tiny",
        "source": "cfg",
        "transport": "stdio",
        "ok": True,
        "reason": "initialize answered (tiny)",
    }
    missing = Server("gone", "cfg", "stdio", command=str(tmp_path / "no-such-server"))
    result = probe_server(missing)
    assert result["ok"] is False
    assert (
        result["reason"] == f"cannot start {tmp_path / 'no-such-server'}: No such file or directory"
    )
    crash = Server(
        "crash", "cfg", "stdio", command=sys.executable, args=["-c", "raise SystemExit('no db')"]
    )
    crashed = probe_server(crash)
    assert crashed["ok"] is False
    assert crashed["reason"] == "exited with status 1 before answering initialize: no db"
    silent = Server("mute", "cfg", "stdio", command="sleep", args=["30"])
    assert probe_server(silent, timeout=0.5)["reason"] == "no answer to initialize within 0.5 s"


def test_http_mcp_servers_on_loopback(http_mcp: str) -> None:
    assert probe_server(Server("web", "cfg", "http", url=f"{http_mcp}/mcp"))["reason"] == "HTTP 200"
    wrong = probe_server(Server("web", "cfg", "http", url=f"{http_mcp}/nope"))
    assert wrong["ok"] is False and wrong["reason"] == f"HTTP 404 from {http_mcp}/nope"
    down = probe_server(Server("down", "cfg", "http", url=f"http://127.0.0.1:{_closed_port()}/"))
    assert down["ok"] is False and down["reason"].startswith("ConnectError: ")


@pytest.mark.process
def test_the_tool_server_channel_is_ok_only_when_every_server_answers(
    mcp_script: Path, http_mcp: str
) -> None:
    good = Server("tiny", "cfg", "stdio", command=sys.executable, args=[str(mcp_script)])
    web = Server("web", "cfg", "http", url=f"{http_mcp}/mcp")
    both = probe_servers([good, web], [])
    assert both["ok"] is True
    assert both["reason"] == "tiny ✓ initialize answered (tiny); web ✓ HTTP 200"
    bad = probe_servers([good, Server("gone", "cfg", "stdio", command="/no/such")], [])
    assert bad["ok"] is False and "gone ✗ cannot start /no/such" in bad["reason"]
    assert probe_servers([], [])["ok"] is None  # nothing configured is not a failure
    assert probe_servers([], ["cfg: not readable"])["ok"] is False


# --- where each harness configures its MCP servers -----------------------------------------


def test_configured_servers_are_read_from_each_harness_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DSH_HOME", str(home / ".dsh"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (home / ".codex").mkdir(parents=True)
    (home / ".dsh" / "profiles" / "headless").mkdir(parents=True)
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "mcpServers": {"user-one": {"command": "u", "args": ["1"]}},
                "projects": {
                    str(project): {"mcpServers": {"proj-web": {"type": "http", "url": "http://x"}}}
                },
            }
        )
    )
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"shared": {"command": "s"}}}))
    (home / ".codex" / "config.toml").write_text(
        'sandbox_mode = "workspace-write"\n[mcp_servers.docs]\ncommand = "d"\nargs = ["--x"]\n'
    )
    (home / ".dsh" / "profiles" / "headless" / "cordis.patch.yml").write_text(
        textwrap.dedent(
            """
            - id: hmr
              disabled: false
            - insert:
                - id: mcp-godot
                  name: '@deepseek-ai/dsh-mcp-client'
                  config:
                    serverName: godot
                    transport: stdio
                    command: /opt/godot-mcp
                    args: ['serve', "--port"]
                    failOnStartupError: true
                - id: mcp-web
                  name: "@deepseek-ai/dsh-mcp-client"
                  config:
                    serverName: web
                    transport: streamable-http
                    url: http://127.0.0.1:9/mcp
                - id: hooks-claude-code
                  name: '@deepseek-ai/dsh-hooks-claude-code'
            """
        )
    )

    def servers(name: str) -> list[tuple[str, str, str, list[str], str]]:
        errors: list[str] = []
        capability = harnesses.get(name).capability
        assert capability is not None
        found = configured(capability.mcp_configs(str(project)), str(project), errors)
        assert errors == []
        return [(s.name, s.transport, s.command, s.args, s.url) for s in found]

    assert servers("claude") == [
        ("user-one", "stdio", "u", ["1"], ""),
        ("proj-web", "http", "", [], "http://x"),
        ("shared", "stdio", "s", [], ""),
    ]
    assert servers("codex") == [("docs", "stdio", "d", ["--x"], "")]
    assert servers("dsh") == [
        ("godot", "stdio", "/opt/godot-mcp", ["serve", "--port"], ""),
        ("web", "http", "", [], "http://127.0.0.1:9/mcp"),
    ]
    (project / ".mcp.json").write_text("{not json")
    errors: list[str] = []
    configured([(str(project / ".mcp.json"), "mcp-json")], str(project), errors)
    assert len(errors) == 1 and errors[0].startswith(f"{project / '.mcp.json'}: not readable as")


# --- facts: as the harness reports them, else unknown --------------------------------------


def test_facts_come_from_the_payload_the_config_and_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    with Store(tmp_path / "state") as store:
        nothing = read_facts(store, "claude", {"session_id": "c1"})
        assert (nothing.sandbox, nothing.approval, nothing.permission) == (UNKNOWN,) * 3
        assert not nothing.full_access  # unknown is never taken for full access
        claude = read_facts(store, "claude", {"session_id": "c1", "permission_mode": "plan"})
        assert claude.permission == "plan" and claude.sources == {"permission": "hook payload"}
        # bypassPermissions with its bash sandbox not known to be off: one layer only.
        assert not read_facts(store, "claude", {"permission_mode": "bypassPermissions"}).full_access

        (tmp_path / "codex").mkdir()
        config = tmp_path / "codex" / "config.toml"
        config.write_text('approval_policy = "never"\nsandbox_mode = "danger-full-access"\n')
        codex = read_facts(store, "codex", {"session_id": "x1"})
        assert (codex.sandbox, codex.approval, codex.full_access) == (
            "danger-full-access",
            "never",
            True,
        )
        assert codex.sources["sandbox"] == str(config)
        config.write_text("sandbox_mode = [broken")
        errors: list[str] = []
        broken = read_facts(store, "codex", {"session_id": "x1"}, errors)
        assert broken.sandbox == UNKNOWN and errors and errors[0].startswith(str(config))

        # DSH: the session log's own mode events, read through the session layer's tail.
        root = tmp_path / ".dsh" / "sessions"
        log = session_dir(root, "d1", "/p") / "session.jsonl.zstd"
        mode = {"type": "sandbox/mode", "seq": 1, "time": 1, "data": {"mode": "read-only"}}
        write_log(log, [[event("turn/start", 0, {"turn": 1}), mode]], session_id="d1", cwd="/p")
        payload = {"session_id": "d1", "transcript_path": str(log)}
        first = read_facts(store, "dsh", payload)
        assert (first.sandbox, first.approval) == ("read-only", UNKNOWN)
        assert first.sources == {"sandbox": "session log"}
        # Later only the tail is read: what it adds changes the facts, the rest is remembered.
        write_log(
            log,
            [[human(2, "go"), event("approval/policy", 3, {"policy": "never"})]],
            mode="ab",
            session_id="d1",
        )
        assert (read_facts(store, "dsh", payload).approval) == "never"
        write_log(
            log,
            [[event("sandbox/mode", 4, {"mode": "danger-full-access"})]],
            mode="ab",
            session_id="d1",
        )
        now = read_facts(store, "dsh", payload)
        assert (now.sandbox, now.approval, now.full_access) == ("danger-full-access", "never", True)
        missing = {"session_id": "d2", "transcript_path": str(log.parent / "gone.jsonl.zstd")}
        errors = []
        assert read_facts(store, "dsh", missing, errors).sandbox == UNKNOWN and errors
        assert project_key("/p") in str(log)


def test_full_access_only_when_every_layer_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    payload = {"session_id": "c1", "cwd": str(project), "permission_mode": "bypassPermissions"}
    with Store(tmp_path / "state") as store:
        # Permissions bypassed, but every command still runs in its bash sandbox.
        settings.write_text('{"sandbox": {"enabled": true}}')
        boxed = read_facts(store, "claude", payload)
        assert (boxed.permission, boxed.sandbox) == ("bypassPermissions", "bash-sandbox")
        assert not boxed.full_access and boxed.restricted is True
        text = render(boxed, None)
        assert FULL_ACCESS not in text and GATE_OUTSIDE in text  # the gate line stays
        settings.write_text('{"sandbox": {"enabled": false}}')
        both = read_facts(store, "claude", payload)
        assert both.full_access and both.restricted is False
        assert FULL_ACCESS in render(both, None) and GATE_OUTSIDE not in render(both, None)
        asked = read_facts(store, "claude", payload | {"permission_mode": "default"})
        assert not asked.full_access  # the sandbox is off, approvals are still asked


def test_the_first_render_reads_the_cache_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seed's "first render < 20 ms" as structure (the time itself is
    bench/capability.py's): with nothing cached the answer is made from the store alone and
    only a detached probe is started, nothing probed in this process."""
    from dshkit.capability import probes, service

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the first render ran a probe")

    spawned: list[tuple[str, ...]] = []
    for name in ("probe_all", "probe_subprocess", "probe_screenshot", "probe_servers"):
        monkeypatch.setattr(probes, name, never)
    monkeypatch.setattr(service, "probe_all", never)
    monkeypatch.setattr(service, "spawn_detached", lambda *argv: spawned.append(argv))
    with Store(tmp_path / "state") as store:
        facts = read_facts(store, "codex", {"session_id": "x1", "cwd": str(tmp_path)})
        found, started = lookup(store, facts, str(tmp_path))
        assert started and found.pending and PENDING in found.text
        assert [argv[:2] for argv in spawned] == [("capability", "--probe")]
        again, started_again = lookup(store, facts, str(tmp_path))
        assert again.probing and not started_again and len(spawned) == 1


# --- the text the agent reads ----------------------------------------------------------------


def test_the_text_states_facts_and_rules_and_full_access_only_there() -> None:
    restricted = Facts("dsh", sandbox="workspace-write", approval="never")
    channels: list[dict[str, Any]] = [
        {"channel": "subprocess", "ok": True, "reason": "sh -c echo: exit 0"},
        {"channel": "screenshot", "ok": False, "reason": "Access is denied {{x}}"},
        {"channel": "toolServers", "ok": None, "reason": "no MCP server configured"},
    ]
    text = render(restricted, channels)
    assert "- 权限档：workspace-write" in text
    assert "never（没有任何操作需要审批，不是“没有权限”）" in text
    assert "- 子进程：✓（sh -c echo: exit 0）" in text
    assert "- 视觉截图（无头浏览器）：✗（Access is denied { {x} }）" in text  # no `{{` for DSH
    assert all(rule in text for rule in RULES) and FULL_ACCESS not in text and "{{" not in text
    assert OUTSIDE in text  # a restricted session is told where the probes ran
    full = render(Facts("dsh", sandbox="danger-full-access"), channels)
    assert FULL_ACCESS in full and "审批策略：unknown" in full and OUTSIDE not in full
    pending = render(Facts("claude"), None)
    assert PENDING in pending and "权限模式：unknown" in pending and "✓" not in pending


# --- the cache: per mode, 10 minutes, never waiting ------------------------------------------


@pytest.mark.browser
def test_results_are_cached_per_mode_for_ten_minutes(tmp_path: Path) -> None:
    with Store(tmp_path / "state") as store:
        restricted = given_facts(store, "claude", [], sandbox="workspace-write")
        assert report(store, restricted, "/p").pending
        channels = probe(store, restricted, str(tmp_path))
        assert [c["channel"] for c in channels] == ["subprocess", "screenshot", "toolServers"]
        fresh = report(store, restricted, str(tmp_path))
        assert fresh.channels == channels and not fresh.pending
        later = time.time() + TTL_S - 5
        assert report(store, restricted, str(tmp_path), now=later).channels == channels
        expired = report(store, restricted, str(tmp_path), now=time.time() + TTL_S + 1)
        assert expired.pending and expired.channels is None
        # A changed mode is another key: never answered from the old mode's results.
        switched = restricted.with_modes(sandbox="danger-full-access")
        assert switched.key != restricted.key
        assert report(store, switched, str(tmp_path)).pending


@pytest.mark.browser
def test_the_first_call_does_not_wait_and_a_later_one_has_the_results(tmp_path: Path) -> None:
    with Store(tmp_path / "state") as store:
        facts = given_facts(store, "claude", [], sandbox="read-only", approval="ask")
        first, started = lookup(store, facts, str(tmp_path))
        # Returned before any probe finished: it says so, and started one in the background.
        assert started and first.pending and first.channels is None
        assert PENDING in first.text
        again, started_again = lookup(store, facts, str(tmp_path))
        assert again.pending and again.probing and not started_again  # one probe at a time
        deadline = time.monotonic() + 60
        while (found := report(store, facts, str(tmp_path))).pending:
            assert time.monotonic() < deadline, "the background probe never finished"
            time.sleep(0.2)
        assert found.channels is not None
        assert [c["ok"] for c in found.channels] == [True, True, None]
        assert "- 视觉截图（无头浏览器）：✓（chromium: PNG" in found.text


@pytest.mark.browser
def test_the_service_answers_what_a_person_asks_from_the_same_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no config of anyone's, no server of theirs
    monkeypatch.delenv("CODEX_HOME", raising=False)
    service = CapabilityService(tmp_path / "state")
    modes = {"sandbox": "read-only", "approval": None, "permission": None}
    facts = service.given_facts("codex", sandbox="read-only")
    assert (facts.harness, facts.sandbox, facts.sources["sandbox"]) == (
        "codex",
        "read-only",
        "given",
    )
    channels = service.probe(facts, str(tmp_path))
    asked = service.lookup_given("codex", str(tmp_path), modes)
    assert asked.report.key == service.lookup(facts, str(tmp_path)).report.key
    assert asked.report.channels == channels and not asked.started
    shown = asked.as_json()
    assert shown["started"] is False and shown["channels"] == channels
    assert shown["text"] == asked.report.text and shown["facts"]["sandbox"] == "read-only"
    switched = service.given_facts("codex", sandbox="workspace-write")
    assert switched.key != facts.key  # another mode: never answered from these results
