"""Each harness's logs mapped into the one event model, and the helpers later issues rely on."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.sessions import ADAPTERS, Scanner, Source
from dshkit.sessions.dsh import (
    decode_segment,
    encode_segment,
    parse_log_name,
    project_key,
    project_label,
)
from dshkit.sessions.events import (
    ask_answers,
    context_pressure,
    context_window,
    human_messages,
    is_failed_result,
    message_text,
    pair_tool_calls,
    total_usage,
    turns,
)
from dshkit.sessions.harness import LogFormatError
from dshkit.sessions.summary import dedupe

from ..support.logs import event, human, session_dir, write_log
from ..support.paths import CLAUDE, CODEX, DATA, DSH_PLAIN, DSH_ZSTD


def scan_one(scanner: Scanner, harness: str, root: Path) -> list[dict[str, Any]]:
    report = scanner.scan([Source(harness, root)])
    assert report.errors == []
    (key,) = [k for k in report.changed_sessions]
    return scanner.catalog.events(key)


# -- DSH ------------------------------------------------------------------------------------


def test_project_key_and_segment_encoding() -> None:
    assert project_key("R:\\working zone") == "--R-working~0020zone--"
    assert project_key("/home/dev/work") == "--home-dev-work--"
    assert project_key("/a//b:/c~d") == "--a-b-c~007Ed--"
    assert project_key("/") == "--root--"
    assert project_key(None) == "_no-cwd"
    assert project_key("/" + "x" * 300) == "--" + "x" * 251 + "--"
    assert project_key("/home/用户") == "--home-~7528~6237--"
    for session_id in ("session-1f2e", "a.b", "~x/y z", "表情😀", "-_."):
        assert decode_segment(encode_segment(session_id)) == session_id
    assert encode_segment(".") == "~002E" and encode_segment("..") == "~002E~002E"
    assert encode_segment("😀") == "~D83D~DE00"  # UTF-16 code units, like DSH
    assert project_label("--home-dev-work--") == "home-dev-work"
    assert parse_log_name("session.jsonl.zstd") == (0, True)
    assert parse_log_name("session.v4.jsonl") == (4, False)
    assert parse_log_name("session.v0.jsonl") is None
    assert parse_log_name("session.lock") is None


@pytest.mark.parametrize("root", [DSH_ZSTD, DSH_PLAIN])
def test_real_dsh_v0_logs(scanner: Scanner, root: Path) -> None:
    events = scan_one(scanner, "dsh", root)
    assert all("seq" in e and "type" in e for e in events)
    assert [e["seq"] for e in events] == list(range(len(events)))
    humans = human_messages(events)
    assert len(humans) == 1
    # The runtime-context snapshot is a user/message too, but not the person speaking.
    assert sum(e["type"] == "user/message" for e in events) == 2
    assert context_window(events) == 1_000_000
    assert context_pressure(events) == 234 + 1000


def test_real_dsh_v0_tool_call_pairs_with_its_result(scanner: Scanner) -> None:
    events = scan_one(scanner, "dsh", DSH_PLAIN)
    assert message_text(human_messages(events)[0]) == "Read hello.txt and tell me what it says"
    pairing = pair_tool_calls(events)
    assert [(c.name, c.call_id, c.failed) for c in pairing.calls] == [
        ("read", "call_fake_1", False)
    ]
    assert pairing.calls[0].duration_ms == 16
    assert pairing.unpaired_results == []
    result = pairing.calls[0].result
    assert result is not None and "hello from dsh-study" in message_text(result)
    assert [t.number for t in turns(events)] == [0, 1]
    assert turns(events)[1].end_reason == "completed"
    usage = total_usage(events)
    assert (usage.input, usage.output, usage.cache_read, usage.reasoning) == (468, 112, 2000, 14)


def test_v0_packed_chunk_rows_expand_to_their_members(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "root"
    rows = [
        {
            "type": "text-chunks",
            "seq0": 5,
            "time0": 1000,
            "data": {"turn": 1, "step": 1, "index": 0, "dt": [3, 4], "texts": ["a", "b", "c"]},
        },
        {
            "type": "tool-call-chunks",
            "seq0": 8,
            "time0": 2000,
            "data": {
                "turn": 1,
                "step": 1,
                "index": 1,
                "id": "c1",
                "name": "bash",
                "dt": [1],
                "args": ['{"x"', ":1}"],
            },
        },
        event(
            "tool/call",
            10,
            {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": '{"x":1}'},
        ),
    ]
    write_log(session_dir(root, "s-1") / "session.jsonl.zstd", [rows], version=0)
    events = scan_one(scanner, "dsh", root)
    assert [(e["seq"], e["time"]) for e in events] == [
        (5, 1000),
        (6, 1003),
        (7, 1007),
        (8, 2000),
        (9, 2001),
        (10, 1_790_000_000_010),
    ]
    assert [e["data"]["chunk"].get("text") for e in events[:3]] == ["a", "b", "c"]
    assert events[3]["data"]["chunk"] == {
        "type": "tool-call-delta",
        "index": 1,
        "id": "c1",
        "name": "bash",
        "argumentsDelta": '{"x"',
    }


def test_v4_seq_ranges_and_result_call_ids(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "root"
    call = event(
        "tool/call", 1, {"turn": 1, "step": 1, "callId": "c9", "name": "bash", "arguments": "{}"}
    )
    result = event(
        "tool/result",
        2,
        {
            "turn": 1,
            "step": 1,
            "message": {
                "role": "tool",
                "toolCallId": "c9",
                "isError": True,
                "content": [{"type": "text", "text": "boom"}],
            },
        },
    )
    result["sourceEventSeqs"] = [1, [3, 5], 9]
    write_log(
        session_dir(root, "s-1") / "session.v4.jsonl.zstd", [[human(0, "go"), call], [result]]
    )
    events = scan_one(scanner, "dsh", root)
    assert events[2]["sourceEventSeqs"] == [1, 3, 4, 5, 9]
    pairing = pair_tool_calls(events)
    assert pairing.calls[0].result is events[2] and pairing.calls[0].failed


def test_unsupported_header_version_is_refused_clearly() -> None:
    supported = r"\(supported: 0, 1, 2, 3, 4\)"
    with pytest.raises(LogFormatError, match=rf"unsupported DSH log version 5 {supported}"):
        ADAPTERS["dsh"].normalize([{"type": "session", "version": 5}], {})
    with pytest.raises(LogFormatError, match=r"unsupported DSH log version True"):
        ADAPTERS["dsh"].normalize([{"type": "session", "version": True}], {})
    with pytest.raises(LogFormatError, match="not a session header"):
        ADAPTERS["dsh"].normalize([{"type": "turn/start", "seq": 0}], {})


def test_failure_and_ask_answer_shapes() -> None:
    v0 = {
        "type": "tool/result",
        "data": {
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool-result", "toolCallId": "c1", "isError": True, "content": []}
                ],
            }
        },
    }
    assert is_failed_result(v0)
    assert is_failed_result(
        {"type": "tool/result", "data": {"error": {"code": "X"}, "message": {}}}
    )
    assert not is_failed_result({"type": "tool/result", "data": {"message": {"isError": False}}})
    answer = {
        "type": "tool/result",
        "data": {
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": '{"answers":[{"id":"q","selected":["先如实报告"]}]}'}
                ],
            }
        },
    }
    assert ask_answers(answer) == [{"id": "q", "selected": ["先如实报告"]}]
    assert ask_answers({"type": "tool/result", "data": {"message": {"content": []}}}) is None


def test_dedupe_keeps_same_key_with_different_data() -> None:
    a, b = human(1, "x"), human(1, "y")
    untimed = {"type": "custom", "time": 5, "data": {"v": 1}}
    assert dedupe([a, dict(a), b, untimed, dict(untimed)]) == [a, b, untimed]


# -- Claude Code ----------------------------------------------------------------------------


def test_real_claude_code_transcripts(scanner: Scanner) -> None:
    report = scanner.scan([Source("claude", CLAUDE)])
    assert (report.files, report.sessions, report.human_messages) == (3, 3, 3)
    events = scanner.catalog.events(("claude", "4f94642e-fa5c-495a-ad73-439b8225b50c"))
    assert [message_text(e) for e in human_messages(events)] == ["say hi"]
    assert total_usage(events).input == 100 and total_usage(events).output == 7


def _claude_line(kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "timestamp": "2026-11-30T04:13:07.724Z",
        "sessionId": "c-1",
        "cwd": "/home/dev/p",
        **fields,
    }


def claude_transcript() -> list[dict[str, Any]]:
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 7,
    }
    return [
        _claude_line("user", message={"role": "user", "content": "fix the build"}),
        _claude_line(
            "attachment",
            attachment={
                "type": "hook_additional_context",
                "content": ["关于这个用户"],
                "hookEvent": "x",
            },
        ),
        _claude_line(
            "assistant",
            requestId="r1",
            message={
                "id": "m1",
                "model": "m",
                "content": [{"type": "thinking", "thinking": "hmm"}],
                "usage": usage,
            },
        ),
        _claude_line(
            "assistant",
            requestId="r1",
            message={
                "id": "m1",
                "model": "m",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}
                ],
                "usage": usage,
            },
        ),
        _claude_line(
            "user",
            message={
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "error",
                        "is_error": True,
                    }
                ],
            },
        ),
        _claude_line("user", isMeta=True, message={"role": "user", "content": "<meta>"}),
        _claude_line(
            "user",
            message={
                "role": "user",
                "content": [
                    {"type": "text", "text": "<system-reminder>remember</system-reminder>"},
                    {"type": "text", "text": "now run the tests"},
                ],
            },
        ),
        _claude_line("user", message={"role": "user", "content": "<command-name>/clear"}),
        _claude_line("user", isCompactSummary=True, message={"role": "user", "content": "sum"}),
        _claude_line("brand-new-type", payload=1),
        _claude_line("last-prompt", lastPrompt="x"),
    ]


def test_claude_code_mapping(tmp_path: Path, scanner: Scanner) -> None:
    project = tmp_path / "projects" / "-home-dev-p"
    project.mkdir(parents=True)
    lines = claude_transcript()
    (project / "c-1.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    sub = project / "c-1" / "subagents"
    sub.mkdir(parents=True)
    agent = _claude_line("user", isSidechain=True, message={"role": "user", "content": "task"})
    (sub / "agent-a1.jsonl").write_bytes(orjson.dumps(agent) + b"\n")
    report = scanner.scan([Source("claude", tmp_path / "projects")])
    assert (report.files, report.sessions, report.errors) == (2, 1, [])
    events = scanner.catalog.events(("claude", "c-1"))
    assert [message_text(e) for e in human_messages(events)] == [
        "fix the build",
        "now run the tests",
    ]
    kinds = [e["data"]["source"]["kind"] for e in events if e["type"] == "user/message"]
    assert kinds == [
        "user",
        "hook",
        "runtime-context",
        "user",
        "command",
        "compact-checkpoint",
        "agent-message",
    ]
    pairing = pair_tool_calls(events)
    assert [(c.name, c.failed) for c in pairing.calls] == [("Bash", True)]
    usage = total_usage(events)  # two lines of request r1 carry its usage once
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (10, 5, 100, 7)
    assert [t.number for t in turns(events)] == [1, 2]
    main = scanner.catalog.files(("claude", "c-1"))[0]
    assert main.state["unknownLines"] == 1  # the brand-new entry type, skipped and counted


# -- Codex ------------------------------------------------------------------------------------


def test_real_codex_rollout(scanner: Scanner) -> None:
    events = scan_one(scanner, "codex", CODEX)
    assert [message_text(e) for e in human_messages(events)] == ["say hi"]
    assert any(e["type"] == "developer/message" for e in events)
    injected = [
        e for e in events if e["type"] == "user/message" and e not in human_messages(events)
    ]
    assert "<environment_context>" in message_text(injected[0])
    usage = total_usage(events)  # OpenAI counts cached tokens inside input_tokens
    assert (usage.input, usage.cache_read, usage.output) == (100, 20, 9)
    assert context_window(events) == 258_400
    assert [t.end_reason for t in turns(events)] == ["completed"]


def test_codex_tool_calls_and_messages_without_provenance() -> None:
    def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2026-11-30T04:13:58.633Z", "type": kind, "payload": payload}

    lines = [
        line("session_meta", {"id": "x", "cwd": "/p"}),
        line("event_msg", {"type": "task_started", "model_context_window": 1000}),
        line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<user_instructions>be nice</user_instructions>",
                    },
                    {"type": "input_text", "text": "list files"},
                ],
            },
        ),
        line(
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "f1",
                "arguments": '{"cmd":"ls"}',
            },
        ),
        line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "f1",
                "output": {"content": "denied", "success": False},
            },
        ),
        line(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "last_token_usage": {
                        "input_tokens": 50,
                        "cached_input_tokens": 10,
                        "output_tokens": 3,
                    }
                },
            },
        ),
        line("event_msg", {"type": "turn_aborted"}),
        line("mystery", {}),
    ]
    state: dict[str, Any] = {}
    events = ADAPTERS["codex"].normalize(lines, state)
    assert [message_text(e) for e in human_messages(events)] == ["list files"]
    assert [(c.name, c.failed) for c in pair_tool_calls(events).calls] == [("exec_command", True)]
    assert total_usage(events).input == 40 and total_usage(events).cache_read == 10
    assert turns(events)[-1].end_reason == "aborted"
    assert state["unknownLines"] == 1 and state["cwd"] == "/p"


# -- every adapter ----------------------------------------------------------------------------


def _lines(path: Path) -> list[Any]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


@pytest.mark.parametrize(
    ("harness", "lines"),
    [
        ("dsh", _lines(next(DSH_PLAIN.rglob("session.jsonl")))),
        ("claude", _lines(next(CLAUDE.rglob("*.jsonl")))),
        ("claude", claude_transcript()),
        ("codex", _lines(next(CODEX.rglob("*.jsonl")))),
    ],
)
def test_normalizing_in_pieces_equals_normalizing_at_once(harness: str, lines: list[Any]) -> None:
    adapter = ADAPTERS[harness]
    whole = adapter.normalize(orjson.loads(orjson.dumps(lines)), {})
    rng = random.Random(len(lines))
    for _ in range(20):
        state: dict[str, Any] = {}
        pieces: list[Any] = []
        rest = orjson.loads(orjson.dumps(lines))
        while rest:
            cut = rng.randint(1, len(rest))
            pieces += adapter.normalize(rest[:cut], orjson.loads(orjson.dumps(state)))
            state = _carry(adapter, rest[:cut], state)
            rest = rest[cut:]
        assert pieces == whole


def _carry(adapter: Any, lines: list[Any], state: dict[str, Any]) -> dict[str, Any]:
    """The state after normalizing `lines`, round-tripped through JSON as the store keeps it."""
    adapter.normalize(orjson.loads(orjson.dumps(lines)), state)
    return orjson.loads(orjson.dumps(state))


def test_v4_fixture_written_from_the_notes(tmp_path: Path, scanner: Scanner) -> None:
    """A v4 log shaped as the notes and seed 001 §1.9 describe, framed the way DSH frames it."""
    header, *records = _lines(DATA / "dsh-v4-session.jsonl")
    root = tmp_path / "sessions"
    directory = session_dir(root, header["id"], cwd=header["cwd"])
    assert directory.parent.name == "--R-working~0020zone--"
    batches = [records[i : i + 2] for i in range(0, len(records), 2)]
    log = directory / "session.v4.jsonl.zstd"
    write_log(log, batches, session_id=header["id"], cwd=header["cwd"])
    events = scan_one(scanner, "dsh", root)
    assert len(events) == len(records) == 20
    assert [message_text(e) for e in human_messages(events)] == [
        "帮我把测试跑一遍，失败的先别修",
        "先不修，但把失败原因列出来",
    ]
    pairing = pair_tool_calls(events)
    assert [(c.name, c.failed) for c in pairing.calls] == [
        ("pwsh", True),
        ("ask_user_question", False),
    ]
    ((_, answer),) = pairing.unpaired_results
    assert ask_answers(answer) == [{"id": "fix_now", "selected": ["先不修"]}]
    assert events[16]["sourceEventSeqs"] == [1, 2]
    assert context_pressure(events) == 300 + 45200
    assert tuple(scanner.store.db.execute("SELECT title, cwd FROM sessions").fetchone()) == (
        "跑测试",
        "R:\\working zone",
    )
