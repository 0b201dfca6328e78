"""The optimizer's API under /api/optimizer/: optimize (a job with progress), runs, outcomes,
settings."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response

from ...optimizer import OUTCOMES, OptimizerService
from ...sessions import Refresh
from ..routing import ApiError, Router, decimal, json_response, read_object, whole_number
from .jobs import accepted

if TYPE_CHECKING:
    from ...app import App

_OVERRIDES = ("tier", "form", "turns", "full")
_SETTINGS = (*_OVERRIDES, "permission", "skip_trivial")
T = TypeVar("T")


def router(service: OptimizerService) -> Router:
    api = Router("optimizer")

    @api.post("/optimize")
    async def post_optimize(request: Request) -> Response:
        body = await read_object(request)
        raw = body.get("raw")
        if not isinstance(raw, str) or not raw.strip():
            raise ApiError(400, "raw must be a non-empty string")
        session, harness, cwd = (_text(body, name) for name in ("session", "harness", "cwd"))
        submitted = await _call(
            lambda: service.start(
                raw,
                session=session,
                harness=harness,
                cwd=cwd,
                overrides={name: body.get(name) for name in _OVERRIDES},
                refresh=Refresh.TRY,  # the session's newest turn, unless a scan is under way
            )
        )
        return accepted(submitted)

    @api.get("/runs")
    async def get_runs(request: Request) -> Response:
        limit = whole_number(request.query_params.get("limit", "50"), "limit", 1, 1000)
        tier = request.query_params.get("tier")
        listed = await _call(lambda: service.runs(limit, tier))
        return json_response(listed.as_json())

    @api.get("/runs/{run_id}")
    async def get_run(request: Request) -> Response:
        wanted = request.path_params["run_id"]
        run_id = decimal(wanted)
        if run_id is None:  # not a number, or one no run's id can be
            raise ApiError(404, f"no optimizer run {wanted!r}")
        run = await _call(lambda: service.run(run_id))
        return json_response(run.detail())

    @api.post("/outcome")
    async def post_outcome(request: Request) -> Response:
        body = await read_object(request)
        run_id, outcome = body.get("runId"), body.get("outcome")
        if not isinstance(run_id, int) or isinstance(run_id, bool):
            raise ApiError(400, "runId must be an integer")
        if outcome not in OUTCOMES:
            raise ApiError(400, f"outcome must be one of {', '.join(OUTCOMES)}")
        run = await _call(lambda: service.record_outcome(run_id, outcome))
        return json_response(run.detail())

    @api.get("/stats")
    async def get_stats(request: Request) -> Response:
        """Per tier: added latency and the one-pass rate against the raw words (n both)."""
        listed = await _call(lambda: service.runs(1))
        return json_response({"rates": listed.rates})

    @api.post("/outcome/last")
    async def post_outcome_last(request: Request) -> Response:
        """Mark a session's last run (the one a person can judge) ok or rework."""
        body = await read_object(request)
        session, harness = _text(body, "session"), _text(body, "harness")
        outcome = body.get("outcome")
        if session is None or not session.strip():
            raise ApiError(400, "session must name the session (id or unique prefix)")
        if outcome not in OUTCOMES:
            raise ApiError(400, f"outcome must be one of {', '.join(OUTCOMES)}")
        run = await _call(lambda: service.mark_last_of(session, harness, outcome))
        return json_response(run.detail())

    @api.get("/settings")
    async def get_settings(request: Request) -> Response:
        session = request.query_params.get("session")
        harness = request.query_params.get("harness")
        project = request.query_params.get("project")
        settings = await _call(lambda: service.settings(session, harness, project=project))
        return json_response(settings.as_json())

    @api.put("/settings")
    async def put_settings(request: Request) -> Response:
        body = await read_object(request)
        session, project = _text(body, "session"), _text(body, "project")
        if (session is None) == (project is None):
            raise ApiError(
                400, "name either the session or the project (a directory) whose settings change"
            )
        harness = _text(body, "harness")
        values = {k: body[k] for k in _SETTINGS if k in body}  # a null removes that one key
        settings = await _call(
            lambda: service.set_settings(session, harness, values, project=project)
        )
        return json_response({"ok": True, "settings": settings.as_json()})

    return api


async def _call(work: Callable[[], T]) -> T:
    """Run a use case off the event loop (its errors are the router's to map)."""
    return await asyncio.to_thread(work)


def _text(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise ApiError(400, f"{name} must be a string")
    return value


def from_app(app: App) -> Router:
    """The router over the app's prompt optimizer."""
    return router(app.optimizer)
