"""The capability routers the app can mount, by name: the one place a new one is listed.

Each entry builds its `Router` (named like its key, mounted at `/api/<name>/`) from the
`App`, taking the service it serves from it; see `web.app.create_app`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..routing import Router
from . import (
    capability,
    events,
    gate,
    graft,
    guard,
    inject,
    jobs,
    memory,
    optimizer,
    profile,
    sessions,
    signals,
    status,
)

if TYPE_CHECKING:
    from ...app import App

RouterFactory = Callable[["App"], Router]

ROUTERS: dict[str, RouterFactory] = {
    # the job runner: listing and progress events of background jobs
    "jobs": lambda app: jobs.router(app.jobs),
    "profile": lambda app: profile.router(app.profile),  # prompt-adapt
    "optimizer": lambda app: optimizer.router(app.optimizer),  # the prompt optimizer
    # capability facts: modes and probed channels
    "capability": lambda app: capability.router(app.capability),
    "gate": lambda app: gate.router(app.gate),  # the delivery gate: verdicts on deliverables
    "graft": lambda app: graft.router(app.graft),  # context handoff: audit and debug panel
    # list and open sessions; where a session said what the profile's entries quote
    "sessions": lambda app: sessions.router(app.sessions, lambda: app.profile.status().entries),
    # friction signals (the profile's): totals over time and their hits, counts per session
    "signals": lambda app: signals.router(app.profile),
    "status": lambda app: status.router(app.status),  # what dshkit knows, what is missing
    # what changed in the store, as one event stream the console follows
    "events": lambda app: events.router(app.status),
    # what each hook event would inject into a session (a preview)
    "inject": lambda app: inject.router(app.inject),
    # what sessions learned, per workspace: records, supersessions, quarantine, skills; the
    # injection preview takes the room the profile leaves
    "memory": lambda app: memory.router(app.memory, lambda: app.profile.effective().text),
    # the command guard's mode: what agents' shell commands are judged under, and the choice
    "guard": lambda app: guard.router(app.state_dir),
}
