"""The command guard's mode under /api/guard/: what agents' shell commands are judged under,
where that comes from, and the person's choice of it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from starlette.requests import Request

from ...guard.service import mode_state, set_mode
from ...guard.wire import ModeStateJson
from ..routing import ApiError, Json, JsonObject, Router, json_response


class GuardModeBody(TypedDict):
    """The mode agents' shell commands are judged under from now on, or `config` to leave it
    to config.toml again."""

    mode: str


class ModeChosen(ModeStateJson):
    """The mode now, and where it comes from."""

    ok: bool


def _mode(body: JsonObject) -> GuardModeBody:
    mode = body.get("mode")
    if not isinstance(mode, str):
        raise ApiError(400, "expected a JSON object with a string 'mode'")
    return {"mode": mode}


if TYPE_CHECKING:
    from ...app import App


def router(state_dir: Path) -> Router:
    api = Router("guard")

    @api.get("/mode")
    async def get_mode(request: Request) -> Json[ModeStateJson]:
        """The mode commands are judged under now, where it comes from (the environment, the
        person's choice, config.toml, the default), and config.toml's own."""
        shown = await asyncio.to_thread(mode_state, state_dir)
        return json_response(shown.as_json(), headers={"cache-control": "no-store"})

    @api.post("/mode", body=_mode)
    async def post_mode(request: Request, body: GuardModeBody) -> Json[ModeChosen]:
        """Choose the mode for every agent's shell commands, or leave it to config.toml again
        (`config`)."""
        shown = await asyncio.to_thread(set_mode, state_dir, body["mode"])
        return json_response({"ok": True, **shown.as_json()})

    return api


def from_app(app: App) -> Router:
    """The router over the guard's mode in the app's state directory."""
    return router(app.state_dir)
