"""What the hooks would inject, under /api/inject/: each event's exact text and its parts.

`GET /api/inject/?session=&harness=&event=&cwd=&source=&permission=`: the preview of
`dshkit inject show --json` (`dshkit.inject.InjectService.preview`): for the session an id
or unique prefix names (one not read yet needs its `harness`), or, without `session`, for a
new session of `harness` in `cwd`; `event` may be given more than once (default: every event
a handler serves there). Nothing is delivered, recorded or started.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from starlette.requests import Request

from ...inject import InjectService
from ...inject.wire import InjectPreviewJson
from ..routing import ApiError, Json, Router, json_response

if TYPE_CHECKING:
    from ...app import App

_LIMIT = 4096  # characters of one query value


def router(service: InjectService) -> Router:
    api = Router("inject")

    @api.get("/")
    async def get_inject(request: Request) -> Json[InjectPreviewJson]:
        """What each hook event would inject (`dshkit inject show --json`): for the session
        `?session=` names (one not read yet needs `?harness=`), or, without it, for a new
        session of `?harness=` in `?cwd=`; `?event=` (repeatable) narrows the events,
        `?source=` and `?permission=` are the SessionStart's. Nothing is delivered."""
        query = request.query_params
        for name, value in query.multi_items():
            if len(value) > _LIMIT:
                raise ApiError(400, f"{name} must be at most {_LIMIT} characters")
        preview = partial(
            service.preview,
            query.get("session") or None,
            query.get("harness") or None,
            cwd=query.get("cwd") or None,
            events=query.getlist("event") or None,
            source=query.get("source") or "startup",
            permission_mode=query.get("permission") or None,
        )
        found = await asyncio.to_thread(preview)
        return json_response(found.as_json(), headers={"cache-control": "no-store"})

    return api


def from_app(app: App) -> Router:
    """The router over the app's injection preview."""
    return router(app.inject)
