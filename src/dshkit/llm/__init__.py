"""The one LLM client (`client`), the bounded tool loop (`tools`), JSON rescue (`rescue`).

Names are loaded on first use: `dshkit.llm.rescue` sits on the hook path (the profile model
imports it), which must not pay for importing httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
# Where each name lives; the rest (DEFAULT_* included) are the client module's.
_ELSEWHERE = {
    "largest_json_prefix": ".rescue",
    **dict.fromkeys(
        ("Dispatcher", "ToolLimits", "ToolLoopResult", "ToolStep", "run_tool_loop"), ".tools"
    ),
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_ELSEWHERE.get(name, ".client"), __name__), name)
