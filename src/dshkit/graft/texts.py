"""What the watermark tells the model in the warning band: the nudge, its escalation, and the
session's own id the handoff tools take; and the plan-first nudge, once per session.

Here, apart from the decisions, because the hot path says them too: a call the fold measures
in the band is answered with these words before the store is opened (`fold.verdict`), and the
full check that runs after it must give the same bytes
(docs/design/graft.md#a-call-the-room-hint-cannot-answer-is-folded). Imports nothing.
"""

from __future__ import annotations

# A long todo list without phases: plan them first (once per session).
PLAN = (
    "[系统提示] 请先分析当前任务，制定阶段节点（Phase），并明确每个节点的完成标准，"
    "使用待办工具保存（每项以“阶段 N:”开头）。"
)


def nudge(ratio: float) -> str:
    """The warning: the model decides whether to hand off now."""
    return (
        f"[系统提示] 当前上下文水位已达 {ratio:.0%}。如果你觉得当前任务需要跨阶段进行，"
        "请先调用 graft_prepare 查看交接单；确认无误后，调用 graft_slice_and_inject 进行自我切片。"
    )


def escalation(ratio: float) -> str:
    """The warning ignored for a step: hand off now, or be cut."""
    return (
        f"[系统提示] 水位告急：上下文水位已达 {ratio:.0%}，预警后你仍在继续调用工具。"
        "请立刻调用 graft_prepare 和 graft_slice_and_inject 切走，否则将被强制切断。"
    )


def naming(text: str, session_id: str) -> str:
    """A nudge or an escalation with the session's own id, which the handoff tools take: the
    tools' server cannot tell which of the sessions working in one directory calls it."""
    return (
        f"{text}\n调用 graft_prepare 和 graft_slice_and_inject 时请传 "
        f'sessionId="{session_id}"（这是本会话的 id），不要省略，以免交接到别的会话。'
    )
