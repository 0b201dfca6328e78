"""The error for a harness name the registry does not know (loaded only when one is met)."""

from __future__ import annotations

from ..errors import Invalid


class UnknownHarness(Invalid, KeyError):
    def __str__(self) -> str:
        from . import NAMES

        return f"unknown harness {self.args[0]!r} (known: {', '.join(NAMES)})"
