"""The command guard's mode under /api/guard/: what agents' shell commands are judged under,
where that comes from, and the person's choice of it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

from ...guard.service import mode_state, set_mode
from ..routing import ApiError, Router, json_response, read_object

if TYPE_CHECKING:
    from ...app import App


def router(state_dir: Path) -> Router:
    api = Router("guard")

    @api.get("/mode")
    async def get_mode(request: Request) -> Response:
        shown = await asyncio.to_thread(mode_state, state_dir)
        return json_response(shown.as_json(), headers={"cache-control": "no-store"})

    @api.post("/mode")
    async def post_mode(request: Request) -> Response:
        mode = (await read_object(request)).get("mode")
        if not isinstance(mode, str):
            raise ApiError(400, "expected a JSON object with a string 'mode'")
        shown = await asyncio.to_thread(set_mode, state_dir, mode)
        return json_response({"ok": True, **shown.as_json()})

    return api


def from_app(app: App) -> Router:
    """The router over the guard's mode in the app's state directory."""
    return router(app.state_dir)
