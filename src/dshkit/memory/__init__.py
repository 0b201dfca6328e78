"""Memory: what every session learned, kept per workspace, bitemporal and poison-checked, and
given to the next session there (facts, experiences, negative paths, skill drafts).

`MemoryService` is the face the surfaces call; the hooks use `inject` and `workspace`
directly (the names below are imported on first use, so the hook path loads no more than
it runs).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:  # the real names, for type checkers
    from typing import Any

    from .records import KINDS, Record
    from .service import Accepted, HarvestReport, Injection, MemoryService, RecordList, RecordView
    from .workspace import Workspace

_HOMES = {
    "KINDS": "records",
    "Record": "records",
    "Accepted": "service",
    "HarvestReport": "service",
    "Injection": "service",
    "MemoryService": "service",
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
    "Record",
    "RecordList",
    "RecordView",
    "Workspace",
]


def __getattr__(name: str) -> Any:
    import importlib

    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value
    return value
