"""The delivery gate in a real Claude Code session, offline against a fake Anthropic API: the
fake model writes a broken page with its Write tool (twice, the same content), the writes
return at once, and when it tries to stop, the Stop hook sends the measured failure back:
Claude Code makes one more model request carrying it, then stops (no loop)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support.fakes import RefusingProxy, fake_anthropic
from ..support.paths import PAGES
from ..support.real import World, run_claude_raw, texts

pytestmark = [pytest.mark.real, pytest.mark.browser]  # the gate judges in Chromium

MARK = "【dshkit 交付门：机器实测未通过，请返工】"


def test_claude_code_gets_the_rework_once_per_content(tmp_path: Path, proxy: RefusingProxy) -> None:
    world = World(tmp_path, "claude")
    settings = world.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"permissions": {"defaultMode": "acceptEdits"}}\n')  # Write allowed
    world.install_hooks()
    (world.state / "config.toml").write_text("[gate]\nhook_budget_s = 2.0\n")
    page = world.project / "tank.html"
    write = {
        "tool": "Write",
        "arguments": {"file_path": str(page), "content": (PAGES / "tank.html").read_text()},
    }
    with fake_anthropic() as fake:
        fake.script.extend([write, write])  # the same content twice, then the default text
        # Capability probes (their own browser) are tested apart: here only the gate runs.
        out = run_claude_raw(world, fake, proxy, "做一个坦克网页", DSHKIT_CAPABILITY="off")
        bodies = [r.body for r in fake.requests if r.path.startswith("/v1/messages")]
    assert "ok from the fake model" in out, out[-2000:]
    counts = [texts(body).count(MARK) for body in bodies]
    # Nothing at the writes; the Stop's block adds one request carrying it (Claude Code puts
    # a Stop hook's reason both in a reminder and in a system message), then it stops.
    assert counts[:-1] == [0, 0, 0] and counts[-1] >= 1, (counts, world.hook_log())
    assert "判定：blank-canvas-0" in texts(bodies[-1])
    assert page.exists()
    world.uninstall_hooks_leaves_no_trace()
