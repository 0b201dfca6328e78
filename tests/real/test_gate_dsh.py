"""The delivery gate in a real DSH session (its Claude-Code hook bridge), offline against a
fake chat-completions API: the fake model writes a broken page with DSH's write tool, the
write returns at once, and the measured failure reaches a later model request of the same
run (with a later step's prompt hook, or steered in by the Stop hook's block), once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ..support.fakes import RefusingProxy, fake_chat
from ..support.paths import PAGES
from ..support.real import binary, dsh_world, texts

pytestmark = [pytest.mark.real, pytest.mark.browser]  # the gate judges in Chromium

MARK = "【dshkit 交付门：机器实测未通过，请返工】"


def test_dsh_gets_the_failure_back_in_the_same_run(
    tmp_path: Path, proxy: RefusingProxy, dsh_profile_template: Path
) -> None:
    world = dsh_world(tmp_path, dsh_profile_template)
    (world.state / "config.toml").write_text("[gate]\nhook_budget_s = 2.0\n")
    page = world.project / "tank.html"
    write = {
        "tool": "write",
        "arguments": {"file_path": str(page), "content": (PAGES / "tank.html").read_text()},
    }
    with fake_chat() as fake:
        fake.script.append(write)
        done = subprocess.run(
            [
                binary("dsh", "node_modules", ".bin", "dsh"),
                "--profile",
                "headless",
                "做一个坦克网页",
            ],
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
    assert page.exists(), (done.stdout[-1500:], world.hook_log())
    counts = [texts(body).count(MARK) for body in bodies]
    first = next((i for i, count in enumerate(counts) if count), None)
    assert first is not None and first >= 2, (counts, world.hook_log())  # after the write
    assert all(count == 1 for count in counts[first:]), counts  # delivered once, kept
    assert "判定：blank-canvas-0" in texts(bodies[-1])
    world.uninstall_hooks_leaves_no_trace()
