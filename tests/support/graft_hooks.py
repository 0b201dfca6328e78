"""Graft at the hooks, as Claude Code calls them in a graft world (its CLI and sessions root in
the environment): one call's answer, and the context it carries."""

from __future__ import annotations

from typing import Any

import orjson

from .cli import run_dshkit
from .graft_driver import World

FIXED = '[graft]\nmode = "fixed"\nwindow_tokens = 100000\n'  # warn at 70%, cut at 75%


def hook(world: World, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The answer to one hook call in `world` (it must exit 0, say nothing on stderr and log
    no failed handler)."""
    done = run_dshkit(
        "hook",
        event,
        "--state-dir",
        str(world.state),
        home=world.cwd.parent,
        env={**world.env(), "CLAUDECODE": "1"},
        input=orjson.dumps({"hook_event_name": event, **payload}),
        text=False,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    log = world.state / "hooks.log"
    assert not log.exists() or "failed" not in log.read_text(), log.read_text()
    return orjson.loads(done.stdout) if done.stdout else {}


def context(answer: dict[str, Any]) -> str:
    return str(answer.get("hookSpecificOutput", {}).get("additionalContext", ""))
