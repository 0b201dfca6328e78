"""The real Gemini CLI (0.61.0), offline against a fake Gemini API on 127.0.0.1, with dshkit's
hooks installed by `dshkit install-hooks --harness gemini`.

Proves through the fake server's recorded requests that the profile reaches the model once
per session; that a PreToolUse deny in dshkit's words stops the command through the Gemini
CLI's own dialect (exit 2, the reason on stderr) and the model gets the reason; that a
crashing handler leaves the session working; that dshkit counts the person's messages in
the logs it wrote; and that uninstalling gives the settings file its old bytes back.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from dshkit.optimizer.hook import LABEL

from ..support.fakes import FakeOpenAI, RefusingProxy, Reply, fake_gemini
from ..support.hook_handlers import DENIED
from ..support.real import GEMINI_SETTINGS, World, gemini_sent, gemini_settings, run_gemini

pytestmark = pytest.mark.real

CRASH = (
    "SessionStart=tests.support.hook_handlers:crash;"
    "UserPromptSubmit=tests.support.hook_handlers:crash"
)
POLICY = "PreToolUse[command]=tests.support.hook_handlers:deny"


def gemini(world: World, fake: object, proxy: RefusingProxy, prompt: str, **extra: str) -> str:
    out = run_gemini(world, fake, proxy, "-p", prompt, **extra)
    assert "ok from the fake model" in out, out[-2000:]
    return out


def test_gemini_cli(tmp_path: Path, proxy: RefusingProxy) -> None:
    world = World(tmp_path, "gemini")
    settings = gemini_settings(world)
    world.install_hooks()
    installed = orjson.loads(settings.read_bytes())
    assert installed["security"] == GEMINI_SETTINGS["security"]  # the person's settings stay
    (group,) = installed["hooks"]["BeforeTool"]
    assert group["hooks"][0]["timeout"] == 30_000  # its unit is the millisecond
    assert "PreToolUse" not in installed["hooks"]
    assert "mcp" in installed["mcpServers"]["dshkit"]["args"]  # in its own MCP map
    with fake_gemini() as fake:
        sessions = []
        for prompt in ("say hi", "say hi again"):
            fake.requests.clear()
            gemini(world, fake, proxy, prompt)
            sessions.append([r.body for r in fake.requests])
        for requests in sessions:
            assert [gemini_sent(body).count(world.text) for body in requests] == [1]

        fake.requests.clear()
        fake.script.append({"tool": "run_shell_command", "arguments": {"command": "ls"}})
        gemini(world, fake, proxy, "list the files", DSHKIT_HOOK_HANDLERS=POLICY)
        answers = [
            part["functionResponse"]["response"]
            for request in fake.requests
            for content in request.body["contents"]
            for part in content["parts"]
            if "functionResponse" in part
        ]
        assert answers and DENIED in answers[0]["error"]  # refused, the reason sent back

        fake.requests.clear()
        gemini(world, fake, proxy, "and once more", DSHKIT_HOOK_HANDLERS=CRASH)
        assert fake.requests, "the session died with its hook"
    assert "forced crash" in world.hook_log()
    assert world.human_messages(world.home / ".gemini" / "tmp") == 4
    world.uninstall_hooks_leaves_no_trace()


def test_a_stop_blocks_reason_is_no_prompt_of_the_persons(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    # 0.61.0 sends an AfterAgent block's reason on through BeforeAgent as a new `prompt`.
    world = World(tmp_path, "gemini")
    gemini_settings(world)
    world.install_hooks()
    handlers = (
        "Stop=tests.support.hook_handlers:block_once;"
        "UserPromptSubmit=tests.support.hook_handlers:steps_seen"
    )
    with fake_gemini() as fake:
        gemini(world, fake, proxy, "do it", DSHKIT_HOOK_HANDLERS=handlers)
        gemini(world, fake, proxy, "next", DSHKIT_HOOK_HANDLERS=handlers)
    seen = (world.state / "steps-seen").read_text().splitlines()
    assert seen == [
        "prompt do it",
        "step dshkit test hook: not yet",
        "prompt next",
        "step dshkit test hook: not yet",
    ]
    assert world.human_messages(world.home / ".gemini" / "tmp") == 2


def test_the_command_guard_stops_a_destructive_shell_call(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    # dshkit's own guard (no handler of the test's), on the Gemini CLI's command tool.
    world = World(tmp_path, "gemini")
    gemini_settings(world)
    world.install_hooks()
    with fake_gemini() as fake:
        fake.script.append({"tool": "run_shell_command", "arguments": {"command": "rm -rf ."}})
        gemini(world, fake, proxy, "clean up")
        answers = [
            part["functionResponse"]["response"]
            for request in fake.requests
            for content in request.body["contents"]
            for part in content["parts"]
            if "functionResponse" in part
        ]
    assert (world.project / "hello.txt").exists()  # nothing was deleted
    assert answers and "Tool execution blocked" in answers[0]["error"], answers
    # The guard's reason reached the model, in the person's language ("clean up": English).
    assert "dshkit's command risk policy" in answers[0]["error"]
    assert "recursive delete of the whole workspace" in answers[0]["error"]


def test_the_optimizer_auto_and_review(tmp_path: Path, proxy: RefusingProxy) -> None:
    # The optimizer's own model is a fake OpenAI server; the Gemini CLI's is the fake Gemini.
    world = World(tmp_path, "gemini")
    gemini_settings(world)
    world.install_hooks()
    refined = (
        "开工前先问用户：无\n把 hello.txt 的内容原样读给用户。\n收尾自检：确认读到的就是文件内容。"
    )
    with fake_gemini() as fake, FakeOpenAI() as optimizer:
        (world.state / "config.toml").write_text(
            f'[llm]\nbase_url = "{optimizer.base_url}"\napi_key = "sk-fake"\n'
            '[optimizer]\ntier = "basic"\n'
        )
        optimizer.replies.append(Reply(deltas=[refined]))
        gemini(world, fake, proxy, "读一下 hello")
        (first,) = [r.body for r in fake.requests]
        assert f"{LABEL}\n{refined}" in gemini_sent(first)  # before the first answer
        assert "读一下 hello" in optimizer.requests[0].body["messages"][1]["content"]

        (world.state / "config.toml").write_text(
            f'[llm]\nbase_url = "{optimizer.base_url}"\napi_key = "sk-fake"\n'
            '[optimizer]\ntier = "basic"\npermission = "review"\n'
        )
        optimizer.replies.append(Reply(deltas=[refined]))
        fake.requests.clear()
        held = run_gemini(world, fake, proxy, "-p", "读一下 hello")
        assert not fake.requests  # the prompt was held: nothing reached the model
        assert "held this prompt for review" in held and refined.splitlines()[1] in held
    world.uninstall_hooks_leaves_no_trace()
