"""`dshkit hook EVENT` as the harnesses run it: a process, a payload on stdin, JSON on stdout."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.profile.state import ProfileState
from dshkit.store import Store

from .test_profile_state import PROFILE, store_version

DSHKIT = str(Path(sys.executable).parent / "dshkit")
TESTS = Path(__file__).parent


def hook(home: Path, event: str, payload: dict[str, Any], **env: str) -> tuple[dict[str, Any], str]:
    environ = {
        **os.environ,
        "HOME": str(home),
        "DSH_HOME": str(home / ".dsh"),
        "PYTHONPATH": str(TESTS.parent),
        **env,
    }
    done = subprocess.run(
        [DSHKIT, "hook", event],
        input=orjson.dumps(payload),
        capture_output=True,
        env=environ,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    return (orjson.loads(done.stdout) if done.stdout else {}), _log(home)


def _log(home: Path) -> str:
    path = home / ".dsh" / "dshkit" / "hooks.log"
    return path.read_text() if path.exists() else ""


def claude(session: str, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"/h/.claude/projects/-p/{session}.jsonl",
        "cwd": "/p",
        "hook_event_name": "SessionStart",
        **extra,
    }


def dsh(session: str, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "cwd": "/p",
        "transcript_path": f"/h/.dsh/sessions/--p--/{session}/session.jsonl.zstd",
        **extra,
    }


def codex(session: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "turn_id": "t1",
        "model": "gpt-fake",
        "source": "startup",
        "transcript_path": f"/h/.codex/sessions/2026/11/30/rollout-x-{session}.jsonl",
    }


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with Store(tmp_path / ".dsh" / "dshkit") as store:
        store_version(store, PROFILE)
    return tmp_path


def effective(home: Path) -> str:
    with Store(home / ".dsh" / "dshkit") as store:
        return ProfileState(store).effective().text


def context(out: dict[str, Any]) -> str | None:
    return out.get("hookSpecificOutput", {}).get("additionalContext")


def test_claude_and_codex_get_the_profile_once_per_session_at_start(home: Path) -> None:
    text = effective(home)
    first, _ = hook(home, "SessionStart", claude("c1", source="startup"))
    assert first == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}
    }
    assert hook(home, "SessionStart", claude("c1", source="resume"))[0] == {}
    assert hook(home, "UserPromptSubmit", claude("c1", prompt="hi"))[0] == {}
    assert context(hook(home, "SessionStart", claude("c1", source="compact"))[0]) == text
    other, _ = hook(home, "SessionStart", claude("c2", source="startup"))
    assert context(other) == text  # byte for byte the same in another session
    assert context(hook(home, "SessionStart", codex("x1"))[0]) == text


def test_dsh_gets_it_with_the_first_prompt_and_never_again(home: Path) -> None:
    text = effective(home)
    assert hook(home, "SessionStart", dsh("session-1", source="startup"))[0] == {}
    first, _ = hook(home, "UserPromptSubmit", dsh("session-1", prompt="fix the build"))
    assert context(first) == text
    # DSH fires UserPromptSubmit before every model step, its prompt the contexts so far.
    again, _ = hook(home, "UserPromptSubmit", dsh("session-1", prompt=text))
    assert again == {}


def test_nothing_to_inject_means_no_context_at_all(tmp_path: Path) -> None:
    assert hook(tmp_path, "SessionStart", claude("c1", source="startup"))[0] == {}
    assert hook(tmp_path, "UserPromptSubmit", dsh("session-1", prompt="hi"))[0] == {}


def test_the_agent_is_never_broken(home: Path) -> None:
    out, log = hook(
        home,
        "SessionStart",
        claude("c1"),
        DSHKIT_HOOK_HANDLERS=(
            "SessionStart=tests.hook_handlers:crash;SessionStart=tests.hook_handlers:speak"
        ),
    )
    assert "forced crash" in log
    assert context(out) == effective(home) + "\n\nfrom the extra handler"  # the others still speak
    started = time.monotonic()
    out, log = hook(
        home,
        "PreToolUse",
        {"tool_name": "Bash"},
        DSHKIT_HOOK_BUDGET_S="0.5",
        DSHKIT_HOOK_HANDLERS="PreToolUse=tests.hook_handlers:stall",
    )
    assert out == {} and time.monotonic() - started < 10 and "took more than 0.5 s" in log
    for raw in (b"not json", b"[1, 2]", b"\xff\xfe"):
        done = subprocess.run(
            [DSHKIT, "hook", "SessionStart"],
            input=raw,
            capture_output=True,
            env={**os.environ, "DSH_HOME": str(home / ".dsh")},
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert hook(home, "NoSuchEvent", {})[0] == {}
    assert "unknown hook event 'NoSuchEvent'" in _log(home)


def test_nothing_longer_than_the_protocol_cap_is_emitted(home: Path) -> None:
    with Store(home / ".dsh" / "dshkit") as store:
        state = ProfileState(store)
        state.set_custom_text("\n".join(f"第 {n} 条：请用中文回答。" for n in range(2000)))
        state.set_mode("custom")
    out, _ = hook(home, "SessionStart", claude("c9", source="startup"))
    text = context(out)
    assert text is not None and 9_000 < len(text) <= 10_000 and text.endswith("请用中文回答。")


def test_stop_starts_one_detached_refresh(tmp_path: Path) -> None:
    started = time.monotonic()
    out, _ = hook(tmp_path, "Stop", claude("c1", stop_hook_active=False))
    assert out == {} and time.monotonic() - started < 5  # the agent is not kept waiting
    state = tmp_path / ".dsh" / "dshkit"
    deadline = time.monotonic() + 30
    while True:
        with Store(state) as store:
            run = store.get_meta("profile.lastRun")
        if run:
            break
        assert time.monotonic() < deadline, "the detached refresh never ran"
        time.sleep(0.2)
    assert "not enough material yet" in orjson.loads(run)["reason"]


def test_the_hot_path_imports_nothing_heavy(tmp_path: Path) -> None:
    # Structural, not timed (bench/hook_latency.py measures): a PreToolUse with no handler
    # must not pay for click, JSON, SQLite or dataclasses.
    probe = (
        "import sys; sys.argv = ['dshkit', 'hook', 'PreToolUse']\n"
        "from dshkit.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'click', 'json', 'sqlite3', 'orjson', 'dataclasses', 'pathlib', 'zstandard'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=b"{}",
        capture_output=True,
        env={**os.environ, "DSH_HOME": str(tmp_path)},
        check=True,
    )
    assert done.stdout.strip() == b"[]", done.stdout
