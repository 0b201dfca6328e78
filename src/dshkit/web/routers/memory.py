"""Memory under /api/memory/: records per workspace, their supersessions, the quarantine, the
skill proposals, and what a new session would be given.

A workspace is named by `cwd` (a directory in it) or `workspace` (its root); neither: every
workspace (where that makes sense).

- `GET /api/memory/records?cwd=|workspace=&kind=&history=1&limit=`: records, newest first.
- `GET /api/memory/records/{id}`: one record whole, with what it superseded and what
  superseded it (the timeline of a subject).
- `GET /api/memory/search?q=&cwd=|workspace=&limit=`: records holding every word.
- `GET /api/memory/inject?cwd=|workspace=&request=`: exactly what a new session there is
  given (as `dshkit memory inject`; nothing delivered).
- `GET /api/memory/quarantine?cwd=|workspace=`, `GET /api/memory/skills?cwd=|workspace=`.
- `GET /api/memory/counts?cwd=|workspace=`: the debug panel's counts.
- `POST /api/memory/records/{id}/quarantine` (`{"reason"}`), `…/release`, `…/reject`,
  `…/accept` (`{"harness", "scope"}`), `DELETE /api/memory/records/{id}` (forget).

Each route is one `MemoryService` call; a GET changes nothing.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from ...memory import KINDS, MemoryService, Workspace
from ..routing import ApiError, Router, json_response, read_object, whole_number

if TYPE_CHECKING:
    from ...app import App

_NO_STORE = {"cache-control": "no-store"}


def router(service: MemoryService, profile_text: Any = None) -> Router:
    """`profile_text`: a callable giving the profile's text (memory takes the room it leaves
    in the same answer), for the injection preview."""
    api = Router("memory")

    def where(request: Request, required: bool = False) -> Workspace | None:
        cwd = request.query_params.get("cwd") or None
        root = request.query_params.get("workspace") or None
        if cwd and root:
            raise ApiError(400, "give cwd or workspace, not both")
        if cwd is None and root is None:
            if required:
                raise ApiError(400, "name a workspace: cwd or workspace")
            return None
        return service.workspace(cwd=cwd, root=root)

    def record_id(request: Request) -> int:
        return whole_number(request.path_params["id"], "id", 1, 1 << 62)

    @api.get("/records")
    async def list_records(request: Request) -> Response:
        kinds = tuple(request.query_params.getlist("kind")) or KINDS
        history = request.query_params.get("history") in ("1", "true")
        limit = whole_number(request.query_params.get("limit", "200"), "limit", 1, 1000)
        found = await asyncio.to_thread(
            lambda: service.records(where(request), kinds=kinds, history=history, limit=limit)
        )
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/records/{id}")
    async def show_record(request: Request) -> Response:
        view = await asyncio.to_thread(service.get, record_id(request))
        return json_response(view.as_json(), headers=_NO_STORE)

    @api.get("/search")
    async def search(request: Request) -> Response:
        limit = whole_number(request.query_params.get("limit", "20"), "limit", 1, 100)
        query = request.query_params.get("q", "")
        found = await asyncio.to_thread(lambda: service.search(query, where(request), limit=limit))
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/inject")
    async def inject(request: Request) -> Response:
        request_text = request.query_params.get("request", "")

        def preview() -> Any:
            beside = profile_text() if profile_text is not None else ""
            workspace = where(request, required=True)
            assert workspace is not None
            return service.inject(workspace, request_text, beside)

        shown = await asyncio.to_thread(preview)
        return json_response(shown.as_json(), headers=_NO_STORE)

    @api.get("/quarantine")
    async def quarantined(request: Request) -> Response:
        found = await asyncio.to_thread(
            lambda: service.records(where(request), history=True, quarantined=True)
        )
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/skills")
    async def skills(request: Request) -> Response:
        found = await asyncio.to_thread(
            lambda: service.records(where(request), kinds=("skill",), history=True)
        )
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/counts")
    async def counts(request: Request) -> Response:
        found = await asyncio.to_thread(lambda: service.counts(where(request)))
        return json_response(found, headers=_NO_STORE)

    @api.post("/records/{id}/quarantine")
    async def quarantine(request: Request) -> Response:
        body = await read_object(request, empty=True)
        reason = str(body.get("reason") or "set aside by the person")
        view = await asyncio.to_thread(service.quarantine, record_id(request), reason)
        return json_response(view.as_json(), headers=_NO_STORE)

    @api.post("/records/{id}/release")
    async def release(request: Request) -> Response:
        view = await asyncio.to_thread(service.release, record_id(request))
        return json_response(view.as_json(), headers=_NO_STORE)

    @api.post("/records/{id}/reject")
    async def reject(request: Request) -> Response:
        view = await asyncio.to_thread(service.reject, record_id(request))
        return json_response(view.as_json(), headers=_NO_STORE)

    @api.post("/records/{id}/accept")
    async def accept(request: Request) -> Response:
        body = await read_object(request)
        if not isinstance(body.get("harness"), str):
            raise ApiError(400, 'the body must be {"harness": …, "scope": "project"|"user"}')
        scope = str(body.get("scope") or "project")
        done = await asyncio.to_thread(service.accept, record_id(request), body["harness"], scope)
        return json_response(done.as_json(), headers=_NO_STORE)

    @api.delete("/records/{id}")
    async def forget(request: Request) -> Response:
        gone = await asyncio.to_thread(service.forget, record_id(request))
        return json_response({"forgotten": gone}, headers=_NO_STORE)

    return api


def from_app(app: App) -> Router:
    """The router over the app's memory, with the profile's text (the injection preview
    takes the room it leaves)."""
    return router(app.memory, lambda: app.profile.effective().text)
