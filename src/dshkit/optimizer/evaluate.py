"""The live verification table: a case file run against the configured model
(docs/design/optimizer.md#a-live-verification-table).

Every case goes through every tier that calls the model; each answer is measured by the same
gates a run records: is there an ask section, are its items within the tier's budget, does a
clear request get "无", how long is it against the raw words. It calls the real model, so it
is run by hand (`dshkit optimize eval`), never by the tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..llm import LLMConfig
from ..store import Store
from .gates import is_ask_heading, is_nothing_line
from .pipeline import optimize
from .settings import settings_for
from .strategies import NOTHINGS, PASSTHROUGH_TIER, TIERS
from .wire import EvalRow

MAX_CASES = 200


@dataclass(frozen=True)
class Evaluation:
    """The live verification table: one row per case and tier, in case order."""

    rows: list[EvalRow]

    def as_json(self) -> list[EvalRow]:
        return self.rows


def load_cases(path: Path) -> list[dict[str, Any]]:
    """JSON lines `{"raw": "…", "clear": true|false}`; ValueError names the bad line."""
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number} is not JSON: {exc}") from None
        if not isinstance(case, dict) or not isinstance(case.get("raw"), str) or not case["raw"]:
            raise ValueError(f'{path}:{number}: expected {{"raw": "…", "clear": true|false}}')
        if not isinstance(case.get("clear", False), bool):
            raise ValueError(f"{path}:{number}: clear must be true or false")
        cases.append({"raw": case["raw"], "clear": case.get("clear", False)})
    if not cases:
        raise ValueError(f"{path} holds no cases")
    if len(cases) > MAX_CASES:
        raise ValueError(f"{path} holds {len(cases)} cases; the limit is {MAX_CASES}")
    return cases


def evaluate(
    store: Store,
    cases: list[dict[str, Any]],
    llm: LLMConfig,
    *,
    cwd: str,
    progress: Callable[[str, str], None] | None = None,
) -> list[EvalRow]:
    """One row per case and tier: the gates of the answer and whether a clear case said 无."""
    rows: list[EvalRow] = []
    for case in cases:
        for tier in (t for t in TIERS if t != PASSTHROUGH_TIER):
            settings = settings_for(store, None, {"tier": tier, "turns": 0, "full": False})
            run = optimize(store, case["raw"], settings, llm, cwd=cwd, progress=progress)
            said_nothing = any(_says_nothing(line) for line in run.output.splitlines())
            rows.append(
                {
                    "raw": case["raw"],
                    "tier": tier,
                    "runId": run.id,
                    "fallback": run.fallback,
                    "askGate": run.ask_gate,
                    "lengthGate": run.length_gate,
                    "nothingOnClear": said_nothing if case["clear"] else None,
                }
            )
    return rows


def _says_nothing(line: str) -> bool:
    """ "无" (or "None") under the ask heading, or on the heading's own line."""
    return is_nothing_line(line) or (
        is_ask_heading(line) and line.rstrip(" 。.*").casefold().endswith(_NOTHINGS)
    )


_NOTHINGS = tuple(nothing.casefold() for nothing in NOTHINGS)
