"""The optimizer on UserPromptSubmit, run as the harnesses run it: `dshkit hook` with a payload,
against a real fake OpenAI server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dshkit.hooks.optimizer import LABEL
from dshkit.optimizer import OptimizerService

from ..support.fakes import FakeOpenAI, Reply
from ..support.hooks import claude, dsh, hook

REFINED = (
    "开工前先问用户：无\n把登录按钮改成蓝色，只改这一个按钮。\n收尾自检：打开登录页看一眼按钮颜色。"
)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def configure(home: Path, fake: FakeOpenAI, **optimizer: object) -> dict[str, str]:
    state = home / ".dsh" / "dshkit"
    state.mkdir(parents=True, exist_ok=True)
    lines = ["[optimizer]"] + [
        f"{k} = {v!r}".replace("'", '"') if isinstance(v, str) else f"{k} = {v}"
        for k, v in optimizer.items()
    ]
    (state / "config.toml").write_text("\n".join(lines) + "\n")
    return {"DSHKIT_LLM_BASE_URL": fake.base_url, "DSHKIT_LLM_API_KEY": "sk-t"}


def prompt(text: str, session: str = "c-1") -> dict:
    return claude(session, hook_event_name="UserPromptSubmit", prompt=text)


def test_off_by_default_makes_no_call(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = {"DSHKIT_LLM_BASE_URL": fake.base_url, "DSHKIT_LLM_API_KEY": "sk-t"}
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    assert answer == {} and fake.requests == []


def test_auto_gives_the_agent_the_refined_reading(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic")
    fake.replies.append(Reply(deltas=[REFINED]))
    answer, log = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert context == f"{LABEL}\n{REFINED}" and log == ""
    assert "把按钮改蓝" in fake.requests[0].body["messages"][1]["content"]


def test_review_holds_the_prompt_and_shows_how_to_send(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic", permission="review")
    fake.replies.append(Reply(deltas=[REFINED]))
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    assert answer["decision"] == "block"
    assert REFINED in answer["reason"] and "prefixed with '!'" in answer["reason"]
    assert "dshkit outcome 1 ok|rework" in answer["reason"]


def test_the_skip_prefix_and_dsh_refirings_pass_untouched(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic")
    assert hook(tmp_path, "UserPromptSubmit", prompt("!就这样发"), **env)[0] == {}
    refire = dsh("d-1", hook_event_name="UserPromptSubmit", prompt=f"{LABEL}\n之前的细化")
    assert hook(tmp_path, "UserPromptSubmit", refire, **env)[0] == {}
    assert fake.requests == []


def test_a_failing_model_lets_the_raw_words_pass(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic")
    fake.replies.append(Reply(status=500, error_body={"error": {"message": "down"}}))
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    assert answer == {} and fake.requests


def test_a_stalled_model_never_holds_the_prompt_past_the_timeout(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    env = configure(tmp_path, fake, tier="basic", timeout_s=2.0, stall_s=30.0)
    fake.replies.append(Reply(deltas=["开工前"], keepalive_s=0.1))
    started = time.monotonic()
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    assert answer == {}
    assert time.monotonic() - started < 12  # the deadline, not the handler budget, ended it


def test_a_bad_config_is_logged_and_the_prompt_passes(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="sometimes")
    answer, log = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    assert answer == {} and "[optimizer] tier" in log and fake.requests == []


def test_a_new_session_starts_from_its_projects_settings(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake)  # tier off by default
    project = tmp_path / "work"
    project.mkdir()
    OptimizerService(tmp_path / ".dsh" / "dshkit").set_settings(
        None, None, {"tier": "basic"}, project=str(project)
    )
    fake.replies.append(Reply(deltas=[REFINED]))
    payload = claude("new-1", hook_event_name="UserPromptSubmit", prompt="把按钮改蓝")
    answer, _ = hook(tmp_path, "UserPromptSubmit", {**payload, "cwd": str(project)}, **env)
    assert answer["hookSpecificOutput"]["additionalContext"] == f"{LABEL}\n{REFINED}"
    elsewhere = claude("new-2", hook_event_name="UserPromptSubmit", prompt="把按钮改蓝")
    assert hook(tmp_path, "UserPromptSubmit", elsewhere, **env)[0] == {}
    assert len(fake.requests) == 1


def test_an_unknown_session_gets_no_tools_and_no_facts(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="advanced")
    project = tmp_path / "work"
    project.mkdir()
    (project / "app.py").write_text("print('hi')\n")
    fake.replies.append(Reply(deltas=[REFINED]))
    payload = claude("unknown-1", hook_event_name="UserPromptSubmit", prompt="把按钮改蓝")
    answer, _ = hook(tmp_path, "UserPromptSubmit", {**payload, "cwd": str(project)}, **env)
    assert answer["hookSpecificOutput"]["additionalContext"] == f"{LABEL}\n{REFINED}"
    (request,) = fake.requests
    assert "tools" not in request.body  # nothing to read: no session, no directory of its own
    material = request.body["messages"][1]["content"]
    assert "read / glob / grep" not in material and "不写任何事实" in material
