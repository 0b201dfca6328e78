"""What a hook's quiet check answers besides True and False (`hookspec.Entry.quiet`, a
descriptor's `live` check): importable from every layer, at no cost, so that a capability's
check and the runtime that asks it name the same answers.

- `AFTER`: nothing to say, proved from what the handler's last run left behind while that
  run is still owed; the handler runs once the call is answered, its answer discarded
  (`hooks.later`).
- `Say(text)`: the words the handler would give (its context), known the same way; the
  runtime writes them as the handler's answer where no other handler has anything to say
  (else the handler runs, in full), and the handler runs once the call is answered, its
  commits run only when it gives the same answer byte for byte (what was said is recorded
  as said; docs/design/hooks.md#a-quiet-check-may-say-its-handlers-words).

And what the checks share: `afterwards`, the check of a handler that never speaks (all of it
runs after the answer), and `plain_string`, a payload's field read from its raw bytes.
"""

from __future__ import annotations

AFTER = "after"


def afterwards(state: str, raw: bytes) -> str:
    """The quiet check of a handler that never says anything to the model, whose work (a
    detached start) may as well begin once the call is answered: AFTER, always."""
    return AFTER


class Say:
    """A quiet check's answer that knows its handler's words (see the module docstring)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Say({self.text!r})"


def plain_string(raw: bytes, key: bytes) -> str | None:
    """The value of the one `key` (quoted: `b'"cwd"'`) in a raw JSON payload when it is a
    string without escapes, else None: what a quiet check reads of a payload before any JSON
    parser is imported (as `hooks.run` reads tool names: unescaped, a quoted key cannot occur
    inside a string, so one found once is a key of the payload, at some depth; the keys asked
    for are ones the harnesses send at the top)."""
    at = raw.find(key)
    if at < 0 or raw.find(key, at + 1) >= 0:
        return None
    colon = _skip(raw, at + len(key))
    if raw[colon : colon + 1] != b":":
        return None
    quote = _skip(raw, colon + 1)
    end = raw.find(b'"', quote + 1)
    value = raw[quote + 1 : end]
    if raw[quote : quote + 1] != b'"' or end < 0 or b"\\" in value:
        return None
    return value.decode("utf-8")


def _skip(raw: bytes, at: int) -> int:
    while raw[at : at + 1] in (b" ", b"\t", b"\r", b"\n"):
        at += 1
    return at
