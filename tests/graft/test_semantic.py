"""The semantic state of a session (graft.semantic): the boundary in DSH's own logs (v4 and
the real v0 fixture, where the next turn's inbox splice precedes its turn/start), sessions
DSH's handoff plugin started (its ignition prompt and seeded card are not the person's
words), the blocker line that says what failed, files written twice, and next steps the open
turn announced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from dshkit.graft.constraints import extract_constraints
from dshkit.graft.identity import is_handoff_message, is_plugin_card
from dshkit.graft.semantic import boundary, extract_semantic_state, failure_line
from dshkit.sessions import Scanner, Source
from dshkit.sessions.catalog import Catalog
from dshkit.store import Store

from ..support.logs import session_dir, write_log

DATA = Path(__file__).parent.parent / "data"
V4_LOG = DATA / "dsh-v4-session.jsonl"
V0_LOG = next((DATA / "fixtures" / "dsh-v0" / "sessions-plain").glob("*/*/session.jsonl"))
CWD = "/home/dev/work"
PLUGIN_IGNITION = (
    "[dsh-graft-slice 点火] 你是交接后的新会话。旧会话的历史执行日志和临时错误无需理会，"
    "它们只作为回读证据保留；请直接执行看板中「⏭️ 待开始」里的待办项，不要复述交接过程，"
    "也不要重新调研已经完成的部分。"
)
PLUGIN_CARD = (
    "## 交接任务看板（第一轮只要读这里）\n"
    "**原始用户要求**：把两个插件升级到 v0.20 并跑通全量测试\n\n"
    "**⏭️ 待开始**\n- 提交并推送两个仓库\n\n"
    "旧会话的历史执行日志和临时错误无需理会——它们只作为回读证据保留。"
    "请直接执行上面「⏭️ 待开始」里的待办项。"
)


def records(path: Path) -> list[dict[str, Any]]:
    """A plain DSH log's events (the header line left out)."""
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    return [line for line in lines if line.get("type") != "session"]


class Turns:
    """Events appended in DSH v4's shape after a given log, numbered on from its last seq."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = [dict(event) for event in events]
        self.turn = max(int((e.get("data") or {}).get("turn") or 0) for e in self.events)

    def add(self, kind: str, data: dict[str, Any]) -> int:
        seq = int(self.events[-1]["seq"]) + 1
        self.events.append(
            {"type": kind, "seq": seq, "time": 1_790_100_000_000 + seq, "data": data}
        )
        return seq

    def prompt(self, text: str, kind: str = "user") -> int:
        """A new turn as DSH v4 writes it: the inbox splice, turn/start, the splice taken,
        the step, the message."""
        content = [{"type": "text", "text": text}]
        source = {"kind": kind}
        self.turn += 1
        inserted = [{"content": content, "source": source}]
        self.add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": inserted})
        self.add("turn/start", {"turn": self.turn})
        self.add("agent/inbox/spliced", {"target": "next-turn", "removedCount": 1, "inserted": []})
        self.add("step/start", {"turn": self.turn, "step": 1})
        message = {"id": f"u{self.turn}", "role": "user", "content": content, "source": source}
        return self.add("user/message", message)

    def say(self, text: str, step: int = 1) -> int:
        message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        return self.add("assistant/message", {"turn": self.turn, "step": step, "message": message})

    def command(self, command: str, output: str, *, error: bool = False) -> int:
        """A shell call and its result; the result's seq."""
        call_id = f"call_{len(self.events)}"
        arguments = orjson.dumps({"command": command}).decode()
        block = {"type": "tool-call", "id": call_id, "name": "bash", "arguments": arguments}
        message = {"role": "assistant", "content": [block]}
        self.add("assistant/message", {"turn": self.turn, "step": 1, "message": message})
        self.add(
            "tool/call",
            {
                "turn": self.turn,
                "step": 1,
                "callId": call_id,
                "name": "bash",
                "arguments": arguments,
            },
        )
        result: dict[str, Any] = {
            "role": "tool",
            "toolCallId": call_id,
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "text", "text": output}],
        }
        data: dict[str, Any] = {"turn": self.turn, "step": 1, "message": result}
        if error:
            result["isError"] = True
            data["error"] = {"name": "ToolError", "code": "EXIT_NONZERO"}
        return self.add("tool/result", data)

    def write(self, path: str) -> int:
        call_id = f"call_{len(self.events)}"
        arguments = orjson.dumps({"path": path, "content": "x"}).decode()
        self.add(
            "tool/call",
            {
                "turn": self.turn,
                "step": 1,
                "callId": call_id,
                "name": "write",
                "arguments": arguments,
            },
        )
        result = {"role": "tool", "source": {"kind": "tool", "callId": call_id}, "content": []}
        return self.add("tool/result", {"turn": self.turn, "step": 1, "message": result})

    def end(self) -> int:
        return self.add("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})


def state(events: list[dict[str, Any]]) -> Any:
    return extract_semantic_state(events, "dsh", CWD)


def seq_of(events: list[dict[str, Any]], kind: str) -> int:
    return int(next(e for e in reversed(events) if e["type"] == kind)["seq"])


# -- the boundary in DSH's logs ---------------------------------------------------------------


def test_the_v4_log_is_cut_at_its_last_turn_end_not_at_the_next_turns_inbox_splice() -> None:
    log = Turns(records(V4_LOG))
    end = seq_of(log.events, "turn/end")
    asked = log.prompt("再把覆盖率报告生成出来")
    log.command("npm run coverage", "Coverage 81%")
    found = state(log.events)
    assert found.boundary_seq == end and found.turn == 1
    assert log.events[boundary(log.events)]["type"] == "turn/end"
    assert [(item.text, item.seq) for item in found.in_progress] == [
        ("再把覆盖率报告生成出来", asked)
    ]


def test_the_v4_log_on_disk_read_through_the_catalog_is_cut_at_its_turn_end(
    tmp_path: Path,
) -> None:
    log = Turns(records(V4_LOG))
    end = seq_of(log.events, "turn/end")
    log.prompt("再把覆盖率报告生成出来")  # the open turn: not answered yet
    root = tmp_path / "sessions"
    path = session_dir(root, "session-v4") / "session.v4.jsonl.zstd"
    write_log(path, [log.events[:20], log.events[20:]], session_id="session-v4")
    with Store(tmp_path / "state") as store:
        assert Scanner(store).scan([Source("dsh", root)]).errors == []
        catalog = Catalog(store)
        events = catalog.conversation(catalog.find("session-v4").key)
    found = state(events)
    assert found.boundary_seq == end
    assert not found.open_turn_answered


def test_the_real_v0_fixture_with_a_second_turn_is_cut_at_the_first_turn_end() -> None:
    log = Turns(records(V0_LOG))
    end = seq_of(log.events, "turn/end")
    log.prompt("把 hello.txt 改成 hi")
    assert state(log.events).boundary_seq == end
    log.say("好的，我来改")
    assert state(log.events).boundary_seq == end


def test_a_turn_no_end_closed_ends_before_the_next_turns_splice() -> None:
    log = Turns(records(V4_LOG))
    log.prompt("第二件事")
    log.command("ls", "a")
    crashed = log.events[-1]["seq"]  # turn 2 never ended: turn 3 started after it
    log.prompt("第三件事")
    assert state(log.events).boundary_seq == crashed


def test_a_log_whose_last_turn_ended_is_cut_at_that_end() -> None:
    events = records(V4_LOG)
    assert boundary(events) == len(events) - 1


# -- sessions DSH's handoff plugin started ----------------------------------------------------


def plugin_target() -> Turns:
    """A DSH session the plugin started: its seeded card, then its ignition prompt (a real
    `user` message), then the model working and the person's own rule."""
    log = Turns([{"type": "session/title", "seq": 0, "time": 1, "data": {"title": "t"}}])
    card = {"role": "user", "content": [{"type": "text", "text": PLUGIN_CARD}]}
    log.add("user/message", {**card, "source": {"kind": "plugin:dsh-graft-slice"}})
    log.prompt(PLUGIN_IGNITION)
    log.say("继续执行待办")
    log.end()
    return log


def test_the_plugins_ignition_prompt_is_not_the_request_and_its_card_hands_the_request_on() -> None:
    found = state(plugin_target().events)
    assert found.request is not None
    assert found.request.text == "把两个插件升级到 v0.20 并跑通全量测试"


def test_the_plugins_ignition_prompt_is_no_hard_constraint() -> None:
    log = plugin_target()
    rule = log.prompt("以后每次提交前都必须先跑 lint")
    constraints = extract_constraints(log.events)
    assert [(c.text, c.seq) for c in constraints] == [("以后每次提交前都必须先跑 lint", rule)]


def test_the_plugins_ignition_in_an_open_turn_is_not_work_in_progress() -> None:
    log = Turns(records(V4_LOG))
    log.prompt(PLUGIN_IGNITION)
    assert state(log.events).in_progress == []


def test_without_a_card_the_request_is_the_persons_first_words_after_the_ignition() -> None:
    log = Turns([{"type": "session/title", "seq": 0, "time": 1, "data": {"title": "t"}}])
    log.prompt(PLUGIN_IGNITION)
    log.end()
    asked = log.prompt("顺便把 CHANGELOG 也更新一下")
    found = state(log.events)
    assert found.request is not None and found.request.seq == asked


def test_the_plugins_marks_and_card_are_recognised_and_a_quote_of_them_in_prose_is_not() -> None:
    assert is_handoff_message(PLUGIN_IGNITION)
    assert is_handoff_message("[dsh-graft-slice 回滚] 由于新会话点火失败，已为您自动回滚到当前会话")
    assert not is_handoff_message("插件会发一条以 [dsh-graft-slice 点火] 开头的消息，别理它")
    card = plugin_target().events[1]
    assert is_plugin_card(card)
    older = {
        **card,
        "data": {**card["data"], "source": {"kind": "plugin", "plugin": "dsh-graft-slice"}},
    }
    assert is_plugin_card(older)
    person = {**card, "data": {**card["data"], "source": {"kind": "user"}}}
    assert not is_plugin_card(person)


# -- the blocker line -------------------------------------------------------------------------

NPM_OUTPUT = (
    "\n> app@1.4.0 docs:build\n> vitepress build docs\n\nsh: 1: vitepress: not found\n"
    "npm ERR! code 127\nnpm ERR! path /home/dev/work\n"
)


def test_the_blocker_keeps_the_line_that_says_what_failed_not_npms_banner() -> None:
    log = Turns(records(V4_LOG))
    log.prompt("构建文档")
    failed = log.command("npm run docs:build", NPM_OUTPUT, error=True)
    found = state(log.events)
    assert found.blocker is not None and found.blocker.seq == failed
    assert "vitepress: not found" in found.blocker.text
    assert "app@1.4.0" not in found.blocker.text


def test_the_failure_line_prefers_an_error_over_a_plain_failure_and_skips_banners() -> None:
    traceback = 'Traceback (most recent call last):\n  File "x.py", line 1\nModuleNotFoundError: x'
    assert failure_line(traceback) == "ModuleNotFoundError: x"
    assert failure_line("running 3 checks\ncheck b failed\n") == "check b failed"
    assert failure_line("> app@1.0.0 lint\n> eslint .\n\nsomething odd\n") == "something odd"
    assert failure_line("") == "（无输出）"


# -- files written twice; next steps in the open turn -----------------------------------------


def test_a_file_written_twice_is_listed_once_with_its_latest_seq() -> None:
    log = Turns(records(V4_LOG))
    log.prompt("写文档")
    log.write("docs/guide.md")
    log.write("docs/api.md")
    latest = log.write("docs/guide.md")
    found = state(log.events)
    assert [(item.text, item.seq) for item in found.artifacts] == [
        ("docs/guide.md", latest),
        ("docs/api.md", latest - 2),
    ]
    wrote = [item for item in found.done if item.text == "写入 docs/guide.md"]
    assert [item.seq for item in wrote] == [latest]


def test_next_steps_announced_earlier_in_the_open_turn_are_kept() -> None:
    log = Turns(records(V4_LOG))
    log.prompt("把失败的测试修好")
    said = log.say("我先看日志。接下来我会修复 parser 的空行处理，然后补一条回归测试。")
    log.command("cat log.txt", "line 1")
    log.say("日志看完了，问题在第 3 行。")  # the last words announce nothing
    found = state(log.events)
    assert [item.seq for item in found.todo] == [said]
    assert any("parser" in item.text for item in found.todo)


def test_without_an_announcement_in_the_open_turn_the_last_answer_before_it_counts() -> None:
    log = Turns(records(V4_LOG)[:-1])  # drop the turn end: rebuild turn 1's close
    said = log.say("失败原因已列出。下一步我会逐个修复这三个测试。")
    log.end()
    log.prompt("好的")
    found = state(log.events)
    assert [item.seq for item in found.todo] == [said]


def test_host_noise_in_a_path_written_twice_is_counted_once() -> None:
    log = Turns(records(V4_LOG))
    log.prompt("写文档")
    log.write("/tmp/build-cache/out.md")
    log.write("/tmp/build-cache/out.md")
    found = state(log.events)
    assert len(found.artifacts) == 1
    assert found.slimming.noise_paragraphs + found.slimming.noise_tokens == 1
