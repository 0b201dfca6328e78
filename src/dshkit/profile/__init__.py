"""prompt-adapt: the friction signals counted from sessions, and the user profile built on them.

`ProfileService` (`service`) is the one face every surface calls: the profile's generation,
what the agent is told, the person's choices, and the signals. The names below are imported
on first use: the hooks read `state` on the agent's path and do not pay for the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:  # the real names, for type checkers
    from .generate import HISTORY_LIMIT, Generation
    from .model import CATEGORY_LABELS
    from .service import (
        ConsoleState,
        Copied,
        DeltaSize,
        EffectiveProfile,
        GenerationProgress,
        ProfileService,
        ProfileShow,
        ProfileStatus,
        ProfileVersions,
        ScanProgress,
    )
    from .signal_views import HITS_LIMIT, SignalHits, SignalTotals
    from .signals import DETAILS, SIGNALS, SignalConfig, SignalsReport
    from .state import (
        INJECT_LIMIT,
        MAX_CUSTOM_TEXT,
        MAX_EXTRA_TEXT,
        Mode,
        TextRejected,
        TextTooLong,
    )

_HOMES = {
    "CATEGORY_LABELS": "model",
    "ConsoleState": "service",
    "Copied": "service",
    "DeltaSize": "service",
    "EffectiveProfile": "service",
    "GenerationProgress": "service",
    "ProfileService": "service",
    "ProfileShow": "service",
    "ProfileStatus": "service",
    "ProfileVersions": "service",
    "ScanProgress": "service",
    "Generation": "generate",
    "HISTORY_LIMIT": "generate",
    "HITS_LIMIT": "signal_views",
    "SignalHits": "signal_views",
    "SignalTotals": "signal_views",
    "DETAILS": "signals",
    "SIGNALS": "signals",
    "SignalConfig": "signals",
    "SignalsReport": "signals",
    "INJECT_LIMIT": "state",
    "MAX_CUSTOM_TEXT": "state",
    "MAX_EXTRA_TEXT": "state",
    "Mode": "state",
    "TextRejected": "state",
    "TextTooLong": "state",
}
__all__ = [
    "CATEGORY_LABELS",
    "DETAILS",
    "HISTORY_LIMIT",
    "HITS_LIMIT",
    "INJECT_LIMIT",
    "MAX_CUSTOM_TEXT",
    "MAX_EXTRA_TEXT",
    "SIGNALS",
    "ConsoleState",
    "Copied",
    "DeltaSize",
    "EffectiveProfile",
    "Generation",
    "GenerationProgress",
    "Mode",
    "ProfileService",
    "ProfileShow",
    "ProfileStatus",
    "ProfileVersions",
    "ScanProgress",
    "SignalConfig",
    "SignalHits",
    "SignalTotals",
    "SignalsReport",
    "TextRejected",
    "TextTooLong",
]


__getattr__, __dir__ = lazy_names(globals(), _HOMES)
