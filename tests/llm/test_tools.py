"""The bounded tool loop against the real fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.llm import LLMClient, LLMConfig, ToolLimits, run_tool_loop
from dshkit.store import Store

from ..support.fakes import FakeOpenAI, Reply, calls

MESSAGES = [{"role": "system", "content": "你是优化器"}, {"role": "user", "content": "看看 a.py"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": name,
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
    for name in ("read", "grep")
]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def client(fake: FakeOpenAI, store: Store | None = None, **config: Any) -> LLMClient:
    settings = {"base_url": fake.base_url, "api_key": "sk-t", "model": "m1", **config}
    return LLMClient(LLMConfig(**settings), store)


class Files:
    """A dispatcher over a dict of file texts; records what it was asked."""

    def __init__(self, **texts: str) -> None:
        self.texts = texts
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, arguments: dict[str, Any]) -> str:
        self.asked.append((name, arguments))
        if name == "grep":
            raise FileNotFoundError("no index")
        return self.texts[arguments["path"]]


def test_a_tool_call_round_trip(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.replies.extend(
        [
            calls(("read", '{"path": "a.py"}')),
            Reply(deltas=["a.py ", "定义了 f"], usage={"prompt_tokens": 50, "total_tokens": 60}),
        ]
    )
    files = Files(**{"a.py": "def f(): pass\n"})
    streamed: list[str] = []
    with Store(tmp_path) as store, client(fake, store) as llm:
        result = run_tool_loop(
            llm, MESSAGES, TOOLS, files, purpose="optimize", on_delta=streamed.append
        )
        rows = store.db.execute(
            "SELECT purpose, outcome, finish_reason, usage, tool_calls, response FROM llm_calls "
            "ORDER BY id"
        ).fetchall()
    assert (result.outcome, result.error, result.completion.text) == ("ok", None, "a.py 定义了 f")
    assert files.asked == [("read", {"path": "a.py"})] and streamed == ["a.py ", "定义了 f"]
    (step,) = result.steps
    assert (step.step, step.call_id, step.name, step.arguments) == (
        1,
        "call_1_0",
        "read",
        {"path": "a.py"},
    )
    assert (step.result_bytes, step.shown_bytes, step.truncated, step.error) == (
        14,
        14,
        False,
        None,
    )
    first, second = fake.requests
    assert first.body["tools"] == TOOLS and "tool_choice" not in first.body
    assert second.body["messages"] == [
        *MESSAGES,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1_0",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1_0", "content": "def f(): pass\n"},
    ]
    assert result.messages == [*second.body["messages"], result.completion.message()]
    # Every call of the loop is its own row, with its own usage; nothing else called the model.
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("optimize", "ok", "tool_calls"),
        ("optimize", "ok", "stop"),
    ]
    assert [orjson.loads(r[3]) for r in rows] == [
        {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        {"prompt_tokens": 50, "total_tokens": 60},
    ]
    assert orjson.loads(rows[0][4])[0]["function"]["name"] == "read" and rows[1][4] is None
    assert len(result.completions) == 2


def test_max_steps_forces_an_answer_on_the_last_call(fake: FakeOpenAI) -> None:
    fake.replies.extend(
        [calls(("read", '{"path": "a.py"}')), calls(("read", '{"path": "a.py"}')), Reply()]
    )
    with client(fake) as llm:
        result = run_tool_loop(
            llm, MESSAGES, TOOLS, Files(**{"a.py": "x"}), limits=ToolLimits(max_steps=3)
        )
    assert result.ok and len(fake.requests) == 3 and len(result.steps) == 2
    last = fake.requests[2].body
    assert last["tool_choice"] == "none" and last["tools"] == TOOLS
    assert "工具调用轮数已用完" in last["messages"][-1]["content"]
    assert last["messages"][-1]["role"] == "user"
    assert all("tool_choice" not in r.body for r in fake.requests[:2])


def test_a_model_that_still_calls_tools_on_its_last_step_ends_the_loop(fake: FakeOpenAI) -> None:
    fake.replies.extend([calls(("read", '{"path": "a.py"}'))] * 3)
    files = Files(**{"a.py": "x"})
    with client(fake) as llm:
        result = run_tool_loop(llm, MESSAGES, TOOLS, files, limits=ToolLimits(max_steps=2))
    assert result.outcome == "max-steps" and "no steps left" in (result.error or "")
    assert len(fake.requests) == 2 and len(files.asked) == 1  # no hidden third call
    assert [(s.step, s.error) for s in result.steps] == [(1, None), (2, "not run: no tools")]


def test_a_long_result_is_cut_and_the_model_is_told_by_how_much(fake: FakeOpenAI) -> None:
    fake.replies.extend([calls(("read", '{"path": "big"}')), Reply()])
    text = "汉" * 100  # 300 bytes; a cap of 50 lands inside a character
    with client(fake) as llm:
        result = run_tool_loop(
            llm, MESSAGES, TOOLS, Files(big=text), limits=ToolLimits(max_result_bytes=50)
        )
    (step,) = result.steps
    assert (step.result_bytes, step.shown_bytes, step.truncated) == (300, 48, True)
    shown = fake.requests[1].body["messages"][-1]["content"]
    assert shown.startswith("汉" * 16 + "\n[已截断：")
    assert "共 300 字节" in shown and "单条结果上限 50 字节" in shown and "前 48 字节" in shown


def test_the_total_budget_cuts_then_refuses_then_asks_for_the_answer(fake: FakeOpenAI) -> None:
    fake.replies.extend(
        [
            calls(("read", '{"path": "a"}'), ("read", '{"path": "b"}'), ("read", '{"path": "c"}')),
            Reply(deltas=["答案"]),
        ]
    )
    files = Files(a="a" * 60, b="b" * 60, c="c" * 60)
    limits = ToolLimits(max_result_bytes=1000, budget_bytes=100)
    with client(fake) as llm:
        result = run_tool_loop(llm, MESSAGES, TOOLS, files, limits=limits)
    assert result.ok and result.completion.text == "答案"
    assert [(s.result_bytes, s.shown_bytes, s.truncated, s.error) for s in result.steps] == [
        (60, 60, False, None),
        (60, 40, True, None),
        (0, 0, False, "not run: the tool budget is spent"),
    ]
    assert [name for name, _ in files.asked] == ["read", "read"]  # c never ran
    tool_messages = fake.requests[1].body["messages"][3:6]
    assert "总预算的剩余 40 字节" in tool_messages[1]["content"]
    assert "工具结果总预算 100 字节已用完" in tool_messages[2]["content"]
    last = fake.requests[1].body
    assert (
        last["tool_choice"] == "none" and "工具结果总预算已用完" in last["messages"][-1]["content"]
    )


def test_bad_arguments_unknown_tools_and_failing_tools_are_results(fake: FakeOpenAI) -> None:
    fake.replies.extend(
        [
            calls(
                ("read", '{"path": '),
                ("read", "[1, 2]"),
                ("write", '{"path": "a"}'),
                ("grep", '{"path": "a"}'),
                ("read", ""),
            ),
            Reply(deltas=["好"]),
        ]
    )
    files = Files(a="x")
    with client(fake) as llm:
        result = run_tool_loop(llm, MESSAGES, TOOLS, files)
    assert result.ok
    errors = [s.error for s in result.steps]
    assert errors[0] is not None and errors[0].startswith("arguments are not a JSON object")
    assert errors[1] == "arguments are not a JSON object (got list)"
    assert errors[2] == "unknown tool 'write'"
    assert errors[3] == "the tool raised FileNotFoundError: no index"
    assert errors[4] is not None and "KeyError" in errors[4]  # empty arguments read as {}
    assert result.steps[0].arguments == '{"path": '  # the raw text is kept for the log
    contents = [m["content"] for m in fake.requests[1].body["messages"][3:]]
    assert contents[0].startswith("[错误：参数不是合法的 JSON 对象")
    assert "没有名为 'write' 的工具；可用的工具：grep、read" in contents[2]
    assert "工具执行失败：FileNotFoundError: no index" in contents[3]
    assert files.asked == [("grep", {"path": "a"}), ("read", {})]


def test_a_failed_call_ends_the_loop_with_its_outcome(fake: FakeOpenAI) -> None:
    fake.replies.extend([calls(("read", '{"path": "a"}')), Reply(status=500)])
    with client(fake) as llm:
        result = run_tool_loop(llm, MESSAGES, TOOLS, Files(a="x"))
    assert result.outcome == "http-error" and "HTTP 500" in (result.error or "")
    assert len(result.completions) == 2 and len(fake.requests) == 2


def test_one_deadline_covers_the_whole_loop(fake: FakeOpenAI) -> None:
    fake.replies.extend([calls(("read", '{"path": "a"}')), Reply(keepalive_s=0.05)])
    with client(fake, deadline_s=600) as llm:
        result = run_tool_loop(llm, MESSAGES, TOOLS, Files(a="x"), deadline_s=1.0)
    assert result.outcome == "deadline" and "deadline of" in (result.error or "")
    assert len(fake.requests) == 2


def test_a_deadline_passed_while_tools_ran_makes_no_further_call(fake: FakeOpenAI) -> None:
    fake.replies.append(calls(("read", '{"path": "a"}')))

    def slow(name: str, arguments: dict[str, Any]) -> str:
        time.sleep(1.2)  # longer than the whole loop may take
        return "x"

    with client(fake) as llm:
        result = run_tool_loop(llm, MESSAGES, TOOLS, slow, deadline_s=1.0)
    assert result.outcome == "deadline" and "after 1 model calls" in (result.error or "")
    assert len(fake.requests) == 1 and len(result.steps) == 1


@pytest.mark.parametrize(
    ("tools", "limits", "message"),
    [
        ([], None, "tools is empty"),
        ([{"type": "function"}], None, "tools[0] is not"),
        ([{"type": "function", "function": {}}], None, "tools[0] has no function name"),
        (TOOLS, {"max_steps": 1}, "ToolLimits.max_steps must be an integer ≥ 2, got 1"),
        (TOOLS, {"budget_bytes": 0}, "ToolLimits.budget_bytes must be an integer ≥ 1"),
    ],
)
def test_bad_tools_or_limits_are_refused_before_any_call(
    fake: FakeOpenAI, tools: list[Any], limits: dict[str, int] | None, message: str
) -> None:
    with client(fake) as llm, pytest.raises(ValueError) as raised:
        run_tool_loop(llm, MESSAGES, tools, Files(), limits=ToolLimits(**(limits or {})))
    assert message in str(raised.value) and fake.requests == []
