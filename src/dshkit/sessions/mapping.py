"""What an adapter's mapping of log lines to events keeps in its state, and the marks it puts
on events, importable on the hot path (graft's fold maps a log's new lines with an adapter's
own mapping where the harness gives one: `harnesses.EventLog.mapping`).

`events` and `harness` re-export these names, where the session layer has always found them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from typing import Any

# The source kind of a prompt another agent wrote (a sub-agent's task, a side transcript).
AGENT_MESSAGE = "agent-message"
# The key of an adapter's state that is true once the session is known to be a sub-agent's
# (from its header): the scanner keeps it with the file's cursor.
SUBAGENT = "subagent"


def remember(state: dict[str, Any], key: str, value: str, keep: int = 64) -> bool:
    """Record `value` in a bounded recent-ids list in `state`; False when it was already there."""
    recent: list[str] = state.setdefault(key, [])
    if value in recent:
        return False
    recent.append(value)
    del recent[:-keep]
    return True


def turn_step(state: dict[str, Any]) -> dict[str, int]:
    """The `{turn, step}` a mapped event belongs to, as tracked in the adapter's state."""
    return {"turn": state.get("turn", 0), "step": state.get("step", 0)}
