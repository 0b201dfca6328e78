"""The delivery gate on the hooks: a written web deliverable is judged in the background
(PostToolUse of a write tool, or of a shell command that changed one), and a hard failure goes
back to the agent when it tries to end its turn (Stop: the protocol's block-with-reason, where
the harness's Stop supports it) or with its next prompt (context), recorded as delivered only
once the answer was written."""

from __future__ import annotations

import time

from ..harnesses import stop_support
from .protocol import STORE_BUSY_TIMEOUT_S, HookInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from ..gate import GateService

# How long Stop waits for verdicts still being judged: within the handler's budget in
# `hookspec`, with room to answer and to record the delivery.
STOP_WAIT_S = 15.0


def _gate(hook: HookInput) -> GateService:
    from ..gate import GateService

    return GateService(hook.state_dir, busy_timeout=STORE_BUSY_TIMEOUT_S)


def _cwd(hook: HookInput) -> str | None:
    cwd = hook.payload.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def on_write(hook: HookInput) -> dict[str, Any] | None:
    if hook.session_id:
        _gate(hook).written(
            (hook.harness, hook.session_id), hook.payload.get("tool_input"), _cwd(hook)
        )
    return None  # the verdict comes later: nothing to say now


def on_command(hook: HookInput) -> dict[str, Any] | None:
    if hook.session_id:
        _gate(hook).commanded((hook.harness, hook.session_id), _cwd(hook))
    return None


def on_prompt(hook: HookInput) -> dict[str, Any] | None:
    if not hook.session_id:
        return None
    rework = _gate(hook).at_prompt((hook.harness, hook.session_id))
    if rework is None:
        return None
    return {"additionalContext": rework.instruction, "commit": rework.commit}


def on_stop(hook: HookInput) -> dict[str, Any] | None:
    if not hook.session_id:
        return None
    support = stop_support(hook.harness)
    # Going on because of a Stop hook already: blocking again could loop (the harness's own
    # flag where it really sets it; the once-per-content ledger guards the others).
    again = support.loop_flag and hook.payload.get("stop_hook_active") is True
    rework = _gate(hook).at_stop(
        (hook.harness, hook.session_id),
        _cwd(hook),
        time.monotonic() + STOP_WAIT_S,
        may_block=support.blocks and not again,
    )
    if rework is None:
        return None
    return {"decision": "block", "reason": rework.instruction, "commit": rework.commit}
