"""Graft at the hooks (logic in `dshkit.graft.live`, the rules in `dshkit.inject.rules`): a
handed-off session takes no new work, the watermark speaks once per turn, a waiting handoff
reaches the next session, notices once.

A prompt to a transferring or retired session is blocked and every tool call denied, with a
pointer to where the work went. The warning, the escalation and the forced cut reach the model
as additional context after a tool call or with a prompt; what they leave behind is recorded
only once the text was delivered (the runtime's `commit`).
"""

from __future__ import annotations

from ..inject import rules
from .protocol import HookInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from typing import Any


def on_session_start(hook: HookInput) -> dict[str, Any] | None:
    return hook.deliver(rules.handoff_at_start)


def on_prompt(hook: HookInput) -> dict[str, Any] | None:
    return hook.deliver(rules.handoff_at_prompt)


def on_tool(hook: HookInput) -> dict[str, Any] | None:
    # Registered to run only once a handoff ever began here (the entry point checks the
    # marker before it starts any handler): every tool call would pass here otherwise.
    if not hook.session_id:
        return None
    return hook.deliver(rules.retirement_at_tool)


def after_tool(hook: HookInput) -> dict[str, Any] | None:
    return hook.deliver(rules.watermark_after_tool)
