"""Capability facts under /api/capability/: what a mode can really do, from the cache or probed.

`GET /api/capability/?harness=&cwd=&mode=&approval=&permission=`: what the cache holds for
that mode (`cached`: the last results, fresh or not, and how old), read only: a GET starts no
probe and changes nothing (`pending` says nothing fresh is there).
`POST /api/capability/probe` with `{"harness", "cwd", "mode", "approval", "permission"}` (each
optional): probes now (seconds; only the MCP servers the harness would start itself) and
answers the report.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from ... import harnesses
from ...capability import CapabilityService
from ..routing import ApiError, Router, json_response, read_object

if TYPE_CHECKING:
    from ...app import App

_MODES = {"mode": "sandbox", "approval": "approval", "permission": "permission"}
_MODE_LIMIT = 100
_NO_STORE = {"cache-control": "no-store"}
_FIELDS = ("harness", "cwd", *_MODES)


def _asked(given: Mapping[str, Any]) -> tuple[str | None, str, dict[str, str | None]]:
    """The harness, working directory and modes asked for (ApiError 400 naming a bad one)."""
    harness = given.get("harness") or None
    if harness is not None and harness not in harnesses.NAMES:
        raise ApiError(400, f"harness must be one of {', '.join(harnesses.NAMES)}")
    cwd = given.get("cwd") or os.getcwd()
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise ApiError(400, f"cwd must be an absolute path, got {cwd!r}")
    modes: dict[str, str | None] = {}
    for name, fact in _MODES.items():
        value = given.get(name)
        if value is not None and not (isinstance(value, str) and 0 < len(value) <= _MODE_LIMIT):
            raise ApiError(400, f"{name} must be 1 to {_MODE_LIMIT} characters")
        modes[fact] = value
    return harness, cwd, modes


def router(service: CapabilityService) -> Router:
    api = Router("capability")

    async def answer(call: Callable[..., Any], given: Mapping[str, Any]) -> Response:
        found = await asyncio.to_thread(call, *_asked(given))
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/")
    async def get_capability(request: Request) -> Response:
        if "probe" in request.query_params:  # what a GET once did: probing is a POST now
            raise ApiError(400, "a GET only reads the cache: probe with POST /api/capability/probe")
        return await answer(service.cached, request.query_params)

    @api.post("/probe")
    async def probe_capability(request: Request) -> Response:
        body = await read_object(request, empty=True)
        unknown = sorted(set(body) - set(_FIELDS))
        if unknown:
            raise ApiError(400, f"unknown field {unknown[0]!r} (known: {', '.join(_FIELDS)})")
        return await answer(service.probe_given, body)

    return api


def from_app(app: App) -> Router:
    """The router over the app's capability facts."""
    return router(app.capability)
