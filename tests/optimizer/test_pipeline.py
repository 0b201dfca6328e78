"""One optimization end to end against a real fake OpenAI server: the tool loop grounded in the
working directory, fallbacks that never deliver half an instruction, the seed's degradation
table (§6), runs and outcomes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from dshkit.config import ConfigError
from dshkit.llm import LLMConfig
from dshkit.optimizer import OptimizerService
from dshkit.optimizer.pipeline import optimize
from dshkit.optimizer.runs import get_run, list_runs, record_outcome, success_rates
from dshkit.optimizer.settings import Settings, set_session_settings, settings_for
from dshkit.sessions import Refresh, Scanner, Source
from dshkit.store import Store

from ..support.fakes import FakeOpenAI, Reply, calls
from ..support.logs import event, human, session_dir, write_log

ANSWER = (
    "开工前先问用户：无\n"
    "修复 src/app.py:2 里 greet 的拼写错误，把 helo 改成 hello。\n"
    "收尾自检：运行一次 python src/app.py，把看到的输出写进交付。"
)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "state") as opened:
        yield opened


def llm(fake: FakeOpenAI) -> LLMConfig:
    return LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m1")


def settings(store: Store, **chosen: object) -> Settings:
    return settings_for(store, None, {"tier": "advanced", "turns": 0, **chosen})


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet():\n    return 'helo'\n")
    (root / ".env").write_text("TOKEN=hunter2\n")
    return root


def test_grounded_run_reads_files_and_audits_against_what_was_read(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    root = project(tmp_path)
    fake.replies.extend(
        [
            calls(("read", '{"path": "src/app.py"}'), ("read", '{"path": ".env"}')),
            Reply(deltas=["以下是优化后的提示词：\n", ANSWER]),
        ]
    )
    run = optimize(store, "修一下 greet 的错字", settings(store), llm(fake), cwd=str(root))
    assert run.fallback is None and run.output == ANSWER  # the preamble to the person stripped
    assert run.stripped == ["以下是优化后的提示词："]
    assert run.evidence == [
        {"path": "src/app.py", "line": 1, "note": "读过第 1–2 行：def greet():"}
    ]
    second = fake.requests[1].body["messages"]
    results = [m["content"] for m in second if m["role"] == "tool"]
    assert "helo" in results[0] and "hunter2" not in results[1]  # secrets are never read
    assert run.audit == {"sentences": 1, "traced": 1, "freedom": 0, "untraced": 0}
    assert run.ask_gate == {"hasSection": True, "items": 0, "limit": 3, "over": False}
    assert set(run.length_gate) == {"rawChars", "limit", "chars", "ratio", "over"}
    assert [s["tool"] for s in run.steps] == ["read", "read"]
    stored = get_run(store, run.id or 0)
    assert stored.output == ANSWER and stored.evidence == run.evidence
    assert stored.sentences and stored.as_json()["runId"] == run.id
    assert len(fake.requests) == 2  # one conversation, nothing hidden besides it


def test_a_cited_line_nobody_read_is_a_defect(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    fake.replies.append(Reply(deltas=["开工前先问用户：无\n按 lib/x.py:40 的写法改造 greet。\n"]))
    run = optimize(store, "改一下 greet", settings(store), llm(fake), cwd=str(project(tmp_path)))
    assert run.audit["untraced"] == 1


def test_off_passes_the_raw_words_without_a_model_call(fake: FakeOpenAI, store: Store) -> None:
    run = optimize(store, "  原话  ", settings(store, tier="off"), llm(fake))
    assert run.output == "  原话  " and run.fallback is None and fake.requests == []
    assert list_runs(store)[0].tier == "off"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(deltas=["开工前先问用户：无\n修复 greet"], finish="length"), "max-tokens"),
        (Reply(status=500, error_body={"error": {"message": "boom"}}), "http-error"),
        (Reply(deltas=["开工前先问用户：无\n修复"], cut=True), "stream-error"),
        (Reply(deltas=["以下是优化后的提示词：\n"]), "empty"),
    ],
)
def test_no_half_instruction_is_delivered(
    fake: FakeOpenAI, store: Store, reply: Reply, reason: str
) -> None:
    fake.replies.append(reply)
    run = optimize(store, "修复 greet", settings(store, tier="basic"), llm(fake))
    assert run.output == "修复 greet" and (run.fallback or "").startswith(reason)
    assert get_run(store, run.id or 0).fallback == run.fallback


def test_a_stalled_stream_falls_back_before_the_deadline(fake: FakeOpenAI, store: Store) -> None:
    fake.replies.append(Reply(deltas=["开工前", "先问"], keepalive_s=0.05))
    chosen = settings(store, tier="basic")
    chosen = dataclasses.replace(chosen, stall_s=0.5, timeout_s=30.0)
    run = optimize(store, "修复 greet", chosen, llm(fake))
    assert run.output == "修复 greet" and (run.fallback or "").startswith("stall")


def test_a_model_that_sends_headers_then_nothing_ends_at_the_stall_bound(
    fake: FakeOpenAI, store: Store
) -> None:
    fake.replies.append(Reply(deltas=[], silent=True, hold_s=12.0))
    chosen = dataclasses.replace(settings(store, tier="basic"), stall_s=1.0, timeout_s=10.0)
    run = optimize(store, "修复 greet", chosen, llm(fake))
    assert run.output == "修复 greet" and (run.fallback or "").startswith("stall")
    assert run.timings["modelMs"] < 2500  # the stall bound (1 s), not the deadline (10 s)
    assert get_run(store, run.id or 0).timings["modelMs"] == run.timings["modelMs"]


def test_the_deadline_falls_back_to_the_raw_words(fake: FakeOpenAI, store: Store) -> None:
    fake.replies.append(Reply(deltas=["开工前"], delay_s=0.3, keepalive_s=None))
    fake.replies[-1].deltas = ["a"] * 50  # keeps sending, slower than the deadline allows
    chosen = dataclasses.replace(settings(store, tier="basic"), timeout_s=1.0, stall_s=5.0)
    run = optimize(store, "修复 greet", chosen, llm(fake))
    assert run.output == "修复 greet" and (run.fallback or "").startswith("deadline")


def test_no_model_configured_passes_the_raw_words(store: Store) -> None:
    run = optimize(store, "修复 greet", settings(store), None)
    assert run.output == "修复 greet" and (run.fallback or "").startswith("no-llm")


# -- seed 000 §6: the degradation table ------------------------------------------------------


def scanned(tmp_path: Path, store: Store) -> tuple[str, str]:
    root = tmp_path / "sessions"
    log = session_dir(root, "s-1", cwd=str(tmp_path / "proj")) / "session.v4.jsonl.zstd"
    write_log(
        log,
        [
            [event("turn/start", 1, {"turn": 1}), human(2, "登录页的按钮错位了")],
            [
                event(
                    "assistant/message",
                    3,
                    {
                        "turn": 1,
                        "message": {
                            "role": "assistant",
                            "content": [
                                {
                                    "type": "text",
                                    "text": "按钮在 header.css 里被 float 挤开了，我改了。",
                                }
                            ],
                        },
                    },
                )
            ],
        ],
        cwd=str(tmp_path / "proj"),
    )
    Scanner(store).scan([Source("dsh", root)])
    return "dsh", "s-1"


def test_no_session_means_no_history_and_no_tools(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    scanned(tmp_path, store)  # a session exists, but none is named: nothing is guessed
    fake.replies.append(Reply(deltas=[ANSWER]))
    optimize(store, "修复这个 bug", settings(store, turns=3), llm(fake), session=None)
    body = fake.requests[0].body
    user = body["messages"][1]["content"]
    assert "没有可用的会话历史" in user and "〔历史#" not in user
    assert "tools" not in body and "待确认" in user  # no cwd: no tools, facts to be confirmed


def test_session_history_is_shown_as_an_onlooker_and_audited(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    key = scanned(tmp_path, store)
    fake.replies.append(
        Reply(deltas=["开工前先问用户：无\n按钮错位的根因见〔历史#3〕，改 header.css 的浮动。\n"])
    )
    run = optimize(store, "这个 bug 又出现了", settings(store, turns=2), llm(fake), session=key)
    user = fake.requests[0].body["messages"][1]["content"]
    assert "旁观" in user and "〔历史#2〕" in user and "〔历史#3〕" in user
    assert run.context and run.context["turnsIncluded"] == 1
    assert run.audit["traced"] == 1 and run.audit["untraced"] == 0


def test_turns_zero_means_no_context_block(tmp_path: Path, fake: FakeOpenAI, store: Store) -> None:
    key = scanned(tmp_path, store)
    fake.replies.append(Reply(deltas=[ANSWER]))
    run = optimize(store, "修复这个 bug", settings(store, turns=0), llm(fake), session=key)
    assert run.context is None
    assert "〔历史#" not in fake.requests[0].body["messages"][1]["content"]


def test_an_unreadable_working_directory_degrades_to_no_tools(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    fake.replies.append(Reply(deltas=[ANSWER]))
    run = optimize(store, "修复 greet", settings(store), llm(fake), cwd=str(tmp_path / "gone"))
    assert "tools" not in fake.requests[0].body and run.fallback is None
    assert any("workspace" in step for step in run.steps)


def test_basic_reads_no_files(tmp_path: Path, fake: FakeOpenAI, store: Store) -> None:
    fake.replies.append(Reply(deltas=[ANSWER]))
    optimize(
        store, "修复 greet", settings(store, tier="basic"), llm(fake), cwd=str(project(tmp_path))
    )
    assert "tools" not in fake.requests[0].body


# -- settings, outcomes -----------------------------------------------------------------------


def test_per_session_settings_and_outcomes(tmp_path: Path, fake: FakeOpenAI, store: Store) -> None:
    key = scanned(tmp_path, store)
    set_session_settings(store, key, {"tier": "extreme", "permission": "review"})
    chosen = settings_for(store, key)
    assert (chosen.tier, chosen.permission, chosen.form) == ("extreme", "review", "ptc")
    assert settings_for(store, None).tier == "off"  # the config's default, untouched
    with pytest.raises(ConfigError, match=r"\[optimizer\] turns = 11 .*is not allowed"):
        set_session_settings(store, key, {"turns": 11})
    fake.replies.extend([Reply(deltas=[ANSWER]), Reply(deltas=[ANSWER])])
    raw = optimize(store, "修复 greet", settings(store, tier="off"), llm(fake))
    done = optimize(store, "修复 greet", settings(store, tier="basic"), llm(fake))
    record_outcome(store, raw.id or 0, "rework")
    record_outcome(store, done.id or 0, "ok")
    rates = success_rates(store)
    assert (rates["basic"]["ok"], rates["off"]["rework"]) == (1, 1)
    assert rates["basic"]["successRate"] is None  # one judged run is no rate
    assert rates["basic"]["vsRawWords"] is None
    with pytest.raises(ValueError, match="outcome must be one of ok, rework"):
        record_outcome(store, done.id or 0, "meh")
    assert orjson.loads(orjson.dumps(get_run(store, done.id or 0).detail()))["outcome"] == "ok"


def test_an_endpoint_that_refuses_tools_gets_the_same_tier_without_them(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    root = project(tmp_path)
    key = scanned(tmp_path, store)
    refusal = {"error": {"message": "tools is not supported for this model", "param": "tools"}}
    fake.replies.extend([Reply(status=400, error_body=refusal), Reply(deltas=[ANSWER])])
    run = optimize(
        store, "修一下 greet 的错字", settings(store), llm(fake), session=key, cwd=str(root)
    )
    assert run.fallback is None and run.output == ANSWER
    first, second = (r.body for r in fake.requests)
    assert "tools" in first and "tools" not in second
    assert "read / glob / grep" not in second["messages"][1]["content"]
    # The endpoint's answer is kept for the session: no second try with tools.
    fake.replies.append(Reply(deltas=[ANSWER]))
    again = optimize(store, "再修一次", settings(store), llm(fake), session=key, cwd=str(root))
    assert again.fallback is None and len(fake.requests) == 3
    assert "tools" not in fake.requests[2].body


def test_another_http_400_still_passes_the_raw_words(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    fake.replies.append(Reply(status=400, error_body={"error": {"message": "bad max_tokens"}}))
    run = optimize(store, "修 greet", settings(store), llm(fake), cwd=str(project(tmp_path)))
    assert (run.fallback or "").startswith("http-error") and len(fake.requests) == 1


def test_an_answer_of_chatter_and_a_self_check_passes_the_raw_words(
    fake: FakeOpenAI, store: Store
) -> None:
    fake.replies.append(Reply(deltas=["好的，我来帮你优化这条指令。\n收尾自检：运行一次看输出。"]))
    run = optimize(store, "修复 greet", settings(store, tier="basic"), llm(fake))
    assert run.output == "修复 greet" and (run.fallback or "").startswith("empty")


def test_the_timeout_counts_from_when_the_prompt_began_to_wait(
    fake: FakeOpenAI, store: Store
) -> None:
    import time

    chosen = dataclasses.replace(settings(store, tier="basic"), timeout_s=5.0)
    spent = optimize(store, "修复 greet", chosen, llm(fake), started=time.monotonic() - 6)
    assert spent.output == "修复 greet" and (spent.fallback or "").startswith("deadline")
    assert fake.requests == []  # no time was left to ask
    fake.replies.append(Reply(deltas=[ANSWER]))
    some = optimize(store, "修复 greet", chosen, llm(fake), started=time.monotonic() - 3)
    assert some.fallback is None and some.timings["modelBudgetMs"] <= 2000


def test_a_cited_history_mark_is_one_the_agent_can_read_back(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    key = scanned(tmp_path, store)
    fake.replies.append(
        Reply(
            deltas=[
                "开工前先问用户：无\n按钮错位的根因见〔历史#3〕，改 header.css 的浮动。\n"
                "收尾自检：打开页面看按钮是否对齐。"
            ]
        )
    )
    run = optimize(store, "这个 bug 又出现了", settings(store, turns=2), llm(fake), session=key)
    lines = run.output.split("\n")
    assert lines[-1].startswith("收尾自检：")  # still the closing line
    note = lines[-2]
    assert "graft_read_result" in note and f"sourceSessionId={key[1]}" in note
    assert "seq=3" in note and "〔历史#3〕" in note
    # What the mark names is what the read-back tool returns for that seq.
    from dshkit.graft.readback import read_result
    from dshkit.sessions.catalog import Catalog

    assert read_result(Catalog(store), key[1], 3)["text"]


def test_a_refused_read_is_kept_as_refused_with_its_reason(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    root = project(tmp_path)
    fake.replies.extend(
        [
            calls(("read", '{"path": "../../etc/passwd"}'), ("read", '{"path": "src/app.py"}')),
            Reply(deltas=[ANSWER]),
        ]
    )
    run = optimize(store, "修一下 greet 的错字", settings(store), llm(fake), cwd=str(root))
    refused, read = run.steps
    assert refused["refused"] is True and refused["error"] is None
    assert ".." in refused["refusal"] and not refused["refusal"].startswith("[")
    assert read["refused"] is False and read["refusal"] is None
    stored = get_run(store, run.id or 0).steps
    assert stored[0]["refused"] is True and stored[0]["refusal"] == refused["refusal"]


def test_the_optimizers_own_model_effort_and_strategy_are_asked_for(
    fake: FakeOpenAI, store: Store
) -> None:
    fake.replies.extend([Reply(deltas=[ANSWER]), Reply(deltas=[ANSWER])])
    chosen = settings(store, tier="basic", model="m-opt", reasoning_effort="high", strategy="v5")
    run = optimize(store, "修复 greet", chosen, llm(fake))
    optimize(store, "修复 greet", settings(store, tier="basic"), llm(fake))
    mine, default = (r.body for r in fake.requests)
    assert (mine["model"], mine["reasoning_effort"]) == ("m-opt", "high")
    assert default["model"] == llm(fake).model and "reasoning_effort" not in default
    assert "【闸门】" not in mine["messages"][0]["content"]  # v5: without F1-F7
    assert "【闸门】" in default["messages"][0]["content"]
    assert (run.strategy, get_run(store, run.id or 0).detail()["strategy"]) == ("v5", "v5")
    with pytest.raises(ConfigError, match=r"\[optimizer\] reasoning_effort = 'max'"):
        settings(store, reasoning_effort="max")


def test_the_same_words_with_and_without_the_sessions_history(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    """The seed's comparison: one request, the history shown and not shown, both kept."""
    scanned(tmp_path, store)
    (store.state_dir / "config.toml").write_text(
        f'[llm]\nbase_url = "{fake.base_url}"\napi_key = "sk-t"\nmodel = "m1"\n'
        '[optimizer]\ntier = "basic"\n'
    )
    fake.replies.extend([Reply(deltas=[ANSWER]), Reply(deltas=[ANSWER])])
    service = OptimizerService(store.state_dir)
    with_history, without = service.compare("修复这个 bug", session="s-1", refresh=Refresh.NONE)
    shown, blind = (r.body["messages"][1]["content"] for r in fake.requests)
    assert "登录页的按钮错位了" in shown and "〔历史#" in shown
    assert "登录页的按钮错位了" not in blind and "没有可用的会话历史" in blind
    assert with_history.context and without.context is None
    assert (with_history.session_id, without.session_id) == ("s-1", "s-1")
    assert [run.id for run in service.runs(5).runs] == [without.id, with_history.id]


def test_a_constraint_riding_on_a_history_citation_is_checked_in_a_run(
    tmp_path: Path, fake: FakeOpenAI, store: Store
) -> None:
    """The run's audit checks a history citation against the cited message's words, as
    shown to the model: a demand the message never made is a defect, not "traced"."""
    key = scanned(tmp_path, store)
    fake.replies.append(
        Reply(
            deltas=[
                "开工前先问用户：无\n按钮错位的根因是 header.css 的 float〔历史#3〕。\n"
                "按钮错位的根因见〔历史#3〕，并且不许改动 footer 组件。\n"
            ]
        )
    )
    run = optimize(store, "这个 bug 又出现了", settings(store, turns=2), llm(fake), session=key)
    kinds = [(unit["kind"], unit["why"]) for unit in run.sentences if unit["kind"] != "structure"]
    assert kinds == [("traced", "history"), ("untraced", "unsupported-history-cite")]
    assert run.audit["untraced"] == 1
