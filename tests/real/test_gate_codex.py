"""The delivery gate in a real Codex session, offline against a fake Responses API: the fake
model writes a broken page with a shell command (no write tool names it), and when it tries
to end its turn the Stop hook sends the measured failure back; Codex goes on with it for one
more request (its next Stop says `stop_hook_active`), then stops."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from ..support.fakes import RefusingProxy, fake_responses
from ..support.paths import PAGES
from ..support.real import World, codex_config, run_codex_exec, texts

pytestmark = [pytest.mark.real, pytest.mark.browser]  # the gate judges in Chromium

MARK = "【dshkit 交付门：机器实测未通过，请返工】"


def test_codex_gets_a_shell_written_failure_back_at_stop(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    world = World(tmp_path, "codex")
    source = tmp_path / "tank.html"  # outside the workspace: only the copy is the session's
    source.write_text((PAGES / "tank.html").read_text())
    command = {
        "tool": "exec_command",
        "arguments": {"cmd": f"cat {shlex.quote(str(source))} > site.html"},
    }
    with fake_responses() as fake:
        codex_config(world, fake.base_url)
        world.install_hooks()
        (world.state / "config.toml").write_text("[gate]\nhook_budget_s = 2.0\n")
        fake.script.append(command)
        done = run_codex_exec(world, proxy, "做一个坦克网页", DSHKIT_CAPABILITY="off")
        bodies = [r.body for r in fake.requests if r.path.endswith("/responses")]
    assert done.returncode == 0, (done.stdout[-1500:], done.stderr[-2000:])
    assert (world.project / "site.html").exists()
    counts = [texts(body).count(MARK) for body in bodies]
    # The command's request, the answer after it, then one more carrying the failure.
    assert counts[:-1] == [0] * (len(bodies) - 1) and counts[-1] >= 1, (
        counts,
        world.hook_log(),
    )
    assert "判定：blank-canvas-0" in texts(bodies[-1])
    assert str(world.project / "site.html") in texts(bodies[-1])
    world.uninstall_hooks_leaves_no_trace()
