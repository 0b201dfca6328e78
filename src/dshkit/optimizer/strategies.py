"""The optimizer's tiers as strategies: the Chinese system prompt of each
(docs/design/optimizer.md#a-tier-is-an-evidence-budget-not-a-style).

Written for dshkit from the rules, not copied from anywhere. `off` has no strategy: the raw
words pass through untouched (`passthrough`). `basic` repairs language only, `advanced`
completes object / result / boundary only, both guarded by F1–F7
(docs/design/optimizer.md#seven-guard-rails-for-basic-and-advanced); `extreme` is one fixed
strategy text (five gap classes, per-item provenance, entry and anchors, enrichment only with
evidence). Every tier carries the same recipient contract, iron rules 1–5
(docs/design/optimizer.md#eight-iron-rules), the provenance
notation the audit checks (`HISTORY_MARK`, `path:line`), the ask clause
(docs/design/optimizer.md#ask-when-the-deciding-fact-cannot-be-known, budgets
`ASK_ITEM_BUDGET`) placed before the strategy, and the self-check clause at the end.

The delivery form (iron rule 6) projects exactly two lines, `FORM_LINES[form]` (organisation
and length); nothing else in a prompt depends on the form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .language import FIXED

TIERS = ("off", "basic", "advanced", "extreme")
FORMS = ("ptc", "chat")
DEFAULT_FORM = "ptc"
PASSTHROUGH_TIER = "off"  # no model call, no strategy: the raw words are the instruction

ABSOLUTE_CAP = 1600  # characters of body an output may have, whatever the raw length

# The provenance notation the model is told to write and the audit checks (audit.py).
# A history fact cites the seq the context block labels each history message with; a file fact
# cites `path:line` or `path:first-last`, the path relative to the session's working directory.
HISTORY_MARK = "〔历史#{seq}〕"
HISTORY_MARK_RE = re.compile(re.escape(HISTORY_MARK).replace(re.escape("{seq}"), r"(\d+)"))

# The output's fixed lines, which the gates and the audit find by prefix (gates.py), in
# Chinese; each language's are in `language.FIXED`, and the gates know them all.
ASK_HEADING = FIXED["zh"].ask_heading  # the ask heading line; "：无" on it when nothing is asked
NOTHING_TO_ASK = FIXED["zh"].nothing
SELF_CHECK_PREFIX = FIXED["zh"].self_check  # the output's closing line
ASK_HEADINGS = tuple(fixed.ask_heading for fixed in FIXED.values())
NOTHINGS = tuple(fixed.nothing for fixed in FIXED.values())
SELF_CHECK_PREFIXES = tuple(fixed.self_check for fixed in FIXED.values())
# The strategy texts: v6 guards basic and advanced with F1-F7; v5 is the same without them
# (the comparison, and a way back should F1-F7 do harm).
STRATEGIES = ("v6", "v5")
DEFAULT_STRATEGY = "v6"


@dataclass(frozen=True)
class TierSpec:
    """What one tier may do: inflation budget, ask items, how far it reads the project."""

    name: str
    ratio: float  # the body may be at most this many times the raw words' characters
    ask_items: int  # the most ask items the output may list
    grounding: str  # "none": no file tools; "read": verify and locate; "deep": cross-check


TIER_SPECS: dict[str, TierSpec] = {
    "off": TierSpec("off", 1.0, 0, "none"),
    "basic": TierSpec("basic", 1.5, 1, "none"),
    "advanced": TierSpec("advanced", 2.5, 3, "read"),
    "extreme": TierSpec("extreme", 4.0, 5, "deep"),
}
ASK_ITEM_BUDGET = {name: spec.ask_items for name, spec in TIER_SPECS.items()}
LENGTH_RATIO = {name: spec.ratio for name, spec in TIER_SPECS.items()}


def check_tier(tier: str) -> TierSpec:
    """The tier's spec; a ValueError names the value and the tiers there are."""
    spec = TIER_SPECS.get(tier)
    if spec is None:
        raise ValueError(f"unknown tier {tier!r}: use one of {', '.join(TIERS)}")
    return spec


def check_form(form: str) -> str:
    """The form itself; a ValueError names the value and the forms there are."""
    if form not in FORMS:
        raise ValueError(f"unknown delivery form {form!r}: use one of {', '.join(FORMS)}")
    return form


def passthrough(raw: str) -> str:
    """Tier `off`: the instruction is the raw words, byte for byte."""
    return raw


def history_mark(seq: int) -> str:
    """The marker a history message with this seq is labelled with and cited by."""
    return HISTORY_MARK.format(seq=seq)


_ROLE = (
    "你是提示优化器。用户在编程会话里对工作 AI（正在这个会话里干活的编程助手）说了一句原话，"
    "你把它改写成交给工作 AI 的一条指令，让它一次做对。",
    "你的回答会原样转交给工作 AI：只对它说话，用用户下命令的口吻；不跟用户寒暄，"
    "不交代你改了什么，不加开场白、结束语或客套，不用代码块包住整段。你只写指令，不替它动手。",
)


def _ask_clause(items: int) -> tuple[str, ...]:
    """The ask clause: one sentence saying to ask, then its form, "无", body, precedence
    (docs/design/optimizer.md#ask-when-the-deciding-fact-cannot-be-known)."""
    return (
        f"【先问】只有用户定得了、又左右结果的点别让工作 AI 猜：第一行写「{ASK_HEADING}：」，"
        f"其下逐条列出（最多 {items} 条）。",
        "每条编号、只问一件事、以问号结尾；不写怎么问，不替答案预写做法。",
        f"没有要问的就写「{ASK_HEADING}：{NOTHING_TO_ASK}」；成品样子没定时不许写{NOTHING_TO_ASK}。",
        "正文仍然完整写出，问到的点只写「X 待确认」。",
        "本段优先于下文一切要求：会左右结果的只能问。",
    )


_SELF_CHECK_CLAUSE = (
    f"【收尾】最后一行以「{SELF_CHECK_PREFIX}」开头，要工作 AI 做完用最短的办法核对一次"
    "（运行一遍、看画面或按逻辑对一遍），把实际看到的写进交付，不长篇自证。"
)


def _budget_line(spec: TierSpec) -> str:
    return (
        f"正文不超过原话字数的 {spec.ratio:g} 倍（开头的提问和收尾自检不计），"
        f"无论如何不超过 {ABSOLUTE_CAP} 字。"
    )


_BASIC = (
    "【本档：普通——只修语言】",
    "原话的意思、范围和篇幅都不变：改错字、病句和标点，把「这个、那里」落到具体对象，"
    "把语序理顺，使工作 AI 读得出用户本来要什么。",
    "不新增任何要求：不补判据、锚点、约束或文件出处，不把原话扩成一份要求说明，不读文件；"
    "开头的提问段和末尾的收尾自检是固定格式，不算新增。",
    "代码、路径、命令、报错原文和专有名词一字不动，照原样保留在改好的句子里。",
    "落指代只用材料里出现过的对象（会话近况里明说过的文件、按钮、报错）；材料里没有的，按铁律第 5 条写。",
    _budget_line(TIER_SPECS["basic"]),
)

_ADVANCED = (
    "【本档：高级——只补三样】",
    "仍写成一段需求说明，只补三样：对象（到底改哪个文件、组件或功能）、"
    "结果（做完后用户亲眼会看到的现象，一句话）、边界（用户明说的或实际读到的、必须保住的东西）。",
    "需要核实或定位时用只读工具读文件，读到该读的几处就停，不逛项目。",
    "用法的细节、范围的罗列、验收的段落、锚点和操作的步骤都不写。",
    _budget_line(TIER_SPECS["advanced"]),
    "本档只补这三样，三样之外一律不补。",
)

_F3 = (
    "F3 这是用户下给工作 AI 的命令：不加小标题、不分节（用户自己用了除外），"
    "不写自述（我读到、我没读到、按某种理解）；拿不准的按铁律第 5 条的两种写法交给工作 AI 或用户。"
)
_F6 = "F6 篇幅守住本档的膨胀上限，宁短勿长。"
_F7 = "F7 原话就是基准：改写必须比原话更好用，做不到就基本照原话交出。"

# F1–F7, the guard rails of basic and advanced, each in the terms of its tier
# (docs/design/optimizer.md#seven-guard-rails-for-basic-and-advanced).
_BASIC_GATES = (
    "【闸门】",
    "F1 先判断原话够不够用：够用就只修语言，产物约等于原话；不够用也只把指代落到具体对象、把句子理顺，别的不补。",
    "F2 不加约束：原话没说的限制一条都不写；用户说「注意」就写注意，不许升级成禁令。",
    _F3,
    "F4 不写判据：不加验收说明、核对点或锚点。",
    "F5 不写出处段：本档不读文件，也不写 路径:行号。",
    _F6,
    _F7,
)
_ADVANCED_GATES = (
    "【闸门】",
    "F1 先判断原话够不够用：对象和动作都清楚，就只修语言，产物约等于原话；不够用才补三样里缺的那几样，每样最多一句。",
    "F2 默认不加约束：只写用户明说的或实际读到的，全文硬约束不超过 3 条；用户说「注意」就写注意，不许升级成禁令。",
    _F3,
    "F4 判据默认不写：只有原话缺「结果」时，才在句子里带一句用户自己会去看的那个表现；不单列验收或核对章节。",
    "F5 只有改既有代码时才写 路径:行号；从零新建的任务不写依据或出处段。",
    _F6,
    _F7,
)

# The extreme strategy: one fixed text (docs/design/optimizer.md#extreme-fills-five-gap-classes).
# No inflation
# budget is asked of it (F1–F7 guard basic and advanced only): its length is recorded.
_EXTREME = (
    "【本档：极端——五类补齐，逐条带出处】",
    "先判断原话缺哪几类再补；工作 AI 要一次做对、自己又无从得知的只有这五类：",
    "① 指代与定位：把原话里的这个、那个、它落到能核对的对象上（文件、函数、界面元素、上一轮那次报错）；找不到就按铁律第 5 条写，不编。",
    "② 完成判据：什么结果算做完，要能判定；没有依据又不左右结果的，写「按 X 理解」。",
    "③ 约束与边界：哪些地方不许碰、哪些行为要保持原样、项目里确有的惯例；没有依据就只写原话推得出的。",
    "④ 隐含决定：用户没说出口的选择；项目里有先例就照先例并带出处，没有就标为自由度，不替用户拍板。",
    "⑤ 入口与锚点：从哪里下手、做完看哪里；没有依据就省略。",
    "可以多读几处、交叉核对后再下结论；每一条改动都带出处。",
    "每条写成「做什么＋凭什么」：文件事实带 路径:行号，上文事实带"
    + HISTORY_MARK.format(seq="序号")
    + "；不影响结果、不值得问的写「按 X 理解」或标为自由度。",
    "允许顺着用户的方向补上有益的内容，但每一条都要有依据，方向与原话一致。",
    "写成可核对的条目，附出处、入口和锚点；五类该补的都写全，不写工序，不教写法。",
)

_FACTS_RULE = (
    "1. 事实只搬不造：只有材料里真实出现过的（原话、会话近况、工具实际读到的行）才能当事实写；"
    "只看过目录不等于知道文件内容。"
)
_CAUTION_RULE = "2. 稳妥不等于禁令：用户没提的事不等于不许做，不许自行加上禁止新依赖、禁止联网、只许改一个文件之类的限制。"
# One rule for every unknown, so the three ways of writing one never compete.
_UNKNOWN_RULE = (
    "5. 拿不准的只有两种写法：只有用户定得了的，列进开头的提问，正文该处写「X 待确认」；"
    "工作 AI 自己查得清的（文件里有而本次没读到，或原话的这个、那个在材料里找不到对象），"
    "写「动手前先确认 X」，不许猜一个填上。"
)
_IRON_RULES = {
    "basic": (
        "【铁律】",
        _FACTS_RULE,
        _CAUTION_RULE,
        "3. 只写原话里有的：工作 AI 本行的常识、通用写法和做事流程不写。",
        "4. 不加锚点和核对点：它们不属于语言修复。",
        _UNKNOWN_RULE,
    ),
    "advanced": (
        "【铁律】",
        _FACTS_RULE,
        _CAUTION_RULE,
        "3. 只写工作 AI 自己不知道的：有据的事实和本档的三样；它本行的常识、通用写法和做事流程不写。",
        "4. 不加锚点：要看的那个表现，已在「结果」那一句里。",
        _UNKNOWN_RULE,
    ),
    "extreme": (
        "【铁律】",
        _FACTS_RULE,
        _CAUTION_RULE,
        "3. 只写工作 AI 自己不知道的：有据的事实、替它定下的决定、完成的判据、该看的位置；它本行的常识、通用写法和做事流程不写。",
        "4. 锚点不多于改动点，每个锚点写明看什么位置、怎样算通过。",
        _UNKNOWN_RULE,
    ),
}

_CITE_HISTORY = (
    "在同一句里带上那条消息的"
    + HISTORY_MARK.format(seq="序号")
    + "，或直接引用那句原话；原话本身说过的不用标。"
)
_HISTORY_CITE = "出自会话近况的，" + _CITE_HISTORY
_PROVENANCE = {
    "basic": (
        "【出处】本档不读文件，不写文件出处。",
        "把指代落到会话近况里的对象时，" + _CITE_HISTORY,
        "没有会话近况就不提上文，指代只按原话字面理解。",
    ),
    "advanced": (
        "【出处】改既有代码时，文件里读到的事实在同一句里写 路径:行号（路径相对工作目录，"
        "如 src/app.py:42，一段写 src/app.py:40-58），只引工具实际读过、确实写着这件事的行；"
        "引用是为了让工作 AI 找得到，不是越多越好。",
        _HISTORY_CITE,
        "没有会话近况就不提上文；没有工具或读不到文件，就不写任何文件事实，按铁律第 5 条写。",
    ),
}
_PROVENANCE["extreme"] = _PROVENANCE["advanced"]

# The two lines the delivery form projects (iron rule 6): organisation, then length.
FORM_LINES: dict[str, tuple[str, str]] = {
    "ptc": (
        "组织方式：条目并列、不分先后，由工作 AI 自己安排顺序。",
        "篇幅：够用即止，必需的写完就停。",
    ),
    "chat": (
        "组织方式：条目按动手的先后排列。",
        "篇幅：不另设限，把该写的都写清楚为止。",
    ),
}

_STRATEGY = {
    "basic": _BASIC + _BASIC_GATES,
    "advanced": _ADVANCED + _ADVANCED_GATES,
    "extreme": _EXTREME,
}
_STRATEGY_V5 = {"basic": _BASIC, "advanced": _ADVANCED, "extreme": _EXTREME}


def ask_text(tier: str, language: str = "zh") -> tuple[str, ...]:
    """The ask-related lines of a tier's prompt: the ask clause and the self-check clause.

    What the ≤ 20% share (docs/design/optimizer.md#the-ask-clause-is-at-most-a-fifth) is
    measured on (`ask_share`); each is one whole line of `system_prompt`.
    """
    spec = check_tier(tier)
    if tier == PASSTHROUGH_TIER:
        return ()
    lines = (*_ask_clause(spec.ask_items), _SELF_CHECK_CLAUSE)
    return tuple(_in_language(line, language) for line in lines)


def ask_share(
    tier: str, form: str = DEFAULT_FORM, language: str = "zh", strategy: str = DEFAULT_STRATEGY
) -> float:
    """The ask clause's share of the tier's system prompt, both measured by `count_chars`
    (the one measure of length the budgets use)."""
    asked = sum(count_chars(line) for line in ask_text(tier, language))
    return asked / count_chars(system_prompt(tier, form, language, strategy))


def _fixed_words(language: str) -> tuple[tuple[str, str], ...]:
    """The fixed parts the model is told to write, as the Chinese prompt quotes them, and
    how each is written in `language` (the words of `language.FIXED`)."""
    zh, to = FIXED["zh"], FIXED[language]
    return (
        (f"「{zh.ask_heading}：{zh.nothing}」", f"「{to.ask_heading}: {to.nothing}」"),
        (f"「{zh.ask_heading}：」", f"「{to.ask_heading}:」"),
        (f"时不许写{zh.nothing}", f"时不许写「{to.nothing}」"),
        (f"「X {zh.pending}」", f"「X: {to.pending}」"),
        (f"「{zh.check_first} X」", f"「{to.check_first} X」"),
        (f"「{zh.self_check}」", f"「{to.self_check}」"),
    )


# The line that tells the model the instruction's language, where it is not the prompt's.
_LANGUAGE_LINE = {
    "en": "【语言】用户的原话是英文：整条指令用英文写，上文「」里的固定写法按给出的英文原样写，不夹中文。",
}


def _in_language(text: str, language: str) -> str:
    if language not in FIXED:
        raise ValueError(f"unknown language {language!r}: use one of {', '.join(FIXED)}")
    if language == "zh":
        return text
    for zh, other in _fixed_words(language):
        text = text.replace(zh, other)
    return text


def system_prompt(
    tier: str, form: str = DEFAULT_FORM, language: str = "zh", strategy: str = DEFAULT_STRATEGY
) -> str:
    """The system prompt of `basic`, `advanced` or `extreme` for one delivery form, telling
    the model to write the instruction's fixed parts in `language` (the person's), in the
    strategy text `strategy` (v6: with F1-F7; v5: without).

    `off` has none (a ValueError says so): its raw words pass through (`passthrough`).
    """
    spec = check_tier(tier)
    check_form(form)
    if tier == PASSTHROUGH_TIER:
        raise ValueError("tier 'off' has no system prompt: the raw words pass through untouched")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    lines = (
        *_ROLE,
        *_ask_clause(spec.ask_items),
        *(_STRATEGY if strategy == "v6" else _STRATEGY_V5)[tier],
        *_IRON_RULES[tier],
        *_PROVENANCE[tier],
        *FORM_LINES[form],
        _SELF_CHECK_CLAUSE,
        *((_LANGUAGE_LINE[language],) if language in _LANGUAGE_LINE else ()),
    )
    return _in_language("\n".join(lines), language)


def count_chars(text: str) -> int:
    """Characters as the length budgets count them: code points that are not whitespace."""
    return sum(1 for c in text if not c.isspace())


def length_limit(raw: str, tier: str) -> int:
    """The most body characters the tier allows for these raw words
    (docs/design/optimizer.md#length-budgets-per-tier)."""
    spec = check_tier(tier)
    return min(int(spec.ratio * count_chars(raw)), ABSOLUTE_CAP)


def budget_note(raw: str, tier: str) -> str:
    """One line for the model's user message: the raw words' length and, for a tier with an
    inflation budget the model is asked to keep (not extreme: its length is only recorded),
    the body's limit."""
    if tier == "extreme":
        return f"原话 {count_chars(raw)} 字。"
    return (
        f"原话 {count_chars(raw)} 字；本档正文上限 {length_limit(raw, tier)} 字"
        "（开头的提问和收尾自检不计）。"
    )
