"""One use case asked on each surface, in this process, for its JSON: the command line's
`--json`, an MCP tool's structured answer, an HTTP endpoint's body."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import orjson

from dshkit.app import App
from dshkit.mcp.server import build_server
from dshkit.sessions import Source
from dshkit.web.app import create_app, new_token

from .cli import invoke
from .mcp import with_client


def cli_json(home: Path, *args: str) -> Any:
    """`dshkit ARGS --json` under `home` (its state directory and roots): what it printed."""
    done = invoke(*args, "--json", home=home)
    return orjson.loads(done.stdout)


def mcp_json(
    state_dir: Path,
    sources: list[Source],
    tool: str,
    arguments: dict[str, Any],
    cwd: str | None = None,
) -> Any:
    """The MCP tool `tool`'s structured answer, from dshkit's server over `state_dir` serving
    a session in `cwd` (None: this process's directory)."""
    server = build_server(state_dir, sources, cwd=cwd)
    answer = with_client(server, lambda client: client.call_tool(tool, arguments))
    assert not answer.is_error, answer.content
    return answer.structured_content


def http_json(state_dir: Path, sources: list[Source], path: str, **params: str) -> Any:
    """The body of `GET path?params` from the service over `state_dir` (every router
    mounted), asked with the token as a script asks, from 127.0.0.1."""
    token = new_token(state_dir)
    app = create_app(App(state_dir, sources), token)

    async def ask() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as web:
            return await web.get(path, params=params, headers={"x-dshkit-token": token})

    answer = asyncio.run(ask())
    assert answer.status_code == 200, answer.text
    return answer.json()
