"""The resident hooks under /api/hooks/: `POST /api/hooks/{event}` takes a hook's payload as
Claude Code's HTTP hooks send it (`install-hooks --resident`) and answers what `dshkit hook
EVENT` would have printed, byte for byte: the same runtime (`hooks.run.call`) runs in this
process, over this service's state directory, with the payload as its stdin.

Only its own credential opens it (the `X-Dshkit-Hook` header, see `web.security`). The
handlers run on the event loop's thread, one call at a time: their budgets are kept with
SIGALRM, which only the main thread may set, and a call swaps nothing shared with another.
A call whose handlers take long (the gate at Stop waits for a verdict up to its budget) holds
the service's other requests meanwhile; the events installed here fail open, so a slow
answer costs the agent only time (the guard stays a command hook)."""

from __future__ import annotations

import io
import os
import tempfile
import time
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

from ...hookspec import EVENTS
from ..routing import ApiError, Router

if TYPE_CHECKING:
    from pathlib import Path

    from ...app import App

# The events a resident hook may answer: those where failing open is harmless (Claude Code
# treats a failed HTTP hook as a non-blocking error).
RESIDENT_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop")


def answer(state_dir: Path, event: str, payload: bytes) -> tuple[int, bytes, bytes]:
    """What `dshkit hook EVENT --state-dir STATE` answers `payload`: its exit code, stdout
    and stderr."""
    from ...hooks.run import call

    out, err = io.BytesIO(), io.BytesIO()
    with tempfile.TemporaryFile() as stdin:  # read through its descriptor, as a pipe is
        stdin.write(payload)
        stdin.seek(0)
        code = call([event, "--state-dir", str(state_dir)], stdin, out, err, os.environ)
    return code, out.getvalue(), err.getvalue()


def router(state_dir: Path) -> Router:
    api = Router("hooks")

    @api.post("/{event}")
    async def post_hook(request: Request) -> Response:
        """Answer one hook call (the payload as the harness sends it) as `dshkit hook EVENT`
        would: its stdout as the body, byte for byte."""
        event = request.path_params["event"]
        if event not in EVENTS or event not in RESIDENT_EVENTS:
            raise ApiError(404, f"no resident hook {event!r} (known: {', '.join(RESIDENT_EVENTS)})")
        payload = await request.body()
        began = time.perf_counter()
        code, out, _ = answer(state_dir, event, payload)
        spent = (time.perf_counter() - began) * 1000
        # The handler time (Server-Timing): what bench/hook_resident.py reports.
        headers = {"x-exit-code": str(code), "server-timing": f"hook;dur={spent:.3f}"}
        return Response(out, 200, media_type="application/json", headers=headers)

    return api


def from_app(app: App) -> Router:
    """The router answering the resident hooks over the app's state directory."""
    return router(app.state_dir)
