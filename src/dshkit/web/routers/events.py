"""What changed in the store, under /api/events/: one stream the console follows.

`GET /api/events` asked for `text/event-stream` (as EventSource asks) streams: `event: ready`
with the current figures, then an `event: change` naming the topics (sessions, optimizer,
gate, graft, memory, profile) whose figures moved, each with whether a scan holds the store
and when a scan was last seen (`lastScanAt`, ms, or null when none was seen since the service
started), and an `event: beat` with the figures when nothing changed for HEARTBEAT_S
seconds (a page can tell a dead stream from a quiet one). Asked for anything else it answers
the same figures once, as JSON. Either way it only reads: one `PRAGMA data_version` per poll while
nothing changed.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypedDict

import orjson
from starlette.requests import Request
from starlette.responses import StreamingResponse

from ...errors import DshkitError
from ...overview import StatusService
from ..routing import Json, Router, json_response

if TYPE_CHECKING:
    from ...app import App

POLL_S = 0.5
HEARTBEAT_S = 5.0


class Change(TypedDict):
    """The topics whose figures moved (an `event: change`), whether a scan holds the store,
    and when a scan was last seen (ms; None: none since the service started)."""

    topics: list[str]
    scanning: bool
    lastScanAt: int | None


class Figures(Change):
    """The figures of every topic now (an `event: ready` or `event: beat`)."""

    counters: dict[str, str]


class FiguresOnce(TypedDict):
    """The figures of every topic now, whether a scan holds the store, and when a scan was
    last seen (ms; None: none since the service started)."""

    counters: dict[str, str]
    scanning: bool
    lastScanAt: int | None


def router(service: StatusService) -> Router:
    api = Router("events")
    # Shared by every follower of this service: when a scan was last seen, by any of them.
    seen: dict[str, int | None] = {"lastScanAt": None}

    def note(topics: list[str], scanning: bool, was_scanning: bool) -> Change:
        if "sessions" in topics or scanning or was_scanning:
            seen["lastScanAt"] = int(time.time() * 1000)
        return {"topics": topics, "scanning": scanning, "lastScanAt": seen["lastScanAt"]}

    @api.get("/")
    async def get_events(request: Request) -> Json[FiguresOnce] | StreamingResponse:
        """What changed in the store, as one stream the console follows. Asked for
        `text/event-stream`: `event: ready` with the figures (`Figures`), an `event: change`
        (`Change`) whenever some moved, an `event: beat` with the figures after a quiet while
        (a dead stream is told from a quiet one), `event: problem` (`{"error"}`) when the
        store could not be read. Asked for anything else: the figures once, as JSON."""
        if "text/event-stream" not in request.headers.get("accept", ""):
            counters, scanning = await asyncio.to_thread(_once, service)
            body: FiguresOnce = {
                "counters": counters,
                "scanning": scanning,
                "lastScanAt": seen["lastScanAt"],
            }
            return json_response(body, headers={"cache-control": "no-store"})

        async def stream() -> AsyncIterator[bytes]:
            # One thread per follower: its store connection is used from that thread only.
            worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dshkit-events")
            loop = asyncio.get_running_loop()
            changes = await loop.run_in_executor(worker, service.changes)
            try:
                first = await loop.run_in_executor(worker, changes.poll)
                assert first is not None
                counters, scanning = first
                yield _sse("ready", _figures(note([], scanning, False), counters))
                quiet = 0.0
                while True:
                    await asyncio.sleep(POLL_S)
                    try:
                        polled = await loop.run_in_executor(worker, changes.poll)
                    except (DshkitError, sqlite3.Error) as exc:  # busy or damaged: said, retried
                        yield _sse("problem", {"error": str(exc)})
                        continue
                    if polled is not None:
                        now, now_scanning = polled
                        topics = [t for t in now if now[t] != counters.get(t)]
                        if topics or now_scanning != scanning:
                            yield _sse("change", note(topics, now_scanning, scanning))
                            quiet = 0.0
                        counters, scanning = now, now_scanning
                    quiet += POLL_S
                    if quiet >= HEARTBEAT_S:  # an event, so that a page can tell a dead stream
                        quiet = 0.0
                        # The figures read anew on a fresh connection: a long-lived one was
                        # seen to stop noticing another process's commits (data_version
                        # unmoved while a new connection read them), so a change is at most
                        # one beat late instead of lost.
                        await loop.run_in_executor(worker, changes.close)
                        changes = await loop.run_in_executor(worker, service.changes)
                        try:
                            fresh = await loop.run_in_executor(worker, changes.poll)
                        except (DshkitError, sqlite3.Error) as exc:
                            yield _sse("problem", {"error": str(exc)})
                            continue
                        assert fresh is not None  # a new follower's first poll always reads
                        now, now_scanning = fresh
                        topics = [t for t in now if now[t] != counters.get(t)]
                        if topics or now_scanning != scanning:
                            yield _sse("change", note(topics, now_scanning, scanning))
                        counters, scanning = now, now_scanning
                        yield _sse("beat", _figures(note([], scanning, False), counters))
            finally:
                await loop.run_in_executor(worker, changes.close)
                worker.shutdown(wait=False)

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    return api


def _once(service: StatusService) -> tuple[dict[str, str], bool]:
    """The figures now, read on one connection in the calling thread."""
    changes = service.changes()
    try:
        polled = changes.poll()
    finally:
        changes.close()
    assert polled is not None  # the first poll always reads
    return polled


def _figures(change: Change, counters: dict[str, str]) -> Figures:
    return {**change, "counters": counters}


def _sse(kind: str, data: Any) -> bytes:
    return f"event: {kind}\n".encode() + b"data: " + orjson.dumps(data) + b"\n\n"


def from_app(app: App) -> Router:
    """The router over the store's change counters (the app's status)."""
    return router(app.status)
