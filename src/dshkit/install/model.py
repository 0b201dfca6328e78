"""What installing says back: the error that refuses an install, and an inspection (what
`doctor` reports of one harness's install in one scope)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import Invalid
from ..harnesses.config_files import Unreadable

BROKEN, UNKNOWN, WARN = "broken", "unknown", "warn"
OK, ABSENT = "ok", "absent"  # an inspection without problems: installed, or not (fine too)


class InstallError(Invalid):
    """The install cannot be done as asked (the message says why, and what to do)."""


class HarnessAbsent(InstallError):
    """The harness named is not installed on this machine: installing into it would make
    directories of a harness that is not there, so it is done only when asked to create them."""

    def __init__(self, message: str) -> None:
        super().__init__(message, field="harness")


def unreadable(exc: Unreadable) -> InstallError:
    """The refusal for a file dshkit cannot read in its own format: a person fixes it first."""
    return InstallError(f"{exc}; fix it by hand first")


@dataclass
class Problem:
    message: str
    level: str  # BROKEN; UNKNOWN: cannot tell whether it works; WARN: worth knowing, works


@dataclass
class Inspection:
    """One harness's install in one scope, against this dshkit, its hook spec and state dir."""

    harness: str
    scope: str
    path: Path | None
    installed: bool  # some dshkit entry is there
    events: dict[str, str] = field(default_factory=dict)  # installed event → matcher
    problems: list[Problem] = field(default_factory=list)
    # Why the harness counts as not installed on this machine (user scope), None: it is. Then
    # nothing of this install can run, whatever it holds: it is absent, not broken.
    away: str | None = None

    @property
    def status(self) -> str:
        """The worst problem's level, else "ok", or "absent" (not installed, which is fine, or
        its harness is not on this machine)."""
        if self.away is not None:
            return ABSENT
        for level in (BROKEN, UNKNOWN, WARN):
            if any(p.level == level for p in self.problems):
                return level
        return OK if self.installed else ABSENT

    def to_json(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "scope": self.scope,
            "path": str(self.path) if self.path else None,
            "status": self.status,
            "installed": self.installed,
            "events": self.events,
            "problems": [{"level": p.level, "message": p.message} for p in self.problems],
            "harnessAbsent": self.away,
        }
