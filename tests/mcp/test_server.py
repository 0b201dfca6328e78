"""dshkit's MCP server: in process through the SDK's client, as a stdio subprocess (as the
harnesses start it), and on streamable HTTP bound to 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from mcp.types import CallToolResult

from dshkit.capability.mcp import Server, probe
from dshkit.mcp.server import build_server
from dshkit.mcp.tools import TOOLS
from dshkit.profile.state import ProfileState
from dshkit.sessions import Source
from dshkit.store import Store
from mcp import Client, StdioServerParameters

from ..support.cli import COMMAND, environment, run_dshkit
from ..support.fakes import FakeOpenAI, Reply
from ..support.hooks import claude, context, hook
from ..support.logs import human, session_dir, write_log
from ..support.mcp import over_http, text, with_client
from ..support.paths import CLAUDE, PAGES
from ..support.profile import PROFILE, store_version

REFINED = "开工前先问用户：无\n把登录按钮改成蓝色。\n收尾自检：打开登录页看按钮。"
CLAUDE_SESSION = "94064e6a-24ce-4fa9-93cc-aeaa4cb613ce"  # the person said "say hi"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with Store(tmp_path / ".dsh" / "dshkit") as store:
        store_version(store, PROFILE)
    return tmp_path


def state(home: Path) -> Path:
    return home / ".dsh" / "dshkit"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def call(home: Path, name: str, arguments: dict[str, Any], **build: Any) -> CallToolResult:
    server = build_server(state(home), **build)
    return with_client(server, lambda client: client.call_tool(name, arguments))


def configure_llm(home: Path, fake: FakeOpenAI) -> None:
    (state(home) / "config.toml").write_text(
        f'[llm]\nbase_url = "{fake.base_url}"\napi_key = "sk-t"\n'
    )


@pytest.fixture(autouse=True)
def _no_llm_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DSHKIT_LLM_BASE_URL", "DSHKIT_LLM_API_KEY", "DSHKIT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_every_tool_is_listed_with_its_arguments_described(home: Path) -> None:
    listed = with_client(build_server(state(home), []), lambda client: client.list_tools())
    tools = {t.name: t for t in listed.tools}
    assert (
        list(tools)
        == list(TOOLS)
        == [
            "profile_show",
            "optimize_prompt",
            "gate_check",
            "graft_prepare",
            "graft_slice_and_inject",
            "graft_read_result",
            "graft_search_history",
            "graft_debug_status",
            "memory_search",
            "memory_get",
            "guard_explain",
        ]
    )
    for tool in tools.values():
        assert tool.description and "\n\n" not in tool.description
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), (tool.name, name)
    assert tools["optimize_prompt"].input_schema["required"] == ["raw"]
    assert tools["gate_check"].input_schema["required"] == ["path"]
    assert tools["profile_show"].annotations is not None
    assert tools["profile_show"].annotations.read_only_hint is True
    assert tools["optimize_prompt"].annotations is not None
    assert tools["optimize_prompt"].annotations.read_only_hint is False
    assert tools["guard_explain"].annotations is not None
    assert tools["guard_explain"].annotations.read_only_hint is True


def test_profile_and_instructions_are_the_bytes_the_hooks_inject(home: Path) -> None:
    out, _ = hook(home, "SessionStart", claude("c1", source="startup"))
    injected = context(out)
    assert injected and "用中文沟通" in injected
    server = build_server(state(home), [])
    for mode in ("auto", "legacy"):  # the 2026 protocol, and the initialize handshake

        async def both(client: Client) -> tuple[str | None, CallToolResult]:
            return client.session.instructions, await client.call_tool("profile_show", {})

        instructions, shown = with_client(server, both, mode)
        assert instructions == injected
        assert text(shown) == injected and not shown.is_error
        assert shown.structured_content is not None
        assert shown.structured_content["text"] == injected
        assert shown.structured_content["mode"] == "auto"


def test_no_profile_means_no_instructions_and_an_empty_text(tmp_path: Path) -> None:
    server = build_server(tmp_path / "state", [])

    async def both(client: Client) -> tuple[str | None, CallToolResult]:
        return client.session.instructions, await client.call_tool("profile_show", {})

    instructions, shown = with_client(server, both)
    assert instructions is None and text(shown) == "" and not shown.is_error


def test_custom_text_is_shown_as_it_is_injected(home: Path) -> None:
    with Store(state(home)) as store:
        profile = ProfileState(store)
        profile.set_custom_text("  只用 pnpm。\n不要改 CI 配置。  \n")
        profile.set_mode("custom")
    out, _ = hook(home, "SessionStart", claude("c2", source="startup"))
    shown = call(home, "profile_show", {}, sources=[])
    assert text(shown) == context(out) == "只用 pnpm。\n不要改 CI 配置。"


def test_optimize_prompt_asks_the_configured_model(home: Path, fake: FakeOpenAI) -> None:
    configure_llm(home, fake)
    fake.replies.append(Reply(deltas=[REFINED]))
    done = call(home, "optimize_prompt", {"raw": "把按钮改蓝", "tier": "basic"}, sources=[])
    assert not done.is_error and text(done) == REFINED
    assert done.structured_content is not None
    assert done.structured_content["output"] == REFINED and done.structured_content["runId"] == 1
    (request,) = fake.requests
    assert "把按钮改蓝" in json.dumps(request.body["messages"], ensure_ascii=False)


def test_optimize_prompt_reads_the_session_from_the_given_roots(
    home: Path, fake: FakeOpenAI
) -> None:
    configure_llm(home, fake)
    fake.replies.append(Reply(deltas=[REFINED]))
    arguments = {"raw": "再来一次", "tier": "basic", "session": CLAUDE_SESSION[:8]}
    done = call(home, "optimize_prompt", arguments, sources=[Source("claude", CLAUDE)])
    assert not done.is_error, text(done)
    (request,) = fake.requests
    assert "say hi" in json.dumps(request.body["messages"], ensure_ascii=False)
    # Without the root, a fresh store never hears of it: the roots are the server's.
    other = home / "other"
    state(other).mkdir(parents=True)
    configure_llm(other, fake)
    missing = call(other, "optimize_prompt", arguments, sources=[])
    assert missing.is_error, text(missing)
    assert f"session: no single session matches {arguments['session']!r}" in text(missing)


def test_optimize_prompt_errors_name_what_is_wrong(home: Path, fake: FakeOpenAI) -> None:
    nokey = call(home, "optimize_prompt", {"raw": "把按钮改蓝", "tier": "basic"}, sources=[])
    assert nokey.is_error and "no LLM API key: set DSHKIT_LLM_API_KEY" in text(nokey)
    configure_llm(home, fake)
    cases = {
        "raw: the raw words are empty": {"raw": "   "},
        "tier = 'max' (a string) is not allowed": {"raw": "x", "tier": "max"},
        "harness: unknown harness 'cursor' (known: dsh, claude, codex, gemini)": {
            "raw": "x",
            "session": "s",
            "harness": "cursor",
        },
    }
    for message, arguments in cases.items():
        failed = call(home, "optimize_prompt", arguments, sources=[])
        assert failed.is_error and message in text(failed), text(failed)
    missing = call(home, "optimize_prompt", {"tier": "basic"}, sources=[])
    assert missing.is_error and "raw\n  Field required" in text(missing)
    wrong_type = call(home, "optimize_prompt", {"raw": "x", "turns": "many"}, sources=[])
    assert wrong_type.is_error and "turns\n" in text(wrong_type)
    fake.replies.append(Reply(status=500, error_body={"error": {"message": "down"}}))
    passed_on = call(home, "optimize_prompt", {"raw": "把按钮改蓝", "tier": "basic"}, sources=[])
    assert passed_on.is_error and "the raw words were passed on: http-error" in text(passed_on)
    assert len(fake.requests) == 1  # only the last call reached the model


def test_optimize_prompt_refuses_an_ambiguous_session_naming_the_matches(
    home: Path, fake: FakeOpenAI
) -> None:
    configure_llm(home, fake)
    root = home / "dsh-sessions"
    for session_id in ("dup-1", "dup-2"):
        write_log(session_dir(root, session_id) / "session.v4.jsonl.zstd", [[human(0, "hi")]])
    arguments = {"raw": "x", "tier": "basic", "session": "dup"}
    refused = call(home, "optimize_prompt", arguments, sources=[Source("dsh", root)])
    assert refused.is_error and "session: 'dup' matches 2 sessions" in text(refused)
    assert "dsh:dup-1" in text(refused) and "dsh:dup-2" in text(refused)
    assert fake.requests == []


@pytest.mark.browser
def test_gate_check_judges_a_page_in_chromium(home: Path, tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text(
        "<!doctype html><html><body><p>hi</p><script>"
        "setTimeout(() => { throw new Error('boom') }, 100)</script></body></html>"
    )
    done = call(home, "gate_check", {"path": str(page), "budget": 4}, sources=[])
    assert not done.is_error, text(done)
    verdict = orjson.loads(text(done))
    assert verdict == done.structured_content
    assert verdict["verdict"] == "page-error" and any("boom" in e for e in verdict["errors"])
    assert Path(verdict["screenshot"]).is_file()


def test_gate_check_refuses_bad_arguments_before_starting_a_browser(home: Path) -> None:
    cases: dict[str, dict[str, Any]] = {
        "path: 'page.html' is not an absolute path": {"path": "page.html"},
        "path: /nowhere/page.html: no such file": {"path": "/nowhere/page.html"},
        "path: /etc/hostname: not a web deliverable": {"path": "/etc/hostname"},
        "budget: budget 0.5 s is out of range (1 to 300 s)": {
            "path": str(PAGES / "no-canvas.html"),
            "budget": 0.5,
        },
    }
    for message, arguments in cases.items():
        failed = call(home, "gate_check", arguments, sources=[])
        assert failed.is_error and message in text(failed), text(failed)


@pytest.mark.process
def test_stdio_subprocess_speaks_only_the_protocol_on_stdout(home: Path) -> None:
    expected = context(hook(home, "SessionStart", claude("c3", source="startup"))[0])
    command = [*COMMAND, "mcp", "--state-dir", str(state(home))]
    params = StdioServerParameters(command=command[0], args=command[1:], env=environment(home))

    async def work(client: Client) -> tuple[list[str], CallToolResult, str | None]:
        listed = await client.list_tools()
        shown = await client.call_tool("profile_show", {})
        return [t.name for t in listed.tools], shown, client.session.instructions

    names, shown, instructions = with_client(params, work)
    assert names == list(TOOLS) and text(shown) == expected and instructions == expected
    # Raw lines, as DSH's client sends them: every stdout line is a JSON-RPC message.
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "optimize_prompt", "arguments": {"raw": ""}}},
    ]  # fmt: skip
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(home),
    )
    assert process.stdin and process.stdout
    process.stdin.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    process.stdin.flush()
    replies = [orjson.loads(process.stdout.readline()) for _ in range(2)]
    rest, errors = process.communicate(timeout=60)  # stdin closed: the server ends
    assert process.returncode == 0 and rest == b"", errors
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[0]["result"]["instructions"] == expected
    assert replies[1]["result"]["isError"] is True
    assert "raw: the raw words are empty" in replies[1]["result"]["content"][0]["text"]
    # The capability layer's probe sees the server answer as a harness would start it.
    checked = probe(Server("dshkit", "test", "stdio", command=command[0], args=command[1:]))
    assert checked["ok"] is True and "dshkit" in checked["reason"]


@pytest.mark.process
def test_http_serves_on_loopback_and_refuses_another_host(home: Path) -> None:
    refused = run_dshkit(
        "mcp", "--http", "--host", "0.0.0.0", "--state-dir", str(state(home)),
        home=home, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "--host" in refused.stderr and "127.0.0.1 only" in refused.stderr
    stray = run_dshkit("mcp", "--port", "9", home=home, check=False)
    assert stray.returncode == 2 and "--host and --port go with --http" in stray.stderr
    server = subprocess.Popen(
        [*COMMAND, "mcp", "--http", "--port", "0", "--state-dir", str(state(home))],
        stderr=subprocess.PIPE,
        text=True,
        env=environment(home),
    )
    try:
        assert server.stderr is not None
        announced = server.stderr.readline()
        assert announced.startswith("dshkit MCP server at http://127.0.0.1:"), announced
        url = announced.split(" at ")[1].strip()
        assert url.endswith("/mcp")
        expected = context(hook(home, "SessionStart", claude("c4", source="startup"))[0])

        async def work(client: Client) -> tuple[list[str], CallToolResult]:
            listed = await client.list_tools()
            return [t.name for t in listed.tools], await client.call_tool("profile_show", {})

        bearer = {"authorization": f"Bearer {(state(home) / 'mcp-token').read_text().strip()}"}
        names, shown = with_client(over_http(url, bearer), work)
        assert names == list(TOOLS) and text(shown) == expected
        # A page elsewhere that makes the browser post here (DNS rebinding) is refused, even
        # with the token (tests/test_mcp_auth.py: without it, nothing is served).
        foreign = httpx.post(
            url,
            headers={
                "host": "evil.example",
                "accept": "application/json, text/event-stream",
                **bearer,
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            trust_env=False,
        )
        assert foreign.status_code in (400, 403, 421)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_guard_explain_traces_a_line_and_allows_nothing(home: Path, tmp_path: Path) -> None:
    work = str(tmp_path / "proj")
    shown = call(home, "guard_explain", {"command": "sudo rm -rf ~/x", "cwd": work})
    assert not shown.is_error, shown
    record = shown.structured_content
    assert record is not None and record["decision"] == "deny" and record["mode"] == "balanced"
    assert record["wrappers"] == [{"wrapper": "sudo", "runs": "rm", "nested": False}]
    assert record["rule"]["name"] == "delete" and record["advice"]
    assert not (state(home) / "config.toml").exists()  # it reads; it writes no rule
    bad = call(home, "guard_explain", {"command": "ls", "shell": "fish"})
    assert bad.is_error and "fish" in bad.content[0].text  # type: ignore[union-attr]
