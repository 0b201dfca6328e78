"""A person's prompt told from a model step, through `dshkit hook` as the harnesses run it: DSH's
bridge fires UserPromptSubmit before every model step (its prompt the contexts so far), Claude
Code and Codex only for what the person typed."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dshkit import harnesses, turns
from dshkit.graft.lifecycle import begin
from dshkit.optimizer import OptimizerService
from dshkit.store import Store

from ..support.cli import state_of
from ..support.fakes import FakeOpenAI, Reply
from ..support.graft_driver import plan_for
from ..support.hooks import claude, codex, context, dsh, hook, hook_log
from ..support.profile import PROFILE, effective, store_version

REFINED = "开工前先问用户：无\n修好登录页的报错。\n收尾自检：打开登录页看一眼。"
SPEAK = "UserPromptSubmit=tests.support.hook_handlers:speak"
BLOCK_STOP = "Stop=tests.support.hook_handlers:block"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def configure(home: Path, fake: FakeOpenAI, tier: str = "basic", **more: str) -> dict[str, str]:
    state = state_of(home)
    state.mkdir(parents=True, exist_ok=True)
    lines = [f'tier = "{tier}"'] + [f'{k} = "{v}"' for k, v in more.items()]
    (state / "config.toml").write_text("[optimizer]\n" + "\n".join(lines) + "\n")
    return {"DSHKIT_LLM_BASE_URL": fake.base_url, "DSHKIT_LLM_API_KEY": "sk-t"}


def raws(home: Path) -> list[str]:
    """The prompts the optimizer recorded, oldest first."""
    return [run.raw for run in reversed(OptimizerService(state_of(home)).runs(50).runs)]


def ask(home: Path, session: str, text: str, env: dict[str, str], **extra: str) -> dict[str, Any]:
    payload = dsh(session, hook_event_name="UserPromptSubmit", prompt=text, **extra)
    return hook(home, "UserPromptSubmit", payload, **env)[0]


def tool_call(home: Path, session: str, env: dict[str, str]) -> None:
    call = {"tool_name": "bash", "tool_input": {"command": "ls"}}
    hook(home, "PreToolUse", dsh(session, hook_event_name="PreToolUse", **call), **env)
    done = {**call, "tool_response": {"stdout": "a.py\n"}}
    hook(home, "PostToolUse", dsh(session, hook_event_name="PostToolUse", **done), **env)


def stop(home: Path, session: str, env: dict[str, str]) -> dict[str, Any]:
    payload = dsh(session, hook_event_name="Stop", stop_hook_active=False)
    return hook(home, "Stop", payload, **env)[0]


def test_the_registry_says_which_harness_asks_before_every_step() -> None:
    asking = {name for name, h in harnesses.HARNESSES.items() if h.asks_every_step}
    # The Gemini CLI sends a Stop block's reason on through its prompt hook (a step too).
    assert asking == {"dsh", "gemini"}


@pytest.mark.parametrize("tier", ["off", "basic"])
@pytest.mark.process
def test_a_dsh_turn_with_a_tool_call_records_two_prompts(
    tmp_path: Path, fake: FakeOpenAI, tier: str
) -> None:
    with Store(state_of(tmp_path)) as store:
        store_version(store, PROFILE)  # what the bridge's steps carry as their prompt
    env = configure(tmp_path, fake, tier=tier)
    fake.replies.extend([Reply(deltas=[REFINED]), Reply(deltas=[REFINED])])
    hook(tmp_path, "SessionStart", dsh("d-1", hook_event_name="SessionStart", source="startup"))
    first = ask(tmp_path, "d-1", "fix the bug", env)
    injected = context(first)  # the profile (tier off), or it and the refined reading
    assert injected is not None and injected.startswith(effective(tmp_path))
    tool_call(tmp_path, "d-1", env)
    # The next model step: its prompt is the contexts injected so far.
    assert ask(tmp_path, "d-1", injected, env) == {}
    assert stop(tmp_path, "d-1", env) == {}
    later = ask(tmp_path, "d-1", "next request", env)
    assert raws(tmp_path) == ["fix the bug", "next request"]
    if tier == "basic":
        assert len(fake.requests) == 2 and "next request" in str(fake.requests[1].body)
        assert REFINED in str(context(later))
    else:
        assert fake.requests == [] and later == {}
    assert "turn not" not in hook_log(tmp_path)


@pytest.mark.process
def test_a_step_is_told_by_the_turn_alone(tmp_path: Path, fake: FakeOpenAI) -> None:
    # Nothing of dshkit's in the step's prompt (another hook's context): no Stop came yet.
    env = configure(tmp_path, fake, tier="off")
    ask(tmp_path, "d-1", "fix the bug", env)
    tool_call(tmp_path, "d-1", env)
    assert ask(tmp_path, "d-1", "另一个钩子给的上下文：仓库里有 Makefile", env) == {}
    stop(tmp_path, "d-1", env)
    ask(tmp_path, "d-1", "next request", env)
    assert raws(tmp_path) == ["fix the bug", "next request"] and fake.requests == []


@pytest.mark.parametrize("session", [claude, codex])
def test_claude_code_and_codex_have_no_steps(
    tmp_path: Path, fake: FakeOpenAI, session: Any
) -> None:
    env = configure(tmp_path, fake, tier="off")
    for text in ("fix the bug", "next request"):  # no Stop between them
        payload = {**session("s-1"), "hook_event_name": "UserPromptSubmit", "prompt": text}
        hook(tmp_path, "UserPromptSubmit", payload, **env)
    assert raws(tmp_path) == ["fix the bug", "next request"]
    with Store(state_of(tmp_path)) as store:  # and nothing kept for them
        assert store.db.execute("SELECT count(*) FROM prompt_turns").fetchone()[0] == 0


@pytest.mark.process
def test_a_mark_in_a_step_is_not_read(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="off")
    ask(tmp_path, "d-1", "fix the bug", env)
    assert ask(tmp_path, "d-1", "》ok", env) == {}  # a step: no block, nothing marked
    stop(tmp_path, "d-1", env)
    held = ask(tmp_path, "d-1", "》ok", env)  # the person's: it marks the run
    assert held["decision"] == "block" and "marked optimizer run 1" in held["reason"]


def test_a_held_prompt_opens_no_turn(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, permission="review")
    fake.replies.append(Reply(deltas=[REFINED]))
    assert ask(tmp_path, "d-1", "fix the bug", env)["decision"] == "block"
    # The person sends the refined text back: a prompt of theirs, not a step.
    assert ask(tmp_path, "d-1", f"》{REFINED}", env) == {}
    assert raws(tmp_path) == ["fix the bug", f"》{REFINED}"]


@pytest.mark.process
def test_a_stop_sent_on_keeps_the_turn_open(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="off")
    ask(tmp_path, "d-1", "fix the bug", env)
    assert stop(tmp_path, "d-1", {**env, "DSHKIT_HOOK_HANDLERS": BLOCK_STOP})["decision"] == "block"
    ask(tmp_path, "d-1", "另一个钩子给的上下文", env)  # the agent goes on: a step
    stop(tmp_path, "d-1", env)
    ask(tmp_path, "d-1", "next request", env)
    assert raws(tmp_path) == ["fix the bug", "next request"]


@pytest.mark.process
def test_dshkits_own_text_is_a_step_even_after_a_stop(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="off")
    spoken = ask(tmp_path, "d-1", "fix the bug", {**env, "DSHKIT_HOOK_HANDLERS": SPEAK})
    assert context(spoken) == "from the extra handler"
    stop(tmp_path, "d-1", env)
    # A Stop this record never saw sent the agent on: its step still carries dshkit's text.
    ask(tmp_path, "d-1", "from the extra handler\n\n另一个钩子的话", env)
    assert raws(tmp_path) == ["fix the bug"]


def test_a_resume_closes_the_turn_a_late_start_or_a_compaction_does_not(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    env = configure(tmp_path, fake, tier="off")
    ask(tmp_path, "d-1", "fix the bug", env)
    for source in ("startup", "compact"):  # the bridge's detached start ending late; a compaction
        start = dsh("d-1", hook_event_name="SessionStart", source=source)
        hook(tmp_path, "SessionStart", start, **env)
        ask(tmp_path, "d-1", "另一个钩子给的上下文", env)  # still a step
    resumed = dsh("d-1", hook_event_name="SessionStart", source="resume")
    hook(tmp_path, "SessionStart", resumed, **env)  # no Stop came (the process died)
    ask(tmp_path, "d-1", "next request", env)
    assert raws(tmp_path) == ["fix the bug", "next request"]


def test_a_turn_left_open_long_ago_is_lost(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="off")
    spoken = ask(tmp_path, "d-1", "fix the bug", {**env, "DSHKIT_HOOK_HANDLERS": SPEAK})
    assert context(spoken) == "from the extra handler"
    with Store(state_of(tmp_path)) as store, store.transaction() as db:  # no Stop ever came
        db.execute("UPDATE prompt_turns SET opened_at = opened_at - ?", (turns.STALE_MS + 1,))
    # dshkit's own text is still a step; the person's words are a prompt again.
    ask(tmp_path, "d-1", "from the extra handler", env)
    ask(tmp_path, "d-1", "next request", env)
    assert raws(tmp_path) == ["fix the bug", "next request"]


def test_sessions_have_turns_of_their_own(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="off")
    ask(tmp_path, "d-1", "fix the bug", env)
    ask(tmp_path, "d-2", "another session's first", env)  # d-1's turn is no concern of d-2
    assert raws(tmp_path) == ["fix the bug", "another session's first"]


def test_an_unreadable_turn_leaves_the_prompt_as_typed(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake)
    with Store(state_of(tmp_path)) as store:
        store.db.execute("DROP TABLE prompt_turns")  # a store this code cannot read
    assert ask(tmp_path, "d-1", "fix the bug", env) == {}
    assert fake.requests == [] and raws(tmp_path) == []
    assert "taken as a step" in hook_log(tmp_path)


def test_a_step_takes_no_waiting_handoff(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="off")
    here = str(tmp_path)
    ask(tmp_path, "d-1", "fix the bug", env, cwd=here)  # d-1's turn goes on
    plan = dataclasses.replace(plan_for("d-src", here), harness="dsh")
    with Store(state_of(tmp_path)) as store:
        begin(store, plan, ignite=False)  # a handoff now waits in d-1's directory
    assert ask(tmp_path, "d-1", "另一个钩子给的上下文", env, cwd=here) == {}  # mid-turn
    taken = context(ask(tmp_path, "d-2", "start here", env, cwd=here))  # a new session's
    assert taken is not None and "d-src" in taken
