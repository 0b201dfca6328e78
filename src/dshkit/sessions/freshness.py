"""How fresh a use case wants the store before it reads sessions: one explicit argument.

Every use case that reads sessions says how fresh it needs them, instead of each surface
deciding whether to scan: `NONE` reads what the last scan stored (read-only views, the
console), `TRY` scans what is new unless another process is scanning right now (the hooks:
the agent is waiting, and that scan will store the same), `WAIT` scans and waits for a scan
already running (commands a person or the model asked for, which must see the newest turn).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from ..store import LeaseBusy, Store
from .scanner import Progress, Scanner, ScanReport, Source


class Refresh(enum.Enum):
    NONE = "none"
    TRY = "try"
    WAIT = "wait"


def refresh(
    store: Store,
    sources: Sequence[Source],
    mode: Refresh,
    *,
    progress: Progress | None = None,
    wait: float = 30.0,
) -> ScanReport | None:
    """Scan `sources` as `mode` asks (telling `progress` as it reads); the report, or None
    when nothing was scanned. `WAIT` raises LeaseBusy when another scan holds the store past
    `wait` seconds."""
    if mode is Refresh.NONE or not sources:
        return None
    if mode is Refresh.TRY:
        try:
            return Scanner(store).scan(list(sources), progress, wait=0)
        except LeaseBusy:
            return None
    return Scanner(store).scan(list(sources), progress, wait=wait)
