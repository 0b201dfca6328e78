"""Memory: what every session learned, kept per workspace, bitemporal and poison-checked, and
given to the next session there (facts, experiences, negative paths, skill drafts).

`MemoryService` is the face the surfaces call; the hooks use `inject` and `workspace`
directly (the names below are imported on first use, so the hook path loads no more than
it runs).
"""

from __future__ import annotations

from ..lazy import lazy_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:  # the real names, for type checkers
    from .records import KINDS, Record
    from .service import (
        Accepted,
        HarvestReport,
        Injection,
        MemoryService,
        MemoryStatus,
        RecordList,
        RecordView,
        Rekeyed,
    )
    from .workspace import Workspace

_HOMES = {
    "KINDS": "records",
    "Record": "records",
    "Accepted": "service",
    "HarvestReport": "service",
    "Injection": "service",
    "MemoryService": "service",
    "MemoryStatus": "service",
    "Rekeyed": "service",
    "RecordList": "service",
    "RecordView": "service",
    "Workspace": "workspace",
}
__all__ = [
    "KINDS",
    "Accepted",
    "HarvestReport",
    "Injection",
    "MemoryService",
    "MemoryStatus",
    "Record",
    "RecordList",
    "RecordView",
    "Rekeyed",
    "Workspace",
]


__getattr__, __dir__ = lazy_names(globals(), _HOMES)
