"""Capability facts for the agent: on its first request, and again when they changed.

The report goes with the harness's context event (SessionStart for Claude Code and Codex;
the first UserPromptSubmit for DSH, whose bridge delivers SessionStart context late), again
after a compaction or /clear, and on a later UserPromptSubmit only when the session's modes
changed (a changed mode voids old conclusions) or when probes pending at the last delivery
have results now. Nothing waits for a probe: a missing or expired result starts one detached
`dshkit capability --probe`. A session's delivery is recorded by the commit, once the answer
was written to the harness. `DSHKIT_CAPABILITY=off` turns it off.
"""

from __future__ import annotations

import os
from typing import Any

from ..capability import lookup, read_facts
from .protocol import HookInput

SWITCH = "DSHKIT_CAPABILITY"
_AGAIN = ("compact", "clear")


def on_session_start(hook: HookInput) -> dict[str, Any] | None:
    info = hook.harness_info
    if (info.context_event if info else "SessionStart") != hook.event:
        return None  # too late there (DSH): the first UserPromptSubmit carries it
    return _deliver(hook, again=hook.payload.get("source") in _AGAIN)


def on_prompt(hook: HookInput) -> dict[str, Any] | None:
    return _deliver(hook, again=False)


def _deliver(hook: HookInput, again: bool) -> dict[str, Any] | None:
    if hook.env.get(SWITCH, "").lower() in ("off", "0", "false") or not hook.session_id:
        return None
    key = (hook.harness, hook.session_id)
    # The probe's process gets this cwd: the same absolute path makes the same cache key.
    cwd = os.path.abspath(str(hook.payload.get("cwd") or os.getcwd()))
    with hook.open_store() as store:
        errors: list[str] = []
        facts = read_facts(store, hook.harness, hook.payload, errors)
        now, _ = lookup(store, facts, cwd, errors)
        row = store.db.execute(
            "SELECT delivered FROM capability_sessions WHERE harness = ? AND session_id = ?", key
        ).fetchone()
    delivered = row[0] if row else None
    marker = now.key + ("#pending" if now.pending else "")
    if not again and delivered in (marker, now.key):
        return None  # unchanged (an expired cache being re-probed is no news)
    text = now.text

    def record() -> None:
        with hook.open_store() as store, store.transaction() as db:
            db.execute(
                "INSERT INTO capability_sessions (harness, session_id, delivered) "
                "VALUES (?, ?, ?) ON CONFLICT (harness, session_id) "
                "DO UPDATE SET delivered = excluded.delivered",
                (*key, marker),
            )

    return {"additionalContext": text, "commit": record}
