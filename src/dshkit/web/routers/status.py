"""The overview under /api/status/: what dshkit knows and what is missing (the LLM, the hooks),
with the next step for each; never a secret (the LLM key only as configured or not). And the
calls made to the model: `GET /api/status/llm-calls?limit=` (newest first, without texts) and
`GET /api/status/llm-calls/{id}` (with its prompt and reply)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from starlette.requests import Request

from ...overview import LlmCallsJson, LlmCallTextJson, OverviewJson, StatusService
from ..routing import ApiError, Json, Router, decimal, json_response, whole_number

if TYPE_CHECKING:
    from ...app import App


def router(service: StatusService) -> Router:
    api = Router("status")

    @api.get("/")
    async def get_status(request: Request) -> Json[OverviewJson]:
        """What dshkit knows and what is missing (the LLM, the hooks), with the next step for
        each; never a secret (the LLM's key only as configured or not)."""
        facts = await asyncio.to_thread(service.overview)
        return json_response(facts, headers={"cache-control": "no-store"})

    @api.get("/llm-calls")
    async def get_llm_calls(request: Request) -> Json[LlmCallsJson]:
        """The calls made to the model (`?limit=`, 100 unless given), newest first, without
        their texts."""
        limit = whole_number(request.query_params.get("limit", "100"), "limit", 1, 1000)
        calls = await asyncio.to_thread(service.llm_calls, limit)
        return json_response(calls, headers={"cache-control": "no-store"})

    @api.get("/llm-calls/{id}")
    async def get_llm_call(request: Request) -> Json[LlmCallTextJson]:
        """One call to the model with its prompt and reply, whole."""
        call_id = decimal(request.path_params["id"])
        if call_id is None:
            raise ApiError(404, f"no LLM call {request.path_params['id']!r}")
        call = await asyncio.to_thread(service.llm_call, call_id)
        return json_response(call, headers={"cache-control": "no-store"})

    return api


def from_app(app: App) -> Router:
    """The router over the app's status."""
    return router(app.status)
