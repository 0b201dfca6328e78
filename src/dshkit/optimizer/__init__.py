"""The evidence-driven prompt optimizer: a person's raw words become one instruction for the
working agent that stands on evidence, or asks first where facts cannot be known
(docs/design/optimizer.md#the-instruction-stands-on-evidence).

Surfaces use it through `OptimizerService` and its result types, named here. They are
imported on first use: the prompt hook, with the optimizer off, loads only what reading the
settings takes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:  # the real names, for type checkers
    from .evaluate import Evaluation
    from .runs import OUTCOMES, PASSED_PREFIX, Run, RunList, RunNotFound
    from .service import JOB_KIND, OptimizerService
    from .settings import Settings
    from .strategies import FORMS, TIERS
    from .wire import EvalRow, TierRate

_HOMES = {
    "EvalRow": "wire",
    "Evaluation": "evaluate",
    "OUTCOMES": "runs",
    "PASSED_PREFIX": "runs",
    "Run": "runs",
    "RunList": "runs",
    "RunNotFound": "runs",
    "TierRate": "wire",
    "JOB_KIND": "service",
    "OptimizerService": "service",
    "Settings": "settings",
    "FORMS": "strategies",
    "TIERS": "strategies",
}
__all__ = [
    "FORMS",
    "JOB_KIND",
    "OUTCOMES",
    "PASSED_PREFIX",
    "TIERS",
    "EvalRow",
    "Evaluation",
    "OptimizerService",
    "Run",
    "RunList",
    "RunNotFound",
    "Settings",
    "TierRate",
]


__getattr__, __dir__ = lazy_names(globals(), _HOMES)
