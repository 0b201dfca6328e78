"""Prompt budgets: a token estimate with no tokenizer, and the fitting of parts into a budget.

Every prompt dshkit sends is estimated before the call (`LLMClient.complete` refuses one that
would not fit the model's window with room for its answer), and a builder whose material can
grow without bound (the profile's person messages) fits it with `fit_newest` first
(docs/design/provenance.md#every-prompt-has-a-budget).

The estimate leans high on purpose: a Han character (or any other non-ASCII one) counts as a
token, ASCII as 0.3 of one (DeepSeek's published ratio for English text), each message adds a
few for its framing. Overestimating costs a little material; underestimating costs the call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

_ASCII = re.compile(r"[\x00-\x7f]")
ASCII_TOKENS_PER_CHAR = 0.3
MESSAGE_OVERHEAD = 4  # a chat message's role and separators


def estimate_tokens(text: str) -> int:
    """Tokens `text` is expected to take at most (with no tokenizer at hand)."""
    ascii_chars = len(_ASCII.findall(text))
    return math.ceil(ascii_chars * ASCII_TOKENS_PER_CHAR) + (len(text) - ascii_chars)


def estimate_messages(messages: Iterable[dict[str, Any]]) -> int:
    """Tokens a chat request's messages are expected to take (text content counted)."""
    total = 0
    for message in messages:
        total += MESSAGE_OVERHEAD
        content = message.get("content")
        if isinstance(content, str):
            total += estimate_tokens(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    total += estimate_tokens(part["text"])
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {} if isinstance(call, dict) else {}
            total += estimate_tokens(str(function.get("arguments", "")))
    return total


@dataclass(frozen=True)
class Fitted:
    """What a budget let in (in the original order) and how many items it left out."""

    kept: list[Any]
    left_out: int
    tokens: int  # the kept items' estimate


def fit_newest(items: Sequence[T], tokens: int, cost: Callable[[T], int]) -> Fitted:
    """The newest items (the end of `items`) whose costs fit `tokens`, in their order; an item
    that does not fit ends the fitting (older ones are left out whole, never cut)."""
    kept_from = len(items)
    used = 0
    for index in range(len(items) - 1, -1, -1):
        item_cost = cost(items[index])
        if used + item_cost > tokens:
            break
        used += item_cost
        kept_from = index
    return Fitted(list(items[kept_from:]), kept_from, used)
