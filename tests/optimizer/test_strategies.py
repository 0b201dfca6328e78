"""The optimizer's tier strategies: the ask contract, the delivery form, the budgets (seed 000)."""

from __future__ import annotations

import re

import pytest

from dshkit.optimizer.gates import length_gate
from dshkit.optimizer.language import LANGUAGES, language_of
from dshkit.optimizer.strategies import (
    ABSOLUTE_CAP,
    ASK_HEADING,
    ASK_ITEM_BUDGET,
    DEFAULT_FORM,
    FORM_LINES,
    FORMS,
    HISTORY_MARK,
    HISTORY_MARK_RE,
    LENGTH_RATIO,
    NOTHING_TO_ASK,
    SELF_CHECK_PREFIX,
    TIER_SPECS,
    TIERS,
    ask_share,
    ask_text,
    budget_note,
    check_form,
    check_tier,
    count_chars,
    history_mark,
    length_limit,
    passthrough,
    system_prompt,
)

from ..support.paths import REPO

STRATEGY_TIERS = ("basic", "advanced", "extreme")


def test_tiers_forms_and_budgets_are_the_seeds() -> None:
    assert TIERS == ("off", "basic", "advanced", "extreme")
    assert FORMS == ("ptc", "chat") and DEFAULT_FORM == "ptc"
    assert {t: ASK_ITEM_BUDGET[t] for t in STRATEGY_TIERS} == {
        "basic": 1,
        "advanced": 3,
        "extreme": 5,
    }
    assert {t: LENGTH_RATIO[t] for t in STRATEGY_TIERS} == {
        "basic": 1.5,
        "advanced": 2.5,
        "extreme": 4.0,
    }
    assert ABSOLUTE_CAP == 1600
    assert [TIER_SPECS[t].grounding for t in TIERS] == ["none", "none", "read", "deep"]


def test_off_passes_the_raw_words_through_and_has_no_prompt() -> None:
    raw = "  修复这个 bug\n\t！ "
    assert passthrough(raw) is raw
    with pytest.raises(ValueError, match=r"off.*pass through untouched"):
        system_prompt("off")
    assert ask_text("off") == ()


def test_bad_tier_or_form_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"'turbo'.*off, basic, advanced, extreme"):
        system_prompt("turbo")
    with pytest.raises(ValueError, match=r"'email'.*ptc, chat"):
        system_prompt("basic", "email")
    with pytest.raises(ValueError, match="'x'"):
        check_tier("x")
    assert check_form("chat") == "chat"


@pytest.mark.parametrize("tier", STRATEGY_TIERS)
def test_every_tier_carries_the_ask_contract(tier: str) -> None:
    prompt = system_prompt(tier)
    lines = prompt.split("\n")
    asks = ask_text(tier)
    for line in asks:
        assert line in lines, line  # each is a whole line of the real prompt
    first = asks[0]
    # One sentence that says to ask, with the tier's budget and the heading to write.
    assert first.count("。") == 1 and first.endswith("。")
    assert "问" in first and ASK_HEADING in first
    assert f"最多 {ASK_ITEM_BUDGET[tier]} 条" in first
    clause = "\n".join(asks)
    assert f"{ASK_HEADING}：{NOTHING_TO_ASK}" in clause  # the "无" line
    assert "正文仍然完整写出" in clause  # the body is not shrunk
    assert "优先于" in clause  # precedence over the body
    assert "不写怎么问" in clause and "预写" in clause  # only to ask; no answer branches
    # The self-check closes the prompt, and asks for what was actually seen.
    assert lines[-1] == asks[-1]
    assert SELF_CHECK_PREFIX in asks[-1] and "实际看到" in asks[-1]
    # Precedence by place too: the ask clause comes before the tier's strategy.
    strategy_start = next(i for i, line in enumerate(lines) if line.startswith("【本档"))
    assert lines.index(first) < strategy_start


@pytest.mark.parametrize("tier", STRATEGY_TIERS)
@pytest.mark.parametrize("form", FORMS)
def test_ask_text_is_at_most_a_fifth_of_the_prompt(tier: str, form: str) -> None:
    """Ask-related text = the ask clause lines + the self-check line, in characters (code
    points), against the whole prompt: the body must stay the main part (§0‴)."""
    share = ask_share(tier, form)  # count_chars on both sides, as the budgets count
    assert 0.1 < share <= 0.20


@pytest.mark.parametrize("tier", STRATEGY_TIERS)
def test_the_form_changes_exactly_two_lines(tier: str) -> None:
    ptc = system_prompt(tier, "ptc").split("\n")
    chat = system_prompt(tier, "chat").split("\n")
    assert len(ptc) == len(chat)
    differing = [(a, b) for a, b in zip(ptc, chat, strict=True) if a != b]
    assert differing == list(zip(FORM_LINES["ptc"], FORM_LINES["chat"], strict=True))
    # Strip the two projected lines and the rest is byte-identical.
    rest_ptc = "\n".join(line for line in ptc if line not in FORM_LINES["ptc"])
    rest_chat = "\n".join(line for line in chat if line not in FORM_LINES["chat"])
    assert rest_ptc.encode() == rest_chat.encode()
    assert len(rest_ptc.split("\n")) == len(ptc) - 2
    assert system_prompt(tier) == system_prompt(tier, "ptc")  # ptc is the default


def test_the_two_form_lines_are_organisation_and_length() -> None:
    for form in FORMS:
        organisation, length = FORM_LINES[form]
        assert organisation.startswith("组织方式：") and length.startswith("篇幅：")
    assert "够用即止" in FORM_LINES["ptc"][1]
    assert FORM_LINES["ptc"][0] != FORM_LINES["chat"][0]
    assert FORM_LINES["ptc"][1] != FORM_LINES["chat"][1]


def test_the_strategies_differ_and_state_their_budgets() -> None:
    prompts = {tier: system_prompt(tier) for tier in STRATEGY_TIERS}
    assert len(set(prompts.values())) == 3
    for tier in ("basic", "advanced"):
        assert f"{LENGTH_RATIO[tier]:g} 倍" in prompts[tier]
        assert str(ABSOLUTE_CAP) in prompts[tier]
    assert "只修语言" in prompts["basic"] and "不新增任何要求" in prompts["basic"]
    assert "只补三样" in prompts["advanced"]
    for word in ("对象", "结果", "边界"):
        assert word in prompts["advanced"]


def test_f1_to_f7_guard_basic_and_advanced_only() -> None:
    for tier in ("basic", "advanced"):
        lines = system_prompt(tier).split("\n")
        for n in range(1, 8):
            assert sum(line.startswith(f"F{n} ") for line in lines) == 1, (tier, n)
    assert not any(line.startswith("F1 ") for line in system_prompt("extreme").split("\n"))


def test_extreme_is_the_full_strategy_in_one_fixed_text() -> None:
    prompt = system_prompt("extreme")
    assert prompt == system_prompt("extreme")
    for mark in "①②③④⑤":
        assert sum(line.startswith(mark) for line in prompt.split("\n")) == 1
    for phrase in ("指代与定位", "完成判据", "约束与边界", "隐含决定", "入口与锚点"):
        assert phrase in prompt
    assert "出处" in prompt and "有依据" in prompt  # per-item provenance, enrichment on evidence


@pytest.mark.parametrize("tier", STRATEGY_TIERS)
def test_recipient_contract_iron_rules_and_provenance_in_every_tier(tier: str) -> None:
    prompt = system_prompt(tier)
    lines = prompt.split("\n")
    assert "只对它说话" in prompt and "开场白" in prompt  # speaks only to the agent
    for n in range(1, 6):
        assert sum(line.startswith(f"{n}. ") for line in lines) == 1, n
    assert "待确认" in prompt and "动手前先确认" in prompt  # the two ways of an unknown
    if tier == "basic":
        assert "不写文件出处" in prompt and "src/app.py:40-58" not in prompt  # reads no file
    else:
        assert "路径:行号" in prompt and "src/app.py:40-58" in prompt
    assert history_mark_placeholder() in prompt


def test_extreme_is_not_asked_to_fit_an_inflation_budget() -> None:
    """F1–F7 guard basic and advanced only: extreme's length is recorded, never asked for
    (a five-class fill of "修复这个 bug" cannot fit 28 characters)."""
    prompt = system_prompt("extreme")
    assert "倍" not in prompt and str(ABSOLUTE_CAP) not in prompt and "膨胀上限" not in prompt
    assert budget_note("修复这个 bug", "extreme") == "原话 7 字。"
    for form in FORMS:
        assert "膨胀上限" not in FORM_LINES[form][1]


def test_each_tier_is_consistent_with_itself_and_the_tier_table() -> None:
    prompts = {tier: system_prompt(tier) for tier in STRATEGY_TIERS}
    for prompt in prompts.values():
        # No invitation to stuff citations; one rule decides how an unknown is written.
        assert "逐句核对" not in prompt
        assert sum(line.startswith("5. 拿不准的只有两种写法") for line in prompt.split("\n")) == 1
        assert "替答案预写" in prompt
    basic, advanced = prompts["basic"], prompts["advanced"]
    # Basic adds nothing: no anchors, no criterion, no per-class completion, no file facts.
    assert "不新增任何要求" in basic and "不写判据" in basic and "不加锚点" in basic
    assert "每类最多一句" not in basic and "每样最多一句" not in basic
    assert "锚点不多于改动点" not in basic and "完成的判据" not in basic
    # Advanced: the three, one sentence each at most; its one criterion is the result line.
    assert "每样最多一句" in advanced and "锚点不多于改动点" not in advanced
    assert "完成的判据" not in advanced and "替它定下的决定" not in advanced
    # Extreme keeps its five classes, decisions, criteria and anchors.
    assert "锚点不多于改动点" in prompts["extreme"] and "完成的判据" in prompts["extreme"]
    # F3 forbids "按 X 理解" in basic and advanced; extreme may use it where nothing rides on it.
    assert "按某种理解" in basic and "「按 X 理解」" in prompts["extreme"]


def history_mark_placeholder() -> str:
    return HISTORY_MARK.format(seq="序号")


def test_history_mark_round_trips() -> None:
    assert history_mark(12) == "〔历史#12〕"
    assert HISTORY_MARK_RE.findall(f"见{history_mark(3)}与{history_mark(41)}") == ["3", "41"]
    assert not HISTORY_MARK_RE.search("〔历史#x〕")


def test_characters_are_non_whitespace_code_points() -> None:
    assert count_chars("修复这个 bug") == 7
    assert count_chars(" a\tb\n c ") == 3
    assert count_chars("") == 0


def test_length_limit_is_the_ratio_capped_at_1600() -> None:
    raw = "修复这个 bug"  # 7 characters
    assert [length_limit(raw, t) for t in TIERS] == [7, 10, 17, 28]  # floors of 10.5, 17.5
    assert length_limit("字" * 7, "basic") == 10  # floor(10.5)
    assert length_limit("字" * 1000, "extreme") == ABSOLUTE_CAP
    assert length_limit("字" * 1000, "basic") == 1500
    assert budget_note(raw, "advanced") == (
        "原话 7 字；本档正文上限 17 字（开头的提问和收尾自检不计）。"
    )


def _docs_table() -> dict[str, str]:
    text = (REPO / "docs" / "optimizer.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \| ([^|]+) \|$", text, re.M)
    return {tier: limit.strip() for tier, limit in rows}


def test_the_docs_state_the_length_rule_the_code_applies() -> None:
    """One rule for extreme's length: the docs once said 1,600 while the code did
    min(4x raw, 1,600)."""
    table = _docs_table()
    for tier in STRATEGY_TIERS:
        assert table[tier].split("×")[0] == f"{LENGTH_RATIO[tier]:g}", (tier, table[tier])
    docs = (REPO / "docs" / "optimizer.md").read_text(encoding="utf-8")
    assert f"min(⌊ratio × raw characters⌋, {ABSOLUTE_CAP:,})" in docs
    assert length_limit("修" * 100, "extreme") == 400  # 4x, under the cap
    assert length_limit("修" * 1000, "extreme") == ABSOLUTE_CAP
    assert length_gate("修" * 100, "改" * 401, "extreme")["over"]


@pytest.mark.parametrize("tier", STRATEGY_TIERS)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_ask_share_is_measured_by_count_chars(tier: str, form: str, language: str) -> None:
    """The ≤ 20% limit in the project's own measure (`count_chars`), in each language."""
    share = ask_share(tier, form, language)
    asked = sum(count_chars(line) for line in ask_text(tier, language))
    assert share == asked / count_chars(system_prompt(tier, form, language))
    assert 0.1 < share <= 0.20


@pytest.mark.parametrize("tier", STRATEGY_TIERS)
def test_an_english_prompt_names_english_fixed_parts_only(tier: str) -> None:
    english = system_prompt(tier, "ptc", "en")
    for zh in ("「开工前先问用户", "「收尾自检：」", "「X 待确认」", "「动手前先确认 X」"):
        assert zh not in english
    assert "「Ask the user first:」" in english and "「Ask the user first: None」" in english
    assert "「Final self-check:」" in english and english.endswith("不夹中文。")
    assert system_prompt(tier) == system_prompt(tier, "ptc", "zh")  # Chinese as it was


def test_the_language_is_read_from_the_persons_words() -> None:
    assert language_of("把 src/app.py 里的 login 改一下") == "zh"
    assert language_of("fix the failing test in tests/test_app.py") == "en"
    assert language_of("rename the 设置 tab to Settings") == "en"
    assert language_of("修复这个 bug") == "zh"


def test_the_strategy_switch_drops_only_the_guard_rails() -> None:
    for tier in ("basic", "advanced"):
        v6, v5 = system_prompt(tier, strategy="v6"), system_prompt(tier, strategy="v5")
        assert "【闸门】" in v6 and "【闸门】" not in v5
        assert set(v5.split("\n")) < set(v6.split("\n"))
    assert system_prompt("extreme", strategy="v5") == system_prompt("extreme")
    with pytest.raises(ValueError, match=r"'v9'.*v6, v5"):
        system_prompt("basic", strategy="v9")
