"""Graft at the hooks (logic in `dshkit.graft.live`): a handed-off session takes no new work,
the watermark speaks once per turn, a waiting handoff reaches the next session, notices once.

A prompt to a transferring or retired session is blocked and every tool call denied, with a
pointer to where the work went. The warning, the escalation and the forced cut reach the model
as additional context after a tool call or with a prompt; what they leave behind is recorded
only once the text was delivered (the runtime's `commit`).
"""

from __future__ import annotations

import os
from typing import Any

from .protocol import HookInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from ..graft import live
    from ..store import Store


def on_session_start(hook: HookInput) -> dict[str, Any] | None:
    from ..graft import live
    from ..procs import spawn_detached

    with hook.open_store() as store:
        if live.recovery_due(store):
            spawn_detached("graft", "recover", "--state-dir", str(hook.state_dir))
        picked = _pickup(hook, store)
    if picked is None:
        return None
    return {"additionalContext": picked.text, "commit": _run(hook, [picked.commit])}


def on_prompt(hook: HookInput) -> dict[str, Any] | None:
    from ..graft import live

    if not hook.session_id:
        return None
    owed: list[live.Notice | live.Watch | None] = []
    with hook.open_store() as store:
        pointer = live.retired(store, hook.harness, hook.session_id)
        if pointer is not None:
            return {"decision": "block", "reason": pointer}
        owed.append(_pickup(hook, store))
        owed.append(live.notices(store, hook.harness, hook.session_id))
        owed.append(_watch(hook, store))
    said = [each for each in owed if each is not None]
    if not said:
        return None
    return {
        "additionalContext": "\n\n".join(str(each.text) for each in said),
        "commit": _run(hook, [each.commit for each in said]),
    }


def on_tool(hook: HookInput) -> dict[str, Any] | None:
    # Registered to run only once a handoff ever began here (the entry point checks the
    # marker before it starts any handler): every tool call would pass here otherwise.
    if not hook.session_id:
        return None
    from ..graft import live

    with hook.open_store() as store:
        pointer = live.retired(store, hook.harness, hook.session_id)
    if pointer is None:
        return None
    return {"permissionDecision": "deny", "permissionDecisionReason": pointer}


def after_tool(hook: HookInput) -> dict[str, Any] | None:
    with hook.open_store() as store:
        watched = _watch(hook, store)
    if watched is None:
        return None
    return {"additionalContext": watched.text, "commit": _run(hook, [watched.commit])}


def _watch(hook: HookInput, store: Store) -> live.Watch | None:
    """The watermark's word for this step, when it has one to say."""
    from ..graft import live
    from ..graft.settings import GraftSettings

    transcript = str(hook.payload.get("transcript_path") or "")
    if not hook.session_id or not os.path.isfile(transcript):
        return None  # nothing written yet (or a harness that names no transcript)
    settings = GraftSettings.load(hook.state_dir)
    watched = live.watch(
        store, hook.harness, hook.session_id, transcript, settings, str(hook.state_dir)
    )
    return watched if watched.text else None


def _pickup(hook: HookInput, store: Store) -> live.Notice | None:
    """A handoff waiting in this session's directory, when this event reaches the model."""
    from ..graft import live

    cwd = str(hook.payload.get("cwd") or "")
    if not hook.carries_first_context or not hook.session_id or not cwd:
        return None
    return live.pickup(store, hook.harness, hook.session_id, cwd)


def _run(hook: HookInput, commits: list[Any]) -> Any:
    def commit() -> None:
        with hook.open_store() as store:
            for each in commits:
                each(store)

    return commit
