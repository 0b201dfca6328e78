"""The delivery gate on PostToolUse: a web deliverable the agent just wrote is judged in
headless Chromium, and a hard failure goes back to the agent as a rework instruction (the
protocol's block-with-reason), recorded as delivered only once the answer was written."""

from __future__ import annotations

from typing import Any

from ..gate import GateService
from .protocol import STORE_BUSY_TIMEOUT_S, HookInput


def on_write(hook: HookInput) -> dict[str, Any] | None:
    cwd = hook.payload.get("cwd")
    gate = GateService(hook.state_dir, busy_timeout=STORE_BUSY_TIMEOUT_S)
    rework = gate.review(hook.payload.get("tool_input"), cwd if isinstance(cwd, str) else None)
    if rework is None:
        return None
    return {"decision": "block", "reason": rework.instruction, "commit": rework.commit}
