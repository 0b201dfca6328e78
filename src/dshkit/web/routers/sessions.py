"""Sessions under /api/sessions/: the newest sessions, and one session opened.

`GET /api/sessions?harness=&limit=`: the newest sessions (with events), most recent first.
`GET /api/sessions/{harness}/{id}?limit=&offset=&around=`: its summary, human messages and tool
calls with their results (the id may be a unique prefix, as everywhere); each list is a window
(`limit` items from `offset`, or the part holding the event whose seq is `around`) with its
`total`, and each text is cut at `textLimit` characters with the rest counted in `cutChars`.
`POST /api/sessions/scan`: read what is new in the harnesses' logs now; the scan's report.
`GET /api/sessions/quote?text=&limit=`: the human messages (at most `limit`, 5 unless
given, up to 50) a quote (a profile entry's evidence) comes
from, newest first, with their total.
`GET /api/sessions/{harness}/{id}/quoted`: the human messages of the session that the current
profile's entries quote as evidence, each with the entry's id (`label`) and claim, in log order.

Each route is one `SessionsService` call; its errors are answered by the router (a session
that is not there: 404).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict

from starlette.requests import Request

from ... import harnesses
from ...sessions.service import WINDOW_LIMIT, SessionsService
from ...sessions.wire import (
    QuotedJson,
    QuoteSourcesJson,
    ScanReportJson,
    SessionInfoJson,
    SessionViewJson,
)
from ..routing import ApiError, Json, Router, json_response, whole_number

if TYPE_CHECKING:
    from ...app import App

_NO_STORE = {"cache-control": "no-store"}


class SessionsJson(TypedDict):
    """The newest sessions, most recent first."""

    sessions: list[SessionInfoJson]


class QuoteMark(QuotedJson):
    """Where the session said what a profile entry quotes, with the entry's claim."""

    claim: Any


class QuotesJson(TypedDict):
    """The human messages of the session that the profile's entries quote, in log order."""

    quotes: list[QuoteMark]


def number(request: Request, name: str, default: int | None, low: int, high: int) -> int | None:
    """A whole-number query parameter within [low, high] (ApiError 400 naming it)."""
    value = request.query_params.get(name)
    if value is None or value == "":
        return default
    return whole_number(value, name, low, high)


def harness_param(value: str | None) -> str | None:
    if value and value not in harnesses.NAMES:
        raise ApiError(400, f"harness must be one of {', '.join(harnesses.NAMES)}, got {value!r}")
    return value or None


def router(
    service: SessionsService, entries: Callable[[], list[dict[str, Any]]] | None = None
) -> Router:
    """The session routes; `entries` gives the profile's entries whose evidence `quoted`
    looks for (none when not given)."""
    api = Router("sessions")

    @api.get("/")
    async def list_sessions(request: Request) -> Json[SessionsJson]:
        """The newest sessions with events (`?harness=` of one harness; `?limit=`, 50 unless
        given), most recent first."""
        harness = harness_param(request.query_params.get("harness"))
        limit = number(request, "limit", 50, 1, 1000)
        found = await asyncio.to_thread(service.recent, harness, limit)
        return json_response({"sessions": [s.as_json() for s in found]}, headers=_NO_STORE)

    @api.post("/scan")
    async def post_scan(request: Request) -> Json[ScanReportJson]:
        """Read what is new in the harnesses' logs now (waiting a few seconds for a scan
        already under way: then 503 busy); the scan's report."""
        report = await asyncio.to_thread(service.scan, wait=5.0)
        return json_response(report.as_json(), headers=_NO_STORE)

    @api.get("/quote")
    async def find_quote(request: Request) -> Json[QuoteSourcesJson]:
        """The human messages a quote (`?text=`, a profile entry's evidence) comes from, newest
        first (`?limit=`, 5 unless given, up to 50), with their total."""
        limit = number(request, "limit", 5, 1, 50)
        assert limit is not None
        text = request.query_params.get("text", "")
        found = await asyncio.to_thread(service.quote, text, limit)
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/{harness}/{id}")
    async def show_session(request: Request) -> Json[SessionViewJson]:
        """One session (the id may be a unique prefix): its summary, human messages and tool
        calls with their results, each list a window (`?limit=` items from `?offset=`, or the
        part holding the event whose seq is `?around=`) with its total; each text is cut at
        `textLimit` characters, the rest counted."""
        harness = harness_param(request.path_params["harness"])
        limit = number(request, "limit", 100, 1, WINDOW_LIMIT)
        offset = number(request, "offset", 0, 0, 1 << 31)
        around = number(request, "around", None, 0, 1 << 62)
        assert limit is not None and offset is not None
        session = request.path_params["id"]
        shown = await asyncio.to_thread(
            service.window, session, harness, offset=offset, limit=limit, around=around
        )
        return json_response(shown.as_json(), headers=_NO_STORE)

    @api.get("/{harness}/{id}/quoted")
    async def show_quoted(request: Request) -> Json[QuotesJson]:
        """Where the session said what the current profile's entries quote as their evidence:
        its human messages, each with the entry's id (`label`) and claim, in log order."""
        harness = harness_param(request.path_params["harness"])
        shown = [] if entries is None else await asyncio.to_thread(entries)
        quotes = [
            (str(entry.get("id", "")), str(quote))
            for entry in shown
            for quote in entry.get("evidence") or ()
        ]
        claims = {str(entry.get("id", "")): entry.get("claim") for entry in shown}
        found = await asyncio.to_thread(service.quoted, request.path_params["id"], quotes, harness)
        marks: list[QuoteMark] = [{**q.as_json(), "claim": claims.get(q.label)} for q in found]
        return json_response({"quotes": marks}, headers=_NO_STORE)

    return api


def from_app(app: App) -> Router:
    """The router over the app's sessions, with the profile's entries (where a session said what
    they quote)."""
    return router(app.sessions, lambda: app.profile.status().entries)
