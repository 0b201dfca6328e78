"""The four friction signals (seed 001 §4), including every false positive the seed found."""

from __future__ import annotations

import dataclasses
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.profile.signals import (
    SIGNALS,
    SessionSignals,
    SignalConfig,
    collect_signals,
    session_signals,
)
from dshkit.sessions import Catalog, Scanner, SessionKey, Source
from dshkit.sessions.events import turns
from dshkit.store import Store

from ..support.cli import run_dshkit
from ..support.corpus import Corpus
from ..support.logs import MINUTE, Log, session_dir, write_log
from ..support.paths import CLAUDE, CODEX, DSH_PLAIN, DSH_ZSTD
from ..support.signals import failing_session, only

# -- delegateRuns ---------------------------------------------------------------------------


def test_delegate_run_is_the_last_message_of_a_turn_without_tools() -> None:
    log = Log()
    log.turn_start()
    log.human("看一下为什么构建失败")
    log.say("原因是缺少依赖。请你把这个输出贴给我，我确认后给你最准确的修改命令")
    assert log.counts() == only(delegateRuns=1)
    hit = session_signals(log.events, SignalConfig(), "dsh:s").hits["delegateRuns"][0]
    assert hit["match"] == "请你把" and hit["turn"] == 1


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("冲突需要你处理一下再继续", "需要你处理"),
        ("需要你确认这两个选项", "需要你确认"),
        ("请你重试一次安装", "请你重试"),
        ("请你执行下面这条命令", "请你执行"),
        ("需要你 看一下日志", "需要你 看"),
    ],
)
def test_request_verbs_are_matched_as_words(text: str, match: str) -> None:
    log = Log()
    log.turn_start()
    log.say(text)
    (hit,) = session_signals(log.events, SignalConfig(), "dsh:s").hits["delegateRuns"]
    assert hit["match"] == match


def test_hits_report_the_harness_turn_number_like_the_session_layer() -> None:
    # Turns are grouped by their order in the log but reported by the harness's own number,
    # the one `turns()` gives everywhere else (a resumed session may start at turn 7).
    log = Log()
    log.turn = 6
    log.turn_start()
    log.say("请你把日志贴给我")
    (hit,) = session_signals(log.events, SignalConfig(), "dsh:s").hits["delegateRuns"]
    assert hit["turn"] == 7 == turns(log.events)[-1].number


def test_a_call_without_times_is_not_timed() -> None:
    log = Log()
    log.turn_start()
    log.call("bash", "c1")
    log.result("c1", 10 * MINUTE)
    del log.events[-2]["time"]
    assert log.counts() == only()


@pytest.mark.parametrize(
    "text",
    [
        "需要你注意一个陷阱，不绕开的话你会得出错误结论",  # seed §4.1: "需要你" as "note that"
        "这里我们先理一理上下文，再讨论方案",
        "需要你理解的是，这两个模块共用一份缓存",  # 理 alone is not 处理 (issue 8 item 15)
        "这一点需要你认识到：缓存是按内容寻址的",  # 认 alone is not 确认
        "你自己行不行都无所谓，结论不变",  # 行 alone is not 执行
    ],
)
def test_discursive_you_is_not_a_delegate_run(text: str) -> None:
    log = Log()
    log.turn_start()
    log.say(text)
    assert log.counts() == only()


def delegate_match(text: str, config: SignalConfig | None = None) -> str | None:
    """What delegateRuns matched in a turn without tools ending with `text` (None: no hit)."""
    log = Log()
    log.turn_start()
    log.human("why does the build fail?")
    log.say(text)
    hits = session_signals(log.events, config or SignalConfig(), "dsh:s").hits["delegateRuns"]
    return str(hits[0]["match"]) if hits else None


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("You can run `make test` to check it.", "You can run"),
        ("you could try restarting the daemon first", "you could try restarting"),
        ("You may want to re-run the build with -v.", "You may want to re-run"),
        ("You should check the proxy settings on your side.", "You should check"),
        ("Please run the migration and paste the output.", "Please run"),
        ("Kindly reinstall the package from PyPI.", "Kindly reinstall"),
        ("Could you paste the full error?", "Could you paste"),
        ("Can you check whether the server is up?", "Can you check"),
        ("Would you mind running it once more?", "Would you mind running"),
        ("You'll need to restart your terminal.", "You'll need to restart"),
        ("You will have to log in again.", "You will have to log in"),
        ("You need to set OPENAI_API_KEY first.", "You need to set"),
        ("Run the following command:\n\n    npm install", "Run the following"),
        ("That is the cause. Next, run this in your shell:", "Next, run this"),
        ("Try running `pytest -x` and tell me what fails.", "Try running"),
        ("Let me know once you've restarted it.", "Let me know once you've restarted"),
        ("请您执行一下这个命令", "请您执行"),
        ("麻烦您帮忙看一下日志", "麻烦您帮忙看一下"),
    ],
)
def test_english_and_polite_requests_are_delegate_runs(text: str, match: str) -> None:
    assert delegate_match(text) == match


@pytest.mark.parametrize(
    "text",
    [
        "I ran the tests and all 12 pass.",
        "You can see the result in out.html.",  # telling, not asking
        "You can find the file under src/.",
        "You should see a new entry in the log.",
        "Please note that the server restarted.",
        "Please let me know if anything looks off.",
        "Would you like me to run the tests?",  # an offer
        "I can run the benchmarks if you want.",
        "I'll try running the suite next.",  # not an imperative of its own
        "If you need to run it again, the command is in the README.",  # a condition
        "When you need to deploy, use make deploy.",
        "You can't run this on Windows.",
        "You cannot install it globally.",
        "The script will run the following steps.",
        "The runner will execute these in order.",
        "Before you run the migration, I backed up the database.",
        "Let me know if you run into issues.",
    ],
)
def test_english_near_misses_are_not_delegate_runs(text: str) -> None:
    assert delegate_match(text) is None


def test_only_the_turns_last_message_counts_and_only_its_text() -> None:
    log = Log()
    log.turn_start()
    log.say("所以我请你先把三个被混在一起的东西拆开")  # seed §4.1: mid-turn, not the hand-off
    log.say("拆开之后结论就清楚了。")
    log.turn_start()
    log.say("结论如上。", reasoning="也许应该请你把日志发给我")  # reasoning is not speech
    assert log.counts() == only()


def test_a_turn_with_a_tool_call_is_not_a_delegate_run_and_turns_count_once() -> None:
    log = Log()
    log.turn_start()
    log.call("read", "c1")
    log.result("c1", 100)
    log.say("需要你确认一下这两件事")
    log.turn_start()
    log.say("需要你确认")
    log.say("请你把结果贴给我；麻烦你帮忙看一下")
    assert log.counts() == only(delegateRuns=1)
    swapped = SignalConfig(delegate_patterns=(r"从不出现的句式",))
    assert log.counts(swapped) == only()  # seed §4.5: swapping the patterns empties it


# -- longTools, humanWaitTools, concurrentSkipped -------------------------------------------


def waits() -> Log:
    log = Log()
    log.turn_start()
    log.call("pwsh", "p1")
    log.result("p1", 2 * MINUTE)  # a long command
    log.call("ask_user_question", "q1")
    log.result("q1", 330 * MINUTE)  # seed §4.2: 5.5 hours of a person thinking
    log.call("job_output", "j1")
    log.result("j1", 3 * MINUTE)  # waiting on a background job
    log.call("read", "r1")
    log.result("r1", 5 * MINUTE)  # slow, but not a command tool
    log.call("bash", "b1")
    log.result("b1", 30_000)  # under the threshold
    # Parallel calls: the first result is queued behind the second call (seed §4.2, 5.5 h).
    log.call("pwsh", "p2")
    log.call("pwsh", "p3", after_ms=10)
    log.result("p3", 2 * MINUTE)  # the last of a batch gets a clean reading
    log.result("p2", 330 * MINUTE)
    # A human-wait call with a turn start in between is skipped first, not counted as a wait.
    log.call("subagent", "s1")
    log.turn_start(after_ms=10)
    log.result("s1", 90 * MINUTE)
    return log


def test_long_waits_are_sorted_into_commands_waits_and_skipped() -> None:
    assert waits().counts() == only(longTools=2, humanWaitTools=2, concurrentSkipped=2)
    hits = session_signals(waits().events, SignalConfig(), "dsh:s").hits
    assert [(h["tool"], h["durationMs"]) for h in hits["longTools"]] == [
        ("pwsh", 120_000),
        ("pwsh", 120_000),
    ]
    assert max(h["durationMs"] for h in hits["longTools"]) < 24 * 60 * MINUTE


def test_thresholds_move_the_counts() -> None:
    log = waits()
    base = log.counts()["longTools"]
    assert log.counts(SignalConfig(long_tool_ms=1))["longTools"] > base  # seed §4.5
    assert log.counts(SignalConfig(long_tool_ms=10**12)) == only()
    no_waits = SignalConfig(human_wait_tools=frozenset())
    assert log.counts(no_waits)["longTools"] > base  # seed §4.5: job_output becomes a command
    assert log.counts(no_waits)["humanWaitTools"] == 0


# -- repeatFailures -------------------------------------------------------------------------


def test_seven_failures_at_three_count_twice_and_success_resets() -> None:
    log = Log()
    log.turn_start()
    for n in range(7):
        log.call("write", f"w{n}")
        log.result(f"w{n}", 100, failed=True, code="FS_STALE_VERSION")
        if n == 3:
            log.turn_start()  # turn boundaries do not reset a streak
    log.call("web_fetch", "f1")
    log.result("f1", 100, failed=True)
    log.call("web_fetch", "f2")
    log.result("f2", 100)  # success resets web_fetch
    for n in range(3):
        log.call("web_fetch", f"g{n}")
        log.result(f"g{n}", 100, failed=True)  # isError only: no code
    counts = session_signals(log.events, SignalConfig(), "dsh:s")
    assert counts.totals() == only(repeatFailures=3)
    assert [(h["tool"], h["errorCode"]) for h in counts.hits["repeatFailures"]] == [
        ("write", "FS_STALE_VERSION"),
        ("write", "FS_STALE_VERSION"),
        ("web_fetch", None),
    ]
    assert log.counts(SignalConfig(repeat_fail_min=1))["repeatFailures"] == 7 + 1 + 3


def test_interleaved_tools_keep_separate_streaks() -> None:
    log = Log()
    log.turn_start()
    for n in range(3):
        for tool in ("edit", "grep"):
            log.call(tool, f"{tool}{n}")
            log.result(f"{tool}{n}", 100, failed=True)
    assert log.counts() == only(repeatFailures=2)


# -- freeformAnswers ------------------------------------------------------------------------

OPTIONS = {
    "questions": [
        {
            "id": "restart",
            "question": "现在重启吗？",
            "options": [{"label": "现在重启并验证（推荐）"}, {"label": "先不重启，我自己稍后重启"}],
        }
    ]
}


def asked(answer: str | None, turns_between: int = 0, after_ms: int = 1000) -> Log:
    log = Log()
    log.turn_start()
    log.call("ask_user_question", "q1", OPTIONS)
    # Seed §1.9(d): the answer is a role-user tool/result whose call id pairs with nothing.
    log.result(
        "q-elsewhere",
        5000,
        role="user",
        text='{"answers":[{"id":"restart","selected":["先不重启，我自己稍后重启"]}]}',
    )
    for _ in range(turns_between):
        log.turn_start()
        log.say("another topic")
    log.turn_start()
    if answer is not None:
        log.human(answer, after_ms)
    return log


def test_an_answer_outside_the_options_counts() -> None:
    log = asked("显示文件已损坏，无法启动qq")
    assert log.counts() == only(freeformAnswers=1, unpairedToolResults=1)
    hit = session_signals(log.events, SignalConfig(), "dsh:s").hits["freeformAnswers"][0]
    assert hit["answer"] == "显示文件已损坏，无法启动qq" and len(hit["options"]) == 2


@pytest.mark.parametrize(
    "answer",
    [
        "现在重启并验证（推荐）",
        "  先不重启，我自己稍后重启 ",
        "好的，现在重启并验证（推荐）吧",
        "现在重启",
    ],
)
def test_choosing_an_option_in_any_wording_does_not_count(answer: str) -> None:
    assert asked(answer).counts()["freeformAnswers"] == 0


def test_labels_match_ignoring_case() -> None:
    log = Log()
    log.turn_start()
    log.call("AskUserQuestion", "q1", {"questions": [{"options": [{"label": "Yes, Restart"}]}]})
    log.result("q1", 1000)
    log.human("yes, restart")
    assert log.counts() == only()


def test_a_change_of_topic_is_not_a_freeform_answer() -> None:
    # Seed §4.4: a later human message after another turn is a new topic, not an answer.
    assert asked("总结一下为了成功安装，你做的关键步骤", turns_between=1).counts() == only(
        unpairedToolResults=1
    )


def test_answers_outside_the_window_or_without_options_do_not_count() -> None:
    late = asked("自己另说", after_ms=31 * MINUTE)
    assert late.counts()["freeformAnswers"] == 0
    assert late.counts(SignalConfig(answer_window_ms=40 * MINUTE))["freeformAnswers"] == 1
    log = Log()
    log.turn_start()
    log.call("ask_user_question", "q1", {"questions": [{"question": "?", "options": []}]})
    log.result("q1", 1000)
    log.human("自己另说")
    assert log.counts() == only()


# -- across sessions and harnesses, and incrementally ---------------------------------------


def test_streaks_never_leak_across_sessions_and_results_are_incremental(tmp_path: Path) -> None:
    root = tmp_path / "root"
    failing_session(root, "a", 2)
    failing_session(root, "b", 2)
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        first = collect_signals(scanner.catalog, keys, SignalConfig(), memo=True)
        assert (first.sessions, first.human_messages) == (2, 2)
        assert first.totals == only() and first.recomputed == 2
        again = collect_signals(scanner.catalog, keys, SignalConfig(), memo=True)
        assert again.recomputed == 0 and again.as_json() == first.as_json()
        # One more failure in session a: only a is computed again, and now counts.
        log = Log()
        log.time += 10**9
        log.add("tool/call", {"turn": 1, "callId": "late", "name": "write", "arguments": "{}"})
        log.events[-1]["seq"] = 100
        write_log(
            session_dir(root, "a") / "session.v4.jsonl.zstd",
            [
                [log.events[-1]],
                [
                    {
                        **log.events[-1],
                        "seq": 101,
                        "type": "tool/result",
                        "data": {
                            "message": {
                                "source": {"kind": "tool", "callId": "late"},
                                "content": [],
                            },
                            "error": {"code": "X"},
                        },
                    }
                ],
            ],
            mode="ab",
        )
        scanner.scan([Source("dsh", root)])
        grown = collect_signals(scanner.catalog, keys, SignalConfig(), memo=True)
        assert grown.recomputed == 1 and grown.totals == only(repeatFailures=1)
        assert grown.details["repeatFailures"][0]["session"] == "dsh:a"
        other = collect_signals(
            scanner.catalog, keys, dataclasses.replace(SignalConfig(), repeat_fail_min=2)
        )
        assert other.recomputed == 2 and other.totals == only(repeatFailures=2)


def test_claude_code_tools_map_to_the_same_signals(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-dev-p"
    project.mkdir(parents=True)

    def line(kind: str, at: str, **fields: Any) -> bytes:
        return orjson.dumps({"type": kind, "timestamp": f"2026-11-30T04:{at}Z", **fields}) + b"\n"

    ask = {"questions": [{"question": "Restart?", "options": [{"label": "Yes"}, {"label": "No"}]}]}
    lines = [
        line("user", "00:00.000", message={"role": "user", "content": "deploy it"}),
        line(
            "assistant",
            "00:01.000",
            requestId="r1",
            message={
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "make deploy"},
                    }
                ]
            },
        ),
        line(
            "user",
            "02:31.000",
            message={"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]},
        ),
        line(
            "assistant",
            "02:32.000",
            requestId="r2",
            message={
                "content": [
                    {"type": "tool_use", "id": "t2", "name": "AskUserQuestion", "input": ask}
                ]
            },
        ),
        line(
            "user",
            "09:00.000",
            message={
                "content": [
                    {"type": "tool_result", "tool_use_id": "t2", "content": "User answered"}
                ]
            },
        ),
        line(
            "user", "09:05.000", message={"role": "user", "content": "wait, check the logs first"}
        ),
    ]
    (project / "c-1.jsonl").write_bytes(b"".join(lines))
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("claude", tmp_path / "projects")]).keys
        report = collect_signals(scanner.catalog, keys, SignalConfig())
    assert report.totals == only(longTools=1, humanWaitTools=1, freeformAnswers=1)
    assert report.details["longTools"][0]["tool"] == "Bash"


def test_signals_cli_json_contract(tmp_path: Path) -> None:
    root = tmp_path / "root"
    failing_session(root, "a", 3)
    command = ["signals", "--root", str(root), "--state-dir", str(tmp_path / "state"), "--json"]
    result = run_dshkit(*command, home=tmp_path)
    report = orjson.loads(result.stdout)
    assert list(report) == ["sessions", "humanMessages", "totals", "details", "omitted"]
    assert list(report["totals"]) == list(SIGNALS) == list(report["details"])
    assert list(report["omitted"]) == list(SIGNALS)
    assert report["totals"]["repeatFailures"] == 1 and report["sessions"] == 1
    assert report["omitted"] == only()
    lower = run_dshkit(*command, "--repeat-fail-min", "1", home=tmp_path)
    assert orjson.loads(lower.stdout)["totals"]["repeatFailures"] == 3
    capped = orjson.loads(
        run_dshkit(*command, "--repeat-fail-min", "1", "--details", "2", home=tmp_path).stdout
    )
    assert capped["totals"]["repeatFailures"] == 3 and len(capped["details"]["repeatFailures"]) == 2
    assert capped["omitted"] == only(repeatFailures=1)
    bad = run_dshkit(*command, "--repeat-fail-min", "0", home=tmp_path, check=False)
    assert bad.returncode == 2 and "--repeat-fail-min" in bad.stderr
    negative = run_dshkit(*command, "--details", "-1", home=tmp_path, check=False)
    assert negative.returncode == 2 and "--details" in negative.stderr


# -- bounded memory: streamed sessions, capped details --------------------------------------


# Every rule fires as often as it can: any assistant text is a request, any call is long.
EAGER = SignalConfig(
    delegate_patterns=(r"\S",), long_tool_ms=0, repeat_fail_min=1, answer_window_ms=10**12
)


def assert_streamed_like_full(catalog: Catalog, key: SessionKey) -> SessionSignals:
    """The streamed events are the full union's, whatever the chunk size, and so are their
    signals (returned, counted with EAGER)."""
    full = catalog.events(key)
    expected = session_signals(full, EAGER, "s")
    for chunk in (1, 97, 1 << 20):  # a byte at a time, lines cut anywhere, whole files
        assert list(catalog.iter_events(key, chunk)) == full
        streamed = session_signals(catalog.iter_events(key, chunk), EAGER, "s")
        assert streamed.as_json() == expected.as_json()
    return expected


def test_streamed_events_and_signals_equal_the_full_ones_on_real_logs(tmp_path: Path) -> None:
    sources = [
        Source("claude", CLAUDE),
        Source("codex", CODEX),
        Source("dsh", DSH_ZSTD),
        Source("dsh", DSH_PLAIN),
    ]
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        keys = scanner.scan(sources).keys
        assert {h for h, _ in keys} == {"claude", "codex", "dsh"}
        results = [assert_streamed_like_full(scanner.catalog, key) for key in keys]
    assert all(r.human_messages for r in results)
    assert sum(r.totals()["delegateRuns"] for r in results) > 0


def generations(root: Path) -> Log:
    """A DSH session in two generations, the second repeating the first (seed 001 §3.7): exact
    twins (by seq, and by type@time where there is no seq) and a same-seq event whose content
    differs (both stay)."""
    log = asked("显示文件已损坏，无法启动qq")
    log.say("需要你确认一下")
    log.turn_start()
    for n in range(4):
        log.call("bash", f"b{n}", after_ms=10)
        log.result(f"b{n}", 2 * MINUTE, failed=True, code="E")
    log.call("job_output", "j1")
    log.result("j1", MINUTE)  # a wait
    log.call("bash", "x1")
    log.call("bash", "x2")
    log.result("x1", MINUTE)  # queued behind x2
    log.add("turn/end", {"turn": log.turn, "reason": {"kind": "completed"}})
    del log.events[-1]["seq"]  # keyed by type@time
    log.result("nobody", 100, text="orphan")
    directory = session_dir(root, "gen")
    old = log.events[:-1]  # the first generation: all but the last event
    write_log(directory / "session.jsonl.zstd", [[e] for e in old], session_id="gen", version=0)
    again = next(e for e in old if e["type"] == "tool/result" and e["data"].get("error"))
    changed = {**again, "data": {**again["data"], "turn": 99}}  # same seq, other content
    write_log(
        directory / "session.v4.jsonl.zstd", [[e] for e in [*log.events, changed]], session_id="gen"
    )
    return log


def test_streamed_twins_drop_exactly_as_the_union_drops_them(tmp_path: Path) -> None:
    root = tmp_path / "root"
    log = generations(root)
    corpus = Corpus(tmp_path / "corpus", seed=3)
    corpus.generate(sessions=40, frames=4000)  # some migrated: a v0 and a v4 generation
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root), Source("dsh", tmp_path / "corpus")]).keys
        catalog = scanner.catalog
        union = catalog.events(("dsh", "gen"))
        assert len(union) == len(log.events) + 1  # every twin dropped, the changed one kept
        totals = assert_streamed_like_full(catalog, ("dsh", "gen")).totals()
        assert all(totals[name] for name in SIGNALS)
        repeated = 0
        for key in keys:
            files = catalog.files(key)
            assert_streamed_like_full(catalog, key)
            whole = sum(len(catalog.file_events(c) or ()) for c in files)
            repeated += len(files) > 1 and whole > len(catalog.events(key))
        assert repeated >= 2


def test_a_lost_cache_streams_nothing_and_is_read_again(tmp_path: Path) -> None:
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        first = scanner.scan([Source("dsh", DSH_ZSTD)])
        (key,) = first.changed_sessions
        for cache in (tmp_path / "state" / "plain").iterdir():
            cache.write_bytes(cache.read_bytes()[:100])
        assert list(scanner.catalog.iter_events(key)) == []
        assert scanner.catalog.files(key) == []  # forgotten, so the next scan reads it again
        scanner.scan([Source("dsh", DSH_ZSTD)])
        assert len(list(scanner.catalog.iter_events(key))) == first.events


def test_one_session_with_large_tool_outputs_is_counted_in_bounded_memory(
    tmp_path: Path,
) -> None:
    log = Log()
    log.turn_start()
    log.human("go")
    for n in range(300):  # 30 MiB of tool output
        log.call("bash", f"c{n}")
        log.result(f"c{n}", 2 * MINUTE, text=f"{n:06d}" + "output line\n" * 8738)
    path = session_dir(tmp_path / "root", "big") / "session.v4.jsonl.zstd"
    write_log(path, [log.events[i : i + 10] for i in range(0, len(log.events), 10)])
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", tmp_path / "root")]).keys
        cache = sum(c.plain_len for c in scanner.catalog.files(keys[0]))
        tracemalloc.start()
        try:
            report = collect_signals(scanner.catalog, keys, SignalConfig())
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert cache > 30 << 20
    assert peak < cache / 4, f"peak {peak / 2**20:.1f} MiB for a cache of {cache / 2**20:.1f} MiB"
    assert report.totals == only(longTools=300) and report.omitted == only(longTools=250)


def test_details_keep_the_first_hits_and_count_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in ("a", "b", "c"):
        failing_session(root, name, 7)
    config = SignalConfig(repeat_fail_min=1)
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        every = collect_signals(scanner.catalog, keys, config, details=1000, memo=True)
        hits = every.details["repeatFailures"]
        assert every.recomputed == 3 and len(hits) == 21 and every.omitted == only()
        order = [(h["session"], h["resultSeq"]) for h in hits]  # sessions as given, log order
        assert order == sorted(order, key=lambda o: (keys.index(("dsh", o[0][4:])), o[1]))
        for details in (0, 5, 7, 21):
            report = collect_signals(scanner.catalog, keys, config, details=details)
            assert report.recomputed == 0  # from the stored results
            assert report.totals == only(repeatFailures=21) == every.totals
            assert report.details["repeatFailures"] == hits[:details]
            assert report.omitted == only(repeatFailures=21 - details)
        fresh = collect_signals(scanner.catalog, keys, SignalConfig(repeat_fail_min=2), details=4)
        assert fresh.recomputed == 3 and fresh.totals == only(repeatFailures=9)
        assert fresh.omitted == only(repeatFailures=5)
        with pytest.raises(ValueError, match="details"):
            collect_signals(scanner.catalog, keys, config, details=-1)
