"""The optimizer on UserPromptSubmit, run as the harnesses run it: `dshkit hook` with a payload,
against a real fake OpenAI server."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dshkit.optimizer import OptimizerService, Run
from dshkit.optimizer.hook import LABEL

from ..support.fakes import FakeOpenAI, Reply
from ..support.hooks import claude, codex, dsh, hook

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
        f"{k} = {v!r}".replace("'", '"')
        if isinstance(v, str)
        else f"{k} = {str(v).lower() if isinstance(v, bool) else v}"
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
    assert REFINED in answer["reason"] and "prefixed with '》'" in answer["reason"]
    # Claude Code's own `!` (shell mode) is never what the person is told to type.
    assert "'!'" not in answer["reason"]
    assert "》ok" in answer["reason"] and "dshkit outcome 1 ok|rework" in answer["reason"]


def test_the_skip_prefix_and_dsh_refirings_pass_untouched(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic")
    assert hook(tmp_path, "UserPromptSubmit", prompt("》就这样发"), **env)[0] == {}
    refire = dsh("d-1", hook_event_name="UserPromptSubmit", prompt=f"{LABEL}\n之前的细化")
    assert hook(tmp_path, "UserPromptSubmit", refire, **env)[0] == {}
    assert fake.requests == []
    (run,) = runs(tmp_path)
    assert run.passed == "skip-prefix" and run.session_id == "c-1"


def runs(home: Path) -> list[Run]:
    return list(reversed(OptimizerService(home / ".dsh" / "dshkit").runs(50).runs))


@pytest.mark.parametrize("prefix", ["!", "/x", "#", "@", "$", " 》"])
def test_a_prefix_a_harness_gives_a_meaning_to_is_refused_naming_the_key(
    tmp_path: Path, fake: FakeOpenAI, prefix: str
) -> None:
    env = configure(tmp_path, fake, tier="basic", skip_prefix=prefix)
    answer, log = hook(tmp_path, "UserPromptSubmit", prompt(f"{prefix}ls"), **env)
    assert answer == {} and "[optimizer] skip_prefix" in log and fake.requests == []


def test_a_configured_safe_prefix_is_used_and_told(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic", permission="review", skip_prefix="~~")
    fake.replies.append(Reply(deltas=[REFINED]))
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    assert "prefixed with '~~'" in answer["reason"] and "~~rework" in answer["reason"]
    assert hook(tmp_path, "UserPromptSubmit", prompt("~~原话照发"), **env)[0] == {}
    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("继续", "continuation"),
        ("好的。", "continuation"),
        ("OK", "continuation"),
        ("yes!", "continuation"),
        ("2", "continuation"),
        ("/compact", "command"),
        ("!ls -la", "command"),
    ],
)
def test_what_needs_no_model_passes_without_a_call_and_is_recorded(
    tmp_path: Path, fake: FakeOpenAI, text: str, why: str
) -> None:
    env = configure(tmp_path, fake, tier="basic")
    assert hook(tmp_path, "UserPromptSubmit", prompt(text), **env)[0] == {}
    assert fake.requests == []
    (run,) = runs(tmp_path)
    assert run.passed == why and run.tier == "basic" and "totalMs" in run.timings


def test_skipping_what_needs_no_model_can_be_turned_off(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic", skip_trivial=False, trivial_words="算了")
    fake.replies.append(Reply(deltas=[REFINED]))
    hook(tmp_path, "UserPromptSubmit", prompt("继续"), **env)
    assert len(fake.requests) == 1
    env = configure(tmp_path, fake, tier="basic", trivial_words="算了, 走你")
    assert hook(tmp_path, "UserPromptSubmit", prompt("走你"), **env)[0] == {}
    assert len(fake.requests) == 1 and runs(tmp_path)[-1].passed == "continuation"


def test_every_prompt_is_recorded_tier_off_included(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake)  # tier off
    assert hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)[0] == {}
    (run,) = runs(tmp_path)
    assert (run.tier, run.passed, run.output, run.session_id) == ("off", "off", "把按钮改蓝", "c-1")
    assert fake.requests == []


def test_the_prefix_and_ok_or_rework_mark_the_last_run(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic")
    fake.replies.append(Reply(deltas=[REFINED]))
    hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    hook(tmp_path, "UserPromptSubmit", prompt("继续"), **env)  # carries on run 1's work
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("》rework"), **env)
    assert answer["decision"] == "block" and "run 1" in answer["reason"]
    assert "not sent to the agent" in answer["reason"]
    first, second = runs(tmp_path)
    assert first.outcome == "rework" and second.outcome is None
    hook(tmp_path, "UserPromptSubmit", prompt("》 OK "), **env)
    assert runs(tmp_path)[0].outcome == "ok" and len(runs(tmp_path)) == 2
    other, _ = hook(tmp_path, "UserPromptSubmit", prompt("》ok", session="c-2"), **env)
    assert "marked nothing" in other["reason"]


def test_a_failing_model_lets_the_raw_words_pass(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic")
    fake.replies.append(Reply(status=500, error_body={"error": {"message": "down"}}))
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    # Nothing for the agent; the person is told their words went on, and why.
    assert list(answer) == ["systemMessage"] and fake.requests
    assert answer["systemMessage"].startswith("dshkit sent your prompt as typed: the model ")
    assert (
        "HTTP 500" in answer["systemMessage"] and "dshkit runs show last" in answer["systemMessage"]
    )


def test_a_stalled_model_never_holds_the_prompt_past_the_timeout(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    env = configure(tmp_path, fake, tier="basic", timeout_s=2.0, stall_s=30.0)
    fake.replies.append(Reply(deltas=["开工前"], keepalive_s=0.1))
    started = time.monotonic()
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    assert list(answer) == ["systemMessage"]  # the agent gets nothing; the person is told
    assert "did not finish within the 2 s budget" in answer["systemMessage"]
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


def test_a_refined_instruction_pasted_back_is_that_runs_to_mark(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    env = configure(tmp_path, fake, tier="basic", permission="review")
    fake.replies.append(Reply(deltas=[REFINED]))
    held, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    assert held["decision"] == "block"
    pasted = "》" + REFINED.replace("\n", "\n  ")  # a paste may change the whitespace
    assert hook(tmp_path, "UserPromptSubmit", prompt(pasted), **env)[0] == {}
    first, second = runs(tmp_path)
    # Not the raw words: the tier's text reached the agent.
    assert first.passed is None and second.passed == "refined-sent"
    hook(tmp_path, "UserPromptSubmit", prompt("》ok"), **env)
    assert [r.outcome for r in runs(tmp_path)] == ["ok", None]
    stats = OptimizerService(tmp_path / ".dsh" / "dshkit").runs(1).rates
    assert stats["basic"]["ok"] == 1 and "off" not in stats
    # Their own words instead, with the prefix: the raw words, and what a mark judges.
    hook(tmp_path, "UserPromptSubmit", prompt("》按钮改蓝就行"), **env)
    hook(tmp_path, "UserPromptSubmit", prompt("》rework"), **env)
    assert runs(tmp_path)[-1].outcome == "rework" and runs(tmp_path)[-1].passed == "skip-prefix"


@pytest.mark.process
def test_a_dsh_step_without_the_label_is_no_prompt(tmp_path: Path, fake: FakeOpenAI) -> None:
    # DSH's bridge asks again before the next model step; its prompt, the contexts so far,
    # need not hold the optimizer's label (the profile alone, another hook's text).
    env = configure(tmp_path, fake, tier="basic")
    fake.replies.append(Reply(deltas=[REFINED]))
    first = dsh("d-1", hook_event_name="UserPromptSubmit", prompt="把按钮改蓝")
    assert (
        LABEL
        in hook(tmp_path, "UserPromptSubmit", first, **env)[0]["hookSpecificOutput"][
            "additionalContext"
        ]
    )
    step = dsh("d-1", hook_event_name="UserPromptSubmit", prompt="另一个钩子：仓库里有 Makefile")
    assert hook(tmp_path, "UserPromptSubmit", step, **env)[0] == {}
    assert len(fake.requests) == 1 and [r.raw for r in runs(tmp_path)] == ["把按钮改蓝"]
    hook(tmp_path, "Stop", dsh("d-1", hook_event_name="Stop"), **env)
    fake.replies.append(Reply(deltas=[REFINED]))
    again = dsh("d-1", hook_event_name="UserPromptSubmit", prompt="把按钮改红")
    assert LABEL in str(hook(tmp_path, "UserPromptSubmit", again, **env)[0])
    assert len(fake.requests) == 2 and len(runs(tmp_path)) == 2


def test_claude_codes_prompts_without_a_stop_are_all_prompts(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    env = configure(tmp_path, fake, tier="basic")
    fake.replies.extend([Reply(deltas=[REFINED]), Reply(deltas=[REFINED])])
    for text in ("把按钮改蓝", "把按钮改红"):  # no Stop between them (an interrupt)
        assert LABEL in str(hook(tmp_path, "UserPromptSubmit", prompt(text), **env)[0])
    assert len(fake.requests) == 2 and [r.raw for r in runs(tmp_path)] == [
        "把按钮改蓝",
        "把按钮改红",
    ]


def test_the_person_sees_one_line_saying_the_prompt_was_refined(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    env = configure(tmp_path, fake, tier="advanced")
    fake.replies.append(Reply(deltas=[REFINED]))
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    line = answer["systemMessage"]
    assert re.fullmatch(
        r"dshkit refined your prompt \(advanced, \d+\.\d s\) · `》rework` if it missed · "
        r"the whole text: dshkit runs show last",
        line,
    ), line
    assert "\n" not in line and REFINED in answer["hookSpecificOutput"]["additionalContext"]


def test_a_stall_is_told_with_its_seconds(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic", stall_s=0.5)
    fake.replies.append(Reply(deltas=["开工前"], silent=True, hold_s=5))
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    assert answer["systemMessage"].startswith(
        "dshkit sent your prompt as typed: the model stalled: nothing for 0.5 s (waited "
    ), answer


def test_the_budget_sends_the_raw_words_whatever_the_model_does(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """`budget_s` under the timeout and the stall watchdog: a model trickling keep-alives
    (never silent, never done) is cut at the budget, and the line says so."""
    env = configure(tmp_path, fake, tier="basic", budget_s=1.0, timeout_s=30.0, stall_s=30.0)
    fake.replies.append(Reply(deltas=["开工前"], keepalive_s=0.05))
    started = time.monotonic()
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    waited = time.monotonic() - started
    assert "hookSpecificOutput" not in answer
    assert "did not finish within the 1 s budget" in answer["systemMessage"], answer
    (run,) = runs(tmp_path)
    assert run.fallback and run.fallback.startswith("deadline") and waited < 10


def test_an_english_prompt_gets_english_fixed_parts(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic")
    english = "Ask the user first: None\nMake the login button blue.\nFinal self-check: look at it."
    fake.replies.append(Reply(deltas=[english]))
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("make the login button blue"), **env)
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("[dshkit: a refined reading") and english in context
    assert not re.search(r"[\u4e00-\u9fff]", context)  # not one Chinese fixed line
    system = fake.requests[0].body["messages"][0]["content"]
    assert "「Ask the user first: None」" in system and "开工前先问用户" not in system
    (run,) = runs(tmp_path)
    assert run.language == "en" and run.ask_gate["hasSection"]


def test_a_chinese_prompt_keeps_chinese_fixed_parts(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic")
    fake.replies.append(Reply(deltas=[REFINED]))
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把 login 按钮改蓝"), **env)
    assert answer["hookSpecificOutput"]["additionalContext"].startswith(LABEL)
    assert "「开工前先问用户：无」" in fake.requests[0].body["messages"][0]["content"]


def test_each_harness_gets_the_line_where_it_shows_one(tmp_path: Path, fake: FakeOpenAI) -> None:
    """Claude Code and Codex take `systemMessage`; DSH's bridge surfaces none (its README:
    "logged + warned but not surfaced"), so it is not written there: the run is the record."""
    env = configure(tmp_path, fake, tier="basic")
    fake.replies.extend([Reply(deltas=[REFINED]), Reply(deltas=[REFINED])])
    on_dsh = dsh("d-9", hook_event_name="UserPromptSubmit", prompt="把按钮改蓝")
    answer, _ = hook(tmp_path, "UserPromptSubmit", on_dsh, **env)
    assert "systemMessage" not in answer
    assert answer["hookSpecificOutput"]["additionalContext"] == f"{LABEL}\n{REFINED}"
    on_codex = {**codex("x-9"), "hook_event_name": "UserPromptSubmit", "prompt": "把按钮改蓝"}
    answer, _ = hook(tmp_path, "UserPromptSubmit", on_codex, **env)
    assert answer["systemMessage"].startswith("dshkit refined your prompt (basic, ")


def test_words_the_model_left_as_they_were_are_said_so(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = configure(tmp_path, fake, tier="basic")
    fake.replies.append(Reply(deltas=["把按钮改蓝"]))
    answer, _ = hook(tmp_path, "UserPromptSubmit", prompt("把按钮改蓝"), **env)
    assert list(answer) == ["systemMessage"]  # nothing for the agent: its words are the words
    assert answer["systemMessage"].startswith("dshkit left your prompt as typed: the model had")
