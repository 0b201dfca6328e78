"""The overview under /api/status/: what dshkit knows and what is missing (the LLM, the hooks),
with the next step for each; never a secret (the LLM key only as configured or not)."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response

from ...overview import StatusService
from ..routing import Router, json_response


def router(service: StatusService) -> Router:
    api = Router("status")

    @api.get("/")
    async def get_status(request: Request) -> Response:
        facts = await asyncio.to_thread(service.overview)
        return json_response(facts, headers={"cache-control": "no-store"})

    return api
