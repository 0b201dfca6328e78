"""The provenance audit: every sentence traced, freedom, or counted as a defect (W3, §7.1)."""

from __future__ import annotations

import pytest

from dshkit.optimizer.audit import RAW_OVERLAP, audit, split_sentences
from dshkit.optimizer.strategies import history_mark

RAW = "登录页的按钮太丑了，改成蓝色，上次那个报错也修一下"
EVIDENCE = [("src/login.tsx", 30, 60), ("./src/theme.ts", 1, 20), ("src/theme.ts", 21, 40)]
SEQS = [3, 7]


def run(output: str, raw: str = RAW) -> list[tuple[str, str]]:
    result = audit(output, raw=raw, evidence=EVIDENCE, history_seqs=SEQS)
    return [(u.kind, u.why) for u in result.units]


def test_a_cited_file_line_inside_a_read_range_is_traced() -> None:
    assert run("提交按钮的样式在 src/login.tsx:42 里。") == [("traced", "file")]
    assert run("主题色定义见 `src/theme.ts:12`。") == [("traced", "file")]  # read as ./src/…
    # A range across two reads that touch counts; one reaching past what was read does not.
    assert run("颜色表在 src/theme.ts:15-30。") == [("traced", "file")]
    assert run("颜色表在 src/theme.ts:35-45。") == [("untraced", "bad-file-cite")]
    assert run("按钮在 src/login.tsx：31 定义。") == [("traced", "file")]  # full-width colon


def test_a_fabricated_file_line_is_untraced_even_if_it_restates_the_raw_words() -> None:
    assert run("按钮在 src/login.tsx:12 里。") == [("untraced", "bad-file-cite")]
    assert run("改 src/button.tsx:5。") == [("untraced", "bad-file-cite")]
    assert run("登录页的按钮太丑了，改成蓝色（src/login.tsx:99）。") == [
        ("untraced", "bad-file-cite")
    ]
    # One good and one made-up citation: the made-up one is the defect.
    assert run("见 src/login.tsx:40 与 src/login.tsx:90。") == [("untraced", "bad-file-cite")]
    assert run("越界引用 ../secret.py:1。") == [("untraced", "bad-file-cite")]


def test_history_marks_are_traced_only_for_seqs_the_model_was_shown() -> None:
    assert run(f"修掉上一轮的空指针报错{history_mark(7)}。") == [("traced", "history")]
    assert run(f"修掉上一轮的空指针报错{history_mark(8)}。") == [("untraced", "bad-history-seq")]
    assert run(f"报错出在 src/login.tsx:44{history_mark(3)}。") == [("traced", "file+history")]


def test_restating_the_raw_words_is_traced_by_bigram_overlap() -> None:
    assert run("把登录页的按钮改成蓝色。") == [("traced", "raw")]
    assert run("顺便把所有页面都重构一遍。") == [("untraced", "no-source")]
    # The threshold: 2 of the 4 bigrams of 甲乙丙丁戊 found is enough, 1 of 4 is not.
    assert RAW_OVERLAP == 0.5
    assert run("甲乙丙丁戊。", raw="甲乙丙") == [("traced", "raw")]
    assert run("甲乙丙丁戊。", raw="甲乙") == [("untraced", "no-source")]
    # Punctuation, spaces and case do not matter.
    assert run("Fix the Login  bug!", raw="fix the login bug") == [("traced", "raw")]


def test_freedom_markers() -> None:
    assert run("完成的标准按页面上看得到蓝色理解。") == [("freedom", "marker")]
    assert run("具体色值待确认。") == [("freedom", "marker")]
    assert run("按钮圆角是自由度。") == [("freedom", "marker")]
    assert run("动手前先确认色值，别假设。") == [("freedom", "marker")]
    # 按钮 … 理解 is not 按…理解.
    assert run("让按钮文字更好理解。") == [("untraced", "no-source")]


def test_ask_section_and_contract_lines() -> None:
    output = (
        "开工前先问用户：\n"
        "1. 蓝色用哪个色值？\n"
        "\n"
        "2) 暗色模式也改吗?\n"
        "把登录页的按钮改成蓝色。\n"
        "收尾自检：打开登录页看按钮颜色，把看到的写进交付。"
    )
    result = audit(output, raw=RAW, evidence=EVIDENCE, history_seqs=SEQS)
    assert [(u.line, u.kind, u.why) for u in result.units] == [
        (1, "structure", "ask-heading"),
        (2, "freedom", "ask"),
        (4, "freedom", "ask"),
        (5, "traced", "raw"),
        (6, "structure", "self-check"),
    ]
    assert result.counts() == {"sentences": 3, "traced": 1, "freedom": 2, "untraced": 0}
    nothing = audit(
        "开工前先问用户：\n无\n把登录页的按钮改成蓝色。", raw=RAW, evidence=[], history_seqs=[]
    )
    assert [u.why for u in nothing.units] == ["ask-heading", "nothing-to-ask", "raw"]


def test_headings_separators_and_list_markers() -> None:
    output = "## 改动\n**入口**\n锚点：\n---\n- 把登录页的按钮改成蓝色。\n2. 顺便重构路由。"
    assert run(output) == [
        ("structure", "heading"),
        ("structure", "heading"),
        ("structure", "heading"),
        ("traced", "raw"),
        ("untraced", "no-source"),
    ]
    # A long line ending in a colon is a claim, not a label.
    assert run("把全站所有页面的按钮统一改成新的设计规范如下：") == [("untraced", "no-source")]


def test_each_sentence_of_a_line_is_judged_and_counted() -> None:
    output = "把登录页的按钮改成蓝色。顺便升级框架版本！具体色值待确认。Run the full test suite."
    result = audit(output, raw=RAW, evidence=EVIDENCE, history_seqs=SEQS)
    assert [(u.kind, u.text) for u in result.units] == [
        ("traced", "把登录页的按钮改成蓝色。"),
        ("untraced", "顺便升级框架版本！"),
        ("freedom", "具体色值待确认。"),
        ("untraced", "Run the full test suite."),
    ]
    assert result.counts() == {"sentences": 4, "traced": 1, "freedom": 1, "untraced": 2}


def test_times_versions_and_hosts_are_not_citations() -> None:
    assert run("登录页的按钮 12:30 前改成蓝色。")[0] == ("traced", "raw")
    units = audit(
        "打开 localhost:8765 看登录页的按钮。",
        raw="打开localhost:8765看登录页的按钮",
        evidence=[],
        history_seqs=[],
    ).units
    assert units[0].kind == "traced" and units[0].cites == ()
    # A bare name is a citation when the tools read it.
    evidence = [("Makefile", 1, 9)]
    made = audit("测试入口在 Makefile:3。", raw="x", evidence=evidence, history_seqs=[])
    assert made.units[0].why == "file"


def test_a_code_block_is_one_unit() -> None:
    output = (
        "改成下面这样：\n```ts\nconst color = 'blue'\nexport default color\n```\n具体色值待确认。"
    )
    result = audit(output, raw="const color = 'blue'", evidence=[], history_seqs=[])
    assert [(u.line, u.kind) for u in result.units] == [
        (1, "structure"),
        (3, "traced"),
        (6, "freedom"),
    ]


def test_detail_is_json_ready() -> None:
    result = audit("改 src/login.tsx:40-44。", raw=RAW, evidence=EVIDENCE, history_seqs=SEQS)
    assert result.detail() == [
        {
            "line": 1,
            "text": "改 src/login.tsx:40-44。",
            "kind": "traced",
            "why": "file",
            "cites": ["src/login.tsx:40-44"],
            "overlap": None,
        }
    ]
    restated = audit("把登录页的按钮改成蓝色。", raw=RAW, evidence=[], history_seqs=[])
    assert restated.detail()[0]["overlap"] == 0.8  # 8 of its 10 bigrams are in RAW


def test_bad_evidence_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"src/a\.py:9-3"):
        audit("x", raw="x", evidence=[("src/a.py", 9, 3)], history_seqs=[])
    with pytest.raises(ValueError, match=r"src/a\.py:0-3"):
        audit("x", raw="x", evidence=[("src/a.py", 0, 3)], history_seqs=[])


def test_split_sentences() -> None:
    assert split_sentences("他说“好。”然后走了！真的？？结束") == [
        "他说“好。”",
        "然后走了！",
        "真的？？",
        "结束",
    ]
    assert split_sentences("改 src/app.py 的 v1.2 版本；再跑测试") == [
        "改 src/app.py 的 v1.2 版本；再跑测试"
    ]
    assert split_sentences("Fix it. Then test.") == ["Fix it.", "Then test."]


@pytest.mark.parametrize(
    "sentence",
    ["按我的理解，登录按钮应该是蓝色的。", "我读到登录页用的是旧样式。", "我未读到任何测试文件。"],
)
def test_self_narration_is_a_defect_not_freedom(sentence: str) -> None:
    (unit,) = audit(sentence, raw="把登录按钮改蓝", evidence=(), history_seqs=()).units
    assert (unit.kind, unit.why) == ("untraced", "self-narration")


def test_handing_an_unknown_to_the_agent_is_still_freedom() -> None:
    (unit,) = audit(
        "按登录页现有配色理解蓝色。", raw="把登录按钮改蓝", evidence=(), history_seqs=()
    ).units
    assert unit.kind == "freedom"


def test_a_constraint_riding_on_a_restated_sentence_is_judged_by_itself() -> None:
    # As a whole the sentence restates the raw words (0.76 of its bigrams); its last clause
    # is a demand nobody made.
    assert run("登录页的按钮太丑了，改成蓝色，上次那个报错也修一下，不要动别的页面。") == [
        ("untraced", "no-source")
    ]
    assert run("把登录页的按钮改成蓝色并且重写整个主题系统。") == [("untraced", "no-source")]
    assert run("把登录页的按钮改成蓝色，上次那个报错也修一下。") == [("traced", "raw")]


def test_a_freedom_marker_covers_only_its_own_clause() -> None:
    assert run("删掉全部测试文件，具体色值待确认。") == [("untraced", "no-source")]
    assert run("顺便重构整个路由层，其余按常规理解。") == [("untraced", "no-source")]
    assert run("把登录页的按钮改成蓝色，具体色值待确认。") == [("traced", "raw")]


LINES = {"src/login.tsx": {42: "  <Button color='gray' onClick={submit}>提交</Button>"}}


def checked(sentence: str) -> tuple[str, str]:
    (unit,) = audit(sentence, raw=RAW, evidence=EVIDENCE, history_seqs=SEQS, lines=LINES).units
    return unit.kind, unit.why


def test_a_cited_line_must_carry_the_claims_words() -> None:
    assert checked("src/login.tsx:42 定义了数据库连接池。") == ("untraced", "unsupported-cite")
    assert checked("src/login.tsx:42 里的 Button 目前是 gray。") == ("traced", "file")
    assert checked("提交按钮在 src/login.tsx:42，它的 onClick 调 submit。") == ("traced", "file")
    # Read, but not shown: a range the tools read whose text is unknown supports nothing.
    assert checked("src/login.tsx:50 的 Header 组件也要改。") == ("untraced", "unsupported-cite")
    # Pointing only, no claim about the line's content.
    assert checked("入口在 src/login.tsx:42。") == ("traced", "file")


def test_a_language_repair_is_judged_against_the_words_it_repairs() -> None:
    raw = "按扭眼色不对，改成兰色"
    assert run("按钮颜色不对，改成蓝色。", raw=raw) == [("traced", "raw-repair")]
    (unit,) = audit("修复登录页按钮的颜色。", raw="修复登陆页按扭的眼色", evidence=(),
                    history_seqs=()).units  # fmt: skip
    assert (unit.kind, unit.why) == ("traced", "raw-repair")
    assert run("把所有按钮做成圆角。", raw=raw) == [("untraced", "no-source")]


def test_in_basic_and_advanced_a_reading_is_self_narration() -> None:
    sentence = "按登录页现有配色理解蓝色。"
    for tier, kind in (("basic", "untraced"), ("advanced", "untraced"), ("extreme", "freedom")):
        (unit,) = audit(
            sentence, raw="把登录按钮改蓝", evidence=(), history_seqs=(), tier=tier
        ).units
        assert unit.kind == kind, tier


# What the model was shown of history messages 3 and 7, by seq.
HISTORY = {
    3: "登录页的按钮颜色用主题里的 primaryBlue，别用硬编码的色值",
    7: "上一轮的报错是 TypeError: Cannot read properties of undefined (reading 'name')",
}


def cited(output: str) -> list[tuple[str, str]]:
    result = audit(output, raw=RAW, evidence=EVIDENCE, history_seqs=SEQS, history=HISTORY)
    return [(u.kind, u.why) for u in result.units]


def test_a_constraint_riding_on_a_history_citation_is_checked_against_its_words() -> None:
    # Carried by the cited message: its words are there.
    assert cited(f"按钮颜色用 primaryBlue{history_mark(3)}。") == [("traced", "history")]
    # A constraint the cited message never states, riding on its citation, is the defect.
    assert cited(f"按钮颜色用 primaryBlue{history_mark(3)}，并且不许改动测试文件。") == [
        ("untraced", "unsupported-history-cite")
    ]
    # Cited to the wrong message: its words are in 3, not 7.
    assert cited(f"按钮颜色用 primaryBlue{history_mark(7)}。") == [
        ("untraced", "unsupported-history-cite")
    ]
    # Without the messages' words (as before), a shown seq is all that is checked.
    assert run(f"按钮颜色用 primaryBlue{history_mark(7)}。") == [("traced", "history")]


def test_a_quotation_of_a_history_message_must_be_its_words() -> None:
    said = f"用户说过「别用硬编码的色值」{history_mark(3)}。"
    assert cited(said) == [("traced", "history")]
    # Folded as the quote check folds: blank space and quotation marks do not matter.
    assert cited(f"用户说过“别用 硬编码的色值”{history_mark(3)}。") == [("traced", "history")]
    # A changed word is not the person's quote, even beside words the message carries.
    assert cited(f"用户说过「必须用硬编码的色值」{history_mark(3)}。") == [
        ("untraced", "unsupported-history-cite")
    ]
