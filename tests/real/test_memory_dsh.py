"""Memory in real DSH sessions (its Claude-Code hook bridge), offline against a fake
chat-completions API. The bridge runs no SessionEnd and no PreCompact: a run's Stop is all the
end there is, so the Stop hook harvests the session, and the next session in the project is
given what it learned (SessionStart's context, which the bridge runs detached, reaches its
second request)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from dshkit.memory.service import MemoryService

from ..support.fakes import RefusingProxy, fake_chat
from ..support.real import World, binary, dsh_world, texts

pytestmark = pytest.mark.real

MARKER = "lint-real-dsh-marker"


def run_dsh(world: World, proxy: RefusingProxy, prompt: str, script: list[Any]) -> list[Any]:
    """One headless DSH run in the world's project, the fake model answering with `script`
    first; the request bodies the model was sent."""
    with fake_chat() as fake:
        fake.script.extend(script)
        done = subprocess.run(
            [binary("dsh", "node_modules", ".bin", "dsh"), "--profile", "headless", prompt],
            env={
                **world.env,
                **proxy.env(),
                "DSHKIT_CAPABILITY": "off",
                "DEEPSEEK_BASE_URL": fake.base_url,
                "DEEPSEEK_API_KEY": "sk-fake",
                "DSH_TELEMETRY_DISABLED": "1",
            },
            cwd=world.project,
            capture_output=True,
            text=True,
            timeout=180,
        )
        bodies = [r.body for r in fake.requests]
    assert done.returncode == 0, done.stderr[-2000:]
    return bodies


def test_a_dsh_session_is_harvested_at_its_stop_and_given_to_the_next(
    tmp_path: Path, proxy: RefusingProxy, dsh_profile_template: Path
) -> None:
    world = dsh_world(tmp_path, dsh_profile_template)
    (world.state / "config.toml").write_text('[optimizer]\ntier = "off"\n')
    installed = set(json.loads((world.state / "dsh-hooks.json").read_text())["hooks"])
    assert "Stop" in installed and "SessionEnd" not in installed  # the bridge runs none
    # What the person asks to be remembered (a negative path would do as well, but DSH's
    # bash reports a failure as "[exit code: 1]" in a result not marked failed, which the
    # harvest does not read as a failure yet).
    run_dsh(world, proxy, f"记住：发布前先跑 make {MARKER}", [])
    service = MemoryService(world.state)
    deadline = time.monotonic() + 90  # the Stop hook's detached harvest; not a speed check
    found: list[str] = []
    while time.monotonic() < deadline and not any(MARKER in t for t in found):
        time.sleep(0.5)
        found = [r.text for r in service.records(None, kinds=("fact",)).records]
    assert any(MARKER in t for t in found), (found, world.hook_log())
    # A new session in the project: its start's context carries the failure and its fix.
    bodies = run_dsh(
        world,
        proxy,
        "再检查一遍",
        [{"tool": "bash", "arguments": {"command": "ls", "description": "list"}}],
    )
    assert len(bodies) >= 2 and MARKER in texts(bodies[-1]), world.hook_log()
    world.uninstall_hooks_leaves_no_trace()
