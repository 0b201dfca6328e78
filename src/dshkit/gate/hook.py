"""The delivery gate on the hooks, the gate's hook face: a written web deliverable is judged
in the background (PostToolUse of a write tool, or of a shell command that changed one), and a
hard failure goes back to the agent when it tries to end its turn (Stop: the protocol's
block-with-reason, where the harness's Stop supports it) or with its next prompt (context),
recorded as delivered only once the answer was written."""

from __future__ import annotations

import time

from ..harnesses import stop_support
from ..hookio import STORE_BUSY_TIMEOUT_S, Answer, Call

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from ..hookio import Commit
    from ..store import Store
    from .rework import Rework
    from .service import GateService

# How long Stop waits for verdicts still being judged: within the handler's budget in
# `hookspec`, with room to answer and to record the delivery.
STOP_WAIT_S = 15.0


def _gate(call: Call) -> GateService:
    from .service import GateService

    return GateService(call.state_dir, busy_timeout=STORE_BUSY_TIMEOUT_S)


def _cwd(call: Call) -> str | None:
    cwd = call.payload.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def on_write(call: Call) -> Answer | None:
    if call.session_id:
        _gate(call).written(
            (call.harness, call.session_id), call.payload.get("tool_input"), _cwd(call)
        )
    return None  # the verdict comes later: nothing to say now


def on_command(call: Call) -> Answer | None:
    if call.session_id:
        _gate(call).commanded((call.harness, call.session_id), _cwd(call))
    return None


def on_prompt(call: Call) -> Answer | None:
    if not call.session_id:
        return None
    rework = _gate(call).at_prompt((call.harness, call.session_id))
    if rework is None:
        return None
    return Answer("gate", rework.instruction, commit=_recorded(rework))


def on_stop(call: Call) -> Answer | None:
    if not call.session_id:
        return None
    support = stop_support(call.harness)
    # Going on because of a Stop hook already: blocking again could loop (the harness's own
    # flag where it really sets it; the once-per-content ledger guards the others).
    again = support.loop_flag and call.payload.get("stop_hook_active") is True
    rework = _gate(call).at_stop(
        (call.harness, call.session_id),
        _cwd(call),
        time.monotonic() + STOP_WAIT_S,
        may_block=support.blocks and not again,
    )
    if rework is None:
        return None
    return Answer("gate", decision=("block", rework.instruction), commit=_recorded(rework))


def _recorded(rework: Rework) -> Commit:
    """The rework's delivery recorded (in the gate's own store) once it was written."""

    def commit(store: Store) -> None:
        rework.commit()

    return commit
