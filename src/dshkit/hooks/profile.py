"""Profile injection (seed 001 §6): the effective text reaches the model once per session.

Claude Code and Codex deliver SessionStart context before the first request, so it goes
there. DSH's bridge delivers SessionStart context only from the second request, and fires
UserPromptSubmit before *every* model step (after the first, its prompt is the contexts
injected so far): there the text goes with the session's first UserPromptSubmit, and later
firings are recognised because the session is marked as injected — once the text was
written to the harness, not before. A compaction or a /clear drops what was injected, so
those SessionStarts inject again. Empty text: nothing.
"""

from __future__ import annotations

from typing import Any

from ..profile.state import ProfileState
from ..store import PROFILE_DELIVERY
from .protocol import HookInput

_AGAIN = ("compact", "clear")


def on_session_start(hook: HookInput) -> dict[str, Any] | None:
    if not hook.carries_first_context:
        return None  # too late there (DSH): the first UserPromptSubmit carries it
    return _inject_once(hook, again=hook.payload.get("source") in _AGAIN)


def on_prompt(hook: HookInput) -> dict[str, Any] | None:
    if not hook.carries_first_context:
        return None  # SessionStart has delivered it already
    return _inject_once(hook, again=False)


def _inject_once(hook: HookInput, again: bool) -> dict[str, Any] | None:
    """The text, unless this session already had it; the session is marked as injected by
    the commit, which the runtime calls only once the text was written to the harness."""
    if not hook.session_id:
        return None
    key = (hook.harness, hook.session_id)
    with hook.open_store() as store:
        text = ProfileState(store).effective().text
        if not text:
            return None
        # A write transaction, not a bare read: a store another process keeps locked makes
        # this fail now (no opinion, and the next firing tries again) rather than inject a
        # text whose delivery could then not be recorded.
        with store.transaction():
            done = store.delivered(key, PROFILE_DELIVERY)
    if done and not again:
        return None

    def record() -> None:
        import hashlib  # after the answer: not on the way to it

        digest = hashlib.sha256(text.encode()).hexdigest()[:16]  # which text it was
        with hook.open_store() as store:
            store.mark_delivered(key, PROFILE_DELIVERY, digest, superseding=True)

    return {"additionalContext": text, "commit": record}
