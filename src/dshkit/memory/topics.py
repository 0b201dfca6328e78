"""What a fact is about: its subject, derived from the setting, file, command, service, port or
version it names, never from how it was asked to be remembered ("remember for this project:"),
and the ordinary ways of saying that a value changed, in English and Chinese.

Two facts of one subject supersede each other; facts of different subjects close nothing, so a
subject is derived only when the fact has a recognisable shape ("X is Y", "X 改成 Y 了", "we
moved X to Y" …) or names a tool of a known kind; otherwise it is empty (closes nothing).

`CHANGES` and `STATES` are the phrasings, as data: a name and a pattern whose groups are
`subject` (what changed), `old` (the value it had) and `new` (the value it has). A change said
outside a request to remember is a fact only when it reads like one about the project
(`is_project_change`): a short statement, whose subject names a topic (a port, a command, a
directory …) or whose value looks like one (a number, a path, a known tool). A value stated
after words of correction ("Actually, …", "Going forward, …", "更正一下：…", "其实…") is a
change too (`CORRECTION`), as is an imperative switch ("switch the test runner to pytest").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SUBJECT_CHARS = 60
CHANGE_CHARS = 240  # a statement of a change longer than this is not taken from plain talk
READ_CHARS = 400  # of a fact, what the phrasings read (a fact's text is clipped there too)

# "for this project:", "在这个项目里" … : how it is scoped, not what it is about.
_SCOPE = re.compile(
    r"^(?:(?:for|in|on|about|across)\s+(?:this|the|our)\s+"
    r"(?:project|repo(?:sitory)?|workspace|codebase|app|service)\s*[:,，：]?\s*)+|"
    r"^(?:对于|在|关于)?(?:这个|本|该|我们的?)(?:项目|仓库|工程|工作区)(?:里|中|的话|内|的)?[:：,，\s]*",
    re.IGNORECASE,
)
_CH = r"[\s,，;；:：]*"

# (name, pattern): a value changed. The first that matches is taken.
CHANGES: tuple[tuple[str, str], ...] = (
    (
        "we-switched-from",
        r"^(?:we|i)(?:'ve|\s+have)?\s+(?:moved|switched|migrated)\s+from\s+"
        r"(?P<old>.+?)\s+to\s+(?P<new>.+)$",
    ),
    (
        "changed-from-to",
        r"^(?P<subject>.+?)\s+(?:has\s+|have\s+|was\s+|were\s+|got\s+)?(?:been\s+)?"
        r"(?:changed|moved|switched|migrated|bumped|upgraded|downgraded|renamed|updated)"
        r"\s+from\s+(?P<old>.+?)\s+to\s+(?P<new>.+)$",
    ),
    (
        "changed-to",
        r"^(?P<subject>.+?)\s+(?:has\s+|have\s+|was\s+|were\s+|got\s+)?(?:been\s+)?"
        r"(?:changed|moved|switched|migrated|bumped|upgraded|downgraded|renamed|updated)"
        r"\s+to\s+(?P<new>.+)$",
    ),
    (
        "replaced-with",
        r"^(?:we|i)?(?:'ve|\s+have)?\s*replaced\s+(?P<old>.+?)\s+(?:with|by)\s+(?P<new>.+)$",
    ),
    (
        "do-with-instead",
        r"^(?:we\s+)?(?:now\s+)?(?P<subject>[a-z][\w-]*)\s+(?:with|using|via|through)\s+"
        r"(?P<new>.+?)\s+instead\s+of\s+(?P<old>.+)$",
    ),
    (
        "we-moved",
        r"^(?:we|i)(?:'ve|\s+have)?\s+(?:moved|switched|migrated|changed|bumped|"
        r"upgraded)\s+(?!from\b)(?P<subject>.+?)\s+(?:from\s+(?P<old>.+?)\s+)?to\s+(?P<new>.+)$",
    ),
    (
        "no-longer",
        r"^(?:we\s+)?(?:no\s+longer\s+use|don't\s+use|do\s+not\s+use|stopped\s+using|"
        r"stop\s+using|quit\s+using)"
        r"\s+(?P<old>.+?)(?:\s+any\s?more)?\s*[,;，；.]\s*(?:and\s+)?(?:we\s+)?(?:now\s+)?"
        r"(?:use|switch\s+to|switched\s+to|it'?s)\s+(?P<new>.+)$",
    ),
    (
        "switch-to",
        r"^(?:please\s+|let'?s\s+|we\s+(?:will\s+|should\s+)?)?switch\s+(?:over\s+)?"
        r"(?:(?P<subject>(?!to\b|from\b).+?)\s+)?(?:from\s+(?P<old>.+?)\s+)?to\s+(?P<new>.+)$",
    ),
    ("use-instead", r"^(?:we\s+)?(?:now\s+)?use\s+(?P<new>.+?)\s+instead\s+of\s+(?P<old>.+)$"),
    (
        "is-not",
        r"^(?P<subject>.+?)\s+(?:is|are)\s+(?:now\s+)?(?P<new>.+?)(?:\s+now)?\s*[,;，；]\s*"
        r"(?:but\s+)?(?:not|no\s+longer)\s+(?P<old>.+)$",
    ),
    ("is-now", r"^(?P<subject>.+?)\s+(?:is|are)\s+now\s+(?P<new>.+)$"),
    ("is-now-after", r"^(?P<subject>.+?)\s+(?:is|are)\s+(?P<new>.+?)\s+now$"),
    ("now-is", r"^now\s+(?P<subject>.+?)\s+(?:is|are)\s+(?P<new>.+)$"),
    (
        "zh-from-to",
        r"^(?P<subject>.+?)(?:已经|已)?(?:从|由)(?P<old>.+?)(?:换到|换成|改成|改为|改到|"
        r"迁到|迁移到|切到|切换到|升级到|升到|降到|降级到|变成|变为|改名为|改名成|重命名为|"
        r"更名为)(?P<new>.+?)了?$",
    ),
    (
        "zh-no-longer",
        r"^(?:我们|以后)?(?P<subject>[^，,；;。\s]{0,20}?)(?:不再|不要再|别再|不)(?:用|使用)"
        r"(?P<old>.+?)了?"
        r"[,，;；。\s]+(?:以后|现在)?(?:都)?(?:换成|改用|改成|换用|用|使用)(?P<new>.+?)了?$",
    ),
    (
        "zh-changed",
        r"^(?P<subject>.+?)(?:已经|已|现在)?(?:改成|改为|换成|改用|换用|变成|更新为|"
        r"更新成|调整为|调成|升到|升级到|升级为|降到|降级到|改名为|改名成|重命名为|更名为)了?"
        r"(?P<new>.+?)了?$",
    ),
    (
        "zh-now-is",
        r"^(?:现在)?(?P<subject>[^，,；;。]+?)(?:现在|目前|如今)(?:是|为|用|使用|改用|走)"
        r"(?P<new>.+?)了?$",
    ),
    (
        "zh-changed-now",
        r"^(?P<subject>.+?)(?:换了|改了|变了)[,，;；\s]*(?:现在|以后|今后)?(?:都)?"
        r"(?:用|使用|是|改用|换成|走)(?P<new>.+?)了?$",
    ),
    (
        "zh-from-now",
        r"^(?:以后|今后|从现在起|往后)[,，\s]*(?P<subject>.+?)(?:都|就|统一|一律)?"
        r"(?:用|使用|走|是|改用)(?P<new>.+?)了?$",
    ),
)

# (name, pattern): a value stated (what a request to remember usually says).
STATES: tuple[tuple[str, str], ...] = (
    ("use-for", r"^(?:we\s+)?(?:always\s+)?use\s+(?P<new>.+?)\s+(?:for|to)\s+(?P<subject>.+)$"),
    ("use", r"^(?:we\s+)?(?:always\s+)?use\s+(?P<new>.+)$"),
    (
        "is",
        r"^(?P<subject>.+?)\s+(?:is|are|lives\s+in|lives\s+at|runs\s+on|should\s+be|"
        r"must\s+be)\s+(?P<new>.+)$",
    ),
    ("key", r"^(?P<subject>[^:：=\s][^:：=]{0,58}?)\s*(?:[:：]|=)\s*(?P<new>.+)$"),
    ("zh-use", r"^(?:我们)?(?:都|统一|一律)?(?:用|使用)(?P<new>.+)$"),
    ("zh-is", r"^(?P<subject>.+?)(?:是|为|放在|位于|用|使用|叫|在)(?P<new>.+)$"),
)

# Tools of one kind: a fact naming one is about that kind ("we use pnpm" and "no longer use
# yarn, use pnpm" are both about the JavaScript package manager).
KINDS_OF_TOOL: dict[str, tuple[str, ...]] = {
    "js package manager": ("npm", "yarn", "pnpm", "bun"),
    "python packaging": ("pip", "poetry", "uv", "pipenv", "pdm", "hatch", "conda"),
    "test runner": ("pytest", "unittest", "nose2", "jest", "vitest", "mocha"),
    "linter": ("ruff", "flake8", "pylint", "eslint", "biome"),
    "formatter": ("black", "prettier", "ruff format"),
    "type checker": ("mypy", "pyright"),
    "database": ("postgres", "postgresql", "mysql", "mariadb", "sqlite", "mongodb"),
    "container runtime": ("docker", "podman"),
    "build tool": ("make", "cmake", "bazel", "gradle", "maven", "ninja", "webpack", "vite"),
}
_TOOL_KIND = {tool: kind for kind, tools in KINDS_OF_TOOL.items() for tool in tools}

# Subjects that name a command the tools prove too: one subject for both.
ALIASES: tuple[tuple[str, str], ...] = (
    (r"^(?:the\s+)?(?:unit\s+)?tests?(?:ing)?\s+(?:command|cmd)$|^测试命令$", "command:test"),
    (r"^(?:the\s+)?lint(?:ing)?\s+(?:command|cmd)$|^(?:检查|lint)\s*命令$", "command:lint"),
    (r"^(?:the\s+)?build\s+(?:command|cmd)$|^构建命令$", "command:build"),
)

# Words a subject is made of that say nothing about what it is.
_LEADING = re.compile(
    r"^(?:(?:the|our|my|a|an|this|that|its|project'?s|repo'?s|app'?s)\s+)+|"
    r"^(?:(?:我们)?(?:已经|已)?把\s*|本项目的?|项目的?|我们的?|这个项目的?|本工作区的?|这里的?|"
    r"这边的?)",
    re.IGNORECASE,
)
_EMPTY_SUBJECTS = frozenset(
    [
        "it",
        "this",
        "that",
        "we",
        "i",
        "you",
        "they",
        "he",
        "she",
        "everything",
        "something",
        "nothing",
        "there",
        "here",
        "它",
        "这",
        "这个",
        "那",
        "那个",
        "我",
        "我们",
        "你",
        "他",
        "大家",
        "一切",
        "东西",
        "这样",
        "那样",
        "现在",
    ]
)
_TOPIC_NOUN = re.compile(
    r"\b(?:deploy(?:ment)?|build|port|host(?:name)?|url|uri|endpoint|domain|address|command|cmd|script|version|"
    r"path|dir(?:ectory)?|folder|file|branch|database|db|server|registry|key|config(?:uration)?|"
    r"setting|option|flag|env(?:ironment)?|variable|manager|runner|image|region|bucket|queue|"
    r"service|api|timeout|limit|prefix|remote|package|dependency|framework|library|node|python|"
    r"go|rust|java|ci|cluster|namespace|secret|token|account|user(?:name)?|email)s?\b|"
    r"端口|地址|命令|版本|目录|文件|分支|数据库|服务|域名|配置|路径|镜像|仓库|主机|接口|环境|变量|"
    r"工具|框架|超时|前缀|包管理|依赖|部署|发布|账号|集群|脚本|入口",
    re.IGNORECASE,
)
_VALUE_SHAPE = re.compile(r"[\d./:_`@\\-]")
_STATE_WORDS = frozenset(
    [
        "done",
        "fixed",
        "working",
        "passing",
        "broken",
        "green",
        "red",
        "ready",
        "finished",
        "fine",
        "ok",
        "okay",
        "good",
        "better",
        "complete",
        "merged",
        "deployed",
        "live",
        "down",
        "up",
        "好了",
        "完成",
        "正常",
        "好的",
        "搞定",
        "修好",
    ]
)
_QUESTION = re.compile(r"[?？]\s*$|[吗呢么]\s*[?？。.]?\s*$")
_KEY = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\s*=")


@dataclass(frozen=True, slots=True)
class Topic:
    """What a fact is about (`subject`, "" when it cannot be told), the value it gives, the
    value it replaced when it says so, and which phrasing said it."""

    subject: str
    new: str = ""
    old: str = ""
    phrasing: str = ""

    @property
    def is_change(self) -> bool:
        return self.phrasing in _CHANGE_NAMES

    def detail(self) -> dict[str, str]:
        found = {"topic": self.subject, "value": self.new}
        if self.old:
            found["was"] = self.old
        if self.phrasing:
            found["phrasing"] = self.phrasing
        return {k: v for k, v in found.items() if v}


# Words that make what follows a correction or a new rule ("Actually, the port is 8081",
# "更正一下：端口是 9091", "use pnpm from now on"): a value stated after them is a change
# even without a word of change (`CORRECTION`).
_CORRECTION = re.compile(
    r"^(?:actually|correction|update|updated|fyi|heads[\s-]*up|note|going\s+forward|"
    r"from\s+now\s+on|henceforth|as\s+of\s+(?:now|today))\s*[,:：!—-]?\s+|"
    r"^(?:更正一下|更正|纠正一下|纠正|其实|实际上|补充一下|注意)\s*[,，:：]?\s*",
    re.IGNORECASE,
)
_CORRECTION_AFTER = re.compile(
    r"[,，\s]+(?:from\s+now\s+on|going\s+forward|henceforth)\s*[.!]?$", re.IGNORECASE
)
CORRECTION = "correction"
# "use port 8080": a topic word and its value, not a tool called "port 8080".
_NOUN_VALUE = re.compile(r"^(?P<noun>[^\W\d][\w ]{0,30}?)\s+(?P<value>\S*[\d./:_@-]\S*)$")

_COMPILED_CHANGES = tuple((n, re.compile(p, re.IGNORECASE | re.DOTALL)) for n, p in CHANGES)
_COMPILED_STATES = tuple((n, re.compile(p, re.IGNORECASE | re.DOTALL)) for n, p in STATES)
_CHANGE_NAMES = frozenset([*(name for name, _ in CHANGES), CORRECTION])
_ALIASES = tuple((re.compile(p, re.IGNORECASE), subject) for p, subject in ALIASES)


def unscoped(text: str) -> str:
    """`text` without how it was scoped ("for this project: …", "在这个项目里")."""
    return _SCOPE.sub("", text.strip(), count=1).strip()


def _value(text: str | None) -> str:
    value = (text or "").strip().strip("`'\"“”「」").strip()
    return re.sub(r"[\s。.!！;；,，]+$", "", value).strip("`'\"“”「」")


def _tool_kind(value: str) -> str:
    words = value.casefold().replace("`", "").split()
    for n in (2, 1):
        if len(words) >= n and (kind := _TOOL_KIND.get(" ".join(words[:n]))):
            return kind
    return ""


def normal_subject(text: str) -> str:
    """A subject as facts are compared by it: scoped words, articles and possessives dropped,
    case and blank space folded ("" when what is left names nothing)."""
    subject = _value(text)
    subject = _LEADING.sub("", subject).strip()
    subject = _LEADING.sub("", subject).strip()  # "the project's" after "for"
    subject = " ".join(subject.casefold().replace("`", "").split())
    subject = re.sub(r"[的之]$", "", subject).strip()
    if not subject or subject in _EMPTY_SUBJECTS or len(subject) > SUBJECT_CHARS:
        return ""
    for pattern, alias in _ALIASES:
        if pattern.match(subject):
            return alias
    if kind := _tool_kind(subject):
        return "topic:" + kind
    return "topic:" + subject


def _from(name: str, match: re.Match[str]) -> Topic:
    groups = match.groupdict()
    new, old = _value(groups.get("new")), _value(groups.get("old"))
    subject = normal_subject(groups.get("subject") or "")
    kind = _tool_kind(old) or _tool_kind(new)
    if kind and (not subject or name in ("use", "zh-use", "use-for")):
        subject = "topic:" + kind
    elif not subject:
        pair = _NOUN_VALUE.match(new) if name in ("use", "zh-use") else None
        if pair and _TOPIC_NOUN.fullmatch(pair["noun"].strip()):
            subject, new = normal_subject(pair["noun"]), _value(pair["value"])
        elif name in _REPLACING and old:
            subject = "use:" + " ".join(old.casefold().split())
        elif name in ("use", "zh-use") and new:
            subject = "use:" + " ".join(new.casefold().split())
    return Topic(subject, new, old, name)


# Phrasings naming the value replaced but not what it was for: the old value is the subject.
_REPLACING = frozenset(
    ["no-longer", "use-instead", "we-switched-from", "zh-no-longer", "replaced-with", "switch-to"]
)


def change(text: str) -> Topic | None:
    """The change `text` states ("X is now Y", "X 改成 Y 了" …), or None."""
    said = unscoped(" ".join(text[: READ_CHARS * 4].split())[:READ_CHARS])
    corrected = _CORRECTION_AFTER.sub("", _CORRECTION.sub("", said, count=1), count=1).strip()
    if corrected and corrected != said:  # a correction: a change said again, or a value
        if found := change(corrected):
            return found
        for name, pattern in _COMPILED_STATES:
            if match := pattern.match(corrected):
                stated = _from(name, match)
                if stated.subject:
                    return Topic(stated.subject, stated.new, stated.old, CORRECTION)
        return None
    for name, pattern in _COMPILED_CHANGES:
        if said_so := pattern.match(said):
            return _from(name, said_so)
    return None


def topic(text: str) -> Topic:
    """What the fact `text` is about (a change or a stated value; see the module)."""
    said = unscoped(" ".join(text[: READ_CHARS * 4].split())[:READ_CHARS])
    if found := change(said):
        return found
    said = _CORRECTION_AFTER.sub("", _CORRECTION.sub("", said, count=1), count=1).strip()
    for name, pattern in _COMPILED_STATES:
        if match := pattern.match(said):
            found = _from(name, match)
            if found.subject:
                return found
    if key := _KEY.search(said):
        return Topic("key:" + key[1])
    return Topic("")


def is_project_change(text: str) -> Topic | None:
    """The change `text` states when it reads like one about the project (see the module):
    what plain talk, not asked to be remembered, may still make a fact of."""
    if len(text) > CHANGE_CHARS * 4:
        return None
    said = " ".join(text.split())
    if not said or len(said) > CHANGE_CHARS or "\n" in text.strip() or _QUESTION.search(said):
        return None
    found = change(said)
    if found is None or not found.subject or not found.new:
        return None
    if found.new.casefold() in _STATE_WORDS:
        return None
    about = found.subject.split(":", 1)[1]
    if (
        (found.subject.startswith(("topic:", "command:")) and _TOPIC_NOUN.search(about))
        or _tool_kind(found.new)
        or _tool_kind(found.old)
        or found.subject.startswith(("command:", "use:"))
        or _VALUE_SHAPE.search(found.new)
    ):
        return found
    return None
