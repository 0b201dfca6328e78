"""Graft under /api/graft/: the audit trail, the debug panel, and a person's two overrides.

`GET /api/graft/audit?session=&limit=`: the latest records, oldest first, and how many older
ones the limit left out. `GET /api/graft/status?session=`: the panel (`dshkit graft
debug-status --json`), or with a session id (or a unique prefix) that session's part (with its
latest handoff's outcome). `POST /api/graft/cancel` `{"txn": N, "reason"?: …}`: withdraw a
handoff whose new session has not started (a starting one by its live driver); `POST
/api/graft/release` `{"session": …, "harness"?: …,
"reason"?: …}`: un-retire a committed source on purpose. Both audited, `by` "console".
`GET /api/graft/preview?session=`: the handoff card the session would get now (nothing
started); `POST /api/graft/slice` `{"session": …, "harness"?: …}`: hand it off now.
`GET /api/graft/context/{harness}/{id}`: the session's context use over its turns, each with
the warning and forced lines of that moment, and where a handoff cut it (its boundaries).
`GET /api/graft/ignition`, `POST /api/graft/ignition` `{"ignite": true | false | null}`: the
ignition switch, whether a handoff starts its new session at once (null: back to the config);
`POST /api/graft/exclude` `{"session": …, "harness"?: …, "exclude": bool, "reason"?: …}`: keep a
session from the forced cut, or give it back. Both audited, `by` "console".
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, NotRequired, TypedDict

from starlette.requests import Request

from ...graft import AUDIT_LIMIT, GraftService
from ...graft.wire import (
    AuditPageJson,
    ContextUseJson,
    ExclusionJson,
    HandoffJson,
    IgnitionJson,
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


class IgnitionBody(TypedDict):
    """The ignition switch: true, false, or None (back to `[graft] ignite_target`)."""

    ignite: bool | None


class ExcludeBody(TypedDict):
    """A session to keep from the forced cut (`exclude` true) or give back to it, and why."""

    session: str
    harness: NotRequired[str | None]
    exclude: bool
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
        """Withdraw a handoff whose new session has not started: pending, stuck, or being
        started (its live driver withdraws it). Audited, by "console"."""
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

    @api.get("/ignition")
    async def get_ignition(request: Request) -> Json[IgnitionJson]:
        """Whether a handoff starts its new session at once, the person's choice and the
        config's."""
        return json_response(await asyncio.to_thread(service.ignition), headers=_NO_STORE)

    @api.post("/ignition", body=_ignition)
    async def post_ignition(request: Request, body: IgnitionBody) -> Json[IgnitionJson]:
        """The ignition switch: start new sessions at once (true), let a handoff wait for the
        next session in its directory (false), or back to the config (null). Audited."""
        shown = await asyncio.to_thread(service.set_ignition, body["ignite"], by="console")
        return json_response(shown, headers=_NO_STORE)

    @api.post("/exclude", body=_exclude)
    async def post_exclude(request: Request, body: ExcludeBody) -> Json[list[ExclusionJson]]:
        """Keep a session from the forced cut (`exclude`: true) or give it back (false).
        Audited, by "console"; answers every excluded session."""
        found = await asyncio.to_thread(
            service.exclude,
            body["session"],
            body.get("harness"),
            keep=body["exclude"],
            by="console",
            reason=body.get("reason"),
        )
        return json_response(found.as_json(), headers=_NO_STORE)

    return api


def _ignition(body: JsonObject) -> IgnitionBody:
    _known(body, {"ignite"})
    if "ignite" not in body:
        raise ApiError(400, "ignite is required: true, false, or null for the config's")
    ignite = body["ignite"]
    if ignite is not None and not isinstance(ignite, bool):
        raise ApiError(400, f"ignite must be true, false or null, got {ignite!r}")
    return {"ignite": ignite}


def _exclude(body: JsonObject) -> ExcludeBody:
    _known(body, {"session", "harness", "exclude", "reason"})
    session = _text(body, "session")
    if session is None:
        raise ApiError(400, "session is required: a session id or a unique prefix")
    keep = body.get("exclude", True)
    if not isinstance(keep, bool):
        raise ApiError(400, f"exclude must be true or false, got {keep!r}")
    return {
        "session": session,
        "harness": _text(body, "harness"),
        "exclude": keep,
        "reason": _text(body, "reason"),
    }


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
