"""The overview under /api/status/: what dshkit knows and what is missing (the LLM, the hooks),
with the next step for each; never a secret (the LLM key only as configured or not). And the
calls made to the model: `GET /api/status/llm-calls?limit=` (newest first, without texts) and
`GET /api/status/llm-calls/{id}` (with its prompt and reply)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

from ...overview import StatusService
from ..routing import ApiError, Router, decimal, json_response, whole_number

if TYPE_CHECKING:
    from ...app import App


def router(service: StatusService) -> Router:
    api = Router("status")

    @api.get("/")
    async def get_status(request: Request) -> Response:
        facts = await asyncio.to_thread(service.overview)
        return json_response(facts, headers={"cache-control": "no-store"})

    @api.get("/llm-calls")
    async def get_llm_calls(request: Request) -> Response:
        limit = whole_number(request.query_params.get("limit", "100"), "limit", 1, 1000)
        calls = await asyncio.to_thread(service.llm_calls, limit)
        return json_response(calls, headers={"cache-control": "no-store"})

    @api.get("/llm-calls/{id}")
    async def get_llm_call(request: Request) -> Response:
        call_id = decimal(request.path_params["id"])
        if call_id is None:
            raise ApiError(404, f"no LLM call {request.path_params['id']!r}")
        call = await asyncio.to_thread(service.llm_call, call_id)
        return json_response(call, headers={"cache-control": "no-store"})

    return api


def from_app(app: App) -> Router:
    """The router over the app's status."""
    return router(app.status)
