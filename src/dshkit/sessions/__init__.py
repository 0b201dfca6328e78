"""The session layer: incremental, read-only reading of DSH, Claude Code and Codex session logs.

Every harness's logs become one normalized event stream (see `events`), so each later
capability works for all three. `Scanner` writes what is new into the store; `Catalog` reads
sessions back; `read_tail` follows one live transcript apart from the scan. `SessionsService`
is the surfaces' one face of it all (scan, list, show, browse, quote, forget).

The names below are imported on first use: a hook that needs only `tail` (graft's watermark,
on every tool call) does not pay for the scanner and the catalog.
"""

from __future__ import annotations

from ..lazy import lazy_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:  # the real names, for type checkers
    from .browse import QuoteSources, SessionDetail, SessionView
    from .catalog import (
        Catalog,
        HumanMessage,
        SessionAmbiguous,
        SessionInfo,
        SessionKey,
        SessionNotFound,
        dir_key,
    )
    from .events import Event
    from .freshness import Refresh, refresh
    from .scanner import ADAPTERS, Progress, Scanner, ScanReport, Source, default_sources
    from .service import Forgotten, SessionsService
    from .tail import Tail, read_tail

_HOMES = {
    "Catalog": "catalog",
    "HumanMessage": "catalog",
    "SessionInfo": "catalog",
    "SessionKey": "catalog",
    "SessionNotFound": "catalog",
    "SessionAmbiguous": "catalog",
    "dir_key": "catalog",
    "Event": "events",
    "QuoteSources": "browse",
    "SessionDetail": "browse",
    "SessionView": "browse",
    "Forgotten": "service",
    "SessionsService": "service",
    "ADAPTERS": "scanner",
    "Progress": "scanner",
    "Scanner": "scanner",
    "ScanReport": "scanner",
    "Source": "scanner",
    "default_sources": "scanner",
    "Refresh": "freshness",
    "refresh": "freshness",
    "Tail": "tail",
    "read_tail": "tail",
}
__all__ = [
    "ADAPTERS",
    "Catalog",
    "Event",
    "Forgotten",
    "HumanMessage",
    "Progress",
    "QuoteSources",
    "Refresh",
    "ScanReport",
    "Scanner",
    "SessionAmbiguous",
    "SessionDetail",
    "SessionInfo",
    "SessionKey",
    "SessionNotFound",
    "SessionView",
    "SessionsService",
    "Source",
    "Tail",
    "default_sources",
    "dir_key",
    "read_tail",
    "refresh",
]


__getattr__, __dir__ = lazy_names(globals(), _HOMES)
