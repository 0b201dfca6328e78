"""The optimizer in a real Claude Code session, offline against fake APIs: the person is shown
one line saying what became of their prompt (Claude Code prints a hook's `systemMessage`),
and the agent gets the refined reading."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from dshkit.optimizer import OptimizerService

from ..support.fakes import FakeOpenAI, RefusingProxy, Reply, fake_anthropic
from ..support.real import World, binary, claude_env, texts

pytestmark = pytest.mark.real

REFINED = "开工前先问用户：无\n把 hello.txt 的内容改成大写。\n收尾自检：打开 hello.txt 看一眼。"


def shown(
    world: World, anthropic: object, proxy: RefusingProxy, prompt: str, **env: str
) -> list[str]:
    """`claude -p` in stream-json: the lines Claude Code shows the person (its system
    notices)."""
    done = subprocess.run(
        [
            binary("claude", "node_modules", ".bin", "claude"),
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
        ],
        env=claude_env(world, anthropic, proxy, **env),
        cwd=world.project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    events = [orjson.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return [
        str(event.get("content"))
        for event in events
        if event.get("type") == "system" and event.get("subtype") == "informational"
    ]


def test_claude_code_shows_the_person_what_became_of_their_prompt(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    world = World(tmp_path, "claude")
    world.install_hooks()
    (world.state / "config.toml").write_text('[optimizer]\ntier = "basic"\nstall_s = 1.0\n')
    with FakeOpenAI() as optimizer, fake_anthropic() as anthropic:
        optimizer.replies.append(Reply(deltas=[REFINED]))
        optimizer.replies.append(Reply(deltas=["开工前"], silent=True, hold_s=10))
        llm = {"DSHKIT_LLM_BASE_URL": optimizer.base_url, "DSHKIT_LLM_API_KEY": "sk-t"}
        first = shown(
            world, anthropic, proxy, "把 hello.txt 改成大写", DSHKIT_CAPABILITY="off", **llm
        )
        second = shown(world, anthropic, proxy, "再把它改回小写", DSHKIT_CAPABILITY="off", **llm)
        bodies = [r.body for r in anthropic.requests if r.path.startswith("/v1/messages")]
    told = [line for line in first if "dshkit" in line]
    assert len(told) == 1, (first, world.hook_log())
    assert "dshkit refined your prompt (basic, " in told[0] and "`》rework` if it missed" in told[0]
    assert "dshkit runs show last" in told[0]
    assert any(REFINED in texts(body) for body in bodies)  # the agent got the refined reading
    # The line is the person's: the model is not sent it.
    assert not any("dshkit refined your prompt" in texts(body) for body in bodies)
    stalled = [line for line in second if "dshkit" in line]
    assert len(stalled) == 1 and "sent your prompt as typed: the model stalled" in stalled[0], (
        second,
        world.hook_log()[-3000:],
    )
    runs = OptimizerService(world.state).runs(10).runs
    assert [run.fallback is None for run in runs] == [False, True]
    world.uninstall_hooks_leaves_no_trace()
