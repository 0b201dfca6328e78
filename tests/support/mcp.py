"""MCP for tests: a tiny stdio server, dshkit's server driven through the SDK's client, and the
text of a tool's answer."""

from __future__ import annotations

import textwrap
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from mcp import Client

T = TypeVar("T")

# A stdio MCP server in a few lines: answers `initialize` on stdin/stdout (newline-delimited
# JSON-RPC), after a log line on stdout that is not the reply.
MCP_SERVER = textwrap.dedent(
    """
    import json, sys
    print("starting up", flush=True)
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "initialize":
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {}, "serverInfo": {"name": "tiny", "version": "1"}}}), flush=True)
    """
)


def with_client(server: Any, work: Callable[[Client], Awaitable[T]], mode: str = "auto") -> T:
    """`work` done with an SDK client connected to `server` (a server object, stdio
    parameters or a URL)."""

    async def main() -> T:
        async with Client(server, mode=mode) as client:
            return await work(client)

    return anyio.run(main)


def over_http(url: str, headers: dict[str, str]) -> Any:
    """The SDK's streamable HTTP transport to `url`, sending `headers` (the bearer token)."""
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=60))


def text(result: CallToolResult) -> str:
    (content,) = result.content
    assert content.type == "text"
    return content.text
