"""The optimizer in a real DSH session (its Claude-Code hook bridge), offline against a fake
chat-completions API: the bridge fires UserPromptSubmit before each model step, and only the
person's prompt is recorded as one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from dshkit.optimizer import OptimizerService

from ..support.fakes import RefusingProxy, fake_chat
from ..support.real import binary, dsh_world

pytestmark = pytest.mark.real

PROMPT = "看看项目里有什么文件"
# Each prompt hook counted; a SessionStart context, which the bridge runs detached: it comes
# in before the second request, and with it a second prompt hook (the step's).
HANDLERS = (
    "UserPromptSubmit=tests.support.hook_handlers:counted;"
    "SessionStart=tests.support.hook_handlers:speak"
)


def test_a_turn_of_two_model_steps_is_one_prompt(
    tmp_path: Path, proxy: RefusingProxy, dsh_profile_template: Path
) -> None:
    world = dsh_world(tmp_path, dsh_profile_template)
    (world.state / "config.toml").write_text('[optimizer]\ntier = "off"\n')  # runs, no model
    with fake_chat() as fake:
        fake.script.append({"tool": "bash", "arguments": {"command": "ls"}})
        done = subprocess.run(
            [binary("dsh", "node_modules", ".bin", "dsh"), "--profile", "headless", PROMPT],
            env={
                **world.env,
                **proxy.env(),
                "DSHKIT_CAPABILITY": "off",
                "DEEPSEEK_BASE_URL": fake.base_url,
                "DEEPSEEK_API_KEY": "sk-fake",
                "DSH_TELEMETRY_DISABLED": "1",
                "DSHKIT_HOOK_HANDLERS": HANDLERS,
            },
            cwd=world.project,
            capture_output=True,
            text=True,
            timeout=180,
        )
        steps = len(fake.requests)
    assert done.returncode == 0, done.stderr[-2000:]
    log = world.hook_log()
    asked = (world.state / "calls-seen").read_text().split()
    assert steps >= 2 and len(asked) >= 2, (steps, asked, log)  # a prompt hook per step
    runs = OptimizerService(world.state).runs(50).runs
    assert [run.raw for run in runs] == [PROMPT], log
    world.uninstall_hooks_leaves_no_trace()
