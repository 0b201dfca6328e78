"""Graft's read side under /api/graft/: the audit trail and the debug panel (seed 004 v0.15).

`GET /api/graft/audit?session=&limit=`: the latest records, oldest first, and how many older
ones the limit left out. `GET /api/graft/status?session=`: the panel (`dshkit graft
debug-status --json`), or with a session id (or a unique prefix) that session's part.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response

from ...graft import AUDIT_LIMIT, GraftService
from ..routing import Router, json_response, whole_number

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

    return api
