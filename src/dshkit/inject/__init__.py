"""What the hooks inject into a session, previewed (`service`): each event's handlers, the
capabilities' hook faces, run dry to show byte for byte what it would bring without
delivering anything.

`InjectService` is the face the surfaces call (`dshkit inject show`, `GET /api/inject/`). The
names below are imported on first use.
"""

from __future__ import annotations

from ..lazy import lazy_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:  # the real names, for type checkers
    from .service import EventPreview, InjectPreview, InjectService, PartPreview

_HOMES = {
    "EventPreview": "service",
    "InjectPreview": "service",
    "InjectService": "service",
    "PartPreview": "service",
}
__all__ = ["EventPreview", "InjectPreview", "InjectService", "PartPreview"]


__getattr__, __dir__ = lazy_names(globals(), _HOMES)
