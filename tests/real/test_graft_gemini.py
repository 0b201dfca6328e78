"""The handoff with the real Gemini CLI (0.61.0), offline against a fake Gemini API on
127.0.0.1, with dshkit's hooks and MCP server installed by `dshkit install-hooks`: at 72% of
the window the nudge reaches the model in its next request, it calls the handoff tool, and
dshkit's launcher starts a new real Gemini CLI session whose first request carries the
identity line and the card; the source then takes no new prompt."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from ..support.fakes import RefusingProxy, fake_gemini
from ..support.real import World, binary
from .test_gemini import SETTINGS, sent
from .test_graft import BLOCKED, BOARD, GRAFT_TOOL, NUDGE, graft_world, handoff_ended, wait_for

pytestmark = pytest.mark.real

TOOL = f"mcp_dshkit_{GRAFT_TOOL}"  # how 0.61.0 names an MCP server's tool


def gemini(world: World, fake: Any, proxy: RefusingProxy, prompt: str, *args: str) -> str:
    done = subprocess.run(
        [
            binary("gemini", "node_modules", ".bin", "gemini"),
            "--skip-trust",
            "--approval-mode",
            "yolo",
            "-m",
            "gemini-2.5-flash",
            *args,
            "-p",
            prompt,
        ],
        env={
            **world.env,
            **proxy.env(),
            "GEMINI_API_KEY": "dummy",
            "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        },
        cwd=world.project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done.stdout + done.stderr


def transcript(world: World, session: str) -> str:
    """The text of the Gemini CLI session `session`'s log ("" until it exists)."""
    for path in (world.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"):
        text = path.read_text()
        if f'"sessionId":"{session}"' in text.split("\n", 1)[0]:
            return text
    return ""


def test_gemini_cli_hands_off_to_a_new_real_session(tmp_path: Path, proxy: RefusingProxy) -> None:
    cli = binary("gemini", "node_modules", ".bin", "gemini")
    world = graft_world(tmp_path, "gemini", cli)
    settings = world.home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(orjson.dumps(SETTINGS).decode())
    world.install_hooks()
    with fake_gemini() as fake:
        fake.script.extend(
            [
                {
                    "tool": "run_shell_command",
                    "arguments": {"command": "cat hello.txt"},
                    "input_tokens": 72_000,
                },
                {"tool": TOOL, "arguments": {}},
            ]
        )
        out = gemini(world, fake, proxy, "read hello.txt")
        assert not fake.script, ("the fake model's script was not played to the end", out[-3000:])
        bodies = [r.body for r in fake.requests]
        after = [b for b in bodies if "hello from the project" in sent(b)]
        assert after and NUDGE in sent(after[0]), out[-2000:]
        source = session_of(world, TOOL.encode())
        txn = wait_for("the handoff to end", lambda: handoff_ended(world, source))
        assert txn.state.name == "COMMITTED", txn.last_error
        target = txn.target_id
        assert target and target != source
        identity = txn.plan.identity.render()
        first = wait_for(
            "the target's request",
            lambda: [r.body for r in fake.requests if identity in sent(r.body)],
        )[0]
        assert BOARD in sent(first)
        wait_for("the target's first turn", lambda: fake.text in transcript(world, target))

        before = len(fake.requests)
        out = gemini(world, fake, proxy, "继续", "--resume", source)
        assert len(fake.requests) == before, "the retired source's prompt reached the model"
        assert BLOCKED in out


def session_of(world: World, mark: bytes) -> str:
    """The id of the session whose log holds `mark` (the source: the one that called the
    handoff tool)."""
    for path in (world.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"):
        text = path.read_bytes()
        if mark in text:
            return str(orjson.loads(text.split(b"\n", 1)[0])["sessionId"])
    raise AssertionError(f"no session's log holds {mark!r}")
