"""The Gemini CLI's module: its hook dialect, its MCP trust and its launcher, as 0.61.0 has them
(docs/hooks.md#gemini-cli)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from dshkit import harnesses
from dshkit.harnesses.gemini import trusted
from dshkit.harnesses.mcp_trust import NOT_APPROVED, SWITCHED_OFF
from dshkit.hooks.dispatch import _hook

GEMINI = harnesses.get("gemini")


def test_its_events_go_by_its_own_names_and_a_block_is_exit_code_two() -> None:
    dialect = GEMINI.dialect
    assert dialect.installed(
        {"PreToolUse": "^run_shell_command$", "Stop": "", "SessionStart": ""}
    ) == {
        "BeforeTool": ("PreToolUse", "^run_shell_command$"),
        "AfterAgent": ("Stop", ""),
        "SessionStart": ("SessionStart", ""),
    }
    assert dialect.timeout(30) == 30_000 and harnesses.get("claude").dialect.timeout(30) == 30
    deny = dialect.reply(
        "PreToolUse", {"permissionDecision": "deny", "permissionDecisionReason": "no"}
    )
    assert (deny.output, deny.error, deny.code) == ({}, "no", 2)
    context = dialect.reply("SessionStart", {"additionalContext": "profile"})
    assert context.code == 0
    assert context.output == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "profile"}
    }


def test_a_payload_of_its_own_event_or_transcript_is_its() -> None:
    assert harnesses.detect({"hook_event_name": "BeforeAgent"}, {}) == "gemini"
    log = "/h/.gemini/tmp/p/chats/session-2026-12-06T13-28-6e0b0122.jsonl"
    assert (
        harnesses.detect({"hook_event_name": "SessionStart", "transcript_path": log}, {})
        == "gemini"
    )
    assert harnesses.detect({"transcript_path": "/h/.claude/projects/-p/s.jsonl"}, {}) == "claude"


def test_a_handler_reads_the_persons_words_without_the_hooks_context() -> None:
    # As 0.61.0 sends BeforeAgent headless, SessionStart's context in front of the prompt.
    raw = {
        "session_id": "s",
        "transcript_path": "/h/.gemini/tmp/p/chats/session-2026-12-06T13-28-6e0b0122.jsonl",
        "hook_event_name": "BeforeAgent",
        "prompt": "<hook_context>profile &lt;here&gt;</hook_context>\n\nlist files",
    }
    call = _hook("UserPromptSubmit", orjson.dumps(raw), {}, None)
    assert call.harness == "gemini" and call.payload["prompt"] == "list files"
    dialect = GEMINI.dialect
    assert dialect.incoming({"prompt": "a <hook_context>x"}) == {"prompt": "a <hook_context>x"}
    assert dialect.incoming({"prompt": "mine"}) == {"prompt": "mine"}
    claude = harnesses.get("claude").dialect  # the others' prompts are left as they are
    same = {"prompt": "<hook_context>x</hook_context> y"}
    assert claude.incoming(same) is same


@pytest.mark.parametrize(
    ("folders", "expected"),
    [
        ({}, False),
        ({"/w/p": "TRUST_FOLDER"}, True),
        ({"/w": "TRUST_FOLDER"}, True),
        ({"/w/p/x": "TRUST_PARENT"}, True),
        ({"/w": "TRUST_FOLDER", "/w/p": "DO_NOT_TRUST"}, False),
        ({"/w/pp": "TRUST_FOLDER"}, False),
    ],
)
def test_trusted_folders_as_it_reads_them(folders: dict[str, str], expected: bool) -> None:
    assert trusted("/w/p", folders) is expected


def test_a_project_server_counts_only_in_a_trusted_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".gemini").mkdir(parents=True)
    (project / ".gemini").mkdir(parents=True)
    user = {
        "mcpServers": {"mine": {"command": "true"}, "off": {"command": "true"}},
        "mcp": {"excluded": ["off"]},
    }
    (home / ".gemini" / "settings.json").write_text(json.dumps(user))
    theirs = {"mcpServers": {"projsrv": {"command": "true"}}}
    (project / ".gemini" / "settings.json").write_text(json.dumps(theirs))
    monkeypatch.setenv("HOME", str(home))
    for name in (
        "GEMINI_CLI_HOME",
        "GEMINI_CLI_TRUST_WORKSPACE",
        "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
    ):
        monkeypatch.delenv(name, raising=False)
    capability = GEMINI.capability
    assert capability is not None

    def judged() -> dict[str, str]:
        errors: list[str] = []
        servers = capability.mcp_servers(str(project), errors)
        assert errors == []
        return {s.name: s.withheld for s in servers}

    assert judged() == {"mine": "", "off": SWITCHED_OFF, "projsrv": NOT_APPROVED}
    folders = {str(project): "TRUST_FOLDER"}
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps(folders))
    assert judged() == {"mine": "", "off": SWITCHED_OFF, "projsrv": ""}


def test_it_starts_headless_with_its_first_message_and_resumes() -> None:
    launcher = GEMINI.launcher
    start = launcher.start("/w", "继续", model="gemini-2.5-flash", mode="yolo")
    assert start.argv == [
        "gemini", "--skip-trust", "-m", "gemini-2.5-flash", "--approval-mode", "yolo",
    ]  # fmt: skip
    assert start.stdin == "继续"  # never on the command line
    resumed = launcher.resume("/w", "sid", "next")
    assert resumed is not None and resumed.argv[-2:] == ["--resume", "sid"]
    assert resumed.stdin == "next"
