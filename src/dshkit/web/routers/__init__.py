"""The capability routers the app can mount, by name: the one place a new one is listed.

Each entry builds its `Router` (named like its key, mounted at `/api/<name>/`) from the
service the app is given under that name; see `web.app.create_app`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..routing import Router
from . import (
    capability,
    gate,
    graft,
    inject,
    jobs,
    optimizer,
    profile,
    sessions,
    signals,
    status,
)

RouterFactory = Callable[[Any], Router]

ROUTERS: dict[str, RouterFactory] = {
    "jobs": jobs.router,  # the job runner: listing and progress events of background jobs
    "profile": profile.router,  # prompt-adapt
    "optimizer": optimizer.router,  # the prompt optimizer
    "capability": capability.router,  # capability facts: modes and probed channels
    "gate": gate.router,  # the delivery gate: verdicts on web deliverables
    "graft": graft.router,  # context handoff: the audit trail and the debug panel
    "sessions": sessions.router,  # the session layer: list and open sessions
    "signals": signals.router,  # friction signals: totals over time and their hits
    "status": status.router,  # the overview: what dshkit knows and what is missing
    "inject": inject.router,  # what each hook event would inject into a session (a preview)
}
