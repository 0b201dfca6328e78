"""The ASGI app: the capability routers it is given, the console page, all behind the guard.

`create_app(app, token)` mounts every router listed in `routers.ROUTERS` (or those named in
`mount`), each built from the `App`, the composition root that holds the services; every request
first passes `security.Guard` (loopback, the owner's token or login cookie, origin, body
bounds), so routers hold no checks of their own.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import BaseRoute

from ..app import App
from ..paths import private_dir, replace_whole
from .page import console_routes
from .routers import ROUTERS, RouterFactory
from .security import MAX_BODY_BYTES, READ_TIMEOUT_S, Guard


def create_app(
    app: App,
    token: str,
    *,
    mount: Iterable[str] | None = None,
    allow_remote: bool = False,
    read_timeout: float = READ_TIMEOUT_S,
    max_body: int = MAX_BODY_BYTES,
    routers: Mapping[str, RouterFactory] = ROUTERS,
) -> Guard:
    """The ASGI app serving `app`'s capabilities: the routers named in `mount` (every one of
    `routers` when None), each built from `app`."""
    routes: list[BaseRoute] = []
    endpoints: list[str] = []
    for name in routers if mount is None else mount:
        if name not in routers:
            raise ValueError(f"no router for capability {name!r} (known: {', '.join(routers)})")
        router = routers[name](app)
        if router.name != name:
            raise ValueError(f"the router listed as {name!r} is named {router.name!r}")
        routes += router.routes()
        endpoints += router.endpoints
    asgi = Starlette(routes=[*console_routes(endpoints), *routes])
    state = Path(app.state_dir)

    def hook_token() -> str | None:  # read at each hook call: it may be drawn after the start
        from ..install.resident import hook_token as read

        return read(state)

    return Guard(
        asgi,
        token,
        allow_remote=allow_remote,
        max_body=max_body,
        read_timeout=read_timeout,
        hook_token=hook_token,
    )


TOKEN_FILE = "token"  # the service's token for scripts (X-Dshkit-Token)
MCP_TOKEN_FILE = "mcp-token"  # `dshkit mcp --http`'s bearer: its own, so one leak opens one door


def new_token(state_dir: Path, name: str = TOKEN_FILE) -> str:
    """A token drawn anew into `<state-dir>/<name>` (0600), replacing the old one whole: a
    service starting draws its own, so a token that leaked once stops working at the next
    start. Readers see the old token or the new one, never half."""
    private_dir(Path(state_dir))
    path = Path(state_dir) / name
    token = secrets.token_urlsafe(32)
    replace_whole(path, (token + "\n").encode())
    return token
