"""Friction signals under /api/signals/: totals over time, and the hits behind a count.

`GET /api/signals`: totals per signal, per harness and per day (the last scan's sessions, the
default thresholds of `dshkit signals`). `GET /api/signals/hits?signal=&harness=&session=&day=
&offset=&limit=`: each hit of one signal with its session, turn, tool, duration, error code and
texts, paged with its `total`. Both are the profile service's (the signals are prompt-adapt's).
`GET /api/signals/sessions?harness=&session=`: each session with friction (of a harness, a
session id), its count of every signal with its harness, project and day: what the charts of
one harness or project draw, and the sessions a bar stands for.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from starlette.requests import Request

from ...profile import HITS_LIMIT, ProfileService
from ...profile.wire import SignalHitsJson, SignalSessionsJson, SignalTotalsJson
from ..routing import ApiError, Json, Router, json_response
from .sessions import harness_param, number

if TYPE_CHECKING:
    from ...app import App

_NO_STORE = {"cache-control": "no-store"}


def router(service: ProfileService) -> Router:
    api = Router("signals")

    @api.get("/sessions")
    async def get_sessions(request: Request) -> Json[SignalSessionsJson]:
        """Each session with friction (`?harness=` of one harness, `?session=` one session
        id): its count of every signal with its harness, project and day, what a chart of one
        harness or project draws."""
        harness = harness_param(request.query_params.get("harness"))
        session = request.query_params.get("session") or None
        found = await asyncio.to_thread(service.signal_sessions, harness, session)
        return json_response(found, headers=_NO_STORE)

    @api.get("/")
    async def get_totals(request: Request) -> Json[SignalTotalsJson]:
        """Every signal's totals per harness and per day, over the sessions the last scan
        stored (the default thresholds of `dshkit signals`)."""
        totals = await asyncio.to_thread(service.signal_totals)
        return json_response(totals.as_json(), headers=_NO_STORE)

    @api.get("/hits")
    async def get_hits(request: Request) -> Json[SignalHitsJson]:
        """Each hit of one signal (`?signal=`; `?harness=`, `?session=`, `?day=` narrow it)
        with its session, turn, tool, duration, error code and texts, a page (`?offset=`,
        `?limit=`) with its total."""
        query = request.query_params
        signal = query.get("signal")
        if not signal:
            raise ApiError(400, "signal must name one signal (GET /api/signals lists them)")
        hits = await asyncio.to_thread(
            service.signal_hits,
            signal,
            harness=harness_param(query.get("harness")),
            session=query.get("session") or None,
            day=query.get("day") or None,
            offset=number(request, "offset", 0, 0, 1 << 31) or 0,
            limit=number(request, "limit", 50, 1, HITS_LIMIT) or 50,
        )
        return json_response(hits.as_json(), headers=_NO_STORE)

    return api


def from_app(app: App) -> Router:
    """The router over the profile's friction signals."""
    return router(app.profile)
