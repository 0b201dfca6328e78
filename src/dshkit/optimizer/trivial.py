"""Prompts the optimizer answers without a model: what F1 would hand back unchanged anyway.

A bare continuation (继续, 好的, ok, yes, a lone option number answering the agent's
question) is already enough for the agent, and nothing in it can be refined; a command to
the harness itself (a slash command, shell mode) is not words for the agent at all. Asking
the model for either costs the person seconds for nothing, so they pass as typed, recorded
as skipped. `skip_trivial = false` asks the model anyway; `trivial_words` adds words.
"""

from __future__ import annotations

from ..harnesses.prompt_input import is_harness_command
from .runs import PASSED_COMMAND, PASSED_CONTINUATION
from .settings import Settings

CONTINUATIONS = frozenset(
    {
        "继续",
        "继续吧",
        "接着来",
        "接着做",
        "继续做",
        "继续执行",
        "好",
        "好的",
        "好吧",
        "行",
        "可以",
        "可以的",
        "嗯",
        "嗯嗯",
        "对",
        "对的",
        "是",
        "是的",
        "没问题",
        "同意",
        "确认",
        "开始",
        "开始吧",
        "就这样",
        "ok",
        "okay",
        "k",
        "yes",
        "y",
        "yep",
        "sure",
        "go",
        "go on",
        "go ahead",
        "continue",
        "proceed",
        "next",
    }
)
# Said around a continuation without changing it.
_EDGES = " \t\r\n。．.!！~～,，、…?？"
# A lone option number or letter answering the agent's question (1, 2), B).
_OPTION_CHARS = frozenset("0123456789abcdefABCDEF")


def needs_no_model(raw: str, harness: str | None, settings: Settings) -> str | None:
    """Why `raw` passes without a model call (runs.PASSED_*), or None when it needs one."""
    if not settings.skip_trivial:
        return None
    if is_harness_command(raw, harness):
        return PASSED_COMMAND
    word = raw.strip(_EDGES).strip("（）()").lower()
    extra = {w.strip().lower() for w in settings.trivial_words.split(",") if w.strip()}
    if word in CONTINUATIONS or word in extra:
        return PASSED_CONTINUATION
    if 0 < len(word) <= 2 and all(c in _OPTION_CHARS for c in word):
        return PASSED_CONTINUATION
    return None
