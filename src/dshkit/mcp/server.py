"""Building dshkit's MCP server (the SDK's `MCPServer`) and serving it on stdio or on
streamable HTTP bound to loopback.

The server's instructions are the effective profile text, the very bytes the hooks inject,
so a harness that puts MCP instructions into the system prompt gives the model the profile
there too; no profile, no instructions. They are read when the server is built: a harness
starts a stdio server with each session, as the hooks inject at each session's start.
"""

from __future__ import annotations

import inspect
import socket
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from .. import __version__
from ..install import SERVER_NAME
from ..profile import ProfileService
from ..sessions import Source, default_sources
from ..web.server import make_server
from .tools import TOOLS, Tools

HTTP_HOST = "127.0.0.1"  # the only address `--http` serves on
HTTP_PATH = "/mcp"


def instructions(state_dir: Path) -> str | None:
    """The effective profile text as the hooks inject it, or None when there is none."""
    return ProfileService(state_dir).effective().text or None


def build_server(
    state_dir: Path, sources: list[Source] | None = None, *, profile: bool = True
) -> MCPServer:
    """The server over the state directory `state_dir`, reading sessions from `sources`
    (None: each harness's default root, as `dshkit scan` does); `profile` False leaves the
    profile out of its instructions (the hooks inject it: the model is told once)."""
    tools = Tools(state_dir, default_sources() if sources is None else sources)
    server: MCPServer = MCPServer(
        SERVER_NAME,
        instructions=instructions(state_dir) if profile else None,
        version=__version__,
        log_level="WARNING",  # on stderr: stdout carries the protocol only
    )
    for name, hints in TOOLS.items():
        method = getattr(tools, name)
        description = inspect.cleandoc(method.__doc__ or "")
        server.add_tool(
            method,
            name=name,
            description=description,
            annotations=hints,
            structured_output=False,  # each tool builds its own result
        )
    return server


def serve_stdio(server: MCPServer) -> None:
    """Serve on stdin/stdout until the client closes stdin."""
    server.run("stdio")


def serve_http(server: MCPServer, sock: socket.socket) -> None:
    """Serve streamable HTTP at `HTTP_PATH` on `sock` (bound by `web.server.listen`) until
    interrupted; requests whose Host or Origin is not loopback are refused (the SDK's DNS
    rebinding protection)."""
    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=HTTP_HOST)
    make_server(app).run(sockets=[sock])
