"""The ASGI app: translates HTTP to ProfileService calls, and guards the door.

Guards, before anything else: the `Host` must be a loopback name (a DNS-rebinding page cannot
reach us), and a request that changes state must carry the install's token and no foreign
`Origin` (no web page the user visits can act for them). Bodies are bounded three ways: a
declared length over the limit is refused unread, reading stops once the limit is passed,
and a body that trickles in too slowly gets 408.
"""

from __future__ import annotations

import asyncio
import hmac
import html
import ipaddress
import os
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..profile.service import CONTRACT, ProfileService
from ..profile.state import Mode, TextRejected, TextTooLong

API = "/api/profile"
MAX_BODY_BYTES = 1_000_000
READ_TIMEOUT_S = 10.0
TOKEN_HEADER = "x-dshkit-token"


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(value), status, headers=headers, media_type="application/json")


def error(status: int, message: str) -> Response:
    return json_response({"ok": False, "error": message}, status)


def refused(exc: TextRejected) -> Response:
    """413 for text that is too long (or not text at all), 400 for anything else wrong."""
    return error(413 if isinstance(exc, TextTooLong) else 400, str(exc))


def is_loopback(host: str | None) -> bool:
    """Whether a `Host` (or origin netloc) names this machine's loopback, port or not."""
    if not host:
        return False
    if host.startswith("["):  # [::1]:8765
        name = host[1 : host.find("]")] if "]" in host else ""
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback  # not a prefix test: 127.evil.example
    except ValueError:
        return False


def create_app(
    service: ProfileService,
    token: str,
    *,
    read_timeout: float = READ_TIMEOUT_S,
    max_body: int = MAX_BODY_BYTES,
) -> Starlette:
    async def body_json(request: Request) -> Any:
        """The JSON body, or the Response refusing it."""
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > max_body):
            return error(413, f"request body over the {max_body}-byte limit")
        chunks, total = [], 0
        try:
            async with asyncio.timeout(read_timeout):
                async for chunk in request.stream():
                    total += len(chunk)
                    if total > max_body:
                        return error(413, f"request body over the {max_body}-byte limit")
                    chunks.append(chunk)
        except TimeoutError:
            return error(408, f"request body not received within {read_timeout:g} s")
        try:
            return orjson.loads(b"".join(chunks) or b"null")
        except orjson.JSONDecodeError as exc:
            return error(400, f"request body is not valid JSON: {exc}")

    async def dispatch(request: Request) -> Response:
        if not is_loopback(request.headers.get("host")):
            return error(403, "only loopback host names are served (Host header refused)")
        path = "/" + request.path_params.get("rest", "").strip("/")
        route = _ROUTES.get((request.method, path))
        if route is None:
            return error(404, f"no {request.method} {API}{path}")
        if request.method != "GET":
            origin = request.headers.get("origin")
            if origin is not None and not is_loopback(urlsplit(origin).netloc):
                return error(403, f"requests from origin {origin!r} are refused")
            sent = request.headers.get(TOKEN_HEADER, "")
            if not hmac.compare_digest(sent.encode(), token.encode()):
                return error(403, f"missing or wrong {TOKEN_HEADER} header (see <state-dir>/token)")
        return await route(request)

    async def self_check(request: Request) -> Response:
        endpoints = sorted(f"{method} {API}{path}" for method, path in _ROUTES)
        return json_response({"name": "dshkit", "contract": CONTRACT, "endpoints": endpoints})

    async def get_state(request: Request) -> Response:
        state = await asyncio.to_thread(service.state)
        return json_response(state, headers={"cache-control": "no-store"})

    async def post_mode(request: Request) -> Response:
        body = await body_json(request)
        if isinstance(body, Response):
            return body
        mode = body.get("mode") if isinstance(body, dict) else None
        if not isinstance(mode, str) or mode not in {m.value for m in Mode}:
            return error(400, f"mode must be 'auto' or 'custom', got {mode!r}")
        await asyncio.to_thread(service.set_mode, mode)
        return json_response(
            {"ok": True, "mode": mode, "state": await asyncio.to_thread(service.state)}
        )

    async def put_custom(request: Request) -> Response:
        body = await body_json(request)
        if isinstance(body, Response):
            return body
        text = body.get("text") if isinstance(body, dict) else None
        if not isinstance(text, str):
            return error(413, "text must be a string")
        try:
            await asyncio.to_thread(service.set_custom_text, text)
        except TextRejected as exc:
            return refused(exc)
        state = await asyncio.to_thread(service.state)
        return json_response({"ok": True, "length": len(text), "state": state})

    async def post_copied(request: Request) -> Response:
        body = await body_json(request)
        if isinstance(body, Response):
            return body
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            return error(400, "expected a JSON object with a string 'text'")
        try:
            snapshot = await asyncio.to_thread(
                service.mark_copied, body["text"], body.get("entries")
            )
        except TextRejected as exc:
            return refused(exc)
        return json_response({"ok": True, "copiedSnapshot": snapshot})

    def background(force: bool) -> Any:
        async def start(request: Request) -> Response:
            started = service.start(force=force)
            return json_response({"started": started, "running": True}, 202)

        return start

    _ROUTES: dict[tuple[str, str], Any] = {
        ("GET", "/"): self_check,
        ("GET", "/state"): get_state,
        ("POST", "/mode"): post_mode,
        ("PUT", "/custom"): put_custom,
        ("POST", "/copied"): post_copied,
        ("POST", "/regenerate"): background(force=True),
        ("POST", "/rescan"): background(force=False),
    }

    async def page(request: Request) -> Response:
        if not is_loopback(request.headers.get("host")):
            return error(403, "only loopback host names are served (Host header refused)")
        return HTMLResponse(_page(await asyncio.to_thread(service.state)))

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH"]
    return Starlette(
        routes=[
            Route("/", page, methods=["GET"]),
            Route(API, dispatch, methods=methods),
            Route(API + "/{rest:path}", dispatch, methods=methods),
        ]
    )


def _page(state: dict[str, Any]) -> str:
    """A plain status page until the console replaces it."""
    run = state["lastRun"] or {}
    profile = state["profile"] or {"version": None, "entries": []}
    rows = "".join(
        f"<tr><td>{html.escape(e['id'])}</td><td>{html.escape(e['category'])}</td>"
        f"<td>{html.escape(e['claim'])}</td><td>{html.escape(e['confidence'])}</td></tr>"
        for e in profile["entries"]
    )
    verdict = "updated" if run.get("ok") else (run.get("error") or run.get("reason") or "never run")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dshkit</title>
<style>body{{font:15px system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
pre{{white-space:pre-wrap;background:#f5f5f5;padding:1rem}}
td{{padding:.2rem .6rem;vertical-align:top}}</style>
</head><body>
<h1>dshkit</h1>
<p>Mode: <b>{html.escape(state["mode"])}</b> (text from {html.escape(state["effectiveSource"])}).
Profile version: {profile["version"] or "none yet"}. Last run: {html.escape(str(verdict))}.</p>
<h2>What the agent is told</h2>
<pre>{html.escape(state["effectiveText"]) or "(nothing is injected)"}</pre>
<h2>Profile entries</h2>
<table>{rows or "<tr><td>No profile yet.</td></tr>"}</table>
<p>API: <code>{API}/state</code> (JSON). Changes need the <code>X-Dshkit-Token</code> header.</p>
</body></html>"""


def ensure_token(state_dir: Path) -> str:
    """The install's token from `<state-dir>/token`, created (mode 0600) the first time."""
    path = Path(state_dir) / "token"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        token = path.read_text().strip()
        if len(token) < 32:
            raise ValueError(
                f"{path} holds no usable token; delete it to have a new one made"
            ) from None
        return token
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    return token
