"""The resident hooks in a real Claude Code session, offline against a fake Anthropic API:
`install-hooks --resident` points its prompt, after-tool and stop hooks at a real `dshkit
serve`, and the model is sent the same injected text, byte for byte, as with the command
hooks (a handler of one's own speaking at UserPromptSubmit and PostToolUse, run by the service
in its process); the guard's PreToolUse stays a command hook."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from dshkit.install import resident

from ..support.cli import SCRIPT
from ..support.fakes import RefusingProxy, fake_anthropic
from ..support.real import World, run_claude_raw, strings

pytestmark = [pytest.mark.real]

SPEAKS = (
    "UserPromptSubmit=tests.support.hook_handlers:speak;"
    "PostToolUse=tests.support.hook_handlers:speak"
)
SAID = "from the extra handler"


_CONTEXT = re.compile(
    r"(UserPromptSubmit|PostToolUse:Read) hook additional context: (.*?)"
    r"(?=\n\nToday's date|\n\nThe following |$)",
    re.DOTALL,
)


def spoken(bodies: list[dict[str, object]]) -> list[tuple[str, str]]:
    """What the resident events' hooks injected, as Claude Code showed it to the model: each
    (event, context) of the model's requests, in order (Claude Code's own notes after it,
    the date and the tools an MCP server brought, left out: they come when they come)."""
    found: list[tuple[str, str]] = []
    for body in bodies:
        for said in strings(body.get("messages")):
            if SAID in said:
                found.extend(_CONTEXT.findall(said))
    return found


def session(world: World, proxy: RefusingProxy, **env: str) -> list[tuple[str, str]]:
    read = {"tool": "Read", "arguments": {"file_path": str(world.project / "hello.txt")}}
    with fake_anthropic() as fake:
        fake.script.append(read)
        out = run_claude_raw(world, fake, proxy, "看看项目", DSHKIT_HOOK_HANDLERS=SPEAKS, **env)
        bodies = [r.body for r in fake.requests if r.path.startswith("/v1/messages")]
    assert "ok from the fake model" in out, out[-2000:]
    return spoken(bodies)


def fake_systemctl(world: World, root: Path) -> None:
    """A `systemctl` that answers: `dshkit service install` writes the unit, nothing runs it
    (the test starts `dshkit serve` itself)."""
    bin_dir = root / "bin"
    bin_dir.mkdir()
    script = bin_dir / "systemctl"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    world.env["PATH"] = f"{bin_dir}:{world.env['PATH']}"


def test_resident_hooks_inject_what_the_command_hooks_inject(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    commands = World(tmp_path / "commands", "claude")
    commands.install_hooks()
    by_command = session(commands, proxy)
    events = {event for event, _ in by_command}
    assert events == {"UserPromptSubmit", "PostToolUse:Read"}, by_command

    world = World(tmp_path / "resident", "claude")
    fake_systemctl(world, tmp_path)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    subprocess.run([SCRIPT, "service", "install", "--port", str(port)], env=world.env, check=True)
    world.hooks_command("install-hooks", "--create", "--resident")
    settings = json.loads((world.home / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["PostToolUse"][0]["hooks"][0]["type"] == "http"
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["type"] == "command"
    token = resident.hook_token(world.state)
    assert token is not None
    server = subprocess.Popen(
        [SCRIPT, "serve", "--port", str(port), "--state-dir", str(world.state)],
        env={**world.env, "DSHKIT_HOOK_HANDLERS": SPEAKS},  # as Claude Code's hooks have it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                httpx.post(f"http://127.0.0.1:{port}/api/hooks/Stop", content=b"{}")
                break
            except httpx.TransportError:
                time.sleep(0.1)
        by_service = session(world, proxy, DSHKIT_HOOK_TOKEN=token)
    finally:
        server.terminate()
        server.wait(10)
    # The same text reached the model each way (session ids differ; the contexts do not).
    assert by_service == by_command
