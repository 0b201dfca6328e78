"""The console: one static page (`static/index.html`, `app.js`, `app.css`, `icon.svg`) at `/`.

The page holds no secret but once: answering a sign-in (the login link's one-time code), it
carries the tab's credential in a `<meta>` element, which the script moves into the tab's
`sessionStorage` and sends as the `X-Dshkit-Console` header with every API call (see
`security`). The page and its assets may not be framed and load nothing from elsewhere;
images the API serves are fetched with that header and shown as `blob:` URLs.
"""

from __future__ import annotations

import html
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from .security import CONSOLE_STATE

ENDPOINTS_SLOT = "{{endpoints}}"
CONSOLE_SLOT = "{{console}}"  # in the page's head: the credential, on a sign-in only
_ASSETS = {"app.js": "text/javascript", "app.css": "text/css", "icon.svg": "image/svg+xml"}
# Everything from this origin only, no inline script or style, never inside a frame.
_HEADERS = {
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def console_routes(endpoints: list[str]) -> list[BaseRoute]:
    """`/` (the page, listing `endpoints`) and `/static/<asset>`."""
    listed = "".join(f"<li><code>{html.escape(e)}</code></li>" for e in endpoints)
    index = _asset("index.html").replace(ENDPOINTS_SLOT, listed)
    assets = {name: (_asset(name), kind) for name, kind in _ASSETS.items()}

    async def show(request: Request) -> Response:
        credential = request.scope.get("state", {}).get(CONSOLE_STATE)
        meta = (
            f'<meta name="dshkit-console" content="{html.escape(credential, quote=True)}">'
            if isinstance(credential, str)
            else ""
        )
        body = index.replace(CONSOLE_SLOT, meta)
        return Response(body, media_type="text/html; charset=utf-8", headers=_HEADERS)

    async def asset(request: Request) -> Response:
        found = assets.get(request.path_params["name"])
        if found is None:
            return Response("not found", 404, media_type="text/plain")
        body, kind = found
        return Response(body, media_type=f"{kind}; charset=utf-8", headers=_HEADERS)

    return [Route("/", show, methods=["GET"]), Route("/static/{name}", asset, methods=["GET"])]
