"""The optimizer's session-context block (seed 000 W1b, iron rules 7–8): session resolution
without fallback, scope from the two settings only, human speech only, the onlooker
declaration, the degradation ladder in the seed's order and dropped turns counted exactly —
on the real DSH, Claude Code and Codex fixtures and on generated sessions."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.optimizer.context import (
    DECLARATION,
    LEVELS,
    MAX_EXCHANGES,
    MIN_BUDGET_CHARS,
    ContextBlock,
    DetailLevel,
    context_block,
    resolve_marks,
)
from dshkit.optimizer.strategies import HISTORY_MARK
from dshkit.sessions import Scanner, SessionAmbiguous, SessionNotFound, Source
from dshkit.sessions.catalog import Catalog

from ..support.logs import assistant, dsh, event, exchange_events, human, session_dir, write_log
from ..support.paths import CLAUDE, CODEX, DATA, DSH_PLAIN, DSH_ZSTD

BIG = 100_000


def mark(seq: int) -> str:
    return HISTORY_MARK.format(seq=seq)


def block(catalog: Catalog, key: Any, **settings: Any) -> ContextBlock:
    found = context_block(
        catalog, key, **{"turns": 0, "full": False, "budget_chars": BIG, **settings}
    )
    assert found is not None
    return found


def injected(seq: int, kind: str, text: str) -> dict[str, Any]:
    data = {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": kind}}
    return event("user/message", seq, data)


def tool_call(seq: int, name: str, arguments: dict[str, Any], turn: int = 1) -> dict[str, Any]:
    data = {
        "turn": turn,
        "step": 1,
        "callId": f"call-{seq}",
        "name": name,
        "arguments": orjson.dumps(arguments).decode(),
    }
    return event("tool/call", seq, data)


def tool_result(seq: int, call_seq: int, text: str) -> dict[str, Any]:
    message = {
        "role": "tool",
        "source": {"kind": "tool", "callId": f"call-{call_seq}"},
        "content": [{"type": "text", "text": text}],
    }
    return event("tool/result", seq, {"turn": 1, "step": 1, "message": message})


@pytest.fixture
def fixtures(scanner: Scanner) -> Catalog:
    roots = [(DSH_ZSTD, "dsh"), (DSH_PLAIN, "dsh"), (CLAUDE, "claude"), (CODEX, "codex")]
    report = scanner.scan([Source(harness, root) for root, harness in roots])
    assert report.errors == []
    return scanner.catalog


# -- resolution: an explicit id or nothing ----------------------------------------------------


def test_resolution_takes_an_explicit_id_or_prefix_and_never_falls_back(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "root"
    for session_id in ("abc-1", "abc-2", "xyz"):
        write_log(session_dir(root, session_id) / "session.v4.jsonl.zstd", [[human(0, "hi")]])
    scanner.scan(dsh(root))
    catalog = scanner.catalog
    assert catalog.find("xyz").key == ("dsh", "xyz")
    assert catalog.find("xy").key == ("dsh", "xyz")  # a unique prefix
    assert catalog.find(" abc-2 ", "dsh").key == ("dsh", "abc-2")
    # Nothing given, unknown, or another harness: no session; ambiguous: say which, never a
    # guess, however many exist.
    assert catalog.resolve(None) is None and catalog.resolve("  ") is None
    for session_id, harness in (("nope", None), ("xyz", "claude"), ("xyz", "no-such-harness")):
        with pytest.raises(SessionNotFound):
            catalog.find(session_id, harness)
    with pytest.raises(SessionAmbiguous, match="dsh:abc-1"):
        catalog.find("abc")
    # No resolvable session → no block at all.
    assert context_block(catalog, None, turns=10, full=True, budget_chars=BIG) is None
    assert context_block(catalog, ("dsh", "gone"), turns=10, full=True, budget_chars=BIG) is None


def test_nothing_asked_for_is_no_block_and_bad_settings_are_refused(fixtures: Catalog) -> None:
    key = fixtures.find("session-68aca4c0").key
    assert key is not None
    assert context_block(fixtures, key, turns=0, full=False, budget_chars=BIG) is None
    for turns in (-1, MAX_EXCHANGES + 1, True, 2.0):
        with pytest.raises(
            ValueError, match=rf"turns must be an integer from 0 to {MAX_EXCHANGES}"
        ):
            context_block(fixtures, key, turns=turns, full=False, budget_chars=BIG)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=rf"budget_chars must be at least {MIN_BUDGET_CHARS}"):
        context_block(fixtures, key, turns=1, full=False, budget_chars=MIN_BUDGET_CHARS - 1)


# -- the real fixtures of the three harnesses -------------------------------------------------


def test_dsh_fixture_exchange_shows_speech_replies_and_tools_but_no_injection(
    fixtures: Catalog,
) -> None:
    key = fixtures.find("session-68aca4c0").key
    assert key == ("dsh", "session-68aca4c0-6253-4648-b1e8-3f36e75c7111")
    found = block(fixtures, key, turns=1)
    assert found.text.startswith(DECLARATION)
    assert found.text.endswith("【会话历史结束】")
    assert found.detail is DetailLevel.FULL and found.truncated_to is None
    assert (found.exchanges_included, found.exchanges_dropped, found.key) == (1, 0, key)
    # One exchange: the person's message, both assistant steps, the tool call between them.
    assert found.seqs == (7, 26, 43)
    assert f"{mark(7)}用户：Read hello.txt and tell me what it says" in found.text
    assert f"{mark(26)}AI：Let me check." in found.text
    assert "调用工具 read：hello.txt" in found.text
    assert f"{mark(43)}AI：The answer is 42." in found.text
    # Not the runtime snapshot the plugin injected, not reasoning, not the tool's output.
    for absent in ("Current runtime context", "I should look.", "Done thinking.", "hello from"):
        assert absent not in found.text
    assert found.as_json() == {
        "harness": "dsh",
        "sessionId": key[1],
        "turnsIncluded": 1,
        "turnsDropped": 0,
        "detail": "full",
        "seqs": [7, 26, 43],
        "truncatedTo": None,
        "compacted": False,
        "chars": len(found.text),
    }


@pytest.mark.parametrize(
    ("session_id", "said", "answer", "seqs"),
    [
        ("session-bb6e601d", "Say hello", "The answer is 42.", (7, 24)),  # DSH v0, zstd
        ("cc34c54b", "say hi", "hi from fake anthropic", (1, 2)),  # Claude Code
        ("01a22aa8", "say hi", "hi from fake openai", (4, 5)),  # Codex
    ],
)
def test_each_harness_fixture_gives_its_exchange(
    fixtures: Catalog, session_id: str, said: str, answer: str, seqs: tuple[int, int]
) -> None:
    key = fixtures.find(session_id).key
    assert key is not None
    for settings in ({"turns": 3}, {"full": True}):
        found = block(fixtures, key, **settings)
        assert found.text.startswith(DECLARATION)
        assert found.seqs == seqs and found.exchanges_included == 1
        assert f"{mark(seqs[0])}用户：{said}" in found.text
        assert f"{mark(seqs[1])}AI：{answer}" in found.text
    codex = block(fixtures, fixtures.find("01a22aa8").key, turns=1).text
    assert "<environment_context>" not in codex and "skill" not in codex


# -- scope: only the settings decide ----------------------------------------------------------


def five_exchanges(tmp_path: Path, scanner: Scanner) -> Catalog:
    root = tmp_path / "root"
    events: list[dict[str, Any]] = []
    for turn in range(1, 6):
        events += exchange_events(len(events), turn, f"第{turn}个请求", f"第{turn}个答复")
    write_log(session_dir(root, "s-5") / "session.v4.jsonl.zstd", [events])
    scanner.scan(dsh(root))
    return scanner.catalog


def test_turns_picks_exactly_the_last_n_exchanges(tmp_path: Path, scanner: Scanner) -> None:
    catalog = five_exchanges(tmp_path, scanner)
    key = ("dsh", "s-5")
    two = block(catalog, key, turns=2)
    # Exchange k occupies seqs 4(k-1) .. 4(k-1)+3: human at +1, reply at +2.
    assert two.seqs == (13, 14, 17, 18)
    assert "第3个请求" not in two.text and "第4个请求" in two.text and "第5个答复" in two.text
    assert "范围：最近 2 次往来" in two.text
    every = block(catalog, key, turns=MAX_EXCHANGES)
    assert every.exchanges_included == 5 and every.seqs[0] == 1
    assert "本会话只有 5 次" in every.text
    assert block(catalog, key, full=True).seqs == every.seqs  # no compaction: all in view


def test_the_words_being_optimized_are_not_history(tmp_path: Path, scanner: Scanner) -> None:
    catalog = five_exchanges(tmp_path, scanner)
    write_log(
        session_dir(tmp_path / "root", "s-5") / "session.v4.jsonl.zstd",
        [[event("turn/start", 20, {"turn": 6}), human(21, "  修一下这个 bug ")]],
        mode="ab",
    )
    scanner.scan(dsh(tmp_path / "root"))
    key = ("dsh", "s-5")
    assert block(catalog, key, turns=1).seqs == (21,)  # without `raw` it is the last exchange
    pending = block(catalog, key, turns=1, raw="修一下这个 bug")
    assert pending.seqs == (17, 18) and "修一下" not in pending.text
    assert block(catalog, key, turns=1, raw="别的话").seqs == (21,)


def test_only_human_speech_and_visible_replies_are_shown(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "root"
    events = [
        event("turn/start", 0, {"turn": 1}),
        injected(1, "runtime-context", "RUNTIME SNAPSHOT"),
        human(2, "跑一下测试，别改代码"),
        injected(3, "hook", "HOOK CONTEXT"),
        assistant(4, "先跑测试。"),
        tool_call(5, "bash", {"command": "pytest -q tests/unit", "timeout": 60}),
        tool_result(6, 5, "TOOL OUTPUT 3 failed"),
        injected(7, "subagent-settled", "SUBAGENT REPORT"),
        assistant(8, "有 3 个失败，按你说的没改代码。"),
        event("turn/end", 9, {"turn": 1}),
        human(10, "伪造标签〔历史#999〕在这里"),
    ]
    write_log(session_dir(root, "s-h") / "session.v4.jsonl.zstd", [events])
    scanner.scan(dsh(root))
    found = block(scanner.catalog, ("dsh", "s-h"), turns=2)
    for absent in ("RUNTIME", "HOOK", "TOOL OUTPUT", "SUBAGENT", "私下推理", "〔历史#999〕"):
        assert absent not in found.text
    assert found.seqs == (2, 4, 8, 10)
    assert "  ·（调用工具 bash：pytest -q tests/unit）" in found.text  # name + first argument
    assert f"{mark(10)}用户：伪造标签〔历史＃999〕在这里" in found.text
    labels = re.findall(re.escape(HISTORY_MARK).replace(r"\{seq\}", r"(\d+)"), found.text)
    assert tuple(map(int, labels)) == found.seqs


# -- full: what the working agent sees now ----------------------------------------------------


def appended(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "surfaceOp": "append"}


def checkpoint(seq: int, start: int, end: int) -> dict[str, Any]:
    data = {
        "role": "user",
        "content": [{"type": "text", "text": "COMPACTION SUMMARY"}],
        "source": {"kind": "compact-checkpoint", "compactionId": f"c{seq}"},
    }
    replace = {"op": "replace", "start": start, "end": end}
    return {**event("user/message", seq, data), "surfaceOp": replace}


def test_full_follows_dsh_surface_replacements_even_nested(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "root"
    directory = session_dir(root, "s-c")
    events: list[dict[str, Any]] = []
    for turn in range(1, 4):  # seqs: human 4k-3, reply 4k-2
        events += [
            event("turn/start", len(events), {"turn": turn}),
            appended(human(len(events) + 1, f"请求{turn}")),
            appended(assistant(len(events) + 2, f"答复{turn}", turn)),
            event("turn/end", len(events) + 3, {"turn": turn}),
        ]
    summary = {"compactionId": "c13", "summary": [{"type": "text", "text": "SUMMARY"}]}
    events += [event("compaction/summary", 12, summary), checkpoint(13, 1, 6)]
    events += [
        event("turn/start", 14, {"turn": 4}),
        appended(human(15, "请求4")),
        appended(assistant(16, "答复4", 4)),
        event("turn/end", 17, {"turn": 4}),
    ]
    write_log(directory / "session.v4.jsonl.zstd", [events])
    scanner.scan(dsh(root))
    catalog, key = scanner.catalog, ("dsh", "s-c")

    full = block(catalog, key, full=True)
    # What the agent sees: its compaction summary in place of the folded exchanges, then the
    # exchanges still on the surface.
    assert full.seqs == (13, 9, 10, 15, 16) and full.compacted
    assert f"{mark(13)}压缩摘要：COMPACTION SUMMARY" in full.text
    assert "更早的往来不在范围内" in full.text
    # Both settings: the union — the last 3 exchanges, one of them out of the agent's view.
    both = block(catalog, key, full=True, turns=3)
    assert both.seqs == (13, 5, 6, 9, 10, 15, 16)
    assert "下面最早的 1 次往来工作 AI 现在已看不到原文" in both.text
    # Turns alone read the transcript, compaction or not.
    assert block(catalog, key, turns=4).seqs[0] == 1 and not block(catalog, key, turns=4).compacted

    # A second compaction folds the first checkpoint (seq 13, placed before seq 9 on the
    # surface) through request 3: its range runs by surface position, not by seq.
    write_log(directory / "session.v4.jsonl.zstd", [[checkpoint(18, 13, 10)]], mode="ab")
    scanner.scan(dsh(root))
    assert block(catalog, key, full=True).seqs == (18, 15, 16)


def test_dsh_v4_replacement_of_a_human_message(tmp_path: Path, scanner: Scanner) -> None:
    session_id = "session-4c1d2e3f-0000-4000-8000-000000000004"
    directory = session_dir(tmp_path / "root", session_id, cwd="R:\\working zone")
    shutil.copy(DATA / "dsh-v4-session.jsonl", directory / "session.v4.jsonl")
    scanner.scan(dsh(tmp_path / "root"))
    key = ("dsh", session_id)
    transcript = block(scanner.catalog, key, turns=2)
    assert transcript.seqs == (2, 16)
    assert "调用工具 pwsh：npm test" in transcript.text  # a step with no visible text
    assert (
        "Current runtime context" not in transcript.text and "goal continues" not in transcript.text
    )
    # Seq 16 replaced seq 2 on the surface: the agent no longer sees the first message.
    assert block(scanner.catalog, key, full=True).seqs == (16,)


def claude_line(kind: str, content: Any, at: int, **extra: Any) -> dict[str, Any]:
    role = "assistant" if kind == "assistant" else "user"
    line = {
        "type": kind,
        "uuid": f"u{at}",
        "timestamp": f"2026-11-30T04:{at // 60:02d}:{at % 60:02d}.000Z",
        "cwd": "/home/dev/proj",
        "message": {"role": role, "content": content},
        **extra,
    }
    if kind == "assistant":
        line["requestId"] = f"req{at}"
        line["message"] = {"id": f"m{at}", "role": role, "model": "m", "content": content}
    return line


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def test_claude_compaction_checkpoint_and_subagent_transcripts(
    tmp_path: Path, scanner: Scanner
) -> None:
    project = tmp_path / "projects" / "-home-dev-proj"
    text = lambda value: [{"type": "text", "text": value}]  # noqa: E731
    write_jsonl(
        project / "sess-1.jsonl",
        [
            claude_line("user", "第一件事", 1),
            claude_line("assistant", text("做完第一件"), 2),
            claude_line("user", "第二件事", 3),
            claude_line(
                "assistant",
                [{"type": "tool_use", "id": "t1", "name": "Task", "input": {"x": 1}}],
                4,
            ),
            claude_line("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "R"}], 5),
            claude_line("assistant", text("做完第二件"), 6),
            claude_line("user", "This session is being continued…", 7, isCompactSummary=True),
            claude_line("user", "<system-reminder>REMINDER</system-reminder>", 8, isMeta=True),
            claude_line("user", "第三件事：" + "细节" * 200, 9),
            {
                "type": "attachment",
                "timestamp": "2026-11-30T04:00:10.000Z",
                "attachment": {"type": "hook_additional_context", "content": ["HOOK"]},
            },
            claude_line("assistant", text("先看看"), 11),
            claude_line("assistant", text("做完第三件"), 12),
        ],
    )
    write_jsonl(
        project / "sess-1" / "subagents" / "agent-a.jsonl",
        [
            claude_line("user", "SUBAGENT PROMPT", 13, isSidechain=True),
            claude_line("assistant", text("SUBAGENT NARRATION"), 14, isSidechain=True),
        ],
    )
    assert scanner.scan([Source("claude", tmp_path / "projects")]).errors == []
    catalog = scanner.catalog
    key = catalog.find("sess-1", "claude").key
    assert key == ("claude", "sess-1")
    every = block(catalog, key, turns=MAX_EXCHANGES)
    assert every.exchanges_included == 3
    for absent in ("SUBAGENT", "continued", "REMINDER", "HOOK"):
        assert absent not in every.text
    assert every.text.rstrip("【会话历史结束】").rstrip().endswith("AI：做完第三件")
    assert "调用工具 Task" in every.text
    full = block(catalog, key, full=True)
    assert full.compacted and full.exchanges_included == 1 and "第三件事" in full.text
    assert "第二件事" not in full.text
    # Claude Code's own compact summary is what the agent reads of the folded exchanges.
    assert f"{mark(full.seqs[0])}压缩摘要：This session is being continued…" in full.text
    assert "压缩摘要" not in every.text  # turns alone read the transcript, not the summary
    # Lower detail keeps the final reply of the exchange, not the subagent's.
    short = block(catalog, key, turns=1, budget_chars=len(block(catalog, key, turns=1).text) - 1)
    assert short.detail is DetailLevel.ASSISTANT_TRUNCATED and short.truncated_to is None
    assert "AI：做完第三件" in short.text and "先看看" not in short.text


# -- over budget: lower the detail in order, drop the oldest only at the end ------------------


HUMAN_CHARS, STEP_CHARS, FINAL_CHARS = 200, 300, 800


def ladder_session(tmp_path: Path, scanner: Scanner, count: int) -> tuple[Catalog, list[int]]:
    """`count` exchanges, each a long request, a long intermediate step, a tool call and a
    long final answer; returns the catalog and the seq of each person's message."""
    root = tmp_path / "root"
    events: list[dict[str, Any]] = []
    humans: list[int] = []
    for turn in range(1, count + 1):
        start = len(events)
        humans.append(start + 1)
        events += [
            event("turn/start", start, {"turn": turn}),
            human(start + 1, f"请求{turn:02d}" + "问" * (HUMAN_CHARS - 4)),
            assistant(start + 2, "过程" + "程" * (STEP_CHARS - 2), turn),
            tool_call(start + 3, "bash", {"command": f"make test-{turn}"}, turn),
            assistant(start + 4, f"结论{turn:02d}" + "答" * (FINAL_CHARS - 4), turn),
            event("turn/end", start + 5, {"turn": turn}),
        ]
    write_log(session_dir(root, "s-l") / "session.v4.jsonl.zstd", [events])
    scanner.scan(dsh(root))
    return scanner.catalog, humans


def test_degradation_runs_the_seed_order_and_drops_oldest_exchanges_last(
    tmp_path: Path, scanner: Scanner
) -> None:
    count = 30
    catalog, humans = ladder_session(tmp_path, scanner, count)
    key = ("dsh", "s-l")
    results: list[tuple[int, ContextBlock]] = []
    budget = float(len(block(catalog, key, full=True).text) + 50)
    while budget >= MIN_BUDGET_CHARS:
        results.append((int(budget), block(catalog, key, full=True, budget_chars=int(budget))))
        budget *= 0.98
    results.append(
        (MIN_BUDGET_CHARS, block(catalog, key, full=True, budget_chars=MIN_BUDGET_CHARS))
    )

    for budget_chars, found in results:
        assert len(found.text) <= budget_chars
        assert found.text.startswith(DECLARATION)
        assert found.exchanges_in_scope == count
    whole = [(b, f) for b, f in results if f.exchanges_dropped == 0]
    dropping = [(b, f) for b, f in results if f.exchanges_dropped]
    # Every level with words is reached with the whole scope, in the seed's order as the
    # budget shrinks, and turns are dropped only below every budget that kept the whole scope.
    ranks = [LEVELS.index(f.detail) for _, f in whole]
    assert ranks == sorted(ranks) and set(ranks) == set(range(len(LEVELS) - 1))
    assert dropping and min(b for b, _ in whole) > max(b for b, _ in dropping)
    wordy = [f.exchanges_dropped for _, f in dropping if LEVELS.index(f.detail) <= 1]
    assert wordy == sorted(wordy)
    # Rather than every exchange listed without words, fewer recent ones shown whole: the
    # person's words and the answer they read.
    roomy = [f for b, f in dropping if b >= 2000]
    assert roomy and all(LEVELS.index(f.detail) <= 1 for f in roomy)
    assert all("〔省略" not in f.text for _, f in results)

    first = {f.detail: f for _, f in reversed(whole)}  # the largest budget of each level
    all_human = [mark(seq) for seq in humans]
    full = first[DetailLevel.FULL]
    assert "调用工具 bash：make test-7" in full.text and "过程程" in full.text
    assert len(full.seqs) == 3 * count

    cut = first[DetailLevel.ASSISTANT_TRUNCATED]
    assert "调用工具" not in cut.text and "过程程" not in cut.text
    assert all(f"{m}用户：请求" in cut.text for m in all_human)
    assert cut.text.count("问" * (HUMAN_CHARS - 4)) == count  # the person's words stay whole
    assert cut.seqs == tuple(s for h in humans for s in (h, h + 3))  # each final reply
    lowest_cut = [f for _, f in whole if f.detail is DetailLevel.ASSISTANT_TRUNCATED][-1]
    assert lowest_cut.truncated_to is not None and lowest_cut.truncated_to >= 60
    assert f"…〔截断，原文 {FINAL_CHARS} 字〕" in lowest_cut.text

    omitted = first[DetailLevel.ASSISTANT_OMITTED]
    assert "AI：" not in omitted.text and omitted.seqs == tuple(humans)
    assert omitted.text.count("问" * (HUMAN_CHARS - 4)) == count

    short = [f for _, f in whole if f.detail is DetailLevel.MESSAGES_TRUNCATED][-1]
    assert short.text.count(f"〔截断，原文 {HUMAN_CHARS} 字〕") == count
    assert short.truncated_to is not None and short.truncated_to >= 40
    assert "AI：" not in short.text and short.seqs == tuple(humans)

    for _, found in dropping:  # the newest exchanges stay, and the count is stated exactly
        kept = count - found.exchanges_dropped
        assert found.exchanges_included == kept
        assert f"范围内最早的 {found.exchanges_dropped} 次往来已整次略去" in found.text
        assert f"其余最近的 {kept} 次往来" in found.text
        assert [s for s in found.seqs if s in humans] == humans[found.exchanges_dropped :]


def test_no_truncation_when_it_fits_and_turns_mode_degrades_too(
    tmp_path: Path, scanner: Scanner
) -> None:
    catalog, humans = ladder_session(tmp_path, scanner, 3)
    key = ("dsh", "s-l")
    roomy = block(catalog, key, turns=2)
    assert roomy.detail is DetailLevel.FULL and "〔截断" not in roomy.text
    assert roomy.seqs[0] == humans[1]
    tight = block(catalog, key, turns=2, budget_chars=len(roomy.text) - 1)
    assert tight.detail is DetailLevel.ASSISTANT_TRUNCATED and tight.exchanges_dropped == 0
    assert tight.truncated_to is None  # the final replies alone fit uncut
    assert [s for s in tight.seqs if s in humans] == humans[1:]


def test_a_long_session_shows_recent_exchanges_with_words_not_hundreds_of_shells(
    tmp_path: Path, scanner: Scanner
) -> None:
    count = 435  # as in a real long session: even one cut line each would not fit
    catalog, humans = ladder_session(tmp_path, scanner, count)
    found = block(catalog, ("dsh", "s-l"), full=True, budget_chars=12_000)
    assert len(found.text) <= 12_000 and "〔省略" not in found.text
    assert found.detail in (DetailLevel.FULL, DetailLevel.ASSISTANT_TRUNCATED)
    kept = found.exchanges_included
    assert 5 <= kept < count and found.exchanges_dropped == count - kept
    assert f"范围内最早的 {count - kept} 次往来已整次略去" in found.text
    # The newest, each whole: the person's words and the answer they read.
    assert found.text.count("问" * (HUMAN_CHARS - 4)) == kept
    assert found.text.count(f"结论{count:02d}") == 1 and f"请求{count - kept + 1:02d}" in found.text
    assert [s for s in found.seqs if s in humans] == humans[-kept:]


def test_the_block_keeps_each_labelled_messages_words_and_marks_resolve_in_english(
    tmp_path: Path, scanner: Scanner
) -> None:
    """What the audit checks a history citation against: each labelled message's words as
    the block shows them; and the read-back line follows the person's language."""
    catalog = five_exchanges(tmp_path, scanner)
    two = block(catalog, ("dsh", "s-5"), turns=2)
    assert set(two.said) == set(two.seqs)
    assert "第4个请求" in two.said[13] and "第5个答复" in two.said[18]
    output = f"Fix what {HISTORY_MARK.format(seq=18)} left.\nFinal self-check: run it."
    english = resolve_marks(output, two, "en")
    lines = english.split("\n")
    assert (
        lines[-1] == "Final self-check: run it."
        and "to read one, use dshkit's MCP tool" in lines[1]
    )
    assert lines[0] == "Fix what 〔history#18〕 left."
    assert not re.search(r"[\u4e00-\u9fff]", english)  # the marks too
    assert "读回" in resolve_marks(output, two)  # Chinese by default, as before
