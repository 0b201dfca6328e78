"""Handlers that misbehave on purpose, for the hook tests (named via DSHKIT_HOOK_HANDLERS)."""

from __future__ import annotations

import time
from typing import Any


def crash(hook: Any) -> None:
    raise RuntimeError("forced crash")


def stall(hook: Any) -> None:
    time.sleep(30)


def speak(hook: Any) -> dict[str, str]:
    return {"additionalContext": "from the extra handler"}
