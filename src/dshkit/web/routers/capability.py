"""Capability facts under /api/capability/: what a mode can really do, from the cache or probed.

`GET /api/capability/?harness=&cwd=&mode=&approval=&permission=&probe=1`: the report
(`dshkit capability --json`); without `probe=1` it answers at once from the cache and starts a
background probe when nothing is fresh, with it it probes first (seconds).
"""

from __future__ import annotations

import asyncio
import os

from starlette.requests import Request
from starlette.responses import Response

from ... import harnesses
from ...capability import CapabilityService
from ..routing import ApiError, Router, json_response

_MODES = {"mode": "sandbox", "approval": "approval", "permission": "permission"}
_MODE_LIMIT = 100


def router(service: CapabilityService) -> Router:
    api = Router("capability")

    @api.get("/")
    async def get_capability(request: Request) -> Response:
        query = request.query_params
        harness = query.get("harness") or None
        if harness is not None and harness not in harnesses.NAMES:
            raise ApiError(400, f"harness must be one of {', '.join(harnesses.NAMES)}")
        cwd = query.get("cwd") or os.getcwd()
        if not os.path.isabs(cwd):
            raise ApiError(400, f"cwd must be an absolute path, got {cwd!r}")
        modes: dict[str, str | None] = {}
        for name, fact in _MODES.items():
            value = query.get(name)
            if value is not None and not 0 < len(value) <= _MODE_LIMIT:
                raise ApiError(400, f"{name} must be 1 to {_MODE_LIMIT} characters")
            modes[fact] = value
        probe = query.get("probe", "0")
        if probe not in ("0", "1"):
            raise ApiError(400, f"probe must be 0 or 1, got {probe!r}")
        found = await asyncio.to_thread(service.lookup_given, harness, cwd, modes, now=probe == "1")
        return json_response(found.as_json(), headers={"cache-control": "no-store"})

    return api
