"""The real Gemini CLI (0.61.0), offline against a fake Gemini API on 127.0.0.1, with dshkit's
hooks installed by `dshkit install-hooks --harness gemini`.

Proves through the fake server's recorded requests that the profile reaches the model once
per session; that a PreToolUse deny in dshkit's words stops the command through the Gemini
CLI's own dialect (exit 2, the reason on stderr) and the model gets the reason; that a
crashing handler leaves the session working; that dshkit counts the person's messages in
the logs it wrote; and that uninstalling gives the settings file its old bytes back.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from ..support.fakes import RefusingProxy, fake_gemini
from ..support.hook_handlers import DENIED
from ..support.real import World, binary

pytestmark = pytest.mark.real

CRASH = (
    "SessionStart=tests.support.hook_handlers:crash;"
    "UserPromptSubmit=tests.support.hook_handlers:crash"
)
POLICY = "PreToolUse[command]=tests.support.hook_handlers:deny"
# The person's own settings: an API key login (the fake takes any key), nothing sent home.
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    # A fixed model: with "auto", a routing classifier first asks the model for JSON (and the
    # fake's text makes it retry with backoff for a minute and a half).
    "model": {"name": "gemini-2.5-flash"},
    # (0.61.0's names: it rewrites the older `disableAutoUpdate` in the file itself)
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def sent(body: dict[str, Any]) -> str:
    """Every string of a request's conversation and system instruction, joined."""
    return "\n".join(strings([body.get("contents"), body.get("systemInstruction")]))


def run_gemini(world: World, fake: Any, proxy: RefusingProxy, prompt: str, **extra: str) -> str:
    env = {
        **world.env,
        **proxy.env(),
        **extra,
        "GEMINI_API_KEY": "dummy",
        "GOOGLE_GEMINI_BASE_URL": fake.base_url,
    }
    done = subprocess.run(
        [
            binary("gemini", "node_modules", ".bin", "gemini"),
            "--skip-trust",  # the project folder was never trusted in its own interface
            "--approval-mode",
            "yolo",  # headless, a shell call runs only so (or is left out of the tools)
            "-m",
            "gemini-2.5-flash",  # a fixed model: no routing requests before the answer
            "-p",
            prompt,
        ],
        env=env,
        cwd=world.project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, (done.stdout[-1500:], done.stderr[-2000:])
    return done.stdout


def test_gemini_cli(tmp_path: Path, proxy: RefusingProxy) -> None:
    world = World(tmp_path, "gemini")
    settings = world.home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(orjson.dumps(SETTINGS, option=orjson.OPT_INDENT_2).decode())
    world.install_hooks()
    installed = orjson.loads(settings.read_bytes())
    assert installed["security"] == SETTINGS["security"]  # the person's settings stay
    (group,) = installed["hooks"]["BeforeTool"]
    assert group["hooks"][0]["timeout"] == 30_000  # its unit is the millisecond
    assert "PreToolUse" not in installed["hooks"]
    assert "mcp" in installed["mcpServers"]["dshkit"]["args"]  # in its own MCP map
    with fake_gemini() as fake:
        sessions = []
        for prompt in ("say hi", "say hi again"):
            fake.requests.clear()
            assert "ok from the fake model" in run_gemini(world, fake, proxy, prompt)
            sessions.append([r.body for r in fake.requests])
        for requests in sessions:
            assert [sent(body).count(world.text) for body in requests] == [1]

        fake.requests.clear()
        fake.script.append({"tool": "run_shell_command", "arguments": {"command": "ls"}})
        run_gemini(world, fake, proxy, "list the files", DSHKIT_HOOK_HANDLERS=POLICY)
        answers = [
            part["functionResponse"]["response"]
            for request in fake.requests
            for content in request.body["contents"]
            for part in content["parts"]
            if "functionResponse" in part
        ]
        assert answers and DENIED in answers[0]["error"]  # refused, the reason sent back

        fake.requests.clear()
        run_gemini(world, fake, proxy, "and once more", DSHKIT_HOOK_HANDLERS=CRASH)
        assert fake.requests, "the session died with its hook"
    assert "forced crash" in world.hook_log()
    assert world.human_messages(world.home / ".gemini" / "tmp") == 4
    world.uninstall_hooks_leaves_no_trace()
