"""The real Claude Code, Codex and DSH, offline against fake APIs on 127.0.0.1, with dshkit's
hooks installed by `dshkit install-hooks`.

Proves through the fake servers' recorded requests that the profile reaches the model once
per session, byte for byte the same in every session; that a crashing handler leaves the
session working; and that dshkit then counts the human messages of the logs they wrote.
A refusing proxy catches any attempt to reach another host.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.optimizer.hook import LABEL

from ..support.cli import SCRIPT
from ..support.fakes import (
    FakeOpenAI,
    RefusingProxy,
    Reply,
    fake_anthropic,
    fake_chat,
    fake_responses,
)
from ..support.hook_handlers import DENIED
from ..support.real import (
    World,
    codex_config,
    dsh_world,
    run_claude_raw,
    run_codex_exec,
    run_dsh,
    texts,
)

pytestmark = pytest.mark.real

CRASH = (
    "SessionStart=tests.support.hook_handlers:crash;"
    "UserPromptSubmit=tests.support.hook_handlers:crash"
)
# A handler the registry gains later: a command-policy-like PreToolUse on DSH's read tools.
POLICY = "PreToolUse[read]=tests.support.hook_handlers:deny"


def assert_once_per_session(sessions: list[list[dict[str, Any]]], text: str) -> None:
    for requests in sessions:
        conversation = [b for b in requests if "title" not in texts(b)[:400].lower()]
        assert conversation, "the harness sent no model request"
        counts = [texts(body).count(text) for body in conversation]
        assert counts[0] == 1, counts  # before the first answer, exactly once
        assert all(count == 1 for count in counts), counts  # never injected again


# -- Claude Code ----------------------------------------------------------------------------


def run_claude(world: World, fake: Any, proxy: RefusingProxy, prompt: str, **extra: str) -> None:
    done = run_claude_raw(world, fake, proxy, prompt, **extra)
    assert "ok from the fake model" in done


def test_claude_code(tmp_path: Path, proxy: RefusingProxy) -> None:
    world = World(tmp_path, "claude")
    world.install_hooks()
    sessions = []
    with fake_anthropic() as fake:
        for prompt in ("say hi", "say hi again"):
            fake.requests.clear()
            run_claude(world, fake, proxy, prompt)
            sessions.append([r.body for r in fake.requests if r.path.startswith("/v1/messages")])
        assert_once_per_session(sessions, world.text)
        fake.requests.clear()
        run_claude(world, fake, proxy, "and once more", DSHKIT_HOOK_HANDLERS=CRASH)
        assert fake.requests, "the session died with its hook"
    assert "forced crash" in world.hook_log()
    assert world.human_messages(world.home / ".claude" / "projects") == 3
    world.uninstall_hooks_leaves_no_trace()


def test_claude_code_optimizer_auto_and_review(tmp_path: Path, proxy: RefusingProxy) -> None:
    # The optimizer's own model is a fake OpenAI server; Claude Code's is the fake Anthropic.
    world = World(tmp_path, "claude")
    world.install_hooks()
    refined = (
        "开工前先问用户：无\n把 hello.txt 的内容原样读给用户。\n收尾自检：确认读到的就是文件内容。"
    )
    with fake_anthropic() as fake, FakeOpenAI() as optimizer:
        (world.state / "config.toml").write_text(
            f'[llm]\nbase_url = "{optimizer.base_url}"\napi_key = "sk-fake"\n'
            '[optimizer]\ntier = "basic"\n'
        )
        optimizer.replies.append(Reply(deltas=[refined]))
        run_claude(world, fake, proxy, "读一下 hello")
        bodies = [r.body for r in fake.requests if r.path.startswith("/v1/messages")]
        conversation = [b for b in bodies if "title" not in texts(b)[:400].lower()]
        assert f"{LABEL}\n{refined}" in texts(conversation[0])  # before the first answer
        assert "读一下 hello" in optimizer.requests[0].body["messages"][1]["content"]

        (world.state / "config.toml").write_text(
            f'[llm]\nbase_url = "{optimizer.base_url}"\napi_key = "sk-fake"\n'
            '[optimizer]\ntier = "basic"\npermission = "review"\n'
        )
        optimizer.replies.append(Reply(deltas=[refined]))
        fake.requests.clear()
        held = run_claude_raw(world, fake, proxy, "读一下 hello")
        assert not [r for r in fake.requests if r.path.startswith("/v1/messages")
                    and "title" not in texts(r.body)[:400].lower()]  # fmt: skip
        assert "held this prompt for review" in held and refined.splitlines()[1] in held
    world.uninstall_hooks_leaves_no_trace()


# -- Codex ----------------------------------------------------------------------------------


def run_codex(world: World, proxy: RefusingProxy, prompt: str, **extra: str) -> None:
    done = run_codex_exec(world, proxy, prompt, timeout=120, **extra)
    assert done.returncode == 0, (done.stdout[-1500:], done.stderr[-2000:])


def test_codex(tmp_path: Path, proxy: RefusingProxy) -> None:
    world = World(tmp_path, "codex")
    sessions = []
    with fake_responses() as fake:
        codex_config(world, fake.base_url)
        world.install_hooks()
        for prompt in ("say hi", "say hi again"):
            fake.requests.clear()
            run_codex(world, proxy, prompt)
            sessions.append([r.body for r in fake.requests if r.path.endswith("/responses")])
        assert_once_per_session(sessions, world.text)
        fake.requests.clear()
        run_codex(world, proxy, "and once more", DSHKIT_HOOK_HANDLERS=CRASH)
        assert fake.requests
    assert "forced crash" in world.hook_log()
    assert world.human_messages(world.home / ".codex" / "sessions") == 3
    world.uninstall_hooks_leaves_no_trace()


# -- DSH ------------------------------------------------------------------------------------


def test_dsh(tmp_path: Path, proxy: RefusingProxy, dsh_profile_template: Path) -> None:
    world = dsh_world(tmp_path, dsh_profile_template)
    sessions = []
    with fake_chat() as fake:
        # The first session takes a tool step: DSH fires UserPromptSubmit before each step.
        fake.script.extend([{"tool": "read", "arguments": {"file_path": "hello.txt"}}])
        for prompt in ("read hello.txt", "say hi"):
            fake.requests.clear()
            run_dsh(world, fake, proxy, prompt)
            sessions.append([r.body for r in fake.requests])
        steps = [b for b in sessions[0] if any(m.get("role") == "tool" for m in b["messages"])]
        assert steps, "the tool step did not happen"
        assert_once_per_session(sessions, world.text)
        fake.requests.clear()
        run_dsh(world, fake, proxy, "and once more", DSHKIT_HOOK_HANDLERS=CRASH)
        assert fake.requests
    assert "forced crash" in world.hook_log()
    assert world.human_messages(world.home / ".dsh" / "sessions") == 3
    world.uninstall_hooks_leaves_no_trace()


def test_dsh_bridge_runs_every_tool_past_dshkit_and_a_handler_added_later(
    tmp_path: Path, proxy: RefusingProxy, dsh_profile_template: Path
) -> None:
    world = dsh_world(tmp_path, dsh_profile_template)
    config = world.state / "dsh-hooks.json"
    # Installed for the tools some handler looks at (every tool only once a handoff has
    # begun: graft then refuses any tool call of a handed-off session); the read tools are
    # among them, so a handler registered later for them runs without installing again.
    (group,) = orjson.loads(config.read_bytes())["hooks"]["PreToolUse"]
    matcher = re.compile(group["matcher"])  # as the bridge reads it (a JavaScript RegExp)
    assert matcher.search("read") and matcher.search("bash") and matcher.search("drop_table")
    assert not matcher.search("web_search")  # a tool no handler looks at starts no dshkit
    # doctor sees the bridge really there: the block, and the package `dsh plugin add` put in
    doctor = subprocess.run(
        [SCRIPT, "doctor", "--json", "--port", "1"],
        env=world.env,
        cwd=world.project,
        capture_output=True,
        check=False,
    )
    assert orjson.loads(doctor.stdout)["harnesses"]["dsh"]["hooksInstalled"] is True
    out = world.hooks_command("install-hooks", DSHKIT_HOOK_HANDLERS=POLICY)
    assert "Nothing to change: already installed." in out, out
    with fake_chat() as fake:
        fake.script.extend([{"tool": "read", "arguments": {"file_path": "hello.txt"}}])
        run_dsh(world, fake, proxy, "read hello.txt", DSHKIT_HOOK_HANDLERS=POLICY)
        results = [
            str(m.get("content"))
            for body in (r.body for r in fake.requests)
            for m in body["messages"]
            if m.get("role") == "tool"
        ]
    assert results and DENIED in results[0], results  # the real bridge ran the new hook
    assert "hello from the project" not in results[0]
    world.uninstall_hooks_leaves_no_trace()
