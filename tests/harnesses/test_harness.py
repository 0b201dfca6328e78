"""What a harness module declares: its hook dialect's names, answers and marks."""

from __future__ import annotations

import pytest

from dshkit import harnesses, hookspec
from dshkit.harnesses.harness import EVENTS, HookDialect, Reply

VERDICT = {
    "additionalContext": "上下文",
    "permissionDecision": "deny",
    "permissionDecisionReason": "不行",
    "decision": "block",
    "reason": "继续",
}


def test_the_reference_dialect_writes_claude_codes_shape() -> None:
    reply = HookDialect().reply("PreToolUse", VERDICT)
    assert (reply.error, reply.code) == ("", 0)
    assert list(reply.output) == ["hookSpecificOutput", "decision", "reason"]  # (their order)
    assert reply.output["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "additionalContext": "上下文",
        "permissionDecision": "deny",
        "permissionDecisionReason": "不行",
    }
    assert (reply.output["decision"], reply.output["reason"]) == ("block", "继续")
    assert not HookDialect().reply("Stop", {}) and not Reply({})


def test_the_hook_registry_has_the_dialects_events() -> None:
    # One tuple: a dialect names each of these, and every handler is registered under one.
    assert hookspec.EVENTS is EVENTS
    assert {entry.event for entry in hookspec.HANDLERS} <= set(EVENTS)


def test_every_harness_here_speaks_the_reference_dialect() -> None:
    # (but the Gemini CLI, whose dialect is its own: tests/harnesses/test_gemini.py)
    for harness in harnesses.all_harnesses():
        dialect = harness.dialect
        if harness.name == "gemini":
            continue
        # Each event it has goes by its canonical name (DSH's bridge lacks SessionEnd and
        # PreCompact: it has no name for them, never another one).
        assert all(dialect.name(event) in (event, None) for event in EVENTS), harness
        assert dialect.block_exit is None and not dialect.own
        for event in EVENTS:
            assert (
                dialect.reply(event, VERDICT).output == HookDialect().reply(event, VERDICT).output
            )


def test_a_dialect_of_its_own_names_and_exit_codes() -> None:
    names = {"PreToolUse": "BeforeTool", "SessionEnd": None}
    dialect = HookDialect(names=names, block_exit=2)
    assert (
        dialect.name("PreToolUse") == "BeforeTool" and dialect.event("BeforeTool") == "PreToolUse"
    )
    assert dialect.name("SessionEnd") is None and dialect.own == {"BeforeTool"}
    wanted = {"PreToolUse": "^(x)$", "SessionEnd": "", "Stop": ""}
    assert dialect.installed(wanted) == {
        "BeforeTool": ("PreToolUse", "^(x)$"),
        "Stop": ("Stop", ""),
    }
    denied = dialect.reply(
        "PreToolUse", {"permissionDecision": "deny", "permissionDecisionReason": "r"}
    )
    assert (denied.output, denied.error, denied.code) == ({}, "r", 2)
    blocked = dialect.reply(
        "Stop", {"decision": "block", "reason": "go on", "additionalContext": "c"}
    )
    assert (blocked.output, blocked.error, blocked.code) == ({}, "go on", 2)
    asked = dialect.reply(
        "PreToolUse", {"permissionDecision": "ask", "permissionDecisionReason": "?"}
    )
    assert asked.code == 0 and asked.output["hookSpecificOutput"]["hookEventName"] == "BeforeTool"
    with pytest.raises(ValueError, match="unknown hook event 'BeforeTool'"):
        HookDialect(names={"BeforeTool": "PreToolUse"})


def test_a_payload_is_claimed_by_its_harness_marks() -> None:
    dsh, claude, codex = (harnesses.get(name) for name in ("dsh", "claude", "codex"))
    rollout = "/h/.codex/sessions/2026/11/30/rollout-2026-11-30T04-13-58-01a.jsonl"
    assert codex.recognise({}, rollout, {}) == 2 and codex.recognise({"turn_id": "t"}, "", {}) == 2
    assert dsh.recognise({}, "/h/.dsh/sessions/--p--/s/session.jsonl.zstd", {}) == 2
    assert claude.recognise({}, "/h/.claude/projects/-p/s.jsonl", {}) == 1  # a hint only
    assert claude.recognise({}, "", {"CLAUDECODE": "1"}) == 1
    # Codex's rollout under a Claude-looking path, or with Claude's variable: Codex's.
    assert (
        harnesses.detect(
            {"transcript_path": "/h/.claude/projects/-p/" + rollout.rsplit("/")[-1]}, {}
        )
        == "codex"
    )
    assert harnesses.detect({"turn_id": "t"}, {"CLAUDECODE": "1"}) == "codex"
    assert harnesses.marks() == ("turn_id",)


def test_the_events_each_harness_lacks_are_the_registrys_to_say() -> None:
    missing = {
        h.name: {e for e in EVENTS if h.dialect.name(e) is None} for h in harnesses.all_harnesses()
    }
    # DSH's hook bridge (dsh-hooks-claude-code 0.0.1-rc.5) runs no SessionEnd, no PreCompact.
    assert missing["dsh"] == {"SessionEnd", "PreCompact"}
    assert missing["claude"] == set()
