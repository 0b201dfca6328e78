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
"""

from __future__ import annotations

AFTER = "after"


class Say:
    """A quiet check's answer that knows its handler's words (see the module docstring)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Say({self.text!r})"
