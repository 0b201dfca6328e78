"""The delivery gate in a real Gemini CLI session (0.61.0), offline against a fake Gemini API:
the fake model writes a broken page with a shell command, and when it tries to end its turn
the AfterAgent hook blocks with the measured failure (exit 2, the reason on stderr); the CLI
sends it on to the model as the next prompt (its next AfterAgent says `stop_hook_active`),
then stops."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from ..support.fakes import RefusingProxy, fake_gemini
from ..support.paths import PAGES
from ..support.real import World, gemini_sent, gemini_settings, run_gemini

pytestmark = [pytest.mark.real, pytest.mark.browser]  # the gate judges in Chromium

MARK = "【dshkit 交付门：机器实测未通过，请返工】"


def test_gemini_cli_gets_a_shell_written_failure_back_at_stop(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    world = World(tmp_path, "gemini")
    gemini_settings(world)
    source = tmp_path / "tank.html"  # outside the workspace: only the copy is the session's
    source.write_text((PAGES / "tank.html").read_text())
    command = {
        "tool": "run_shell_command",
        "arguments": {"command": f"cat {shlex.quote(str(source))} > site.html"},
    }
    with fake_gemini() as fake:
        world.install_hooks()
        (world.state / "config.toml").write_text("[gate]\nhook_budget_s = 2.0\n")
        fake.script.append(command)
        out = run_gemini(world, fake, proxy, "-p", "做一个坦克网页", DSHKIT_CAPABILITY="off")
        bodies = [r.body for r in fake.requests]
    assert (world.project / "site.html").exists(), out[-2000:]
    counts = [gemini_sent(body).count(MARK) for body in bodies]
    # The command's request, the answer after it, then one more carrying the failure.
    assert counts[:-1] == [0] * (len(bodies) - 1) and counts[-1] >= 1, (
        counts,
        world.hook_log(),
        out[-2000:],
    )
    assert "判定：blank-canvas-0" in gemini_sent(bodies[-1])
    assert str(world.project / "site.html") in gemini_sent(bodies[-1])
    world.uninstall_hooks_leaves_no_trace()
