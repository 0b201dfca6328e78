"""`dshkit hook EVENT` as the harnesses run it (a payload on stdin, JSON on stdout), through the
hook runtime in this process (tests/support/cli.py), and the payloads each harness sends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from .cli import environment, hook_here, run_dshkit

# A process holding the store's lock until its stdin closes (`exclusive`: readers are shut
# out too); it prints "locked" once it holds it. Argv: the database, the mode.
LOCKER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive":
    db.execute("PRAGMA locking_mode=EXCLUSIVE")  # readers are shut out too
    db.execute("BEGIN EXCLUSIVE")
else:
    db.execute("BEGIN IMMEDIATE")  # the write lock: readers still read (WAL)
db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('test.lock', 'held')")
print("locked", flush=True)
sys.stdin.read()
"""


def hook(home: Path, event: str, payload: dict[str, Any], **env: str) -> tuple[dict[str, Any], str]:
    """The answer to one hook call under `home` (it must exit 0 and say nothing on stderr),
    and the hook log so far."""
    done = run_dshkit(
        "hook", event, home=home, env=env, input=orjson.dumps(payload), text=False, timeout=60
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    return (orjson.loads(done.stdout) if done.stdout else {}), hook_log(home)


def unanswered(home: Path, event: str, payload: dict[str, Any], **env: str) -> str:
    """One hook call under `home` whose harness went away before the answer came (its end of
    stdout closed): it must exit 0 and say nothing on stderr. The hook log so far."""
    code, _, err = hook_here([event], environment(home, env), orjson.dumps(payload), gone=True)
    assert code == 0 and err == b"", err
    return hook_log(home)


def hook_log(home: Path) -> str:
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


def context(out: dict[str, Any]) -> str | None:
    return out.get("hookSpecificOutput", {}).get("additionalContext")
