"""The rule model as data (issue 32 item 3): every class of standing rule in both languages,
the sentences that are plainly something else, the table checked when it loads, and the
person's later sentences reaching the handoff — as rules, or verbatim as maybe-rules."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from dshkit.graft import rule_classes
from dshkit.graft.constraints import (
    HEADING,
    MAYBE_HEADING,
    Constraint,
    ConstraintBlockError,
    extract,
    parse_constraints,
    parse_maybe_rules,
    render_maybe_rules,
)
from dshkit.graft.handoff import build_handoff
from dshkit.graft.rule_classes import RULE, TABLE, SentenceClass, TableError, classify
from dshkit.graft.settings import GraftSettings
from dshkit.sessions.catalog import SessionInfo


def events_of(*said: str) -> list[dict[str, Any]]:
    """A session where the person says each text in turn and the model answers each."""
    events: list[dict[str, Any]] = []

    def add(kind: str, data: dict[str, Any]) -> None:
        events.append({"type": kind, "seq": len(events), "time": 0, "data": data})

    for turn, text in enumerate(said, 1):
        add("turn/start", {"turn": turn})
        content = [{"type": "text", "text": text}]
        add("user/message", {"role": "user", "content": content, "source": {"kind": "user"}})
        answer = {"role": "assistant", "content": [{"type": "text", "text": "好的。"}]}
        add("assistant/message", {"turn": turn, "message": answer})
        add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return events


def handoff_of(*said: str) -> str:
    info = SessionInfo("dsh", "src-1", "/w", "/w", "", 1, 0, 0, 0, None, None, 0)
    return build_handoff(info, events_of(*said), GraftSettings()).first_message


# New sentences of each class (none of them the table's own examples), both languages.
RULES = {
    "prohibition": [
        "不能在主分支上直接提交",
        "不可以删除用户数据。",
        "避免使用全局变量",
        "千万别动生产配置",
        "不允许使用 eval",
        "Avoid mocking the database in integration tests.",
        "No new top-level packages.",
        "Do not add runtime dependencies.",
    ],
    "restriction": [
        "只能修改 docs/ 目录",
        "只用 Python 3.11 的语法",
        "数据库操作仅限 repository 层",
        "Only touch files under src/api.",
        "Only use ASCII in identifiers.",
    ],
    "mandate": [
        "请用 uv 管理虚拟环境",
        "前端统一用 Tailwind 写样式",
        "用英文写注释",
        "代码注释用英文",
        "Use pytest for all new tests.",
        "Use pathlib instead of os.path.",
        "Reply in Chinese.",
    ],
    "invariant": [
        "API 保持向后兼容",
        "数据库 schema 不变",
        "保留所有公开函数的签名",
        "Keep the public API stable.",
        "Keep commits small and focused.",
        "Preserve the existing log format.",
    ],
    "obligation": [
        "新接口必须有测试",
        "合并前确保 CI 通过",
        "所有接口都要鉴权",
        "保证接口幂等",
        "All new code needs tests.",
        "Make sure every migration is reversible.",
        "Each endpoint must validate its input.",
    ],
    "lasting": [
        "以后回复都用中文",
        "始终用 f-string 格式化",
        "Always pin dependency versions.",
        "Never log request bodies.",
    ],
}
NOT_RULES = {
    "question": ["这个函数为什么这么慢？", "Is the cache still needed?", "要不要拆成两个模块？"],
    "thanks": ["谢谢，辛苦了", "好的，就这样", "Thanks!", "LGTM"],
    "status": ["我已经把依赖升级了", "测试通过了", "I pushed the branch.", "It works now."],
    "none": ["我用中文写了文档", "这些文件都要删掉"],  # what was done, a one-off: no rule
    "task": ["帮我把 README 翻译成英文", "把这个函数拆开", "Add a test for the parser."],
    "one-shot": ["这次先不跑集成测试", "现在别提交", "Don't deploy yet."],
    "report": ["构建总是超时。", "The job keeps failing on CI."],
}


@pytest.mark.parametrize(("expected", "sentence"), [(k, s) for k, ss in RULES.items() for s in ss])
def test_each_class_of_rule_in_both_languages(expected: str, sentence: str) -> None:
    found = classify(sentence)
    assert found is not None and (found.name, found.kind) == (expected, RULE), sentence


@pytest.mark.parametrize(
    ("expected", "sentence"), [(k, s) for k, ss in NOT_RULES.items() for s in ss]
)
def test_what_is_plainly_not_a_rule_is_recognised_as_such(expected: str, sentence: str) -> None:
    found = classify(sentence)
    if expected == "none":  # unclassified: carried as a maybe-rule, not taken for a rule
        assert found is None, sentence
    else:
        assert found is not None and found.name == expected and found.kind != RULE, sentence


def test_the_four_classes_of_standing_rule_and_obligations_are_in_the_table() -> None:
    names = [cls.name for cls in rule_classes.rule_classes()]
    assert names == ["lasting", "prohibition", "restriction", "mandate", "invariant", "obligation"]


def test_the_table_is_checked_when_it_loads() -> None:
    assert rule_classes.load()  # the real table: every example lands in its class
    at = next(i for i, cls in enumerate(TABLE) if cls.name == "question")
    steal = replace(TABLE[at], cues=(*TABLE[at].cues, r"必须"))  # a cue taking rules
    with pytest.raises(TableError, match="lands in 'question'"):
        rule_classes.compile_table((*TABLE[:at], steal, *TABLE[at + 1 :]))
    broken = SentenceClass("x", "x", RULE, (r"(",), ("x",))
    with pytest.raises(TableError, match="'x'"):
        rule_classes.compile_table((broken,))
    with pytest.raises(TableError, match="duplicate"):
        rule_classes.compile_table((TABLE[1], TABLE[1]))


# -- later sentences reach the card -----------------------------------------------------------


@pytest.mark.parametrize("rule", [s for ss in RULES.values() for s in ss])
def test_a_rule_typed_after_the_first_message_reaches_the_card_verbatim(rule: str) -> None:
    message = handoff_of("帮我重构 parser 模块。", "先看看结构。", rule)
    rules = parse_constraints(message)
    assert rules is not None and [c.text for c in rules] == [rule]
    assert rules[0].seq == 9  # the third message: anchored where it was said


def test_unclassified_later_sentences_are_carried_verbatim_as_maybe_rules() -> None:
    message = handoff_of(
        "帮我重构 parser 模块。这个项目给移动端用。",  # the first message: the request
        "移动端那边还在用 v2 的接口。谢谢！",
        "The staging database is shared with QA. 测试通过了",
    )
    maybe = parse_maybe_rules(message)
    assert maybe is not None and [(c.text, c.seq) for c in maybe] == [
        ("移动端那边还在用 v2 的接口。", 5),
        ("The staging database is shared with QA.", 9),
    ]
    assert MAYBE_HEADING in message and "可能是规则" in message
    assert parse_constraints(message) == []  # none of them taken for a rule


def test_the_maybe_block_is_bounded_newest_first_and_names_what_did_not_fit() -> None:
    said = [Constraint(f"第 {i} 句没有归类的话" + "。" * 40, i, 0) for i in range(60)]
    block = render_maybe_rules(said, budget_chars=1_000)
    assert len(block.text) <= 1_000 and block.carried and block.left_out
    assert block.carried[-1] == said[-1]  # the newest kept
    assert list(block.left_out) + list(block.carried) == said  # nothing unaccounted for
    closing = block.text.splitlines()[-1]
    assert f"更早的 {len(block.left_out)} 句放不下" in closing
    assert f"seq 0 至 {block.left_out[-1].seq}" in closing and "graft_read_result" in closing
    assert parse_maybe_rules(block.text) == list(block.carried)
    assert render_maybe_rules([]).text == ""


def test_maybe_rules_are_inherited_by_the_next_generation() -> None:
    first = handoff_of("做 X。", "移动端那边还在用 v2 的接口。")
    target = events_of(first, "以后别用 sudo。", "数据每周五备份一次。")
    said = extract(target)
    assert [c.text for c in said.constraints] == ["以后别用 sudo。"]
    assert [(c.text, c.generation) for c in said.maybe] == [
        ("移动端那边还在用 v2 的接口。", 0),
        ("数据每周五备份一次。", 1),
    ]


def test_a_damaged_maybe_block_is_an_error() -> None:
    block = render_maybe_rules([Constraint("a b c", 3, 0)]).text
    with pytest.raises(ConstraintBlockError, match="cut"):
        parse_maybe_rules(block.rsplit("\n", 1)[0])
    assert HEADING not in block


def test_what_a_clipped_first_message_hides_is_kept_as_maybe_rules() -> None:
    hidden = "发布流程走 Jenkins 的 release job。"
    long_request = "帮我重构 parser 模块，" + "细节说明" * 60 + "。" + hidden
    message = handoff_of(long_request, "好的，开始吧")
    maybe = parse_maybe_rules(message)
    assert maybe is not None and [(c.text, c.seq) for c in maybe] == [(hidden, 1)]
    short = handoff_of(f"帮我重构 parser 模块。{hidden}", "好的，开始吧")
    assert parse_maybe_rules(short) is None  # the card shows the whole request
