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
from ..store import CAPABILITY_DELIVERY
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
        marker = now.key + ("#pending" if now.pending else "")
        # The last delivery only (each supersedes the one before): a mode changed back is news.
        unchanged = any(store.delivered(key, CAPABILITY_DELIVERY, m) for m in (marker, now.key))
    if not again and unchanged:
        return None  # unchanged (an expired cache being re-probed is no news)
    text = now.text

    def record() -> None:
        with hook.open_store() as store:
            store.mark_delivered(key, CAPABILITY_DELIVERY, marker, superseding=True)

    return {"additionalContext": text, "commit": record}
