"""The bounded tool loop: model → tool calls → tool results → model, until it answers.

Bounds, all stated to the model when they bite and never silent: `max_steps` model calls in
all (the last one may not call tools, so the loop ends with an answer attempt), at most
`max_result_bytes` of one tool's output shown (a longer one is cut at a character boundary and
says so, with both sizes), and `budget_bytes` of all tools' output together (a result that
crosses it is cut the same way; calls after it are not run and are told the budget is spent,
and the next call must answer). Unreadable arguments, unknown tools and a tool that raises
become error results the model reads, not exceptions. One deadline covers the whole loop.
Every model call is the client's own (each recorded in `llm_calls`); nothing else calls it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from .client import Completion, LLMClient, Message, ToolCall

# A tool's implementation: (function name, parsed arguments) -> the text the model reads.
Dispatcher = Callable[[str, dict[str, Any]], str]


@dataclass(frozen=True)
class ToolLimits:
    max_steps: int = 8  # model calls in all; the last may not call tools
    max_result_bytes: int = 16_000  # UTF-8 bytes of one tool's output shown to the model
    budget_bytes: int = 100_000  # UTF-8 bytes of all tools' output shown, together

    def __post_init__(self) -> None:
        for name, least in (("max_steps", 2), ("max_result_bytes", 1), ("budget_bytes", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"ToolLimits.{name} must be an integer ≥ {least}, got {value!r}")


@dataclass
class ToolStep:
    """One tool call the model asked for, and what became of it."""

    step: int  # the model call (1-based) that asked for it
    call_id: str
    name: str
    arguments: Any  # the parsed object, or the raw text when it was not a JSON object
    result_bytes: int  # UTF-8 bytes the tool returned (0 when it did not run)
    shown_bytes: int  # of those, the bytes the model was shown
    truncated: bool
    error: str | None = None  # why the tool failed or did not run


@dataclass
class ToolLoopResult:
    """How a tool loop ended: `outcome` "ok" is an answer without tool calls."""

    outcome: str  # "ok", a failed call's outcome, "deadline", "max-steps" or "budget-spent"
    error: str | None
    completions: list[Completion]  # every model call, in order
    steps: list[ToolStep] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)  # the conversation, answer included

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @property
    def completion(self) -> Completion:
        """The last model call: the answer when `ok`."""
        return self.completions[-1]


def run_tool_loop(
    client: LLMClient,
    messages: Sequence[Message],
    tools: Sequence[dict[str, Any]],
    dispatch: Dispatcher,
    *,
    limits: ToolLimits | None = None,
    purpose: str = "",
    deadline_s: float | None = None,
    on_delta: Callable[[str], None] | None = None,
    abort: threading.Event | None = None,
) -> ToolLoopResult:
    """Call the model with `tools` until it answers, running the tools it asks for.

    `deadline_s` (default: the client's `deadline_s`) bounds the whole loop, tool runs
    included; each model call gets what is left of it.
    """
    limits = limits or ToolLimits()
    names = _tool_names(tools)
    total = client.config.deadline_s if deadline_s is None else deadline_s
    deadline_at = time.monotonic() + total
    conversation = list(messages)
    result = ToolLoopResult("ok", None, [], messages=conversation)
    budget_left = limits.budget_bytes
    while True:
        remaining = deadline_at - time.monotonic()
        if remaining <= 0:
            result.outcome = "deadline"
            result.error = (
                f"the tool loop passed its deadline of {total:g} s after "
                f"{len(result.completions)} model calls"
            )
            return result
        step = len(result.completions) + 1
        forced = _forced(step, limits, budget_left)
        if forced is not None:
            conversation.append({"role": "user", "content": _FINAL_ANSWER[forced]})
        completion = client.complete(
            conversation,
            purpose=purpose,
            tools=tools,
            tool_choice="none" if forced else None,
            on_delta=on_delta,
            abort=abort,
            deadline_s=remaining,
        )
        result.completions.append(completion)
        if not completion.ok:
            result.outcome, result.error = completion.outcome, completion.error
            return result
        if forced is not None and completion.tool_calls:
            for call in completion.tool_calls:
                result.steps.append(
                    ToolStep(
                        step, call.id, call.name, call.arguments, 0, 0, False, "not run: no tools"
                    )
                )
            result.outcome = forced
            result.error = (
                f"the model asked for tools again on call {step}, which had to answer "
                f"({'no steps left' if forced == 'max-steps' else 'the tool budget is spent'})"
            )
            return result
        conversation.append(completion.message())
        if not completion.tool_calls:
            return result
        for call in completion.tool_calls:
            entry, content = _run(call, step, names, dispatch, limits, budget_left)
            budget_left -= entry.shown_bytes
            result.steps.append(entry)
            conversation.append({"role": "tool", "tool_call_id": call.id, "content": content})


# What the model is told when its next call must answer (the loop's reason as the key).
_FINAL_ANSWER = {
    "max-steps": "（工具调用轮数已用完。请不要再调用工具，根据已有信息直接给出最终答案。）",
    "budget-spent": "（工具结果总预算已用完。请不要再调用工具，根据已有信息直接给出最终答案。）",
}


def _forced(step: int, limits: ToolLimits, budget_left: int) -> str | None:
    """Why call `step` must answer without tools, if it must."""
    if step >= limits.max_steps:
        return "max-steps"
    if budget_left <= 0:
        return "budget-spent"
    return None


def _tool_names(tools: Sequence[dict[str, Any]]) -> set[str]:
    names = set()
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or tool.get("type") != "function":
            raise ValueError(f'tools[{i}] is not {{"type": "function", "function": {{…}}}}')
        if not isinstance(function.get("name"), str) or not function["name"]:
            raise ValueError(f"tools[{i}] has no function name")
        names.add(function["name"])
    if not names:
        raise ValueError("tools is empty: a tool loop needs at least one tool")
    return names


def _run(
    call: ToolCall,
    step: int,
    names: set[str],
    dispatch: Dispatcher,
    limits: ToolLimits,
    budget_left: int,
) -> tuple[ToolStep, str]:
    """Run one tool call within the limits: its log entry and the text the model reads."""
    entry = ToolStep(step, call.id, call.name, call.arguments, 0, 0, False)
    try:
        arguments = orjson.loads(call.arguments) if call.arguments.strip() else {}
    except orjson.JSONDecodeError as exc:
        arguments, problem = None, str(exc)
    else:
        problem = f"got {type(arguments).__name__}"
    if not isinstance(arguments, dict):
        entry.error = f"arguments are not a JSON object ({problem})"
        return entry, f"[错误：参数不是合法的 JSON 对象（{problem}）。请修正参数后重试。]"
    entry.arguments = arguments
    if call.name not in names:
        entry.error = f"unknown tool {call.name!r}"
        known = "、".join(sorted(names))
        return entry, f"[错误：没有名为 {call.name!r} 的工具；可用的工具：{known}。]"
    if budget_left <= 0:
        entry.error = "not run: the tool budget is spent"
        return entry, (
            f"[未执行：工具结果总预算 {limits.budget_bytes} 字节已用完。"
            "请不要再调用工具，根据已有信息给出最终答案。]"
        )
    try:
        output = dispatch(call.name, arguments)
    except Exception as exc:  # a failing tool is the model's information, not the loop's end
        entry.error = f"the tool raised {type(exc).__name__}: {exc}"
        return entry, f"[错误：工具执行失败：{type(exc).__name__}: {exc}]"
    if not isinstance(output, str):
        entry.error = f"the tool returned {type(output).__name__}, not text"
        return entry, "[错误：工具没有返回文本。]"
    data = output.encode()
    entry.result_bytes = len(data)
    cap = min(limits.max_result_bytes, budget_left)
    if len(data) <= cap:
        entry.shown_bytes = len(data)
        return entry, output
    kept = data[:cap].decode("utf-8", "ignore")  # never half a character
    entry.shown_bytes, entry.truncated = len(kept.encode()), True
    if cap == limits.max_result_bytes:
        why = f"超过单条结果上限 {limits.max_result_bytes} 字节"
    else:
        why = f"超过工具结果总预算的剩余 {budget_left} 字节，预算已用完"
    return entry, (
        f"{kept}\n[已截断：该结果共 {len(data)} 字节，{why}，只给出了前 {entry.shown_bytes} 字节。]"
    )
