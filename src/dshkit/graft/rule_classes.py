"""The classes of what a person says, as data: which sentences state a standing rule, which
are plainly something else, and the cues that tell them apart, in Chinese and English
(docs/design/graft.md#hard-constraints-are-never-cut).

`TABLE` is read in order and the first class whose cue a sentence holds (and none of whose
`unless` patterns) is its class; a sentence no class takes is *unclassified*, which is not
the same as "not a rule": a later sentence of the person's that nothing here recognises is
carried on the card verbatim as "maybe a rule" (`constraints.py`), never dropped.

The order is the model:

1. a symptom reported without a request ("测试总是失败") is a report, even with 总是 in it;
2. a lasting marker (以后, 始终, from now on, always, never, …) makes a rule whatever else
   the sentence says;
3. a one-shot marker (这次, 现在, 立刻, for now, yet, …) confines what follows to now: a step
   for the board ("这次先别提交"), not a rule — unless it keeps something as it is
   ("保持现在的接口不变");
4. a question is a question ("要不要加缓存？");
5. the four classes of standing rule — prohibitions, restrictions to a set, mandated tools or
   languages, invariants to keep — and plain obligations (必须, must, make sure);
6. what is plainly not a rule: thanks and acknowledgements, status reports, one-off tasks.

Each class names examples that must land in it through the whole table: `load()` checks
them (and that every pattern compiles) the first time the table is used, so a cue added to
one class that steals another's sentences fails at once instead of silently reclassifying.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

RULE, STEP, OTHER = "rule", "step", "other"  # what a class's sentences are


@dataclass(frozen=True, slots=True)
class SentenceClass:
    """One class: its name, its Chinese label, what its sentences are (`RULE`, a one-shot
    `STEP`, or `OTHER`), the cue patterns that put a sentence in it, the patterns that keep a
    sentence out of it although a cue matched, and example sentences that must land in it."""

    name: str
    label: str
    kind: str
    cues: tuple[str, ...]
    examples: tuple[str, ...]
    unless: tuple[str, ...] = ()


_SYMPTOM = (
    r"失败|报错|出错|崩溃|挂了|卡住|超时|\b(?:fail\w*|error\w*|crash\w*|broke\w*|hang\w*)\b",
)
_REQUESTED = (
    r"要|请|必须|务必|应该|应当|记得|记住|确保|不许|不准|禁止|不得|不能|别|不可|避免"
    r"|\b(?:should|must|please|make\s+sure|ensure|don['’]?t|do\s+not|never|avoid)\b",
)

TABLE: tuple[SentenceClass, ...] = (
    SentenceClass(
        "report",
        "现象报告",
        OTHER,
        _SYMPTOM,
        ("测试总是失败。", "It always crashes on start.", "构建又报错了"),
        unless=(
            *_REQUESTED,
            r"^(?:麻烦)?(?:帮我|修|排查|看看|查)|^(?:[-*]\s*)?(?:keep|保持)",
            r"(?i:^(?:please\s+)?(?:fix|debug|investigate|check|look|find)\b)",
            # what to do when it fails: "如果迁移失败，先停下", "When X fails, retry"
            r"^(?:如果|若|假如|一旦|万一)|(?i:^(?:if|in\s+case)\b|^when(?:ever)?\b[^,]{3,90},)",
        ),
    ),
    SentenceClass(
        "lasting",
        "长期规则",
        RULE,
        (
            r"以后(?!再)|今后|往后|从现在(?:起|开始)|现在开始|从今(?:以后|往后|天起)|从此|始终"
            r"|总是|一律|每次|每一次|每轮|每一轮|每回|永远|任何时候|无论何时|默认(?:用|使用|采用|走|都|一律|以)"
            r"|优先(?:用|使用|采用|选|选择|考虑|走)|一直",
            r"\b(?:always|every\s+time|each\s+time|from\s+now\s+on|going\s+forward|by\s+default"
            r"|prefer|never|at\s+all\s+times|whenever|in\s+(?:all|every)\s+cases?)\b",
            # a habit: done at every turn, change or commit ("Commit every turn.", "update the
            # changelog as changes are made")
            r"\b(?:every|each|after\s+(?:every|each)|before\s+(?:every|each))\s+(?:turn|round"
            r"|commit|change|edit|push|pr|pull\s+request|release|session|step|task|response"
            r"|reply|answer|message|iteration|run)s?\b|\bas\s+(?:changes|edits|features|fixes)"
            r"\s+(?:are|get)\s+(?:made|added|landed|merged)\b|\bas\s+you\s+(?:go|work)\b",
        ),
        (
            "以后每次提交前先跑测试。",
            "从现在起，回复都用中文。",
            "默认用 pnpm 安装依赖",
            "Never force-push to main.",
            "From now on, write tests first.",
            "I prefer small commits.",
            "Commit every turn.",
            "Add entries to CHANGELOG.md as changes are made.",
        ),
    ),
    SentenceClass(
        "one-shot",
        "一次性步骤",
        STEP,
        (
            r"这次|这一次|本次|此次|这回|这一步|这一轮|暂时|暂且|先别|先不|现在|立刻|立即|马上"
            r"|今天|今晚|一下",
            r"\b(?:this\s+time|for\s+now|right\s+now|yet|immediately|today|at\s+the\s+moment)\b",
        ),
        ("这次先别提交", "暂时不要动 README", "现在必须修好这个 bug", "Don't commit yet."),
        unless=(r"保持|维持|保留|不变|\b(?:keep|preserve|maintain|as\s+it\s+is)\b",),
    ),
    SentenceClass(
        "question",
        "提问",
        OTHER,
        (
            r"[?？]\s*$",
            r"^(?:为什么|为啥|怎么|如何|是否|能否|可否|有没有|是不是|要不要)",
            r"^(?:why|how|what|which|where|when|is|are|does|do|can|could|would|should)\b.*\?",
        ),
        ("要不要加缓存？", "为什么不能用 npm？", "Can we drop Python 3.9?"),
    ),
    SentenceClass(
        "prohibition",
        "禁止",
        RULE,
        (
            r"(?<!要)不要|不许|不准|不允许|禁止|不得|严禁|切勿|请勿|不能|不可以|不可|不应该?|不该|避免|杜绝"
            r"|千万别|绝不|决不|绝对不|(?<![特区分级类识告差性个派辨离道鉴判组型])别(?![的人名处称])",
            r"(?<!\bI )\b(?:do\s+not|don['’]?t|must(?:\s+not|n['’]?t)|should(?:\s+not|n['’]?t)"
            r"|shall\s+not|avoid\w*|refrain\s+from|no\s+more)\b",
            r"(?i:^(?:[-*]\s*)?no\s+(?!problem|worries|idea|thanks|way\b|one\b|\d)\w+)",
            r"\bno\s+new\b|\b(?:is|are)\s+(?:not\s+allowed|forbidden|prohibited)\b",
        ),
        (
            "不要修改 tests/ 目录",
            "不能直接改数据库",
            "不可以引入新的依赖。",
            "避免在循环里打日志",
            "别用 print 调试",
            "Don't touch the migrations.",
            "Avoid global state.",
            "No new dependencies.",
            "No emojis in commit messages.",
        ),
    ),
    SentenceClass(
        "restriction",
        "限定范围",
        RULE,
        (
            r"只能|只许|只准|只可以|只允许|仅能|仅限|仅允许|只(?:用|使用|改|动|修改|在|读|写)"
            r"|仅(?:用|使用|改|在)|限于|范围内",
            r"\bonly\s+(?:use|touch|modify|edit|change|write|run|work|import|add|call|commit"
            r"|rely|read|respond|reply|answer|install|depend|target)\b",
            r"(?i:^(?:[-*]\s*)?only\s+(?!\d)\w+)",
            r"\b(?:stick\s+to|limit\s+(?:yourself|changes|edits)\s+to|restrict\w*\s+to"
            r"|exclusively|nothing\s+outside)\b",
        ),
        (
            "只能改 src/ 下的文件",
            "只用标准库",
            "依赖仅限 requirements.txt 里已有的包",
            "Only use the public API.",
            "Stick to the existing file layout.",
        ),
    ),
    SentenceClass(
        "mandate",
        "指定工具或语言",
        RULE,
        (
            r"请(?:用|使用|采用|改用)|统一(?:用|使用|采用)|一律用|都用|全部用|全用|改用"
            r"|用(?:中文|英文|英语|汉语)",
            r"^(?:[-*]\s*)?(?:please\s+)?use\s+\S",
            r"\buse\s+\S+(?:\s+\S+)?\s+(?:for|instead|when|as|rather)\b",
            r"\b(?:write|respond|reply|answer|comment)\w*\s+(?:\w+\s+){0,3}in\s+"
            r"(?:english|chinese|typescript|python|rust|go)\b"
            r"|\binstead\s+of\b|\brather\s+than\b|而不是|代替|替代",
        ),
        (
            "请用 pnpm 安装依赖",
            "代码都用 TypeScript 写",
            "用中文回复",
            "Use ripgrep for searching.",
            "Write commit messages in English.",
        ),
        unless=(
            r"一个|这个|那个|这段|这里|这些|了[。！!]?$|^我(?!们|希望|要你|想让你)",
        ),  # a one-off, or what was done
    ),
    SentenceClass(
        "invariant",
        "保持不变",
        RULE,
        (
            r"保持|维持|保留|不变|向后兼容|向下兼容|兼容性|不破坏|原样",
            r"^(?:[-*]\s*)?keep\s+(?!going|it\s+up|trying|on\b|at\s+it)",
            r"\b(?:preserv\w*|maintain|must\s+(?:remain|stay)|remains?\s+(?:unchanged|stable)"
            r"|stays?\s+(?:unchanged|stable|green|the\s+same)|backwards?[- ]compatib\w*"
            r"|unchanged|intact|as[- ]is)\b",
        ),
        (
            "API 保持向后兼容",
            "公开接口不变。",
            "保留现有注释",
            "Keep functions under 50 lines.",
            "The CLI output must remain stable.",
        ),
        unless=(r"^(?:已经|我)",),
    ),
    SentenceClass(
        "obligation",
        "必须做到",
        RULE,
        (
            r"必须|务必|一定要|记得|记住|确保|需确保|保证|要求|应该|应当|都(?:要|得|需要)"
            r"|(?:提交|推送|合并|发布)(?:之)?前",
            r"\b(?:must|make\s+sure|ensure|remember\s+to|is\s+required|are\s+required"
            r"|have\s+to|before\s+(?:you\s+|we\s+)?(?:every|each|any)?\s*(?:commit|push|merg"
            r"|releas)\w*)\b",
            r"^(?:[-*]\s*)?(?:always\s+)?(?:ask|check\s+with\s+me|confirm)\s+(?:me\s+|first\s+)?"
            r"before\b",
            r"\b(?:all|every|each|any)\b[^.]*\b(?:needs?|requires?|should|has\s+to)\b",
            # what to do in a case, said as a standing instruction: "If tests cannot be run,
            # state that clearly", "如果跑不了测试，就在交接里说明"
            r"^(?:if|when|whenever|unless|in\s+case)\b[^,.;]{3,90},\s*(?:then\s+)?(?:\w+\s+)?"
            r"(?:stop|ask|state|say|tell|note|report|mention|explain|flag|wait|revert|fall\s+back"
            r"|follow|prefer|use|run|check|leave|skip|document)\b",
            r"^(?:如果|若|假如|一旦|遇到|碰到)[^，,。；;]{2,40}[，,]\s*(?:就|则|请|都|一律|务必|要)?"
            r"[^，,。；;]{0,12}?(?:停下|先停|先问|问我|告诉我|说明|注明|标明|回滚|报告|先确认|别继续"
            r"|不要继续)",
            # done before going on, every time: "Explain reasoning before making changes"
            r"\bbefore\s+(?:proceeding|continuing|going\s+(?:on|further)|making\s+(?:any\s+)?"
            r"changes|you\s+(?:start|begin|proceed|continue|edit|change))\b",
        ),
        (
            "所有提交都必须签名。",
            "提交前先跑 ruff",
            "Make sure every public function has a docstring.",
            "Tests must pass before merging.",
            "所有 SQL 都要参数化",
            "If tests cannot be run, state that clearly in the handoff.",
            "如果迁移失败，先停下来问我",
            "Explain your reasoning before making changes.",
        ),
        unless=(r"^(?:这|那)(?:些|个|里)",),
    ),
    SentenceClass(
        "thanks",
        "致谢与应答",
        OTHER,
        (
            r"^(?:谢谢|多谢|感谢|辛苦|好的|好滴|好|行|可以|嗯|收到|明白|了解|不错|很好|太好了|棒)",
            r"(?i:^(?:thanks|thank\s+you|thx|great|nice|cool|ok(?:ay)?|lgtm|perfect|awesome"
            r"|good\s+job|sounds\s+good|got\s+it|sure|keep\s+going|go\s+on)\b)",
        ),
        ("谢谢！", "好的，继续", "Thanks, looks good."),
    ),
    SentenceClass(
        "status",
        "进展说明",
        OTHER,
        (
            r"^我(?:已经|刚|刚才|试了|跑了|看了|改了|提交了|合并了|发现)|已经.*了|好了$|通过了"
            r"|修好了|跑通了|搞定",
            r"(?i:^(?:i(?:'ve|\s+have)?\s+(?:just\s+)?(?:ran|run|tried|pushed|merged|updated"
            r"|fixed|checked|added|deployed|saw|noticed|restarted|installed))\b)",
            r"\b(?:it\s+works|works\s+now|is\s+(?:done|green|fixed)|now\s+passes)\b",
        ),
        ("我已经把分支合并了", "CI 跑通了", "I pushed the fix to staging."),
    ),
    SentenceClass(
        "task",
        "一次性任务",
        STEP,
        (
            r"^(?:请|麻烦)?(?:帮我|帮忙|看看|试试|接着|继续|开始|先|再|把|给|修复|实现|添加|新增"
            r"|创建|写|加|改|修|删|重构|检查|排查|调试|部署|跑|运行|提交|推送)",
            r"(?i:^(?:please\s+)?(?:fix|add|implement|create|write|run|check|look|update"
            r"|refactor|rename|move|delete|remove|try|investigate|debug|review|build|deploy"
            r"|commit|push|continue|go\s+ahead|let['’]?s|can\s+you|could\s+you|now)\b)",
        ),
        ("帮我看看 src/a.py", "先把 X 改成 Y", "Fix the failing test in parser.py."),
        # a standard said by what it is not ("Write descriptive commit messages - not
        # 'Updated files'"): not plainly one-off, so kept as maybe a rule
        unless=(r"\s[-–—]\s*not\b|,\s*not\s+[\"'“‘`]|而不是|而非",),
    ),
)


@dataclass(frozen=True, slots=True)
class _Compiled:
    cls: SentenceClass
    cues: tuple[re.Pattern[str], ...]
    unless: tuple[re.Pattern[str], ...]

    def takes(self, sentence: str) -> bool:
        return any(p.search(sentence) for p in self.cues) and not any(
            p.search(sentence) for p in self.unless
        )


class TableError(ValueError):
    """The table is inconsistent: a pattern that does not compile, a duplicate name, an
    unknown kind, or an example that lands in another class."""


@cache
def load() -> tuple[_Compiled, ...]:
    """`TABLE` compiled and checked, once."""
    return compile_table(TABLE)


def compile_table(classes: tuple[SentenceClass, ...]) -> tuple[_Compiled, ...]:
    """A table compiled and checked (TableError naming what is wrong)."""
    compiled = []
    names: set[str] = set()
    for cls in classes:
        if cls.name in names or cls.kind not in (RULE, STEP, OTHER) or not cls.examples:
            raise TableError(f"class {cls.name!r}: duplicate, unknown kind or no examples")
        names.add(cls.name)
        try:
            cues = tuple(re.compile(p, re.IGNORECASE) for p in cls.cues)
            unless = tuple(re.compile(p, re.IGNORECASE) for p in cls.unless)
        except re.error as error:
            raise TableError(f"class {cls.name!r}: {error}") from None
        compiled.append(_Compiled(cls, cues, unless))
    table = tuple(compiled)
    for entry in table:
        for example in entry.cls.examples:
            got = _first(table, example)
            if got is not entry.cls:
                raise TableError(
                    f"example {example!r} of class {entry.cls.name!r} lands in "
                    f"{got.name if got else 'no class'!r}"
                )
    return table


def _first(table: tuple[_Compiled, ...], sentence: str) -> SentenceClass | None:
    return next((entry.cls for entry in table if entry.takes(sentence)), None)


def classify(sentence: str) -> SentenceClass | None:
    """The class of a sentence, or None when no class takes it (module docstring)."""
    return _first(load(), sentence)


def rule_classes() -> tuple[SentenceClass, ...]:
    """The classes whose sentences are standing rules, in table order."""
    return tuple(cls for cls in TABLE if cls.kind == RULE)
