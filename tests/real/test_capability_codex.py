"""Capability facts in a real Codex session in workspace-write, offline against a fake
Responses API: the probes dshkit starts from the session's hook run through `codex sandbox`
for that mode (the Codex running the hook found from its hook environment), so the session is
told the screenshot fails there, with the raw reason, and that the gate runs outside."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support.capability import wait_for_probes
from ..support.fakes import RefusingProxy, fake_responses
from ..support.real import World, codex_config, run_codex_exec, texts

pytestmark = [pytest.mark.real, pytest.mark.browser]  # the screenshot probe runs Chromium


def run(world: World, proxy: RefusingProxy, prompt: str) -> None:
    done = run_codex_exec(world, proxy, prompt, DSHKIT_CAPABILITY="on")
    assert done.returncode == 0, (done.stdout[-1500:], done.stderr[-2000:])


def test_a_workspace_write_session_is_told_what_its_sandbox_lets_it_do(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    world = World(tmp_path, "codex")
    with fake_responses() as fake:
        codex_config(world, fake.base_url)  # sandbox_mode = "workspace-write"
        world.install_hooks()
        run(world, proxy, "say hi")
        wait_for_probes(world.state)
        fake.requests.clear()
        run(world, proxy, "say hi again")  # a new session: the facts from the cache
        bodies = [r.body for r in fake.requests if r.path.endswith("/responses")]
    told = texts(bodies[0])
    assert "- 权限档：workspace-write" in told, world.hook_log()
    assert "经 codex sandbox (workspace-write) 在本会话自己的沙箱里实测" in told
    assert "- 子进程：✓" in told
    assert "- 视觉截图（无头浏览器）：✗" in told and "Operation not permitted" in told
    assert "交付门和 dshkit 的 gate_check 工具都在你的沙箱之外运行" in told
