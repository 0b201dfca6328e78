"""Reading what a model answer completed: the longest JSON prefix of a truncated reply.

A reply cut at `max_tokens` (or broken off) is usually valid JSON up to some point. Every
caller that asks the model for JSON rescues it the same way: close the brackets left open
after the last value that certainly ended, and parse that.
"""

from __future__ import annotations

import re
from typing import Any

import orjson


def largest_json_prefix(text: str) -> tuple[Any, int] | None:
    """The longest prefix that parses once closed, cut only where a value has just ended.

    Never inside a string, after a key, or after a number or literal the text ends on (it may
    have been cut mid-way): `{"a": 12` could have been `123`.
    """
    stack: list[str] = []
    key_next: list[bool] = []
    cuts: list[tuple[int, str]] = []
    i, n = 0, len(text)

    def closers() -> str:
        return "".join("}" if s == "{" else "]" for s in reversed(stack))

    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif c in "{[":
            stack.append(c)
            key_next.append(c == "{")
            i += 1
        elif c in "}]":
            if not stack:
                break
            stack.pop()
            key_next.pop()
            i += 1
            cuts.append((i, closers()))
        elif c == ",":
            if stack and stack[-1] == "{":
                key_next[-1] = True
            i += 1
        elif c == ":":
            if key_next:
                key_next[-1] = False
            i += 1
        elif c == '"':
            end = _string_end(text, i)
            if end is None:
                break  # the text ends inside a string
            is_key = bool(stack) and stack[-1] == "{" and key_next[-1]
            i = end
            if not is_key:
                cuts.append((i, closers()))
        else:
            match = _SCALAR.match(text, i)
            if match is None or match.end() == n:
                break  # not JSON, or a scalar the text may have cut short
            i = match.end()
            cuts.append((i, closers()))
    for position, closing in reversed(cuts):
        try:
            return orjson.loads(text[:position] + closing), position
        except orjson.JSONDecodeError:
            continue
    return None


_SCALAR = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null")


def _string_end(text: str, start: int) -> int | None:
    """The index just past the string starting at `start`, or None if it never closes."""
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        else:
            i += 1
    return None
