"""Context handoff (graft-slice): when to hand off, what the new session gets, command risk.

The capability's face for the surfaces is `GraftService` (`service.py`) with its result
types and errors; the names below are imported on first use. This package is imported on
the hot hook path (the watermark's quiet check after every tool call reads `graft.marker`, the
hooks `graft.live`), so importing it costs nothing: no `typing`, no store, no service.
"""

from __future__ import annotations

from ..lazy import lazy_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:  # the real names, for type checkers
    from .constraints import ConstraintBlockError, GraftAborted
    from .handoff import Handoff
    from .ledger import AUDIT_LIMIT
    from .lifecycle import GraftError, HandoffNotFound, State, Txn
    from .readback import ReadBackError
    from .service import (
        Drive,
        Exclusions,
        GraftService,
        Handoffs,
        Recovery,
        SliceResult,
        WatermarkStatus,
        transcript_sources,
    )
    from .status import AuditPage
    from .wire import Panel, ReadResult, SearchResult, SessionPart

_HOMES = {
    "AUDIT_LIMIT": "ledger",
    "AuditPage": "status",
    "ConstraintBlockError": "constraints",
    "Drive": "service",
    "Exclusions": "service",
    "GraftAborted": "constraints",
    "GraftError": "lifecycle",
    "GraftService": "service",
    "Handoff": "handoff",
    "HandoffNotFound": "lifecycle",
    "Handoffs": "service",
    "Panel": "wire",
    "ReadBackError": "readback",
    "ReadResult": "wire",
    "Recovery": "service",
    "SearchResult": "wire",
    "SessionPart": "wire",
    "SliceResult": "service",
    "State": "lifecycle",
    "Txn": "lifecycle",
    "WatermarkStatus": "service",
    "transcript_sources": "service",
}
__all__ = [
    "AUDIT_LIMIT",
    "AuditPage",
    "ConstraintBlockError",
    "Drive",
    "Exclusions",
    "GraftAborted",
    "GraftError",
    "GraftService",
    "Handoff",
    "HandoffNotFound",
    "Handoffs",
    "Panel",
    "ReadBackError",
    "ReadResult",
    "Recovery",
    "SearchResult",
    "SessionPart",
    "SliceResult",
    "State",
    "Txn",
    "WatermarkStatus",
    "transcript_sources",
]


__getattr__, __dir__ = lazy_names(globals(), _HOMES)
