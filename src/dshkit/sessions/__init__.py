"""The session layer: incremental, read-only reading of DSH, Claude Code and Codex session logs.

Every harness's logs become one normalized event stream (see `events`), so each later
capability works for all three. `Scanner` writes what is new into the store; `Catalog` reads
sessions back; `read_tail` follows one live transcript apart from the scan.
"""

from .catalog import Catalog, HumanMessage, SessionInfo, SessionKey, SessionNotFound
from .events import Event
from .scanner import ADAPTERS, Scanner, ScanReport, Source, default_sources
from .tail import Tail, read_tail

__all__ = [
    "ADAPTERS",
    "Catalog",
    "Event",
    "HumanMessage",
    "ScanReport",
    "Scanner",
    "SessionInfo",
    "SessionKey",
    "SessionNotFound",
    "Source",
    "Tail",
    "default_sources",
    "read_tail",
]
