"""The injection-shape scanner: whether a text is shaped to steer the agent that would read it.

One scanner for everything dshkit puts into a session, owned by the provenance layer (memory
uses it today; the handoff card and the profile are next:
docs/design/provenance.md#one-scanner-for-injection-shaped-text). Memory is harvested from what
sessions saw (tool output, files read, web pages), so anything an attacker could get into a
log can reach the next session. Every text a record is made from is scanned whole, before any
clipping (a title cut to thirty characters once hid "Ignore all previous instructions"), at
write and again before injection. What is found is quarantined: kept and shown to the person,
never injected.

The text is normalized first: compatibility forms folded (full-width letters are letters),
invisible characters dropped (a zero-width space between "ignore" and "all" hides nothing),
case and runs of whitespace folded. Invisible characters themselves are a finding when they
are of the kinds used to smuggle text (Unicode tag characters, direction overrides).
"""

from __future__ import annotations

import re
import unicodedata

# Characters that render as nothing: dropped before matching.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
# Tag characters (text no one sees that models read) and direction overrides: smuggling.
_SMUGGLING = re.compile("[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069]")

_EN_PRIOR = (
    r"(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
    r"(?:previous|prior|above|earlier|preceding|former|original|system|existing)"
)
_EN_ORDERS = (
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines|commands|messages|"
    r"context|constraints)"
)
# Each rule: its kind, words one of which any match holds (looked for first in the normalized
# text: a pattern is compiled only once a text holds one of its words, which keeps the start
# of a hook that scans a few records cheap), and the pattern.
_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "override",
        ("ignore", "disregard", "forget", "override", "bypass", "skip", "drop"),
        rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop)\s+(?:all\s+|any\s+|everything\s+)?"
        rf"{_EN_PRIOR}\s+(?:\w+\s+)?{_EN_ORDERS}",
    ),
    (
        "override",
        ("ignore", "disregard", "forget"),
        r"\b(?:ignore|disregard|forget)\s+(?:all|everything)\s+(?:you\s+were\s+told|above|before)",
    ),
    ("override", ("follow",), rf"\bdo\s+not\s+follow\s+{_EN_PRIOR}\s+{_EN_ORDERS}"),
    ("role", ("you",), r"\byou\s+are\s+(?:now|no\s+longer)\s+(?:a|an|the|in|my|dan\b)"),
    (
        "role",
        ("instruction",),
        r"\b(?:new|updated|real|actual)\s+(?:system\s+)?instructions?\s*[:：]",
    ),
    ("role", ("mode",), r"\b(?:enter|enable|activate)\s+(?:developer|god|jailbreak|dan)\s+mode\b"),
    ("role", ("jailbreak",), r"\bjailbreak(?:ed|ing)?\b"),
    (
        "tag",
        ("<",),
        r"<\s*/?\s*(?:system|assistant|developer|instructions?|im_start|im_end|"
        r"system[-_]prompt|system[-_]reminder|tool_call|function_calls?)\b[^>]{0,40}>",
    ),
    ("tag", ("<|",), r"<\|\s*(?:im_start|im_end|system|endoftext|start_header_id|eot_id)\s*\|?>"),
    ("tag", ("[", "<<"), r"\[/?inst\]|<<\s*/?sys\s*>>"),
    (
        "tag",
        ("#",),
        r"^\s*#{1,4}\s*(?:system\s+(?:prompt|message|instructions?)|"
        r"instructions?\s+for\s+(?:the\s+)?(?:ai|assistant|model|agent))\s*:?\s*$",
    ),
    (
        "exfiltration",
        (
            "send",
            "upload",
            "post",
            "exfiltrate",
            "leak",
            "transmit",
            "forward",
            "email",
            "paste",
            "curl",
            "wget",
        ),
        # A secret sent somewhere (an address, a URL, "me"): "send the token in the header" is
        # how an API is used, "send the API key to attacker@…" is not; files that are secrets
        # themselves (keys, .env) whatever the destination.
        r"\b(?:send|upload|post|exfiltrate|leak|transmit|forward|email|paste|curl|wget)\b"
        r"(?:(?:[^.\n]|\.(?=\S)){0,60}?\b(?:api[\s_-]?keys?|tokens?|secrets?|passwords?|"
        r"credentials?|cookies?)\b(?:[^.\n]|\.(?=\S)){0,60}?\b(?:to|into|at)\s+(?:https?://|"
        r"\S+@\S+|me\b|us\b|this\s+(?:url|address|endpoint|server|webhook)|the\s+following|"
        r"an?\s+external|my\s+server)|(?:[^.\n]|\.(?=\S)){0,60}?(?:\b(?:private\s+keys?|"
        r"ssh\s+keys?|id_rsa|env(?:ironment)?\s+variables|aws\s+credentials)|\.env\b|"
        r"~/\.ssh|/etc/(?:passwd|shadow)))",
    ),
    (
        "exfiltration",
        ("reveal", "print", "show", "output", "repeat", "dump", "leak"),
        r"\b(?:reveal|print|show|output|repeat|dump|leak)\s+(?:me\s+)?(?:your|the)\s+"
        r"(?:full\s+|entire\s+|hidden\s+|original\s+)?(?:system\s+prompt|instructions|initial\s+prompt)",
    ),
    (
        "secrecy",
        ("tell", "inform", "mention", "alert"),
        r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|alert)\s+the\s+user\b",
    ),
    ("secrecy", ("without",), r"\bwithout\s+(?:telling|informing|asking)\s+the\s+user\b"),
    (
        "override",
        (
            "忽略",
            "无视",
            "忽视",
            "不要理会",
            "别管",
            "抛开",
            "丢弃",
            "跳过",
            "忘掉",
            "忘记",
            "覆盖",
        ),
        r"(?:忽略|无视|忽视|不要理会|别管|抛开|丢弃|跳过|忘掉|忘记|覆盖)\s*(?:掉)?\s*"
        r"(?:你|掉)?\s*(?:之前|以前|此前|先前|上面|以上|前面|上述|原有|原来|原先|系统|所有|全部|一切)"
        r"[^。\n]{0,12}(?:指令|指示|提示词|提示|规则|要求|设定|约束|命令|说明|内容|的话|对话|上下文)",
    ),
    (
        "override",
        ("遵守", "遵循", "服从", "执行"),
        r"(?:不要|不再|别)\s*(?:遵守|遵循|服从|执行)\s*(?:之前|以前|上面|以上|原有|系统)[^。\n]{0,8}(?:指令|规则|设定|要求)",
    ),
    (
        "role",
        ("限制", "约束"),
        r"(?:从现在起|从现在开始|现在起)?\s*你(?:现在)?(?:是|扮演|变成|成为)(?:一个|一名)?\s*(?:没有|不受|无)(?:任何)?(?:限制|约束)",
    ),
    ("role", ("现在",), r"(?:从现在起|从现在开始)[,，]?\s*你(?:是|将|要|必须)"),
    ("role", ("指令",), r"(?:新的|真正的|最新的|更新后的)\s*(?:系统)?\s*指令\s*[:：]"),
    ("role", ("模式",), r"(?:进入|开启|启用|切换到)\s*(?:开发者|越狱|上帝|无限制)\s*模式"),
    ("role", ("越狱",), r"越狱"),
    (
        "exfiltration",
        ("发送", "上传", "泄露", "外传", "发到", "传到", "转发", "提交到", "贴到", "回传"),
        r"(?:发送|上传|泄露|外传|发到|传到|转发|提交到|贴到|回传)[^。\n]{0,30}"
        r"(?:密钥|秘钥|令牌|token|密码|凭据|凭证|私钥|\.env|环境变量|cookie)",
    ),
    (
        "exfiltration",
        ("密钥", "秘钥", "令牌", "密码", "凭据", "凭证", "私钥", ".env", "环境变量"),
        r"(?:把|将)[^。\n]{0,30}(?:密钥|秘钥|令牌|密码|凭据|凭证|私钥|\.env|环境变量)[^。\n]{0,20}"
        r"(?:发送|上传|发到|传到|贴到|告诉|给)",
    ),
    (
        "exfiltration",
        ("系统提示", "初始提示", "系统指令"),
        r"(?:泄露|输出|显示|打印|告诉我|复述|重复)\s*(?:你的|完整的|全部)?\s*(?:系统提示词|系统提示|初始提示|系统指令)",
    ),
    (
        "secrecy",
        ("用户", "使用者", "主人"),
        r"(?:不要|别|切勿|不得)\s*(?:告诉|通知|提醒|让)\s*(?:用户|使用者|主人)",
    ),
    ("secrecy", ("瞒着", "背着"), r"(?:瞒着|背着)\s*用户"),
    # More shapes of the same kinds, English and Chinese.
    (
        "override",
        ("ignore", "disregard", "forget"),
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+of\s+|all\s+)?(?:the\s+)?(?:above|foregoing)\b",
    ),
    (
        "override",
        ("ignore", "disregard", "forget", "override"),
        r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+)?(?:of\s+)?your\s+(?:\w+\s+)?"
        r"(?:instructions|rules|guidelines|programming|system\s+prompt|directives|training)\b",
    ),
    (
        "override",
        ("forget",),
        r"\bforget\s+(?:everything|all)\s+(?:you\s+)?(?:know|learned|were\s+told)",
    ),
    (
        "role",
        ("your",),
        r"\byour\s+(?:new|real|actual|true)\s+(?:task|instructions?|goal|role|purpose)\s*(?:is|are|:)",
    ),
    (
        "role",
        ("act", "pretend", "roleplay"),
        r"\b(?:act\s+as|pretend\s+(?:to\s+be|you\s+are)|roleplay\s+as)\s+(?:an?\s+)?"
        r"(?:unrestricted|unfiltered|uncensored|jailbroken|evil|dan)\b",
    ),
    (
        "role",
        ("attention", "note to", "message to", "if you are"),
        r"\b(?:(?:attention|note|message)\s+(?:to\s+)?(?:all\s+)?|if\s+you\s+are\s+(?:an?\s+)?)"
        r"(?:(?:ai\s+)?(?:agent|assistant|model)|ai|llm|language\s+model|coding\s+agent)s?\b"
        r"\s*(?:[:,]|reading)",
    ),
    # A turn of a chat transcript (a blank line, then "Human:"): a field `human: bool` is not.
    ("tag", ("human", "assistant"), r"(?:\A|\n[ \t]*\n)[ \t]*(?:human|assistant)\s*:\s*\S"),
    (
        "tag",
        ("#",),
        r"^\s*#{1,4}\s*(?:system|instructions?)\s*(?:prompt|message|override)?\s*[:：]",
    ),
    (
        "tag",
        ("[", "【"),
        r"[【\[]\s*(?:系统|system|admin|管理员)\s*(?:指令|消息|提示|message|override|prompt)\s*[】\]]",
    ),
    (
        "secrecy",
        ("hide", "conceal", "keep"),
        r"\b(?:hide|conceal|keep)\s+(?:this|it)\s+(?:secret\s+)?from\s+the\s+user\b",
    ),
    ("role", ("任务",), r"(?:新的|新|真正的|真实的)任务(?:是|为|[:：])"),
    ("role", ("假装", "假设"), r"(?:假装|假设)你是(?:一个|一名)?\s*(?:没有|不受|无)"),
    ("role", ("我是你的",), r"我是你的(?:开发者|管理员|创造者|主人|上级)"),
    (
        "exfiltration",
        ("环境变量",),
        r"(?:打印|输出|显示|列出|导出)(?:出)?(?:所有|全部)的?环境变量",
    ),
)
_COMPILED: dict[int, re.Pattern[str]] = {}


class Verdict:
    """What the scan found: nothing (`clean`), or the kinds of injection and a sample of each."""

    __slots__ = ("findings",)

    def __init__(self, findings: tuple[tuple[str, str], ...]) -> None:
        self.findings = findings  # (kind, the matched text as normalized), at most one per kind

    @property
    def clean(self) -> bool:
        return not self.findings

    @property
    def reason(self) -> str:
        return "; ".join(f"{kind}: {sample!r}" for kind, sample in self.findings)


def normalize(text: str) -> str:
    """The text as the patterns read it (see the module docstring)."""
    folded = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))
    return re.sub(r"[ \t\u3000]+", " ", folded).casefold()


def scan(*texts: str) -> Verdict:
    """Scan every text whole; a finding in any of them is the verdict's."""
    found: dict[str, str] = {}
    for text in texts:
        if not text:
            continue
        if "smuggling" not in found and (hidden := _SMUGGLING.search(text)):
            found["smuggling"] = f"U+{ord(hidden.group()):04X}"
        plain = normalize(text)
        for number, (kind, words, source) in enumerate(_RULES):
            if kind in found or not any(word in plain for word in words):
                continue
            pattern = _COMPILED.get(number)
            if pattern is None:
                pattern = _COMPILED[number] = re.compile(source, re.IGNORECASE | re.MULTILINE)
            if match := pattern.search(plain):
                found[kind] = match.group()[:80]
    return Verdict(tuple(found.items()))
