"""The console: one static page (`static/index.html`, `app.js`, `app.css`, `icon.svg`) at `/`.

The page changes state only through the same API as every other client, so it needs the
install's token. It gets it inside the HTML of `/`, and only when the request is local (a
loopback peer asking by a loopback host name): a page of another origin cannot read that
response (no CORS header is ever sent), a DNS-rebinding page is refused by the guard's
`Host` check, and the page may not be framed. Nothing else serves the token.
"""

from __future__ import annotations

import html
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from .security import is_loopback, is_loopback_address

TOKEN_SLOT = "{{token}}"
ENDPOINTS_SLOT = "{{endpoints}}"
_ASSETS = {"app.js": "text/javascript", "app.css": "text/css", "icon.svg": "image/svg+xml"}
# Everything from this origin only, no inline script or style, never inside a frame.
_HEADERS = {
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def console_routes(token: str, endpoints: list[str]) -> list[BaseRoute]:
    """`/` (the page, with the token for local requests, listing `endpoints`) and
    `/static/<asset>`."""
    listed = "".join(f"<li><code>{html.escape(e)}</code></li>" for e in endpoints)
    index = _asset("index.html").replace(ENDPOINTS_SLOT, listed)
    assets = {name: (_asset(name), kind) for name, kind in _ASSETS.items()}

    async def show(request: Request) -> Response:
        client = request.client
        local = (
            client is not None
            and is_loopback_address(client.host)
            and is_loopback(request.headers.get("host"))
        )
        page = index.replace(TOKEN_SLOT, html.escape(token) if local else "")
        return Response(page, media_type="text/html; charset=utf-8", headers=_HEADERS)

    async def asset(request: Request) -> Response:
        found = assets.get(request.path_params["name"])
        if found is None:
            return Response("not found", 404, media_type="text/plain")
        body, kind = found
        return Response(body, media_type=f"{kind}; charset=utf-8", headers=_HEADERS)

    return [Route("/", show, methods=["GET"]), Route("/static/{name}", asset, methods=["GET"])]
