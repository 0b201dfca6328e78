"""The task board (graft.board) as the new session reads it: the request a plugin-started
session handed on, a file written twice listed once, the blocker line that says what failed,
and the cut anchored at the last turn end of a DSH log."""

from __future__ import annotations

from typing import Any

import orjson

from dshkit.graft.board import render_card
from dshkit.graft.semantic import extract_semantic_state

CWD = "/home/dev/work"


class Log:
    """A DSH v4-shaped session, built step by step (seq = position)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.turn = 0

    def add(self, kind: str, data: dict[str, Any]) -> int:
        seq = len(self.events)
        self.events.append(
            {"type": kind, "seq": seq, "time": 1_790_000_000_000 + seq, "data": data}
        )
        return seq

    def message(self, text: str, kind: str = "user") -> int:
        content = [{"type": "text", "text": text}]
        return self.add(
            "user/message", {"role": "user", "content": content, "source": {"kind": kind}}
        )

    def prompt(self, text: str) -> int:
        self.turn += 1
        self.add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": []})
        self.add("turn/start", {"turn": self.turn})
        return self.message(text)

    def tool(self, name: str, arguments: dict[str, Any], output: str, error: bool = False) -> int:
        call_id = f"c{len(self.events)}"
        raw = orjson.dumps(arguments).decode()
        self.add(
            "tool/call", {"turn": self.turn, "callId": call_id, "name": name, "arguments": raw}
        )
        message: dict[str, Any] = {
            "role": "tool",
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "text", "text": output}],
        }
        if error:
            message["isError"] = True
        return self.add("tool/result", {"turn": self.turn, "step": 1, "message": message})

    def end(self) -> int:
        return self.add("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})


def card(log: Log) -> str:
    state = extract_semantic_state(log.events, "dsh", CWD)
    return render_card(state, "session-src", 4_000).text


def test_a_plugin_started_session_hands_on_its_request_not_the_ignition_prompt() -> None:
    log = Log()
    log.message(
        "## 交接任务看板（第一轮只要读这里）\n**原始用户要求**：把文档站部署上线",
        "plugin:dsh-graft-slice",
    )
    log.prompt("[dsh-graft-slice 点火] 请直接执行看板中「⏭️ 待开始」里的待办项，不要复述交接过程。")
    log.end()
    text = card(log)
    assert "**原始用户要求**：把文档站部署上线" in text
    assert "点火" not in text.split("\n")[1]


def test_the_card_lists_a_file_written_twice_once_and_the_line_that_says_what_failed() -> None:
    log = Log()
    log.prompt("写文档并构建")
    log.tool("write", {"path": "docs/index.md", "content": "a"}, "ok")
    latest = log.tool("write", {"path": "docs/index.md", "content": "b"}, "ok")
    failed = log.tool(
        "bash",
        {"command": "npm run docs:build"},
        "> app@1.4.0 docs:build\n> vitepress build docs\n\nsh: 1: vitepress: not found\n",
        error=True,
    )
    text = card(log)
    assert text.count("docs/index.md") == 2  # once as written (done), once as a file to reuse
    assert f"写入 docs/index.md（seq={latest}）" in text
    blocker = next(line for line in text.splitlines() if "唯一未决阻塞" in line)
    assert "vitepress: not found" in blocker and f"seq={failed}" in blocker
    assert "app@1.4.0" not in blocker


def test_the_anchor_is_the_last_turn_end_not_the_next_turns_splice() -> None:
    log = Log()
    log.prompt("第一件事")
    end = log.end()
    log.prompt("第二件事")
    assert f"边界 seq={end}" in card(log)
