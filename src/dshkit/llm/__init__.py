"""The one LLM client (`client`), the bounded tool loop (`tools`), JSON rescue (`rescue`).

Names are loaded on first use: `dshkit.llm.rescue` sits on the hook path (the profile model
imports it), which must not pay for importing httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from ..config import DEFAULT_BASE_URL, DEFAULT_MODEL
    from .client import (
        OUTCOMES,
        ROLES,
        Completion,
        LLMClient,
        LLMConfig,
        LLMConfigError,
        Message,
        ToolCall,
    )
    from .rescue import largest_json_prefix
    from .tools import Dispatcher, ToolLimits, ToolLoopResult, ToolStep, run_tool_loop

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "OUTCOMES",
    "ROLES",
    "Completion",
    "Dispatcher",
    "LLMClient",
    "LLMConfig",
    "LLMConfigError",
    "Message",
    "ToolCall",
    "ToolLimits",
    "ToolLoopResult",
    "ToolStep",
    "largest_json_prefix",
    "run_tool_loop",
]
# Where each name lives: the client module, but for these (DEFAULT_* are the client's too).
_HOMES = {
    **dict.fromkeys(__all__, "client"),
    "largest_json_prefix": "rescue",
    **dict.fromkeys(
        ("Dispatcher", "ToolLimits", "ToolLoopResult", "ToolStep", "run_tool_loop"), "tools"
    ),
}

__getattr__, __dir__ = lazy_names(globals(), _HOMES)
