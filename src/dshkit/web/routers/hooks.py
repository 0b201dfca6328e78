"""The resident hooks under /api/hooks/: `POST /api/hooks/{event}` takes a hook's payload as
Claude Code's HTTP hooks send it (`install-hooks --resident`) and answers what `dshkit hook
EVENT` would have printed, byte for byte: the same runtime (`hooks.run.call`) runs over this
service's state directory, with the payload as its stdin, in one of the service's hook workers
(`hooks.resident`): a slow call (the gate at Stop waits for a verdict up to its budget) holds
only its worker, never the console or another hook, and the handlers' budgets are kept with
SIGALRM on the worker's own main thread.

Only its own credential opens it (the `X-Dshkit-Hook` header, see `web.security`). The events
installed here fail open (a worker that died mid-call answers 502, a non-blocking error to
Claude Code, as a crashed command hook is); the guard stays a command hook."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from ...hooks.resident import ResidentError, Workers
from ...hookspec import EVENTS
from ..routing import ApiError, Router

if TYPE_CHECKING:
    from pathlib import Path

    from ...app import App

# The events a resident hook may answer: those where failing open is harmless (Claude Code
# treats a failed HTTP hook as a non-blocking error).
RESIDENT_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop")


def router(state_dir: Path) -> Router:
    api = Router("hooks")
    workers = Workers(str(state_dir))

    @api.post("/{event}")
    async def post_hook(request: Request) -> Response:
        """Answer one hook call (the payload as the harness sends it) as `dshkit hook EVENT`
        would: its stdout as the body, byte for byte."""
        event = request.path_params["event"]
        if event not in EVENTS or event not in RESIDENT_EVENTS:
            raise ApiError(404, f"no resident hook {event!r} (known: {', '.join(RESIDENT_EVENTS)})")
        payload = await request.body()
        began = time.perf_counter()
        try:
            code, out, _ = await run_in_threadpool(workers.call, event, payload)
        except ResidentError as exc:
            raise ApiError(502, f"the {event} hook did not answer: {exc}") from exc
        spent = (time.perf_counter() - began) * 1000
        # The handler time (Server-Timing): what bench/hook_resident.py reports. The time to
        # the answer: a step the worker runs after it (`hooks.resident`) is not in it.
        headers = {"x-exit-code": str(code), "server-timing": f"hook;dur={spent:.3f}"}
        return Response(out, 200, media_type="application/json", headers=headers)

    return api


def from_app(app: App) -> Router:
    """The router answering the resident hooks over the app's state directory."""
    return router(app.state_dir)
