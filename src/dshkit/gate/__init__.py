"""The delivery gate: a web deliverable judged in headless Chromium, its verdict stored with
the measured evidence, and a hard failure sent back to the agent for rework.

`GateService` (`service`) is the one face every surface calls. The names below are imported
on first use, like the rest of the package's.
"""

from __future__ import annotations

from ..lazy import lazy_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (its quiet checks' path)
if TYPE_CHECKING:  # the real names, for type checkers
    from .browser import BrowserError
    from .judge import MAX_BUDGET_S, MIN_BUDGET_S, OK, GateInputError, Verdict
    from .rework import Rework
    from .service import VERDICTS_LIMIT, GateService, Verdicts

_HOMES = {
    "BrowserError": "browser",
    "GateInputError": "judge",
    "MAX_BUDGET_S": "judge",
    "MIN_BUDGET_S": "judge",
    "OK": "judge",
    "Verdict": "judge",
    "Rework": "rework",
    "GateService": "service",
    "VERDICTS_LIMIT": "service",
    "Verdicts": "service",
}
__all__ = [
    "MAX_BUDGET_S",
    "MIN_BUDGET_S",
    "OK",
    "VERDICTS_LIMIT",
    "BrowserError",
    "GateInputError",
    "GateService",
    "Rework",
    "Verdict",
    "Verdicts",
]


__getattr__, __dir__ = lazy_names(globals(), _HOMES)
