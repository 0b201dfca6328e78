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
- `GET /api/memory/workspaces`: every workspace with its counts (the per-workspace view).
- `GET /api/memory/timeline?cwd=|workspace=`: the supersession chains, with their times.
- `GET /api/memory/pending?cwd=|workspace=&rejected=1`: the records waiting for review
  (`[memory] confirm`), the rejected too when asked.
- `GET /api/memory/status?cwd=|workspace=`: how memory stands (as `dshkit memory status`):
  counts, every workspace with its id, what the harvests' caps dropped and, with a workspace,
  what its next session's injection leaves out and why.
- `POST /api/memory/rekey` (`{"old", "new"}`, each a workspace id or an absolute directory):
  move a workspace's records to another (a folder moved or renamed), as `dshkit memory rekey`.
- `POST /api/memory/records/{id}/quarantine` (`{"reason"}`), `…/release`, `…/reject`,
  `…/accept` (`{"harness", "scope"}`), `…/review` (`{"verdict": "accept"|"reject"}`, a
  pending record), `DELETE /api/memory/records/{id}` (forget).

Each route is one `MemoryService` call; a GET changes nothing.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from starlette.requests import Request

from ...memory import KINDS, MemoryService, Workspace
from ...memory.wire import (
    AcceptedJson,
    InjectionJson,
    MemoryCountsJson,
    MemoryStatusJson,
    RecordListJson,
    RecordViewJson,
    RekeyJson,
    TimelineJson,
    WorkspacesJson,
)
from ..routing import ApiError, Json, JsonObject, Router, json_response, whole_number

if TYPE_CHECKING:
    from ...app import App

_NO_STORE = {"cache-control": "no-store"}


class QuarantineBody(TypedDict):
    """Why the record is set aside (no body at all: "set aside by the person")."""

    reason: NotRequired[Any]


class AcceptBody(TypedDict):
    """The harness whose skills directory the SKILL.md goes to, and whose: the project's
    (`project`, the default) or the user's (`user`)."""

    harness: str
    scope: NotRequired[Any]


class ReviewBody(TypedDict):
    """The person's verdict on a pending record: `accept` (given to sessions from now on) or
    `reject` (kept and shown, never given)."""

    verdict: str


class RekeyBody(TypedDict):
    """The workspace whose records move (`old`: its id, as the status lists it, or the
    directory it was at, which may be gone) and where to (`new`: an id or a directory)."""

    old: str
    new: str


def _rekey(body: JsonObject) -> RekeyBody:
    old, new = body.get("old"), body.get("new")
    if not isinstance(old, str) or not isinstance(new, str) or not old.strip() or not new.strip():
        raise ApiError(400, 'the body must be {"old": "ID or directory", "new": "ID or directory"}')
    return {"old": old, "new": new}


class Forgotten(TypedDict):
    """The record forgotten for good."""

    forgotten: int


def _quarantine(body: JsonObject) -> QuarantineBody:
    return {"reason": body.get("reason")}


def _accept(body: JsonObject) -> AcceptBody:
    harness = body.get("harness")
    if not isinstance(harness, str):
        raise ApiError(400, 'the body must be {"harness": …, "scope": "project"|"user"}')
    return {"harness": harness, "scope": body.get("scope")}


def _review(body: JsonObject) -> ReviewBody:
    verdict = body.get("verdict")
    if verdict not in ("accept", "reject"):
        raise ApiError(400, 'the body must be {"verdict": "accept"|"reject"}')
    return {"verdict": str(verdict)}


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
    async def list_records(request: Request) -> Json[RecordListJson]:
        """Records of a workspace (`?cwd=` a directory in it, or `?workspace=` its root;
        neither: every workspace), newest first: `?kind=` (repeatable) of those kinds,
        `?history=1` the superseded too, `?limit=` (200 unless given)."""
        kinds = tuple(request.query_params.getlist("kind")) or KINDS
        history = request.query_params.get("history") in ("1", "true")
        limit = whole_number(request.query_params.get("limit", "200"), "limit", 1, 1000)
        found = await asyncio.to_thread(
            lambda: service.records(where(request), kinds=kinds, history=history, limit=limit)
        )
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/records/{id}")
    async def show_record(request: Request) -> Json[RecordViewJson]:
        """One record whole, with what it superseded and what superseded it."""
        view = await asyncio.to_thread(service.get, record_id(request))
        return json_response(view.as_json(), headers=_NO_STORE)

    @api.get("/search")
    async def search(request: Request) -> Json[RecordListJson]:
        """Records holding every word of `?q=` (`?cwd=` or `?workspace=` of one workspace;
        `?limit=`, 20 unless given)."""
        limit = whole_number(request.query_params.get("limit", "20"), "limit", 1, 100)
        query = request.query_params.get("q", "")
        found = await asyncio.to_thread(lambda: service.search(query, where(request), limit=limit))
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/inject")
    async def inject(request: Request) -> Json[InjectionJson]:
        """Exactly what a new session of a workspace (`?cwd=` or `?workspace=`, one needed)
        is given for its first request `?request=` (as `dshkit memory inject`; nothing is
        delivered), in the room the profile leaves."""
        request_text = request.query_params.get("request", "")

        def preview() -> Any:
            beside = profile_text() if profile_text is not None else ""
            workspace = where(request, required=True)
            assert workspace is not None
            return service.inject(workspace, request_text, beside)

        shown = await asyncio.to_thread(preview)
        return json_response(shown.as_json(), headers=_NO_STORE)

    @api.get("/quarantine")
    async def quarantined(request: Request) -> Json[RecordListJson]:
        """The records set aside (of `?cwd=` or `?workspace=`), superseded ones too."""
        found = await asyncio.to_thread(
            lambda: service.records(where(request), history=True, quarantined=True)
        )
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/skills")
    async def skills(request: Request) -> Json[RecordListJson]:
        """The skill drafts and proposals (of `?cwd=` or `?workspace=`), superseded ones
        too."""
        found = await asyncio.to_thread(
            lambda: service.records(where(request), kinds=("skill",), history=True)
        )
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/counts")
    async def counts(request: Request) -> Json[MemoryCountsJson]:
        """The debug panel's counts; with `?cwd=` or `?workspace=`, how the current records
        stand to that workspace."""
        found = await asyncio.to_thread(lambda: service.counts(where(request)))
        return json_response(found, headers=_NO_STORE)

    @api.get("/workspaces")
    async def workspaces(request: Request) -> Json[WorkspacesJson]:
        """Every workspace memory holds records of, with its current records per kind and
        its superseded, set aside, pending and rejected ones; the one learned in last first."""
        found = await asyncio.to_thread(service.workspaces)
        return json_response(found, headers=_NO_STORE)

    @api.get("/timeline")
    async def timeline(request: Request) -> Json[TimelineJson]:
        """The supersession timeline (of `?cwd=` or `?workspace=`; neither: every
        workspace): each chain of facts that closed one another, in the order they held."""
        found = await asyncio.to_thread(lambda: service.timeline(where(request)))
        return json_response(found, headers=_NO_STORE)

    @api.get("/pending")
    async def pending(request: Request) -> Json[RecordListJson]:
        """The records waiting for the person's review (`[memory] confirm`; of `?cwd=` or
        `?workspace=`), oldest first; `?rejected=1` the rejected ones too."""
        rejected = request.query_params.get("rejected") in ("1", "true")
        found = await asyncio.to_thread(lambda: service.pending(where(request), rejected=rejected))
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.get("/status")
    async def status(request: Request) -> Json[MemoryStatusJson]:
        """How memory stands (as `dshkit memory status`): the counts, every workspace with
        records and its id, what the harvests' per-session caps dropped and, with `?cwd=` or
        `?workspace=`, what that workspace's next session's injection leaves out and why."""
        found = await asyncio.to_thread(lambda: service.status(where(request)))
        return json_response(found.as_json(), headers=_NO_STORE)

    @api.post("/rekey", body=_rekey)
    async def rekey(request: Request, body: RekeyBody) -> Json[RekeyJson]:
        """Move every record of the workspace `old` to `new` (a folder moved or renamed),
        resolving supersession between the two sets of facts."""
        moved = await asyncio.to_thread(service.rekey, body["old"].strip(), body["new"].strip())
        return json_response(moved.as_json(), headers=_NO_STORE)

    @api.post("/records/{id}/review", body=_review)
    async def review(request: Request, body: ReviewBody) -> Json[RecordViewJson]:
        """Accept a pending record (it is given to sessions from now on) or reject it (kept
        and shown, never given)."""
        accept = body["verdict"] == "accept"
        view = await asyncio.to_thread(service.review, record_id(request), accept)
        return json_response(view.as_json(), headers=_NO_STORE)

    @api.post("/records/{id}/quarantine", body=_quarantine, empty=True)
    async def quarantine(request: Request, body: QuarantineBody) -> Json[RecordViewJson]:
        """Set a record aside: it is given to no session until let back."""
        reason = str(body.get("reason") or "set aside by the person")
        view = await asyncio.to_thread(service.quarantine, record_id(request), reason)
        return json_response(view.as_json(), headers=_NO_STORE)

    @api.post("/records/{id}/release")
    async def release(request: Request) -> Json[RecordViewJson]:
        """Let a record set aside back."""
        view = await asyncio.to_thread(service.release, record_id(request))
        return json_response(view.as_json(), headers=_NO_STORE)

    @api.post("/records/{id}/reject")
    async def reject(request: Request) -> Json[RecordViewJson]:
        """Reject a skill proposal."""
        view = await asyncio.to_thread(service.reject, record_id(request))
        return json_response(view.as_json(), headers=_NO_STORE)

    @api.post("/records/{id}/accept", body=_accept)
    async def accept(request: Request, body: AcceptBody) -> Json[AcceptedJson]:
        """Accept a skill proposal: its SKILL.md is checked and written for the harness."""
        scope = str(body.get("scope") or "project")
        done = await asyncio.to_thread(service.accept, record_id(request), body["harness"], scope)
        return json_response(done.as_json(), headers=_NO_STORE)

    @api.delete("/records/{id}")
    async def forget(request: Request) -> Json[Forgotten]:
        """Forget a record for good."""
        gone = await asyncio.to_thread(service.forget, record_id(request))
        return json_response({"forgotten": gone}, headers=_NO_STORE)

    return api


def from_app(app: App) -> Router:
    """The router over the app's memory, with the profile's text (the injection preview
    takes the room it leaves)."""
    return router(app.memory, lambda: app.profile.effective().text)
