"""Background jobs under /api/jobs/: recent jobs, one job, and its progress as server-sent events.

`GET /api/jobs/{id}/events` streams `text/event-stream`: an `event: progress` per job event
(its `id:` is the event's sequence number, so a reconnecting EventSource resumes after
`Last-Event-ID`), then one `event: end` carrying the finished job, and the stream closes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TypedDict

import orjson
from starlette.requests import Request
from starlette.responses import StreamingResponse

from ...jobs import Job, JobJson, JobRunner, Submitted, event_json
from ..routing import ApiError, Json, Router, decimal, json_response

if TYPE_CHECKING:
    from ...app import App

HEARTBEAT_S = 15.0  # a comment line this often keeps idle streams from being cut by proxies


class AcceptedJob(TypedDict):
    """A background run asked for (202, its `location` header the job's path): whether it
    started (False: one of its kind was running, which is the job given), and the job."""

    started: bool
    job: JobJson


class JobsJson(TypedDict):
    """The jobs remembered, newest first."""

    jobs: list[JobJson]


def job_path(job: Job) -> str:
    """Where a job's state is served (what a 202 points at in its `location`)."""
    return f"/api/jobs/{job.id}"


def accepted(submitted: Submitted) -> Json[AcceptedJob]:
    """202 for a submitted job: whether it started (or one of its kind was running), the job,
    and where to follow it."""
    job = submitted.job
    return json_response(
        {"started": submitted.started, "job": job.as_json()},
        202,
        headers={"location": job_path(job)},
    )


def router(runner: JobRunner) -> Router:
    api = Router("jobs")

    def find(request: Request) -> Job:
        wanted = request.path_params["id"]
        job = runner.get(wanted)
        if job is None:
            raise ApiError(404, f"no job {wanted!r} (recent jobs: GET /api/jobs)")
        return job

    @api.get("/")
    async def list_jobs(request: Request) -> Json[JobsJson]:
        """The jobs remembered (the running ones and the latest finished), newest first;
        `?kind=` one kind (profile, optimizer, gate)."""
        kind = request.query_params.get("kind")
        return json_response(
            {"jobs": [job.as_json() for job in runner.jobs(kind)]},
            headers={"cache-control": "no-store"},
        )

    @api.get("/{id}")
    async def get_job(request: Request) -> Json[JobJson]:
        """One job: its state, latest stage and progress, its result or error."""
        return json_response(find(request).as_json(), headers={"cache-control": "no-store"})

    @api.get("/{id}/events")
    async def job_events(request: Request) -> StreamingResponse:
        """The job's progress as server-sent events: `event: progress` with a `JobEventJson`
        per event (its `id:` the event's number: `Last-Event-ID` or `?after=` resumes after
        it), then one `event: end` with the finished `JobJson`, and the stream closes."""
        job = find(request)
        given = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
        after = decimal(given)
        if after is None:
            raise ApiError(400, f"after / Last-Event-ID must be an event number, got {given!r}")

        async def stream() -> AsyncIterator[bytes]:
            async for event in runner.follow(job, after, heartbeat=HEARTBEAT_S):
                if event is None:
                    yield b": keep-alive\n\n"
                else:
                    yield _sse("progress", event_json(job, event), event.seq)
            yield _sse("end", job.as_json())

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    return api


def _sse(kind: str, data: Any, seq: int | None = None) -> bytes:
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}event: {kind}\n".encode() + b"data: " + orjson.dumps(data) + b"\n\n"


def from_app(app: App) -> Router:
    """The router over the app's job runner."""
    return router(app.jobs)
