"""The delivery gate on PostToolUse: a web deliverable the agent just wrote is judged in
headless Chromium, and a hard failure goes back to the agent as a rework instruction (the
protocol's block-with-reason), recorded as delivered only once the answer was written."""

from __future__ import annotations

from typing import Any

from ..gate.rework import review_written, written_deliverables
from .protocol import HookInput


def on_write(hook: HookInput) -> dict[str, Any] | None:
    cwd = hook.payload.get("cwd")
    files = written_deliverables(
        hook.payload.get("tool_input"), cwd if isinstance(cwd, str) else None
    )
    if not files:
        return None
    rework = review_written(hook.state_dir, files, open_store=hook.open_store)
    if rework is None:
        return None
    return {"decision": "block", "reason": rework.instruction, "commit": rework.commit}
