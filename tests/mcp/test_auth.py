"""`dshkit mcp --http` serves only the owner: every request needs `Authorization: Bearer` with
the server's own token (`<state dir>/mcp-token`, new at each start; any user of the machine can
reach a loopback port), not the console's."""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp.types import CallToolResult

from dshkit.mcp.tools import TOOLS
from dshkit.web.app import MCP_TOKEN_FILE, TOKEN_FILE, new_token
from mcp import Client

from ..support.cli import COMMAND, environment, state_of
from ..support.mcp import over_http, text, with_client

pytestmark = pytest.mark.process

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "stranger", "version": "0"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream"}


@pytest.fixture
def mcp_url(tmp_path: Path) -> Iterator[str]:
    """`dshkit mcp --http --port 0` running over a state directory of its own."""
    server = subprocess.Popen(
        [*COMMAND, "mcp", "--http", "--port", "0", "--state-dir", str(state_of(tmp_path))],
        stderr=subprocess.PIPE,
        text=True,
        env=environment(tmp_path),
    )
    try:
        assert server.stderr is not None
        stderr = server.stderr
        said: queue.Queue[str] = (
            queue.Queue()
        )  # its stderr, read aside: a silence fails, never hangs

        def read_aside() -> None:
            for line in stderr:
                said.put(line)

        threading.Thread(target=read_aside, daemon=True).start()
        announced = said.get(timeout=60)
        assert announced.startswith("dshkit MCP server at http://127.0.0.1:"), announced
        told = said.get(timeout=10)
        assert "Authorization: Bearer" in told and str(state_of(tmp_path) / "mcp-token") in told
        yield announced.split(" at ")[1].strip()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_without_the_bearer_token_nothing_is_served(mcp_url: str, tmp_path: Path) -> None:
    token = (state_of(tmp_path) / MCP_TOKEN_FILE).read_text().strip()  # the server's own
    console = new_token(state_of(tmp_path), TOKEN_FILE)  # a token for `serve`'s scripts
    refusals = {
        "the console's token": {"authorization": f"Bearer {console}"},
        "none": {},
        "wrong": {"authorization": "Bearer " + "x" * len(token)},
        "prefix": {"authorization": f"Bearer {token[:-1]}"},
        "basic": {"authorization": f"Basic {token}"},
        "dshkit header": {"x-dshkit-token": token},
        "bare": {"authorization": token},
    }
    for name, headers in refusals.items():
        for method in ("POST", "GET", "DELETE"):
            body = INITIALIZE if method == "POST" else None
            answer = httpx.request(
                method, mcp_url, json=body, headers={**ACCEPT, **headers}, trust_env=False
            )
            assert answer.status_code == 401, (name, method, answer.status_code)
            assert answer.headers["www-authenticate"].startswith("Bearer")
            assert "serverInfo" not in answer.text
    # The server's other paths are refused the same way.
    elsewhere = httpx.get(mcp_url.replace("/mcp", "/"), trust_env=False)
    assert elsewhere.status_code == 401


def test_with_the_bearer_token_the_tools_answer(mcp_url: str, tmp_path: Path) -> None:
    token = (state_of(tmp_path) / MCP_TOKEN_FILE).read_text().strip()
    answer = httpx.post(
        mcp_url,
        json=INITIALIZE,
        headers={**ACCEPT, "authorization": f"bearer {token}"},  # the scheme's case is free
        trust_env=False,
    )
    assert answer.status_code == 200 and "serverInfo" in answer.text

    async def work(client: Client) -> tuple[list[str], CallToolResult]:
        listed = await client.list_tools()
        return [t.name for t in listed.tools], await client.call_tool("graft_debug_status", {})

    names, status = with_client(over_http(mcp_url, {"authorization": f"Bearer {token}"}), work)
    assert names == list(TOOLS) and not status.is_error and text(status)
