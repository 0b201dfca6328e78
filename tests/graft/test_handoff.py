"""The handoff engine (seed 004 v0.19 semantic card, v0.20 task board, v0.9 §四 open turn,
v0.11 item 2, v0.12 forced-cut mark, v0.21 P1 identity): what the new session receives, read
from built DSH-shaped sessions, DSH v4 logs written to disk and Claude Code transcripts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.graft.board import CLOSING_RULE, DONE, IN_PROGRESS, TODO, render_card
from dshkit.graft.constraints import NONE_ITEM as NONE
from dshkit.graft.constraints import GraftAborted
from dshkit.graft.handoff import build_handoff, prepare_handoff
from dshkit.graft.identity import IGNITION_MARK, Identity, parse_identity, session_identity
from dshkit.graft.semantic import BLOCKER_CHARS, boundary, extract_semantic_state
from dshkit.graft.settings import GraftSettings
from dshkit.sessions import Scanner, Source
from dshkit.sessions.catalog import Catalog, SessionInfo
from dshkit.store import Store

from ..support.logs import session_dir, write_lines, write_log

CWD = "/home/dev/work"
SETTINGS = GraftSettings()


class Log:
    """A DSH-shaped session (the normalized event model is DSH's), built step by step."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.turn = 0

    def add(self, kind: str, data: dict[str, Any]) -> int:
        seq = len(self.events)
        self.events.append(
            {"type": kind, "seq": seq, "time": 1_790_000_000_000 + seq, "data": data}
        )
        return seq

    def user(self, text: str, *, kind: str = "user", new_turn: bool = True) -> Log:
        if new_turn:
            self.turn += 1
            self.add("turn/start", {"turn": self.turn})
        content = [{"type": "text", "text": text}]
        self.add("user/message", {"role": "user", "content": content, "source": {"kind": kind}})
        return self

    def say(self, text: str) -> Log:
        message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        self.add("assistant/message", {"turn": self.turn, "step": 1, "message": message})
        return self

    def tool(self, name: str, arguments: Any, output: str, *, error: bool = False) -> int:
        """A call and its result; returns the result's seq."""
        call_id = f"call-{len(self.events)}"
        raw = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
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

    def bash(self, command: str, output: str, *, error: bool = False) -> int:
        return self.tool("bash", {"command": command}, output, error=error)

    def end(self) -> int:
        return self.add("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})


def source(session_id: str = "session-src", harness: str = "dsh", cwd: str = CWD) -> SessionInfo:
    return SessionInfo(harness, session_id, "p", cwd, "t", 1, 0, 0, 0, None, None, 0)


def state_of(log: Log, harness: str = "dsh") -> Any:
    return extract_semantic_state(log.events, harness, CWD)


# -- v0.19: results from evidence ---------------------------------------------------------------


def test_commits_pushes_test_runs_and_written_files_are_read_with_their_seq() -> None:
    log = Log().user("把插件升级并跑通测试")
    written = log.tool("write", {"path": "src/retrieve.ts", "content": "x"}, "ok")
    tests = log.bash("npm test", "# tests 12\n# pass 12\n# fail 0")
    commit = log.bash("git commit -am 'upgrade'", "[main abc1234] upgrade\n 2 files changed")
    push = log.bash(
        "git push origin main",
        "To github.com:o/r.git\n   1111111..abc1234  main -> main",
    )
    log.end()
    state = state_of(log)
    assert [(item.text, item.seq) for item in state.done] == [
        ("git push 成功（→ main）", push),
        ("git commit abc1234 成功（main）", commit),
        ("测试 12 个通过（npm test）", tests),
        ("写入 src/retrieve.ts", written),
    ]
    assert [(item.text, item.seq) for item in state.artifacts] == [("src/retrieve.ts", written)]
    assert state.blocker is None


def test_pytest_cargo_and_claude_codex_write_tools_are_recognized() -> None:
    log = Log().user("修复")
    pytest_run = log.tool("Bash", {"command": "pytest -q"}, "....\n4 passed in 0.1s")
    cargo = log.tool("Bash", {"command": "cargo test"}, "test result: ok. 7 passed; 0 failed")
    edit = log.tool("Edit", {"file_path": f"{CWD}/a.py", "old_string": "a", "new_string": "b"}, "")
    state = state_of(log, "claude")
    texts = {item.text: item.seq for item in state.done}
    assert texts["测试 7 个通过（cargo test）"] == cargo
    assert texts["测试 4 个通过（pytest -q）"] == pytest_run
    assert texts[f"写入 {CWD}/a.py"] == edit
    codex = Log().user("改")
    patch = "*** Begin Patch\n*** Add File: docs/new.md\n+hi\n*** End Patch"
    patched = codex.tool("apply_patch", patch, "Success")
    assert [(i.text, i.seq) for i in state_of(codex, "codex").artifacts] == [
        ("docs/new.md", patched)
    ]


def test_a_failure_covered_by_a_later_success_is_dropped_and_counted() -> None:
    log = Log().user("修好 pwsh 脚本")
    log.bash("pwsh build.ps1", "ParserError: unexpected token", error=True)
    log.bash("pwsh build.ps1", "ParserError: still", error=True)
    log.tool("write", {"path": "build.ps1", "content": "fixed"}, "ok")
    log.bash("pwsh build.ps1", "built")
    state = state_of(log)
    assert state.blocker is None
    assert state.slimming.resolved_errors == 2
    assert state.slimming.error_bodies == 0


def test_only_the_newest_uncovered_failure_stays_as_a_one_line_blocker_with_its_seq() -> None:
    log = Log().user("部署")
    log.bash("make old", "boom", error=True)  # covered by the commit below
    log.bash("git commit -m x", "[main 1234567] x")
    log.bash("make deploy", "first failure", error=True)
    body = "Error: " + "很长的报错正文。" * 80 + "\n  at line 2\n  at line 3"
    newest = log.bash("make deploy --again", body, error=True)
    state = state_of(log)
    assert state.blocker is not None and state.blocker.seq == newest
    assert "\n" not in state.blocker.text and len(state.blocker.text) <= BLOCKER_CHARS
    assert state.blocker.text.startswith("make deploy --again 失败：Error:")
    assert f"seq={newest}" in state.blocker.text  # says where the rest is
    # Only "make old" was covered (by the commit); "make deploy" was fixed by nothing.
    assert state.slimming.resolved_errors == 1 and state.slimming.error_bodies == 1
    assert state.slimming.unresolved_errors == 1


def test_a_successful_rerun_of_the_same_call_covers_its_failure() -> None:
    log = Log().user("跑一下")
    log.bash("./check.sh", "flaky", error=True)
    log.bash("./check.sh", "fine")
    assert state_of(log).blocker is None


def test_a_failing_test_summary_is_a_failure_even_without_an_error_flag() -> None:
    log = Log().user("测一下")
    failing = log.bash("pytest", "3 failed, 10 passed in 2s")
    state = state_of(log)
    assert state.blocker is not None and state.blocker.seq == failing
    assert state.done == []


# -- v0.9 §四 / v7.4c: the boundary and the open turn --------------------------------------------


def test_the_boundary_is_the_last_turn_end_and_the_open_turn_is_in_progress() -> None:
    log = Log().user("第一件事").say("好了")
    end = log.end()
    log.user("第二件事：把 README 翻译成英文").say("开始翻译")
    log.bash("ls", "README.md")
    state = state_of(log)
    assert state.boundary_seq == end and state.turn == 1
    assert [item.text for item in state.in_progress] == ["第二件事：把 README 翻译成英文"]
    assert state.open_turn_answered


def test_an_open_turn_with_an_unanswered_instruction_is_carried_over() -> None:
    log = Log().user("先做 A").say("A 完成")
    log.end()
    seq = log.user("再做 B，别忘了更新文档").events[-1]["seq"]
    state = state_of(log)
    assert [(item.text, item.seq) for item in state.in_progress] == [
        ("再做 B，别忘了更新文档（尚未回答）", seq)
    ]
    assert not state.open_turn_answered


def test_without_turn_ends_a_final_answer_closes_the_turn() -> None:
    log = Log().user("问题一").say("答案一").user("问题二")
    log.tool("Read", {"file_path": "a"}, "x")
    assert boundary(log.events) == 2  # the answer to question one
    finished = Log().user("问题一").say("答案一")
    assert boundary(finished.events) == len(finished.events) - 1
    assert boundary(Log().user("只有一句").events) == -1


# -- the plan: todos and announced next steps ---------------------------------------------------


def test_todos_split_into_in_progress_and_to_do_and_prose_next_steps_fill_an_empty_plan() -> None:
    log = Log().user("升级两个插件")
    todos = [
        {"content": "升级 graft", "status": "completed"},
        {"content": "改 retrieve.ts 的过滤", "status": "in_progress"},
        {"content": "提交并推送两个仓库", "status": "pending"},
    ]
    todo_seq = log.add("todo/write", {"todos": todos})
    state = state_of(log)
    assert [(i.text, i.seq) for i in state.in_progress][-1] == ("改 retrieve.ts 的过滤", todo_seq)
    assert [(i.text, i.seq) for i in state.todo] == [("提交并推送两个仓库", todo_seq)]
    prose = Log().user("修 bug").say("定位到了原因。接下来我会补一个回归测试。然后提交。")
    said = prose.events[-1]["seq"]
    planned = state_of(prose)
    assert [(i.text, i.seq) for i in planned.todo] == [("接下来我会补一个回归测试。", said)]
    total = len("定位到了原因。接下来我会补一个回归测试。然后提交。")
    assert planned.slimming.narration_chars == total - len("接下来我会补一个回归测试。")


# -- v0.20: the board ---------------------------------------------------------------------------


def busy_log() -> Log:
    log = Log().user("把两个插件升级到 v0.20 并跑通全量测试")
    log.bash("npm test", "boom", error=True)
    log.bash("git commit -am up", "[main abc1234] up")
    log.say("提交完成。接下来要推送两个仓库。")
    log.end()
    log.user("顺便把 CHANGELOG 补上")
    log.bash("npm run lint", "lint failed: 3 problems", error=True)
    return log


def test_the_board_has_four_columns_in_reading_order_and_names_the_read_back_tools() -> None:
    log = busy_log()
    card = build_handoff(source(), log.events, SETTINGS).card.text
    order = [card.index(DONE), card.index(IN_PROGRESS), card.index(TODO), card.index("⚠️")]
    assert order == sorted(order)
    assert "git commit abc1234 成功（main）" in card
    assert "顺便把 CHANGELOG 补上" in card.split(IN_PROGRESS)[1].split(TODO)[0]
    assert "接下来要推送两个仓库。" in card.split(TODO)[1]
    assert 'graft_read_result(sourceSessionId="session-src"' in card
    assert "graft_search_history" in card
    assert "**原始用户要求**：把两个插件升级到 v0.20 并跑通全量测试" in card
    assert card.rstrip().endswith(CLOSING_RULE)
    assert "**⚠️ 唯一未决阻塞**：npm run lint 失败：lint failed: 3 problems" in card
    anchor = next(line for line in card.splitlines() if line.startswith("**停泊点**"))
    state = state_of(log)
    assert f"边界 seq={state.boundary_seq}" in anchor and "第 1 轮已结束" in anchor
    assert f"可回读指针 {state.pointers()} 处" in anchor and "sourceSessionId=session-src" in anchor


def test_empty_columns_say_none_rather_than_disappear() -> None:
    log = Log().user("看看")
    log.end()
    card = build_handoff(source(), log.events, SETTINGS).card.text
    for column in (DONE, IN_PROGRESS, TODO):
        assert card.split(column)[1].lstrip("\n").startswith(NONE)
    assert "**⚠️ 未决阻塞**：无" in card


def test_the_slimming_disclosure_carries_true_counts() -> None:
    log = busy_log()
    state = state_of(log)
    card = build_handoff(source(), log.events, SETTINGS).card.text
    line = next(line for line in card.splitlines() if line.startswith("**已按语义瘦身**"))
    assert state.slimming.resolved_errors == 1 and state.slimming.error_bodies == 1
    assert "丢弃 1 条已被后续成功覆盖的报错" in line and "1 段报错正文只保留一行摘要" in line
    narration = len("提交完成。接下来要推送两个仓库。") - len("接下来要推送两个仓库。")
    assert f"{narration} 字符中间叙述" in line


def test_a_card_over_budget_is_cut_oldest_results_first_and_says_so() -> None:
    log = Log().user("大量提交")
    for number in range(40):
        log.bash(f"git commit -m c{number}", f"[main {number:07x}] c{number}")
    newest = f"git commit {39:07x} 成功（main）"
    card = build_handoff(source(), log.events, GraftSettings(card_chars=1_400)).card
    assert len(card.text) <= 1_400 and card.cut
    assert newest in card.text and f"git commit {0:07x}" not in card.text
    assert f"省略了已完成 {card.omitted['已完成']} 条" in card.text
    whole = build_handoff(source(), log.events, GraftSettings(card_chars=20_000)).card
    assert not whole.cut and "看板已截断" not in whole.text
    with pytest.raises(ValueError, match="card_chars = 200 cannot hold"):
        render_card(state_of(log), "session-src", 200)


def test_host_noise_never_reaches_the_card() -> None:
    log = Log().user("清理缓存")
    log.bash("ls C:\\Users\\alice\\AppData\\Local\\Temp", "x", error=True)
    card = build_handoff(source(), log.events, SETTINGS).card.text
    assert "alice" not in card and "AppData" not in card
    assert "宿主" in card  # the disclosure says noise was filtered


# -- the first message: identity, ignition, constraints ------------------------------------------


def test_the_first_message_carries_identity_ignition_rule_card_and_constraints() -> None:
    log = busy_log()
    log.user("以后不要改 tests/ 目录", new_turn=False)
    handoff = build_handoff(source(), log.events, SETTINGS)
    first = handoff.first_message
    assert first.splitlines()[0] == handoff.identity.render()
    assert parse_identity(first) == Identity("session-src", handoff.state.boundary_seq, 1)
    ignition = first.splitlines()[1]
    assert (
        ignition.startswith(IGNITION_MARK) and CLOSING_RULE in ignition and "⏭️ 待开始" in ignition
    )
    assert handoff.card.text in first
    assert "以后不要改 tests/ 目录" in first
    assert [c.text for c in handoff.constraints.constraints] == ["以后不要改 tests/ 目录"]


def test_the_next_generation_inherits_request_constraints_and_counts_generations() -> None:
    first = build_handoff(source(), _with_rule(busy_log()).events, SETTINGS)
    target = Log().user(first.first_message)
    target.say("继续").end()
    target.user("另外，提交信息一律用英文")
    again = build_handoff(source("session-target"), target.events, SETTINGS)
    assert session_identity(target.events) == first.identity
    assert again.identity == Identity("session-target", 3, 2)
    assert again.state.request is not None
    assert again.state.request.text == "把两个插件升级到 v0.20 并跑通全量测试"
    rules = [(c.text, c.generation) for c in again.constraints.constraints]
    assert rules == [("永远不要强推 main 分支", 0), ("另外，提交信息一律用英文", 1)]
    # The ignition message is dshkit's, not the person's: nothing in it is in progress.
    assert [item.text for item in again.state.in_progress] == [
        "另外，提交信息一律用英文（尚未回答）"
    ]


def _with_rule(log: Log) -> Log:
    log.user("永远不要强推 main 分支", new_turn=False)
    return log


def test_constraints_that_do_not_fit_abort_the_handoff() -> None:
    log = Log().user("开始")
    for number in range(30):
        log.user(f"以后不要修改第 {number} 号模块的任何接口，" + "这条规则很重要。" * 10)
    with pytest.raises(GraftAborted, match=r"^GRAFT_ABORTED: constraints truncated"):
        build_handoff(source(), log.events, GraftSettings(constraint_budget_chars=1_000))
    whole = build_handoff(source(), log.events, GraftSettings(constraint_budget_chars=50_000))
    assert len(whole.constraints.constraints) == 30
    assert whole.constraints.integrity["count"] == 30


def test_a_forced_cut_after_an_ignored_warning_is_stated_on_the_card() -> None:
    mark = {"ratio": 0.76, "warning": 0.70, "nudgeTurn": 3}
    card = build_handoff(source(), busy_log().events, SETTINGS, mark).card.text
    assert "**强制切断**" in card and "70%" in card and "76%" in card
    assert "强制切断" not in build_handoff(source(), busy_log().events, SETTINGS).card.text


# -- real logs on disk ---------------------------------------------------------------------------


def test_a_dsh_v4_log_on_disk_is_prepared_through_the_catalog(tmp_path: Path) -> None:
    log = busy_log()
    root = tmp_path / "sessions"
    path = session_dir(root, "session-disk") / "session.v4.jsonl.zstd"
    write_log(path, [log.events[:6], log.events[6:]], session_id="session-disk")
    with Store(tmp_path / "state") as store:
        assert Scanner(store).scan([Source("dsh", root)]).errors == []
        catalog = Catalog(store)
        info = catalog.find("session-disk")
        handoff = prepare_handoff(catalog, info, SETTINGS)
    assert (
        handoff.as_json()["board"] == build_handoff(info, log.events, SETTINGS).as_json()["board"]
    )
    assert handoff.identity.source_session_id == "session-disk"


def claude_transcript(path: Path, session_id: str, cwd: str) -> dict[str, int]:
    """A Claude Code transcript as the CLI writes one: a prompt, a Bash call that fails, a
    Write, a Bash call that passes, the answer, then an open turn."""
    base = {"sessionId": session_id, "cwd": cwd, "version": "2.0.0", "isSidechain": False}
    stamp = iter(f"2026-11-30T10:00:{second:02d}.000Z" for second in range(60))

    def line(kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {**base, "type": kind, "timestamp": next(stamp), "message": message, **extra}

    def use(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        return line(
            "assistant",
            {
                "id": f"msg-{tool_id}",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
            },
            requestId=f"req-{tool_id}",
        )

    def result(tool_id: str, text: str, error: bool = False) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": error}
        return line("user", {"role": "user", "content": [block]})

    records = [
        line("user", {"role": "user", "content": "给项目加一个 hello 脚本并让测试通过"}),
        use("t1", "Bash", {"command": "pytest -q"}),
        result("t1", "1 failed in 0.2s", error=True),
        use("t2", "Write", {"file_path": f"{cwd}/hello.py", "content": "print('hi')"}),
        result("t2", "File created successfully"),
        use("t3", "Bash", {"command": "pytest -q"}),
        result("t3", "2 passed in 0.1s"),
        line(
            "assistant",
            {
                "id": "msg-end",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "完成了。"}],
            },
            requestId="req-end",
        ),
        line("user", {"role": "user", "content": "再把 README 里的用法补上"}),
    ]
    write_lines(path, records)
    return {"prompt": 1}


def test_a_claude_code_transcript_is_prepared_with_its_own_tools(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    project = root / "-home-dev-proj"
    project.mkdir(parents=True)
    claude_transcript(project / "c0ffee00-0000-4000-8000-000000000001.jsonl", "c0ffee00", CWD)
    with Store(tmp_path / "state") as store:
        assert Scanner(store).scan([Source("claude", root)]).errors == []
        catalog = Catalog(store)
        info = catalog.find("c0ffee00")
        handoff = prepare_handoff(catalog, info, SETTINGS)
    board = handoff.as_json()["board"]
    assert board["request"] == "给项目加一个 hello 脚本并让测试通过"
    assert [item["text"] for item in board["done"]] == [
        "测试 2 个通过（pytest -q）",
        f"写入 {CWD}/hello.py",
    ]
    assert board["blocker"] is None and handoff.state.slimming.resolved_errors == 1
    assert [item["text"] for item in board["inProgress"]] == [
        "再把 README 里的用法补上（尚未回答）"
    ]


# -- issue 32: true counts, Claude Code's stand-ins, the JSON's maybe-rules -----------------------


def claude_events(*records: dict[str, Any]) -> list[dict[str, Any]]:
    """Claude Code transcript entries as its session adapter reads them (seq by position)."""
    from dshkit.sessions.claude import ClaudeAdapter

    events = ClaudeAdapter().normalize(list(records), {})
    return [{**event, "seq": n} for n, event in enumerate(events)]


def assistant(text: str, *, model: str = "claude-test", **extra: Any) -> dict[str, Any]:
    message = {"role": "assistant", "model": model, "content": [{"type": "text", "text": text}]}
    return {"type": "assistant", "message": message, "requestId": f"r-{text[:8]}", **extra}


def test_claude_codes_no_response_requested_is_not_the_models_last_words() -> None:
    events = claude_events(
        {"type": "user", "message": {"role": "user", "content": "重构配置模块"}},
        assistant("配置已拆成两个文件。接下来我要更新 README 里的配置说明。"),
        {"type": "user", "message": {"role": "user", "content": "好"}},
        # What Claude Code writes in the model's place when nothing was asked of it.
        assistant("No response requested.", model="<synthetic>"),
    )
    todo = [item.text for item in extract_semantic_state(events, "claude", CWD).todo]
    assert todo == ["接下来我要更新 README 里的配置说明。"]


def test_failures_nothing_fixed_are_not_counted_as_covered() -> None:
    log = Log().user("部署")
    log.bash("make deploy", "first failure", error=True)
    log.bash("make deploy --retry", "second failure", error=True)
    newest = log.bash("make deploy --force", "third failure", error=True)
    state = state_of(log)
    assert state.blocker is not None and state.blocker.seq == newest
    assert state.slimming.resolved_errors == 0 and state.slimming.unresolved_errors == 2
    card = build_handoff(source(), log.events, SETTINGS).card.text
    line = next(line for line in card.splitlines() if line.startswith("**已按语义瘦身**"))
    assert "丢弃 0 条已被后续成功覆盖的报错" in line and "另有 2 条更早的报错" in line


def test_the_handoff_json_carries_the_maybe_rules_block() -> None:
    log = Log().user("把导出功能做完")
    log.say("好的。").end()
    log.user("导出的文件名里带上日期吧")  # no class takes it: carried as maybe a rule
    log.say("收到。").end()
    handoff = build_handoff(source(), log.events, SETTINGS)
    shown = handoff.as_json()["maybeRules"]
    assert [m["text"] for m in shown["carried"]] == ["导出的文件名里带上日期吧"]
    assert shown["leftOut"] == [] and shown["text"] and shown["text"] in handoff.first_message


def test_the_target_is_told_to_search_only_its_workspace() -> None:
    log = Log().user("查一下哪里用了旧接口")
    log.end()
    first = build_handoff(source(), log.events, SETTINGS).first_message
    assert f"搜索文件只在工作区 {CWD} 内进行" in first and "AppData" in first
