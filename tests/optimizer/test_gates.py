"""The optimizer's output gates: recipient stripping, the length and ask gates (seed 000)."""

from __future__ import annotations

import pytest

from dshkit.optimizer.gates import (
    ask_gate,
    body_chars,
    holds_body,
    is_ask_heading,
    is_ask_item,
    length_gate,
    strip_recipient,
)
from dshkit.optimizer.strategies import ABSOLUTE_CAP, history_mark

RAW = "把登录页按钮改成蓝色"  # 10 characters
BODY = "把登录页的提交按钮改成蓝色，其他按钮不动。"  # 21 characters


# --- length gate ---------------------------------------------------------------------------


def test_length_gate_records_ratio_and_over() -> None:
    assert length_gate(RAW, BODY, "advanced") == {
        "rawChars": 10,
        "limit": 25,
        "chars": 21,
        "ratio": 2.1,
        "over": False,
    }
    assert length_gate(RAW, BODY, "basic") == {
        "rawChars": 10,
        "limit": 15,
        "chars": 21,
        "ratio": 2.1,
        "over": True,
    }


def test_length_gate_counts_the_body_only() -> None:
    """Whitespace, the ask section, the self-check line and history marks are not body."""
    framed = (
        "开工前先问用户：\n\n1. 蓝色用哪个色值？\n2) 暗色模式也改吗?\n无\n"
        f"把登录页的提交按钮 改成蓝色，\n其他按钮不动{history_mark(12)}。\n"
        "收尾自检：打开登录页看一眼按钮颜色，把看到的写进交付。\n"
    )
    assert body_chars(framed) == body_chars(BODY) == 21
    assert length_gate(RAW, framed, "advanced")["chars"] == 21
    # A body line is counted even when it mentions asking.
    assert body_chars(BODY + "\n先问清色值再改") == 28


def test_length_gate_limit_is_capped_and_empty_raw_has_no_ratio() -> None:
    raw = "字" * 1000
    gate = length_gate(raw, "字" * 1700, "extreme")
    assert gate["limit"] == ABSOLUTE_CAP and gate["over"] is True and gate["ratio"] == 1.7
    assert length_gate("", "写点东西", "basic") == {
        "rawChars": 0,
        "limit": 0,
        "chars": 4,
        "ratio": None,
        "over": True,
    }
    assert length_gate(RAW, RAW, "off")["over"] is False
    with pytest.raises(ValueError, match="'max'"):
        length_gate(RAW, BODY, "max")


# --- ask gate ------------------------------------------------------------------------------


def test_ask_gate_counts_numbered_question_lines() -> None:
    output = (
        "开工前先问用户：\n"
        "1. 蓝色用哪个色值？\n"
        "\n"  # a blank line inside the section does not end it
        "\n"
        "2、暗色模式也改吗?\n"  # ASCII question mark
        "（3）要保留旧的样式类名吗？\n"
        "④ 只改登录页还是所有页面？\n"
        "- 5) 需要补测试吗？\n"
        "**6.** 改完要截图吗？\n"
        "把登录页按钮改成蓝色。\n"
    )
    assert ask_gate(output, "extreme") == {
        "hasSection": True,
        "items": 6,
        "limit": 5,
        "over": True,
    }
    assert ask_gate(output, "advanced")["limit"] == 3


def test_ask_gate_only_counts_what_it_can_recognise() -> None:
    output = (
        "开工前先问用户：\n"
        "蓝色用哪个色值？\n"  # a question, but not numbered
        "1. 把按钮改成蓝色。\n"  # numbered, but no question mark
        "1.5 倍的行高要保留吗？\n"  # a decimal is not a number marker
        "12:30 之前能改完吗？\n"
    )
    assert ask_gate(output, "basic") == {"hasSection": True, "items": 0, "limit": 1, "over": False}


@pytest.mark.parametrize(
    "output",
    [
        "开工前先问用户：无\n把登录页按钮改成蓝色。",  # inline 无
        "开工前先问用户：\n无\n把登录页按钮改成蓝色。",  # 无 on the next line
        "开工前先问用户：\n\n无。\n\n把登录页按钮改成蓝色。",
        "**开工前先问用户**：无\n把登录页按钮改成蓝色。",
        "## 开工前先问用户\n无\n把登录页按钮改成蓝色。",
        "把登录页按钮改成蓝色。\n开工前先问用户：无",  # wherever it stands
    ],
)
def test_ask_gate_nothing_to_ask_is_a_section_without_items(output: str) -> None:
    assert ask_gate(output, "basic") == {"hasSection": True, "items": 0, "limit": 1, "over": False}


def test_ask_gate_missing_section() -> None:
    gate = ask_gate("把登录页按钮改成蓝色。\n1. 用哪个色值？", "basic")
    assert gate == {"hasSection": False, "items": 1, "limit": 1, "over": False}
    assert not is_ask_heading("先问用户：无")
    assert not is_ask_heading("请在开工前先问用户")  # the heading starts its line
    assert is_ask_item("  3．色值？") and not is_ask_item("3 色值？")


def test_gates_never_change_the_output() -> None:
    output = "开工前先问用户：\n1. 一？\n2. 二？\n" + "长" * 3000
    before = output
    assert ask_gate(output, "basic")["over"] and length_gate(RAW, output, "basic")["over"]
    assert output == before


# --- recipient stripping -------------------------------------------------------------------

INSTRUCTION = "开工前先问用户：无\n把登录页的提交按钮改成蓝色。\n收尾自检：打开登录页看按钮颜色。"


@pytest.mark.parametrize(
    ("answer", "removed"),
    [
        (f"以下是优化后的提示词：\n{INSTRUCTION}", ["以下是优化后的提示词："]),
        (f"好的，我来帮你优化这条指令。\n\n{INSTRUCTION}", ["好的，我来帮你优化这条指令。"]),
        (
            f"好的！\n下面是改写后的版本：\n---\n{INSTRUCTION}",
            ["好的！", "下面是改写后的版本：", "---"],
        ),
        (f"Here's the refined prompt:\n\n{INSTRUCTION}", ["Here's the refined prompt:"]),
        (
            f"Sure! Here is the optimized instruction:\n{INSTRUCTION}",
            ["Sure! Here is the optimized instruction:"],
        ),
        (f"## 优化后的提示词\n{INSTRUCTION}", ["优化后的提示词"]),
        (f"{INSTRUCTION}\n\n希望对你有帮助！", ["希望对你有帮助！"]),
        (
            f"{INSTRUCTION}\n---\n如果还需要调整，随时告诉我。\n需要我再精简一点吗？",
            ["---", "如果还需要调整，随时告诉我。", "需要我再精简一点吗？"],
        ),
        (
            f"{INSTRUCTION}\nHope this helps! Let me know if you want changes.",
            ["Hope this helps! Let me know if you want changes."],
        ),
        (
            f"{INSTRUCTION}\n\n**优化说明**：\n- 补上了按钮所在的页面。\n\n希望有用！",
            ["**优化说明**：", "- 补上了按钮所在的页面。", "希望有用！"],
        ),
        (
            f"{INSTRUCTION}\n\nChanges made:\n- named the page",
            ["Changes made:", "- named the page"],
        ),
        (f"```\n{INSTRUCTION}\n```", ["```", "```"]),
        (
            f"以下是优化后的提示词：\n```markdown\n{INSTRUCTION}\n```\n希望对你有帮助。",
            ["以下是优化后的提示词：", "希望对你有帮助。", "```markdown", "```"],
        ),
    ],
)
def test_strip_recipient_removes_what_speaks_to_the_person(answer: str, removed: list[str]) -> None:
    text, stripped = strip_recipient(answer)
    assert text == INSTRUCTION
    assert stripped == removed


def test_strip_recipient_keeps_a_label_s_content() -> None:
    text, stripped = strip_recipient("优化后的指令：把登录页的提交按钮改成蓝色。")
    assert text == "把登录页的提交按钮改成蓝色。"
    assert stripped == ["优化后的指令："]


@pytest.mark.parametrize(
    "answer",
    [
        INSTRUCTION,
        "以下三个接口的返回结果都要改：\n/login、/logout、/me。",  # 以下… but not a preamble
        "好的，就按上次说的方案改。",  # the person's own "好的", not the optimizer's
        "优化后的版本要保留旧接口。",  # no colon: a body sentence, not a label
        "把按钮改成蓝色。\n希望页面加载更顺利一些，顺手看看首屏。",  # 希望 about the task
        "开工前先问用户：无\n改完跑一次测试。\n收尾自检：如需调整，随时告诉我看到了什么。",
        # A code block that is not the whole answer: CommonMark closes it on line 3.
        "```\nnpm test\n```\n跑完把报错贴出来。\n```\nnpm run lint\n```",
    ],
)
def test_strip_recipient_never_touches_the_body(answer: str) -> None:
    assert strip_recipient(answer) == (answer, [])


def test_an_answer_only_to_the_person_leaves_nothing_for_the_agent() -> None:
    assert strip_recipient("以下是优化后的提示词：\n\n希望对你有帮助！") == (
        "",
        ["以下是优化后的提示词：", "希望对你有帮助！"],
    )
    assert strip_recipient("好的。") == ("", ["好的。"])


def test_strip_recipient_unwraps_a_longer_fence_around_an_inner_block() -> None:
    inner = "把测试跑一遍：\n```sh\nnpm test\n```\n收尾自检：贴出实际输出。"
    text, stripped = strip_recipient(f"````\n{inner}\n````")
    assert text == inner and stripped == ["````", "````"]


def test_an_acknowledged_instruction_is_not_chatter() -> None:
    answer = "好的，按指令修改 src/app.py 第 2 行，把 helo 改成 hello。\n收尾自检：运行一次看输出。"
    assert strip_recipient(answer) == (answer, [])
    assert strip_recipient("好的，我这就按你的意思整理提示词：\n把 helo 改成 hello。") == (
        "把 helo 改成 hello。",
        ["好的，我这就按你的意思整理提示词："],
    )


def test_contract_lines_alone_hold_nothing_for_the_agent() -> None:
    assert not holds_body("开工前先问用户：无\n收尾自检：运行一次看输出。")
    assert holds_body("开工前先问用户：无\n把 helo 改成 hello。\n收尾自检：运行一次。")
