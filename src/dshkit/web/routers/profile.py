"""prompt-adapt's API under /api/profile/: the state, its writes, and background runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from starlette.requests import Request
from starlette.responses import Response

from ...profile import CATEGORY_LABELS, Mode, ProfileService
from ...profile.service import CONTRACT
from ..routing import ApiError, Router, decimal, json_response, read_object
from .jobs import job_path

if TYPE_CHECKING:
    from ...app import App

P = ParamSpec("P")
CATEGORIES = [
    {"key": key, "label": english, "labelZh": chinese}
    for key, (chinese, english) in CATEGORY_LABELS.items()
]
T = TypeVar("T")


def router(service: ProfileService) -> Router:
    api = Router("profile")

    @api.get("/")
    async def self_check(request: Request) -> Response:
        # stateDir: whose service this is (doctor tells this install's from another's)
        return json_response(
            {
                "name": "dshkit",
                "contract": CONTRACT,
                "stateDir": str(service.state_dir),
                "endpoints": api.endpoints,
            }
        )

    def state() -> dict[str, Any]:
        # The categories' names as the agent is told them (the page shows no names of its own).
        return service.state().as_json() | {"categories": CATEGORIES}

    @api.get("/state")
    async def get_state(request: Request) -> Response:
        return json_response(await asyncio.to_thread(state), headers={"cache-control": "no-store"})

    @api.get("/versions")
    async def get_versions(request: Request) -> Response:
        given = request.query_params.get("limit", "50")
        limit = decimal(given)  # its range is the service's to check
        if limit is None:
            raise ApiError(400, f"limit must be a whole number, got {given!r}")
        versions = await asyncio.to_thread(_checked, service.versions, limit)
        return json_response(versions.as_json(), headers={"cache-control": "no-store"})

    @api.post("/mode")
    async def post_mode(request: Request) -> Response:
        mode = (await read_object(request)).get("mode")
        if not isinstance(mode, str) or mode not in {m.value for m in Mode}:
            raise ApiError(400, f"mode must be 'auto' or 'custom', got {mode!r}")
        await asyncio.to_thread(_checked, service.set_mode, mode)
        return json_response({"ok": True, "mode": mode, "state": await asyncio.to_thread(state)})

    @api.put("/custom")
    async def put_custom(request: Request) -> Response:
        text = (await read_object(request)).get("text")
        if not isinstance(text, str):
            raise ApiError(400, f"text must be a string, got {type(text).__name__}")
        await asyncio.to_thread(_checked, service.set_custom, text)
        shown = await asyncio.to_thread(state)
        return json_response({"ok": True, "length": len(text), "state": shown})

    @api.post("/copied")
    async def post_copied(request: Request) -> Response:
        body = await read_object(request)
        if not isinstance(body.get("text"), str):
            raise ApiError(400, "expected a JSON object with a string 'text'")
        copied = await asyncio.to_thread(_checked, service.copy, body["text"], body.get("entries"))
        return json_response({"ok": True, "copiedSnapshot": copied.as_json()})

    @api.post("/entries/{id}/{action}")
    async def post_entry(request: Request) -> Response:
        # edit (body: claim and/or category; the entry is then pinned), pin, unpin, remove
        body = await read_object(request) if request.path_params["action"] == "edit" else {}
        claim, category = body.get("claim"), body.get("category")
        if category is not None and not isinstance(category, str):
            raise ApiError(400, f"category must be a string, got {type(category).__name__}")
        changed = await asyncio.to_thread(
            _checked,
            service.change_entry,
            request.path_params["id"],
            request.path_params["action"],
            claim=claim,
            category=category,
        )
        shown = await asyncio.to_thread(state)
        return json_response({"ok": True, **changed.as_json(), "state": shown})

    def background(force: bool) -> None:
        async def start(request: Request) -> Response:
            submitted = service.start_generate(force=force)
            return json_response(
                {"started": submitted.started, "running": True},
                202,
                headers={"location": job_path(submitted.job)},
            )

        api.post("/regenerate" if force else "/rescan")(start)

    background(force=True)
    background(force=False)
    return api


def _checked(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a use case (rejected text is the tree's Invalid, or TooLarge: the router maps it)."""
    return call(*args, **kwargs)


def from_app(app: App) -> Router:
    """The router over the app's profile."""
    return router(app.profile)
