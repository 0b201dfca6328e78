"""The error for a harness name the registry does not know (loaded only when one is met)."""

from __future__ import annotations

from ..errors import Invalid


class UnknownHarness(Invalid, KeyError):
    """An `Invalid` naming its input (`field="harness"`), so every surface says which input."""

    def __init__(self, name: str) -> None:
        from . import NAMES

        super().__init__(f"unknown harness {name!r} (known: {', '.join(NAMES)})", field="harness")

    def __str__(self) -> str:
        return self.message
