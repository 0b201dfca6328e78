"""PreToolUse payloads of a shell command as each harness sends them, and the permission
decision a hook answered with (the guard's hook tests and its dialect tests share them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def claude(work: Path, command: Any) -> dict[str, Any]:
    return {
        "session_id": "c1",
        "transcript_path": "/h/.claude/projects/-p/c1.jsonl",
        "cwd": str(work),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
    }


def codex(work: Path, tool: str, **tool_input: Any) -> dict[str, Any]:
    return {
        "session_id": "x1",
        "turn_id": "t1",
        "model": "gpt-fake",
        "transcript_path": "/h/.codex/sessions/2026/11/30/rollout-x-x1.jsonl",
        "cwd": str(work),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    }


def dsh(work: Path, tool: str, command: str, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": "s1",
        "cwd": str(work),
        "transcript_path": "/h/.dsh/sessions/--p--/s1/session.jsonl.zstd",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"command": command, **extra},
    }


def gemini(work: Path, command: str) -> dict[str, Any]:
    """A BeforeTool payload as the Gemini CLI 0.61.0 sends it."""
    return {
        "session_id": "g1",
        "transcript_path": "/h/.gemini/tmp/p/chats/session-2026-12-06T13-28-g1.jsonl",
        "cwd": str(work),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-06T13:28:46.535Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": command},
    }


def decision(out: dict[str, Any]) -> tuple[str, str] | None:
    specific = out.get("hookSpecificOutput")
    if not specific:
        return None
    return specific["permissionDecision"], specific["permissionDecisionReason"]
