"""The session layer: incremental, read-only reading of DSH, Claude Code and Codex session logs.

Every harness's logs become one normalized event stream (see `events`), so each later
capability works for all three.
"""

from .events import Event
from .scanner import ADAPTERS, Scanner, ScanReport, Source, default_sources

__all__ = [
    "ADAPTERS",
    "Event",
    "ScanReport",
    "Scanner",
    "Source",
    "default_sources",
]
