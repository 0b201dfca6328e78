"""Hard constraints (seed 004 v0.18 item 3, v0.15 D7, v0.19, v0.9 §六): only the person's
standing rules, verbatim and anchored; inherited across generations through a block that
round-trips; packed by capacity with GRAFT_ABORTED instead of a cut; integrity proven."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.graft.constraints import (
    ABORT_PREFIX,
    HEADING,
    Constraint,
    ConstraintBlockError,
    GraftAborted,
    assert_constraints_preserved,
    extract_constraints,
    inherited_constraints,
    is_standing_rule,
    pack_constraints,
    parse_constraints,
    render_constraints,
    split_sentences,
    texts_digest,
)
from dshkit.graft.identity import IGNITION_MARK, Identity
from dshkit.sessions import Scanner, Source

from ..support.paths import CLAUDE, CODEX, DSH_PLAIN


class Session:
    """One session's normalized events, built message by message."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, kind: str, data: dict[str, Any]) -> int:
        seq = len(self.events)
        self.events.append({"type": kind, "seq": seq, "time": 0, "data": data})
        return seq

    def says(self, text: str, kind: str = "user") -> int:
        """A user/message with the given source kind; returns its seq."""
        self.add("turn/start", {"turn": len(self.events)})
        return self.add(
            "user/message",
            {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": kind}},
        )

    def answers(self, text: str) -> Session:
        message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        self.add("assistant/message", {"turn": 1, "message": message})
        return self


def handoff_message(constraints: list[Constraint], generation: int = 1) -> str:
    identity = Identity("source-1", 120, generation).render()
    block = render_constraints(constraints)
    return f"{identity}\n{IGNITION_MARK} 接着做。\n\n{block}\n\n## 看板\n- 无"


# -- what is a constraint ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "不要修改 tests/ 目录",
        "不许动 vendor/ 下的文件。",
        "禁止使用 sudo！",
        "别用 print 调试",
        "所有提交都必须签名。",
        "以后每次提交前先跑测试。",  # 先 in a lasting rule is an order of steps, not "for now"
        "从现在起，回复都用中文。",
        "始终保持 API 向后兼容",
        "默认用 pnpm 安装依赖",
        "优先使用标准库",
        "Don't touch the migrations.",
        "Don’t touch the migrations.",  # a typographic apostrophe
        "Never force-push to main.",
        "Always run ruff before committing.",
        "From now on, write tests first.",
        "I prefer small commits.",
        '不要改 "config.yaml" 里的端口',  # quotes are not special
    ],
)
def test_standing_rules_are_constraints(sentence: str) -> None:
    assert is_standing_rule(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "立刻删除 foo.txt",  # imperative, but once (D7)
        "现在跑一下测试",
        "先把 X 改成 Y",
        "这次先别提交",  # a prohibition confined to now is a step for the board
        "暂时不要动 README",
        "现在必须修好这个 bug",
        "Don't commit yet.",
        "Do not push for now.",
        "I don't know why it fails.",
        "测试总是失败。",  # a symptom report, not an always-rule
        "It always crashes on start.",
        "这个以后再说",
        "特别注意这两个函数的区别。",
        "要不要加缓存？",
        "帮我看看 src/a.py",
    ],
)
def test_one_shot_steps_reports_and_chatter_are_not(sentence: str) -> None:
    assert not is_standing_rule(sentence)


def test_sentences_split_on_lines_and_sentence_ends_and_keep_list_numbers() -> None:
    text = (
        "不要改 tests/。以后都用 pnpm！真的？\n"
        "1. Don't log secrets. Ok! Why? x\r\n\n  - 别用 sudo  "
    )
    assert split_sentences(text) == [
        "不要改 tests/。",
        "以后都用 pnpm！",
        "真的？",
        "1. Don't log secrets.",
        "Ok!",
        "Why?",
        "x",
        "- 别用 sudo",
    ]
    assert split_sentences("v1.2 is out") == ["v1.2 is out"]  # a dot without a space


def test_fenced_code_is_pasted_data_not_speech() -> None:
    text = "看下这段：\n```python\n# Do not edit: generated\nx = 1\n```\n不要改生成的文件。"
    assert split_sentences(text) == ["看下这段：", "不要改生成的文件。"]


# -- extraction from sessions -----------------------------------------------------------------


def test_only_human_rules_verbatim_with_their_seq_and_generation_zero() -> None:
    session = Session()
    first = session.says(
        "帮我重构 parser。  不要修改 tests/ 目录。立刻删除 foo.txt\n以后每次都先跑测试！"
    )
    session.answers("好的。我不会修改 tests/ 目录，以后每次都会先跑测试。")  # not the person
    session.says("Never use sudo in scripts.", kind="runtime-context")  # injected
    session.says("禁止调用外部网络。", kind="plugin")
    second = session.says("这次先别提交。  另外，别用 print 调试  ")
    assert [c.as_json() for c in extract_constraints(session.events)] == [
        {"text": "不要修改 tests/ 目录。", "seq": first, "generation": 0},
        {"text": "以后每次都先跑测试！", "seq": first, "generation": 0},
        {"text": "另外，别用 print 调试", "seq": second, "generation": 0},
    ]


def test_identical_rules_are_kept_once_with_the_earliest_anchor() -> None:
    session = Session()
    first = session.says("不要修改 tests/ 目录。")
    session.says("再说一遍：\n不要修改 tests/ 目录。")
    assert extract_constraints(session.events) == [Constraint("不要修改 tests/ 目录。", first, 0)]


def test_ignition_and_handoff_messages_are_never_read_as_rules() -> None:
    session = Session()
    session.says(f"{IGNITION_MARK} 以后每次都不要复述交接过程，直接继续。")
    assert extract_constraints(session.events) == []


def test_a_target_inherits_rules_with_their_original_anchors_then_adds_its_own() -> None:
    inherited = [
        Constraint("不要修改 tests/ 目录。", 3, 0),
        Constraint("Always run ruff.", 57, 1),
    ]
    session = Session()
    session.says(handoff_message(inherited, generation=2))
    session.answers("继续。")
    own = session.says(
        "以后默认用 pnpm。不要修改 tests/ 目录。"
    )  # a restated rule keeps its origin
    assert inherited_constraints(session.events) == inherited
    assert extract_constraints(session.events) == [
        *inherited,
        Constraint("以后默认用 pnpm。", own, 2),
    ]


def test_a_block_pasted_later_or_in_a_started_session_is_not_an_inheritance() -> None:
    session = Session()
    session.says("hello")
    session.says(render_constraints([Constraint("不要用 npm", 1, 0)]))
    assert inherited_constraints(session.events) == []


def test_a_damaged_inherited_block_is_an_error_not_a_silent_loss() -> None:
    block = render_constraints([Constraint("不要修改 tests/ 目录", 3, 0)])
    cut = block.rsplit("\n", 1)[0]  # closing line gone
    session = Session()
    session.says(Identity("s", 9, 1).render() + "\n" + cut)
    with pytest.raises(ConstraintBlockError, match="cut"):
        inherited_constraints(session.events)


# -- the block --------------------------------------------------------------------------------

AWKWARD = [
    Constraint("- 不要 以 dash 开头的规则", 1, 0),
    Constraint("〔第9代 seq=999〕伪造的锚点", 2, 0),
    Constraint(
        "第一行\n\n- 列表第二项\n  缩进的一行\n〔第1代 seq=3〕还是正文\n"
        "## 硬约束（逐字继承，不得违反）",
        40,
        1,
    ),
    Constraint("（以上共 0 条硬约束，逐字完整）", 41, 1),
    Constraint("- 无", 42, 2),
    Constraint("trailing spaces inside  \nend", 43, 2),
]


def test_the_block_round_trips_awkward_texts_exactly() -> None:
    block = render_constraints(AWKWARD)
    assert block.splitlines()[0] == HEADING
    assert parse_constraints(block) == AWKWARD
    embedded = f"前文\n{HEADING[3:]}\n\n{block}\n\n## 下一节\n  缩进的别的内容"
    assert parse_constraints(embedded) == AWKWARD
    assert parse_constraints(block.replace("\n", "\r\n")) == AWKWARD


def test_no_constraints_says_none_explicitly() -> None:
    block = render_constraints([])
    assert block == f"{HEADING}\n- 无\n（以上共 0 条硬约束，逐字完整）"
    assert parse_constraints(block) == [] and parse_constraints("nothing here") is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b.replace("（以上共 2 条", "（以上共 3 条"),  # miscounted
        lambda b: "\n".join(b.splitlines()[:-1]),  # cut
        lambda b: b.replace("\n- 〔第1代", "\nstray line\n- 〔第1代"),
        lambda b: b.replace("seq=5〕", "seq=5〕 "),  # a padded text
    ],
)
def test_a_damaged_block_does_not_parse(damage: Any) -> None:
    block = render_constraints([Constraint("a", 5, 0), Constraint("b\nc", 6, 1)])
    with pytest.raises(ConstraintBlockError):
        parse_constraints(damage(block))


def test_a_constraint_must_be_a_stripped_non_empty_text() -> None:
    for text in ("", " a", "a\n"):
        with pytest.raises(ValueError, match="stripped"):
            Constraint(text, 1, 0)


# -- packing, abort and integrity -------------------------------------------------------------


def test_packing_fits_the_budget_and_carries_positive_evidence() -> None:
    pack = pack_constraints(AWKWARD, 10_000)
    assert pack.text == render_constraints(AWKWARD) and pack.constraints == tuple(AWKWARD)
    assert pack.integrity == {
        "count": 6,
        "chars": len(pack.text),
        "budgetChars": 10_000,
        "sha256": texts_digest(AWKWARD),
    }
    assert len(pack_constraints(AWKWARD, len(pack.text)).text) == len(pack.text)  # exact fit
    empty = pack_constraints([], 200)
    assert empty.integrity["count"] == 0 and "- 无" in empty.text


def test_constraints_that_do_not_fit_abort_with_a_report_never_a_cut() -> None:
    rules = [
        Constraint(f"规则 {i}：不要改模块 {i} 的公开接口。" + "细节" * 20, i * 10, 0)
        for i in range(8)
    ]
    needed = len(render_constraints(rules))
    with pytest.raises(GraftAborted) as raised:
        pack_constraints(rules, needed - 1)
    error = raised.value
    assert (
        str(error).startswith(ABORT_PREFIX)
        and ABORT_PREFIX == "GRAFT_ABORTED: constraints truncated"
    )
    assert isinstance(raised.value, RuntimeError)
    assert error.report["count"] == 8
    assert (error.report["charsNeeded"], error.report["budgetChars"]) == (needed, needed - 1)
    assert [c["seq"] for c in error.report["notFitting"]] == [70]  # only the last overflows
    with pytest.raises(GraftAborted) as small:
        pack_constraints(rules, len(render_constraints(rules[:1])))  # room for the first only
    assert [c["seq"] for c in small.value.report["notFitting"]] == [10, 20, 30, 40, 50, 60, 70]
    assert small.value.report["notFitting"][0]["text"] == rules[1].text
    with pytest.raises(ValueError, match="budget_chars"):
        pack_constraints(rules, 0)


def test_a_larger_budget_carries_what_a_smaller_one_refused() -> None:
    rules = [Constraint("不要改 tests/", 1, 0), Constraint("Always run ruff.", 2, 0)]
    size = len(render_constraints(rules))
    with pytest.raises(GraftAborted):
        pack_constraints(rules, size - 1)
    assert pack_constraints(rules, size).constraints == tuple(rules)


def test_preservation_is_checked_on_the_rendered_message() -> None:
    pack = pack_constraints(AWKWARD, 10_000)
    message = f"{Identity('s', 1, 3).render()}\n卡片……\n\n{pack.text}\n\n{IGNITION_MARK}"
    assert_constraints_preserved(pack, message)  # whole: no exception
    dropped = message.replace(render_constraints(AWKWARD), render_constraints(AWKWARD[:-1]))
    edited = message.replace("伪造的锚点", "伪造的锚")
    reanchored = message.replace("seq=43〕", "seq=44〕")
    for broken, missing in ((dropped, [43]), (edited, [2]), (reanchored, [43])):
        with pytest.raises(GraftAborted) as raised:
            assert_constraints_preserved(pack, broken)
        assert str(raised.value).startswith(ABORT_PREFIX)
        assert [c["seq"] for c in raised.value.report["missing"]] == missing
    for broken in (message.replace(HEADING, "## 约束"), message[: message.index("（以上共")]):
        with pytest.raises(GraftAborted):
            assert_constraints_preserved(pack, broken)


# -- real transcripts -------------------------------------------------------------------------


def test_real_transcripts_injected_text_yields_no_constraints(scanner: Scanner) -> None:
    # Codex's developer message says "Do not use when…", DSH's runtime context states a
    # policy: neither is a person's rule; the people only asked for a greeting / a read.
    for harness, root in (("dsh", DSH_PLAIN), ("claude", CLAUDE), ("codex", CODEX)):
        report = scanner.scan([Source(harness, root)])
        for key in report.changed_sessions:
            assert extract_constraints(scanner.catalog.events(key)) == [], key


def test_rules_typed_into_a_real_claude_code_transcript(tmp_path: Path, scanner: Scanner) -> None:
    name = "4f94642e-fa5c-495a-ad73-439b8225b50c.jsonl"
    project = tmp_path / "-home-dev-proj1"
    project.mkdir()
    lines = (CLAUDE / "-home-dev-proj1" / name).read_bytes().splitlines()
    typed = next(orjson.loads(line) for line in lines if b'"promptSource"' in line)
    follow_up = {
        **typed,
        "parentUuid": typed["uuid"],
        "uuid": "00000000-0000-4000-8000-000000000001",
        "timestamp": "2026-11-30T04:14:00.000Z",
        "message": {"role": "user", "content": "这次先别提交。以后不要改 tests/ 目录！"},
    }
    shutil.copy(CLAUDE / "-home-dev-proj1" / name, project / name)
    with (project / name).open("ab") as out:
        out.write(orjson.dumps(follow_up) + b"\n")
    scanner.scan([Source("claude", tmp_path)])
    events = scanner.catalog.events(("claude", name.removesuffix(".jsonl")))
    (rule,) = extract_constraints(events)
    stated = next(e for e in events if "tests/" in str(e.get("data")))
    assert rule == Constraint("以后不要改 tests/ 目录！", stated["seq"], 0)
