"""Graft under /api/graft/: the audit trail, the debug panel, and a person's two overrides.

`GET /api/graft/audit?session=&limit=`: the latest records, oldest first, and how many older
ones the limit left out. `GET /api/graft/status?session=`: the panel (`dshkit graft
debug-status --json`), or with a session id (or a unique prefix) that session's part (with its
latest handoff's outcome). `POST /api/graft/cancel` `{"txn": N, "reason"?: …}`: withdraw a
pending or stuck handoff; `POST /api/graft/release` `{"session": …, "harness"?: …,
"reason"?: …}`: un-retire a committed source on purpose. Both audited, `by` "console".
`GET /api/graft/preview?session=`: the handoff card the session would get now (nothing
started); `POST /api/graft/slice` `{"session": …, "harness"?: …}`: hand it off now.
`GET /api/graft/context/{harness}/{id}`: the session's context use over its turns, each with
the warning and forced lines of that moment, and where a handoff cut it (its boundaries).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

from ...graft import AUDIT_LIMIT, GraftService
from ...sessions import Refresh
from ...store import SQLITE_INT_MAX
from ..routing import ApiError, Router, json_response, read_object, whole_number
from .sessions import harness_param

if TYPE_CHECKING:
    from ...app import App

_NO_STORE = {"cache-control": "no-store"}


def router(service: GraftService) -> Router:
    api = Router("graft")

    @api.get("/audit")
    async def get_audit(request: Request) -> Response:
        limit = whole_number(request.query_params.get("limit", "100"), "limit", 1, AUDIT_LIMIT)
        session = request.query_params.get("session") or None
        page = await asyncio.to_thread(service.audit, limit, session)
        return json_response(page.as_json(), headers=_NO_STORE)

    @api.get("/status")
    async def get_status(request: Request) -> Response:
        session = request.query_params.get("session") or None
        if session is None:
            panel: object = await asyncio.to_thread(service.debug_status)
        else:
            panel = await asyncio.to_thread(service.session_status, session)
        return json_response(panel, headers=_NO_STORE)

    @api.get("/context/{harness}/{id}")
    async def get_context(request: Request) -> Response:
        # The session's context use per turn, its warning and forced lines, its handoff cuts.
        harness = harness_param(request.path_params["harness"])
        used = await asyncio.to_thread(service.context_use, request.path_params["id"], harness)
        return json_response(used.as_json(), headers=_NO_STORE)

    @api.get("/preview")
    async def get_preview(request: Request) -> Response:
        # The card a handoff would carry now, from what is already read (a GET scans nothing).
        session = request.query_params.get("session") or None
        if session is None:
            raise ApiError(400, "session is required: a session id or a unique prefix")
        harness = request.query_params.get("harness") or None
        handoff = await asyncio.to_thread(service.prepare, session, harness, refresh=Refresh.NONE)
        return json_response(handoff.as_json(), headers=_NO_STORE)

    @api.post("/slice")
    async def post_slice(request: Request) -> Response:
        # Hand off now: begun here, the target started by a detached `dshkit graft drive`.
        body = await _body(request, {"session", "harness"})
        session = _text(body, "session")
        if session is None:
            raise ApiError(400, "session is required: a session id or a unique prefix")
        sliced = await asyncio.to_thread(
            service.slice,
            session,
            _text(body, "harness"),
            drive="detached",
            refresh=Refresh.TRY,
        )
        return json_response(sliced.as_json() | {"detached": sliced.detached}, headers=_NO_STORE)

    @api.post("/cancel")
    async def post_cancel(request: Request) -> Response:
        body = await _body(request, {"txn", "reason"})
        txn = body.get("txn")
        if isinstance(txn, bool) or not isinstance(txn, int) or not 0 <= txn <= SQLITE_INT_MAX:
            raise ApiError(400, f"txn must be a handoff's number, got {txn!r}")
        reason = _text(body, "reason")
        done = await asyncio.to_thread(service.cancel, txn, by="console", reason=reason)
        return json_response(done.as_json(), headers=_NO_STORE)

    @api.post("/release")
    async def post_release(request: Request) -> Response:
        body = await _body(request, {"session", "harness", "reason"})
        session = _text(body, "session")
        if session is None:
            raise ApiError(400, "session is required: the id of the retired source")
        harness, reason = _text(body, "harness"), _text(body, "reason")
        done = await asyncio.to_thread(
            service.release, session, harness, by="console", reason=reason
        )
        return json_response(done.as_json(), headers=_NO_STORE)

    return api


async def _body(request: Request, fields: set[str]) -> dict[str, object]:
    body = await read_object(request)
    unknown = sorted(set(body) - fields)
    if unknown:
        raise ApiError(400, f"unknown fields {unknown}; known: {sorted(fields)}")
    return body


def _text(body: dict[str, object], name: str, limit: int = 1_000) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ApiError(400, f"{name} must be a non-empty string of at most {limit} characters")
    return value


def from_app(app: App) -> Router:
    """The router over the app's context handoff."""
    return router(app.graft)
