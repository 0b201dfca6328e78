"""The task board: a handoff's semantic state as the card the new session reads first.

One renderer, one format (docs/design/graft.md#one-task-board): the original request; four
columns in reading order
— ✅ done, 🔄 in progress, ⏭️ to do, ⚠️ the one blocker; the files to reuse; the anchor (turn,
boundary seq, how many pointers can be read back, the source session); the read-back tools by
name, since a seq is useless without them; the slimming disclosure with true counts; and the
closing rule. An empty column says `- 无`: a missing column reads as "unknown", an empty one
as "nothing yet", and those are different instructions. The card fits its character budget;
what had to go is named in a line of its own, never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from .constraints import NONE_ITEM as NONE
from .semantic import REQUEST_LABEL, Item, SemanticState

TITLE = "## 交接任务看板（第一轮只需读这一块）"
DONE, IN_PROGRESS, TODO = "**✅ 已完成**", "**🔄 进行中**", "**⏭️ 待开始**"
# The rule closing the card, repeated in the ignition prompt: a one-time message expires with
# the first turn, the card is what the new session rereads
# (docs/design/graft.md#one-task-board).
CLOSING_RULE = (
    "旧会话的执行记录和其中的临时报错不必理会，它们只作为回读证据保留；"
    "请先完成「🔄 进行中」，再按顺序执行「⏭️ 待开始」，不要复述交接过程，也不要重做已完成的部分。"
)


@dataclass(frozen=True, slots=True)
class Card:
    """The rendered board and what its budget made it leave out (counts per column)."""

    text: str
    budget: int
    omitted: dict[str, int]

    @property
    def cut(self) -> bool:
        return any(self.omitted.values())


def _items(items: list[Item]) -> list[str]:
    if not items:
        return [NONE]
    return [
        f"- {item.text}" + (f"（seq={item.seq}）" if item.seq is not None else "") for item in items
    ]


def _render(
    state: SemanticState,
    source_session_id: str,
    done: list[Item],
    in_progress: list[Item],
    todo: list[Item],
    artifacts: list[Item],
    omitted: dict[str, int],
    budget: int,
    notes: tuple[str, ...],
) -> str:
    request = state.request.text if state.request is not None else "（会话里没有找到人的原始要求）"
    lines = [TITLE, f"{REQUEST_LABEL}{request}", "", DONE, *_items(done), ""]
    lines += [IN_PROGRESS, *_items(in_progress), "", TODO, *_items(todo), ""]
    if state.blocker is not None:
        lines.append(
            f"**⚠️ 唯一未决阻塞**：{state.blocker.text}"
            f"（原文 seq={state.blocker.seq}；只有后续工作确实卡在这里时才去回读）"
        )
    else:
        lines.append("**⚠️ 未决阻塞**：无")
    if artifacts:
        names = "、".join(item.text for item in artifacts)
        lines.append(f"**已产出文件**：{names}（后续直接读取复用，不要重新生成）")
    lines.extend(notes)
    turn = f"第 {state.turn} 轮已结束" if state.turn else "尚无结束的轮次"
    lines.append(
        f"**停泊点**：{turn} · 边界 seq={state.boundary_seq} · "
        f"可回读指针 {state.pointers()} 处 · sourceSessionId={source_session_id}"
    )
    lines.append(
        f'需要原文时调用 graft_read_result(sourceSessionId="{source_session_id}", seq=…)；'
        f'不知道 seq 时先用 graft_search_history(sourceSessionId="{source_session_id}", '
        "query=…) 搜索再读。不要凭印象猜。"
    )
    lines.append(_disclosure(state))
    if any(omitted.values()):
        parts = [f"{column} {count} 条" for column, count in omitted.items() if count]
        lines.append(
            f"**看板已截断**：为装进 {budget} 字符，省略了{'、'.join(parts)}"
            "（原文都在旧会话里，可用上面两个工具回读）"
        )
    lines += ["", CLOSING_RULE]
    return "\n".join(lines)


def _disclosure(state: SemanticState) -> str:
    slim = state.slimming
    parts = [
        f"丢弃 {slim.resolved_errors} 条已被后续成功覆盖的报错",
        f"{slim.error_bodies} 段报错正文只保留一行摘要",
        f"{slim.narration_chars} 字符中间叙述",
    ]
    if slim.unresolved_errors:
        parts.insert(
            1,
            f"另有 {slim.unresolved_errors} 条更早的报错之后没有任何成功，未计入已覆盖"
            "（只保留最新一条为阻塞，原文可回读）",
        )
    if slim.noise_paragraphs or slim.noise_tokens or slim.outputs_folded:
        parts.append(
            f"过滤宿主环境噪音 {slim.noise_paragraphs} 段、路径 {slim.noise_tokens} 处、"
            f"折叠整盘输出 {slim.outputs_folded} 段"
        )
    return "**已按语义瘦身**：" + "、".join(parts)


def render_card(
    state: SemanticState,
    source_session_id: str,
    budget: int,
    notes: tuple[str, ...] = (),
) -> Card:
    """The board within `budget` characters: when it does not fit, the oldest results go
    first, then the tail of the to-do list, then files to reuse, then the tail of what is in
    progress, each count named on the card. `notes` are lines that must stay (e.g. the
    forced-cut mark). ValueError when even the board's fixed lines exceed the budget."""
    done, in_progress = list(state.done), list(state.in_progress)
    todo, artifacts = list(state.todo), list(state.artifacts)
    omitted = {"已完成": 0, "待开始": 0, "已产出文件": 0, "进行中": 0}
    columns = (
        ("已完成", done),
        ("待开始", todo),
        ("已产出文件", artifacts),
        ("进行中", in_progress),
    )
    while True:
        text = _render(
            state, source_session_id, done, in_progress, todo, artifacts, omitted, budget, notes
        )
        if len(text) <= budget:
            return Card(text, budget, omitted)
        for name, column in columns:
            if column:
                column.pop()
                omitted[name] += 1
                break
        else:
            raise ValueError(
                f"[graft] card_chars = {budget} cannot hold even the board's fixed lines "
                f"({len(text)} characters): raise it"
            )
