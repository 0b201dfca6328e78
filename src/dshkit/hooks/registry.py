"""The one place handlers are registered: event → handlers, as "module:function" names.

Names, not imports: a handler's module is imported only when its event fires, so an event
without handlers (PreToolUse, for now) costs nothing. Later capabilities add their entries
here (the optimizer on UserPromptSubmit, command policy on PreToolUse, the delivery gate on
PostToolUse, handoff on several events). A handler takes a HookInput and returns None (no
opinion) or a result dict for `protocol.answer`.
"""

from __future__ import annotations

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionEnd",
    "PreCompact",
)

HANDLERS: dict[str, tuple[str, ...]] = {
    "SessionStart": ("dshkit.hooks.profile:on_session_start",),
    "UserPromptSubmit": ("dshkit.hooks.profile:on_prompt",),
    "Stop": ("dshkit.hooks.refresh:on_session_pause",),
    "SessionEnd": ("dshkit.hooks.refresh:on_session_pause",),
}
