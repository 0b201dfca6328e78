"""Building dshkit's MCP server (the SDK's `MCPServer`) and serving it on stdio or on
streamable HTTP bound to loopback, where every request needs the server's own bearer token
(`<state dir>/mcp-token`: any user of the machine can reach a loopback port; only the owner
reads the token) and, on Linux, a connection this user opened (`web.peer`).

The server's instructions are the effective profile text, the very bytes the hooks inject,
so a harness that puts MCP instructions into the system prompt gives the model the profile
there too; no profile, no instructions. They are read when the server is built: a harness
starts a stdio server with each session, as the hooks inject at each session's start.
"""

from __future__ import annotations

import hmac
import inspect
import os
import socket
from pathlib import Path

import orjson
from mcp.server.mcpserver import MCPServer
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import __version__
from ..app import App
from ..install import SERVER_NAME
from ..profile import ProfileService
from ..sessions import Source
from ..web import peer
from ..web.server import make_server
from .tools import TOOLS, Tools

HTTP_HOST = "127.0.0.1"  # the only address `--http` serves on
HTTP_PATH = "/mcp"


def instructions(state_dir: Path) -> str | None:
    """The effective profile text as the hooks inject it, or None when there is none."""
    return ProfileService(state_dir).effective().text or None


def build_server(
    state_dir: Path,
    sources: list[Source] | None = None,
    *,
    profile: bool = True,
    harness: str | None = None,
    cwd: str | None = None,
) -> MCPServer:
    """The server over the state directory `state_dir`, reading sessions from `sources`
    (None: each harness's default root, as `dshkit scan` does); `profile` False leaves the
    profile out of its instructions (the hooks inject it: the model is told once); `harness`:
    the harness that starts it (as `install-hooks` registers it), whose client decides how a
    tool's instruction reaches the model; `cwd` the session's directory, whose workspace the
    memory tools answer for (None: the process's, where the harness started the server)."""
    tools = Tools(App(state_dir, sources), harness, cwd)
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


def serve_http(server: MCPServer, sock: socket.socket, token: str) -> None:
    """Serve streamable HTTP at `HTTP_PATH` on `sock` (bound by `web.server.listen`) until
    interrupted; a request without `Authorization: Bearer <token>` gets 401, and one whose
    Host or Origin is not loopback is refused (the SDK's DNS rebinding protection)."""
    make_server(http_app(server, token)).run(sockets=[sock])


def http_app(server: MCPServer, token: str) -> ASGIApp:
    """The streamable HTTP app of `server`, behind the bearer check."""
    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=HTTP_HOST)
    return BearerGuard(app, token)


class BearerGuard:
    """Pure ASGI middleware: every HTTP request comes from this user (where the kernel can
    tell, else 403) and carries `Authorization: Bearer <token>` (else 401, RFC 6750's shape),
    before the SDK sees it; the lifespan passes through."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        *,
        owner_uid: int | None = None,
        peer_tables: tuple[str, ...] = peer.TABLES,
    ) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.owner_uid = os.geteuid() if owner_uid is None else owner_uid
        self.peer_tables = peer_tables

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            uid = peer.owner_of(scope, self.peer_tables)
            if uid is not None and uid != self.owner_uid:
                await _foreign(send, uid)
                return
            if not self.authorized(Headers(scope=scope)):
                await _unauthorized(send)
                return
        if scope["type"] == "websocket":  # never served: the SDK speaks HTTP only
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)

    def authorized(self, headers: Headers) -> bool:
        scheme, _, credentials = headers.get("authorization", "").partition(" ")
        sent = f"Bearer {credentials.strip()}".encode() if scheme.lower() == "bearer" else b""
        return hmac.compare_digest(sent, self.expected)


async def _foreign(send: Send, uid: int) -> None:
    body = orjson.dumps(
        {
            "error": "forbidden",
            "error_description": f"this server answers only its owner, not {peer.who(uid)}",
        }
    )
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 403, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _unauthorized(send: Send) -> None:
    body = orjson.dumps(
        {
            "error": "invalid_token",
            "error_description": "send Authorization: Bearer <the token in <state dir>/mcp-token>",
        }
    )
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(body)),
        (b"www-authenticate", b'Bearer realm="dshkit", error="invalid_token"'),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
