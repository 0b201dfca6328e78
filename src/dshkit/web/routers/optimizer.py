"""The optimizer's API under /api/optimizer/: optimize (a job with progress), runs, outcomes,
settings."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...optimizer.runs import OUTCOMES, RunNotFound
from ...optimizer.service import OptimizerService
from ..routing import ApiError, Router, json_response, read_json
from .jobs import accepted

_SETTINGS = ("tier", "form", "turns", "full", "permission")


def router(service: OptimizerService) -> Router:
    api = Router("optimizer")

    @api.post("/optimize")
    async def post_optimize(request: Request) -> Response:
        body = _object(await read_json(request))
        raw = body.get("raw")
        if not isinstance(raw, str) or not raw.strip():
            raise ApiError(400, "raw must be a non-empty string")
        try:
            submitted = await asyncio.to_thread(service.start, raw, body)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        return accepted(submitted)

    @api.get("/runs")
    async def get_runs(request: Request) -> Response:
        limit = request.query_params.get("limit", "50")
        if not limit.isdigit() or not 1 <= int(limit) <= 1000:
            raise ApiError(400, f"limit must be a whole number from 1 to 1000, got {limit!r}")
        tier = request.query_params.get("tier")
        return json_response(await asyncio.to_thread(service.runs, int(limit), tier))

    @api.get("/runs/{run_id}")
    async def get_run(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        if not run_id.isdigit():
            raise ApiError(404, f"no optimizer run {run_id!r}")
        try:
            return json_response(await asyncio.to_thread(service.run, int(run_id)))
        except RunNotFound as exc:
            raise ApiError(404, str(exc)) from None

    @api.post("/outcome")
    async def post_outcome(request: Request) -> Response:
        body = _object(await read_json(request))
        run_id, outcome = body.get("runId"), body.get("outcome")
        if not isinstance(run_id, int) or isinstance(run_id, bool):
            raise ApiError(400, "runId must be an integer")
        if outcome not in OUTCOMES:
            raise ApiError(400, f"outcome must be one of {', '.join(OUTCOMES)}")
        try:
            return json_response(await asyncio.to_thread(service.outcome, run_id, outcome))
        except RunNotFound as exc:
            raise ApiError(404, str(exc)) from None

    @api.get("/settings")
    async def get_settings(request: Request) -> Response:
        session = request.query_params.get("session")
        harness = request.query_params.get("harness")
        try:
            return json_response(await asyncio.to_thread(service.settings, session, harness))
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None

    @api.put("/settings")
    async def put_settings(request: Request) -> Response:
        body = _object(await read_json(request))
        session = body.get("session")
        if not isinstance(session, str):
            raise ApiError(400, "session must name the session whose settings change")
        values = {k: body[k] for k in _SETTINGS if k in body}
        try:
            await asyncio.to_thread(service.set_settings, session, body.get("harness"), values)
            state = await asyncio.to_thread(service.settings, session, body.get("harness"))
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        return json_response({"ok": True, "settings": state})

    return api


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ApiError(400, "expected a JSON object")
    return body
