"""The delivery gate's API under /api/gate/: recent verdicts, a run (a job with progress), and
one session's rework switch."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from starlette.requests import Request
from starlette.responses import FileResponse

from ...errors import NotFound
from ...gate import VERDICTS_LIMIT, GateService
from ...gate.wire import ReworkStateJson, VerdictsJson
from ..routing import ApiError, Json, JsonObject, Router, decimal, json_response
from .jobs import AcceptedJob, accepted


class RunBody(TypedDict):
    """The file to judge (an absolute path to an .html, .htm, .xhtml or .svg deliverable), and
    the seconds to sample it for at most (`[gate] budget_s` when not given)."""

    path: str
    budget: NotRequired[float | None]


class ReworkBody(TypedDict):
    """The session (an id or a unique prefix, of `harness`) whose gate failures go back to it
    (true), do not (false), or follow `[gate] rework` again (null)."""

    session: str
    harness: NotRequired[str | None]
    rework: bool | None


def _run(body: JsonObject) -> RunBody:
    path, budget = body.get("path"), body.get("budget")
    if not isinstance(path, str) or not path.strip():
        raise ApiError(400, "path must name the file to judge")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int | float)):
        raise ApiError(400, "budget must be a number of seconds")
    return {"path": path, "budget": budget}


def _rework(body: JsonObject) -> ReworkBody:
    session, harness = _session(body.get("session"), body)
    wanted = body.get("rework", "missing")
    if wanted is not None and not isinstance(wanted, bool):
        raise ApiError(400, "rework must be true, false or null (follow [gate] rework)")
    return {"session": session, "harness": harness, "rework": wanted}


if TYPE_CHECKING:
    from ...app import App


def router(service: GateService) -> Router:
    api = Router("gate")

    @api.get("/")
    async def get_verdicts(request: Request) -> Json[VerdictsJson]:
        """The latest verdicts (`?limit=`, 50 unless given), newest first, each with its
        evidence."""
        given = request.query_params.get("limit", "50")
        limit = decimal(given)  # its range is the service's to check
        if limit is None:
            raise ApiError(
                400, f"limit must be a whole number from 1 to {VERDICTS_LIMIT}, got {given!r}"
            )
        verdicts = await asyncio.to_thread(service.verdicts, limit)
        return json_response(verdicts.as_json())

    @api.get("/{id}/screenshot")
    async def get_screenshot(request: Request) -> FileResponse:
        """The screenshot of one verdict, a PNG (`image/png`)."""
        wanted = request.path_params["id"]
        missing = ApiError(404, f"no screenshot for gate verdict {wanted!r}")
        verdict_id = decimal(wanted)
        if verdict_id is None:  # not a number, or one no verdict's id can be
            raise missing
        try:
            shot = await asyncio.to_thread(service.screenshot, verdict_id)
        except NotFound:
            raise missing from None
        return FileResponse(shot, media_type="image/png", headers={"cache-control": "no-store"})

    @api.post("/run", body=_run)
    async def post_run(request: Request, body: RunBody) -> Json[AcceptedJob]:
        """Judge a file in headless Chromium, in the background (a job of kind gate: its
        result is the verdict's evidence and id)."""
        submitted = await asyncio.to_thread(service.start_check, body["path"], body.get("budget"))
        return accepted(submitted)

    @api.get("/rework")
    async def get_rework(request: Request) -> Json[ReworkStateJson]:
        """Whether a session's failures go back to it (`?session=`, `?harness=`), and why."""
        session, harness = _session(request.query_params.get("session"), request.query_params)
        key = await asyncio.to_thread(service.session_key, session, harness)
        return json_response(await asyncio.to_thread(service.rework_state, key))

    @api.post("/rework", body=_rework)
    async def post_rework(request: Request, body: ReworkBody) -> Json[ReworkStateJson]:
        """Switch rework on or off for one session, or back to `[gate] rework`."""
        key = await asyncio.to_thread(service.session_key, body["session"], body.get("harness"))
        return json_response(await asyncio.to_thread(service.set_rework, key, body["rework"]))

    return api


def _session(session: object, given: Any) -> tuple[str, str | None]:
    """The session id and harness a request names (400 without a session)."""
    harness = given.get("harness")
    if not isinstance(session, str) or not session.strip():
        raise ApiError(400, "session must name a session (an id or a unique prefix)")
    if harness is not None and not isinstance(harness, str):
        raise ApiError(400, "harness must be a harness name")
    return session.strip(), harness or None


def from_app(app: App) -> Router:
    """The router over the app's delivery gate."""
    return router(app.gate)
