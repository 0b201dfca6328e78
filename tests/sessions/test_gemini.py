"""Gemini CLI sessions (written by the real CLI, 0.61.0) mapped into the one event model."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson

from dshkit import harnesses
from dshkit.sessions import ADAPTERS, Scanner, Source
from dshkit.sessions.events import (
    human_messages,
    message_text,
    pair_tool_calls,
    total_usage,
    turn_ordinals,
)

from ..support.paths import GEMINI

ALLOWED = GEMINI / "project" / "chats" / "session-2026-12-06T13-28-6e0b0122.jsonl"
DENIED = GEMINI / "project" / "chats" / "session-2026-12-06T13-26-2964c2e8.jsonl"


def _events(path: Path) -> list[dict[str, Any]]:
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    return ADAPTERS["gemini"].normalize(lines, {})


def test_the_persons_words_without_the_hooks_context_or_the_clis() -> None:
    events = _events(ALLOWED)
    assert [message_text(e) for e in human_messages(events)] == ["show me hello.txt"]
    context = [e for e in events if e["type"] == "user/message" and e not in human_messages(events)]
    assert [message_text(e) for e in context] == [
        "<hook_context>CTX-SESSIONSTART</hook_context>\n<hook_context>CTX-BEFOREAGENT</hook_context>"
    ]
    assert "<session_context>" not in orjson.dumps(events).decode()


def test_a_prompt_begins_a_turn_and_hooks_context_begins_none() -> None:
    # As Claude Code's adapter does for a person's words, and Codex's at a task's start: the
    # watermark's rules, the session view and the signals count turns by `turn/start`.
    events = _events(ALLOWED)
    starts = [e for e in events if e["type"] == "turn/start"]
    (prompt,) = human_messages(events)
    assert [e["data"]["turn"] for e in starts] == [1]
    assert events.index(starts[0]) == events.index(prompt) - 1
    assert turn_ordinals(events)[events.index(prompt)] == 1


def test_a_message_written_again_is_one_event_and_its_call_pairs_with_its_result() -> None:
    events = _events(ALLOWED)
    (call,) = [e for e in events if e["type"] == "tool/call"]
    assert call["data"]["name"] == "run_shell_command"
    assert orjson.loads(call["data"]["arguments"]) == {"command": "cat hello.txt"}
    (result,) = [e for e in events if e["type"] == "tool/result"]
    assert "hello from the project" in message_text(result)
    assert not result["data"]["message"]["isError"]
    pairing = pair_tool_calls(events)
    assert [p.result for p in pairing.calls] == [result]
    assert pairing.unpaired_results == []
    answers = [e for e in events if e["type"] == "assistant/message"]
    assert [message_text(e) for e in answers] == ["ok from the fake model"]
    usage = total_usage(events)  # two model requests, each written with its tokens
    assert (usage.input, usage.output) == (200, 14)


def test_a_call_a_hook_denied_is_a_failed_result_with_the_reason() -> None:
    (result,) = [e for e in _events(DENIED) if e["type"] == "tool/result"]
    assert result["data"]["message"]["isError"]
    assert "DENIED-BY-HOOK" in message_text(result)


def test_normalizing_in_pieces_equals_normalizing_at_once() -> None:
    adapter = ADAPTERS["gemini"]
    lines = [orjson.loads(x) for x in ALLOWED.read_bytes().splitlines() if x.strip()]
    whole = adapter.normalize(orjson.loads(orjson.dumps(lines)), {})
    rng = random.Random(7)
    for _ in range(20):
        state: dict[str, Any] = {}
        pieces: list[Any] = []
        rest = list(lines)
        while rest:
            cut = rng.randint(1, len(rest))
            pieces += adapter.normalize(orjson.loads(orjson.dumps(rest[:cut])), state)
            state = orjson.loads(orjson.dumps(state))  # as the store keeps it
            rest = rest[cut:]
        assert pieces == whole


def test_scanned_from_its_root_as_sessions_of_the_project(scanner: Scanner) -> None:
    report = scanner.scan([Source("gemini", GEMINI)])
    assert report.errors == []
    assert len(report.changed_sessions) == 4
    # Keyed by the CLI's own session id, the one its hooks' payloads carry.
    key = next(k for k in report.changed_sessions if k[1] == "6e0b0122-0a18-4872-ad22-879ebdf95250")
    events = scanner.catalog.events(key)
    assert [message_text(e) for e in human_messages(events)] == ["show me hello.txt"]
    (info,) = [i for i in scanner.catalog.recent("gemini", limit=None) if i.session_id == key[1]]
    assert info.cwd == "/home/dev/project"  # from the context the CLI set up first


def test_a_hook_transcript_path_names_the_same_log_as_discovery() -> None:
    adapter = ADAPTERS["gemini"]
    (found,) = [f for f in adapter.discover(str(GEMINI)) if f.path == str(ALLOWED)]
    assert adapter.log_file(str(ALLOWED)) == found
    assert found.project == "project"
    assert found.session_id == "6e0b0122-0a18-4872-ad22-879ebdf95250"
    assert adapter.log_file(str(GEMINI / "project" / "logs.json")) is None


def test_its_payloads_are_told_from_the_other_harnesses() -> None:
    payload = {
        "session_id": "6e0b0122-0a18-4872-ad22-879ebdf95250",
        "transcript_path": str(ALLOWED),
        "cwd": "/home/dev/project",
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-06T13:28:46.535Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "ls"},
    }
    assert harnesses.detect(payload, {}) == "gemini"
    reply = harnesses.dialect("gemini").reply(
        "PreToolUse", {"permissionDecision": "deny", "permissionDecisionReason": "no"}
    )
    assert (reply.output, reply.error, reply.code) == ({}, "no", 2)


def test_a_stop_hooks_reason_sent_on_as_a_prompt_is_not_the_persons() -> None:
    # Written by 0.61.0 when an AfterAgent hook blocked once with "REWORK-PLEASE".
    path = GEMINI / "project" / "chats" / "session-2026-12-06T13-43-b3276730.jsonl"
    events = _events(path)
    assert [message_text(e) for e in human_messages(events)] == ["do it"]
    reasons = [e for e in events if e["type"] == "user/message" and e not in human_messages(events)]
    assert [message_text(e) for e in reasons] == ["REWORK-PLEASE"]
