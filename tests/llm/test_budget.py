"""Prompt budgets: the token estimate leans high against the published characters-per-token
ratios of Chinese and English (DeepSeek: 0.6 and 0.3 tokens a character), and fitting keeps the
newest items whole, in their order, leaving the older ones out whole."""

from __future__ import annotations

import math
from typing import Any

import pytest

from dshkit.llm.budget import (
    ASCII_TOKENS_PER_CHAR,
    MESSAGE_OVERHEAD,
    Fitted,
    estimate_messages,
    estimate_tokens,
    fit_newest,
)

ENGLISH = "Always run the fast tests before you commit, and keep the public API stable. " * 20
CHINESE = "请用中文回答，先跑一遍测试再提交，不要改动公开的接口。" * 20


def test_the_estimate_leans_high_for_english_and_chinese() -> None:
    # DeepSeek's published ratios: an English character ~0.3 token, a Chinese one ~0.6.
    assert estimate_tokens(ENGLISH) >= 0.3 * len(ENGLISH)
    assert estimate_tokens(CHINESE) >= 0.6 * len(CHINESE)
    assert estimate_tokens(CHINESE) == len(CHINESE)  # a token a character: above 0.6
    assert estimate_tokens(ENGLISH) == math.ceil(ASCII_TOKENS_PER_CHAR * len(ENGLISH))
    mixed = ENGLISH + CHINESE
    assert estimate_tokens(mixed) >= 0.3 * len(ENGLISH) + 0.6 * len(CHINESE)


def test_other_non_ascii_text_counts_a_token_a_character() -> None:
    assert estimate_tokens("é😀ñ") == 3
    assert estimate_tokens("") == 0
    assert estimate_tokens("a") == 1  # rounded up


def test_a_request_counts_every_message_its_parts_and_its_tool_calls() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "你是助手"},
        {"role": "user", "content": [{"type": "text", "text": "hi there"}, {"type": "image"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"function": {"name": "read", "arguments": '{"path": "README.md"}'}}],
        },
    ]
    expected = 3 * MESSAGE_OVERHEAD + 4 + estimate_tokens("hi there")
    expected += estimate_tokens('{"path": "README.md"}')
    assert estimate_messages(messages) == expected
    assert estimate_messages([]) == 0


def test_fitting_keeps_the_newest_items_whole_and_in_order() -> None:
    items = ["a" * 10, "b" * 10, "c" * 10, "d" * 10]  # oldest first, 3 tokens each
    fitted = fit_newest(items, 7, estimate_tokens)
    assert fitted == Fitted(kept=["c" * 10, "d" * 10], left_out=2, tokens=6)
    everything = fit_newest(items, 100, estimate_tokens)
    assert everything.kept == items and everything.left_out == 0 and everything.tokens == 12


def test_an_item_that_does_not_fit_ends_the_fitting() -> None:
    # The second newest is too big: it and everything older stay out, though an older one
    # would fit (the newest material, not a patchwork).
    items = ["old", "x" * 1000, "new"]
    fitted = fit_newest(items, 100, estimate_tokens)
    assert fitted.kept == ["new"] and fitted.left_out == 2


@pytest.mark.parametrize("budget", [0, -5])
def test_no_budget_keeps_nothing(budget: int) -> None:
    fitted = fit_newest(["one", "two"], budget, estimate_tokens)
    assert fitted.kept == [] and fitted.left_out == 2 and fitted.tokens == 0


def test_an_empty_list_fits_any_budget() -> None:
    assert fit_newest([], 10, estimate_tokens) == Fitted([], 0, 0)
