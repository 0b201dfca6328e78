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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

from starlette.requests import Request

from ... import harnesses
from ...capability import CapabilityService
from ...capability.wire import LookupJson
from ..routing import ApiError, Json, JsonObject, Router, json_response

if TYPE_CHECKING:
    from ...app import App

_MODES = {"mode": "sandbox", "approval": "approval", "permission": "permission"}
_MODE_LIMIT = 100
_NO_STORE = {"cache-control": "no-store"}
_FIELDS = ("harness", "cwd", *_MODES)


class ProbeBody(TypedDict):
    """What to probe (each optional; no body at all is {}): the harness, the working directory
    (the service's when not given), and modes in place of what the harness's config says."""

    harness: NotRequired[str | None]
    cwd: NotRequired[str | None]
    mode: NotRequired[str | None]
    approval: NotRequired[str | None]
    permission: NotRequired[str | None]


def _probe(body: JsonObject) -> ProbeBody:
    unknown = sorted(set(body) - set(_FIELDS))
    if unknown:
        raise ApiError(400, f"unknown field {unknown[0]!r} (known: {', '.join(_FIELDS)})")
    return cast(ProbeBody, body)  # its known fields; their values are checked by `_asked`


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

    @api.get("/")
    async def get_capability(request: Request) -> Json[LookupJson]:
        """What the cache holds for a mode (`?harness=&cwd=&mode=&approval=&permission=`,
        each optional): the last results, fresh or not, and how old (`cached`). It only reads:
        no probe is started (`pending` says nothing fresh is there)."""
        if "probe" in request.query_params:  # what a GET once did: probing is a POST now
            raise ApiError(400, "a GET only reads the cache: probe with POST /api/capability/probe")
        found = await asyncio.to_thread(service.cached, *_asked(request.query_params))
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.post("/probe", body=_probe, empty=True)
    async def probe_capability(request: Request, body: ProbeBody) -> Json[LookupJson]:
        """Probe the channels now (seconds; only the MCP servers the harness would start
        itself) and answer the report."""
        found = await asyncio.to_thread(service.probe_given, *_asked(body))
        return json_response(found.as_json(), headers=_NO_STORE)

    return api


def from_app(app: App) -> Router:
    """The router over the app's capability facts."""
    return router(app.capability)
