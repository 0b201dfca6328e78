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
from typing import TYPE_CHECKING, NotRequired, TypedDict

from starlette.requests import Request

from ...graft import AUDIT_LIMIT, GraftService
from ...graft.wire import (
    AuditPageJson,
    ContextUseJson,
    HandoffJson,
    Panel,
    SessionPart,
    SliceJson,
    TxnJson,
)
from ...sessions import Refresh
from ...store import SQLITE_INT_MAX
from ..routing import ApiError, Json, JsonObject, Router, json_response, whole_number
from .sessions import harness_param

if TYPE_CHECKING:
    from ...app import App

_NO_STORE = {"cache-control": "no-store"}


class SliceBody(TypedDict):
    """The session to hand off now (an id or a unique prefix, of `harness`)."""

    session: str
    harness: NotRequired[str | None]


class CancelBody(TypedDict):
    """The handoff to withdraw (its number), and why."""

    txn: int
    reason: NotRequired[str | None]


class ReleaseBody(TypedDict):
    """The retired source to take work again (its id, of `harness`), and why."""

    session: str
    harness: NotRequired[str | None]
    reason: NotRequired[str | None]


class Sliced(SliceJson):
    """The handoff begun, and whether a detached process was started to carry it on."""

    detached: bool


def _slice(body: JsonObject) -> SliceBody:
    _known(body, {"session", "harness"})
    session = _text(body, "session")
    if session is None:
        raise ApiError(400, "session is required: a session id or a unique prefix")
    return {"session": session, "harness": _text(body, "harness")}


def _cancel(body: JsonObject) -> CancelBody:
    _known(body, {"txn", "reason"})
    txn = body.get("txn")
    if isinstance(txn, bool) or not isinstance(txn, int) or not 0 <= txn <= SQLITE_INT_MAX:
        raise ApiError(400, f"txn must be a handoff's number, got {txn!r}")
    return {"txn": txn, "reason": _text(body, "reason")}


def _release(body: JsonObject) -> ReleaseBody:
    _known(body, {"session", "harness", "reason"})
    session = _text(body, "session")
    if session is None:
        raise ApiError(400, "session is required: the id of the retired source")
    return {"session": session, "harness": _text(body, "harness"), "reason": _text(body, "reason")}


def router(service: GraftService) -> Router:
    api = Router("graft")

    @api.get("/audit")
    async def get_audit(request: Request) -> Json[AuditPageJson]:
        """The latest audit records (`?limit=`, 100 unless given; `?session=` of one session
        id), oldest first, and how many older ones the limit left out."""
        limit = whole_number(request.query_params.get("limit", "100"), "limit", 1, AUDIT_LIMIT)
        session = request.query_params.get("session") or None
        page = await asyncio.to_thread(service.audit, limit, session)
        return json_response(page.as_json(), headers=_NO_STORE)

    @api.get("/status")
    async def get_status(request: Request) -> Json[Panel | SessionPart]:
        """The debug panel (`dshkit graft debug-status --json` without memory's counts); with
        `?session=` (an id or a unique prefix), that session's part of it only."""
        session = request.query_params.get("session") or None
        if session is None:
            panel: Panel | SessionPart = await asyncio.to_thread(service.debug_status)
        else:
            panel = await asyncio.to_thread(service.session_status, session)
        return json_response(panel, headers=_NO_STORE)

    @api.get("/context/{harness}/{id}")
    async def get_context(request: Request) -> Json[ContextUseJson]:
        """The session's context use per turn, its warning and forced lines, its handoff
        cuts."""
        harness = harness_param(request.path_params["harness"])
        used = await asyncio.to_thread(service.context_use, request.path_params["id"], harness)
        return json_response(used.as_json(), headers=_NO_STORE)

    @api.get("/preview")
    async def get_preview(request: Request) -> Json[HandoffJson]:
        """The card a handoff of the session (`?session=`, `?harness=`) would carry now, from
        what is already read: nothing is scanned or started."""
        session = request.query_params.get("session") or None
        if session is None:
            raise ApiError(400, "session is required: a session id or a unique prefix")
        harness = request.query_params.get("harness") or None
        handoff = await asyncio.to_thread(service.prepare, session, harness, refresh=Refresh.NONE)
        return json_response(handoff.as_json(), headers=_NO_STORE)

    @api.post("/slice", body=_slice)
    async def post_slice(request: Request, body: SliceBody) -> Json[Sliced]:
        """Hand the session off now: begun here, its target started by a detached `dshkit
        graft drive`."""
        sliced = await asyncio.to_thread(
            service.slice,
            body["session"],
            body.get("harness"),
            drive="detached",
            refresh=Refresh.TRY,
        )
        return json_response({**sliced.as_json(), "detached": sliced.detached}, headers=_NO_STORE)

    @api.post("/cancel", body=_cancel)
    async def post_cancel(request: Request, body: CancelBody) -> Json[TxnJson]:
        """Withdraw a pending or stuck handoff (audited, by "console")."""
        txn, reason = body["txn"], body.get("reason")
        done = await asyncio.to_thread(service.cancel, txn, by="console", reason=reason)
        return json_response(done.as_json(), headers=_NO_STORE)

    @api.post("/release", body=_release)
    async def post_release(request: Request, body: ReleaseBody) -> Json[TxnJson]:
        """Let a retired source take work again, on purpose (audited, by "console")."""
        done = await asyncio.to_thread(
            service.release,
            body["session"],
            body.get("harness"),
            by="console",
            reason=body.get("reason"),
        )
        return json_response(done.as_json(), headers=_NO_STORE)

    return api


def _known(body: JsonObject, fields: set[str]) -> None:
    unknown = sorted(set(body) - fields)
    if unknown:
        raise ApiError(400, f"unknown fields {unknown}; known: {sorted(fields)}")


def _text(body: JsonObject, name: str, limit: int = 1_000) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ApiError(400, f"{name} must be a non-empty string of at most {limit} characters")
    return value


def from_app(app: App) -> Router:
    """The router over the app's context handoff."""
    return router(app.graft)
