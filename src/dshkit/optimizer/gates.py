"""The output gates: recipient stripping, the length and ask gates
(docs/design/optimizer.md#gates-are-recorded-never-enforced).

`strip_recipient` removes what the model said to the person instead of the agent (preambles,
a code fence around the whole answer, closing offers), never the body. The length and ask
gates are records, never knives: they measure an output and say whether it is over, and the
output is delivered whole either way (a cut would make a half instruction).

Lines are told apart only by what can be recognised reliably
(docs/design/optimizer.md#ask-lines-are-counted-by-reliable-marks): the ask heading
line (`ASK_HEADING` at its start), a "无" line, numbered lines containing a question mark (ask
items), the self-check line (`SELF_CHECK_PREFIX`). No parser of "the ask section" as a block:
blank lines and inline writing fooled two of those.
"""

from __future__ import annotations

import re
from typing import Any

from .strategies import (
    ASK_HEADINGS,
    HISTORY_MARK_RE,
    NOTHINGS,
    SELF_CHECK_PREFIXES,
    check_tier,
    count_chars,
    length_limit,
)

# Markdown decoration a model may put before a fixed line: heading marks, bold, quotes, bullets.
_DECOR = " \t#>*_-+【[「"
_NUMBERED = re.compile(r"(?:\d{1,3}\s*[.．、)）](?!\d)|[（(]\d{1,3}[)）]|[①-⑳])")
_QUESTION = re.compile(r"[?？]")
_NOTHINGS = {nothing.casefold() for nothing in NOTHINGS}
_SELF_CHECKS = tuple(prefix.casefold() for prefix in SELF_CHECK_PREFIXES)


def _undecorated(line: str) -> str:
    return line.strip().lstrip(_DECOR)


def is_ask_heading(line: str) -> bool:
    """The ask section's heading line, in any language's words, whatever follows it on the
    line (an inline "无")."""
    return _undecorated(line).casefold().startswith(tuple(h.casefold() for h in ASK_HEADINGS))


def is_ask_item(line: str) -> bool:
    """A numbered line containing a question mark, full-width or ASCII
    (docs/design/optimizer.md#ask-lines-are-counted-by-reliable-marks)."""
    return bool(_NUMBERED.match(_undecorated(line))) and bool(_QUESTION.search(line))


def is_nothing_line(line: str) -> bool:
    """A line that says only "无" or "None" (nothing to ask), written under the heading."""
    return _undecorated(line).rstrip(" \t*_】]」。.!！").casefold() in _NOTHINGS


def is_self_check(line: str) -> bool:
    """The closing line asking the agent to verify its own result."""
    return _undecorated(line).casefold().startswith(_SELF_CHECKS)


def is_contract_line(line: str) -> bool:
    """A line the contract makes every output carry, not part of the body it budgets."""
    return is_ask_heading(line) or is_ask_item(line) or is_nothing_line(line) or is_self_check(line)


def holds_body(output: str) -> bool:
    """Whether the output says anything to the agent beyond the lines every output carries."""
    return any(line.strip() and not is_contract_line(line) for line in output.splitlines())


def body_chars(output: str) -> int:
    """Characters of the body: the output without its contract lines and history marks.

    Those are what dshkit requires of every output (the ask section, the self-check line, the
    audit's marks), so they do not count against the inflation budget.
    """
    body = "\n".join(line for line in output.splitlines() if not is_contract_line(line))
    return count_chars(HISTORY_MARK_RE.sub("", body))


def length_gate(raw: str, output: str, tier: str) -> dict[str, Any]:
    """F6 (docs/design/optimizer.md#length-budgets-per-tier), recorded never enforced:
    {"rawChars", "limit", "chars", "ratio", "over"}.

    Characters are code points that are not whitespace (`count_chars`). `limit` is
    min(floor(ratio × rawChars), ABSOLUTE_CAP); `chars` is `body_chars(output)`; `ratio` is
    chars / rawChars rounded to 2 places (None for empty raw words); `over` is chars > limit.
    """
    check_tier(tier)
    raw_chars = count_chars(raw)
    limit = length_limit(raw, tier)
    chars = body_chars(output)
    return {
        "rawChars": raw_chars,
        "limit": limit,
        "chars": chars,
        "ratio": round(chars / raw_chars, 2) if raw_chars else None,
        "over": chars > limit,
    }


def ask_gate(output: str, tier: str) -> dict[str, Any]:
    """The ask gate (docs/design/optimizer.md#ask-when-the-deciding-fact-cannot-be-known),
    recorded never enforced: {"hasSection", "items", "limit", "over"}.

    `hasSection`: some line is the ask heading. `items`: numbered lines containing a question
    mark, anywhere in the output (the reliable rule). `over`: items > the tier's budget.
    """
    limit = check_tier(tier).ask_items
    lines = output.splitlines()
    items = sum(1 for line in lines if is_ask_item(line))
    return {
        "hasSection": any(is_ask_heading(line) for line in lines),
        "items": items,
        "limit": limit,
        "over": items > limit,
    }


_ACK_ZH = r"(?:好的|好嘞|当然(?:可以)?|没问题|明白了?|收到|可以的?)"
_ACK_EN = r"(?:sure|certainly|of course|okay|ok|absolutely|got it|alright)"
_REWRITE = r"(?:优化|改写|润色|整理|重写|完善|精简)"

# Lines before the body that speak to the person; the whole line goes.
_LEAD_LINES = [
    re.compile(rf"{_ACK_ZH}[，,。.！!～~\s]*", re.I),
    # An acknowledgement, then the speaker on the rewrite ("好的，我来帮你优化这条指令");
    # not one followed by an instruction ("好的，按指令修改 src/app.py…" is the body).
    re.compile(
        rf"{_ACK_ZH}[，,。！!\s]*(?:我|这就|马上|下面|以下|如下|这是|这里|为你|为您|帮你|帮您)"
        rf".*(?:{_REWRITE}|提示词|指令).*",
        re.I,
    ),
    re.compile(rf"(?:以下|下面|如下|这是|这里是).*(?:{_REWRITE}|提示词|prompt).*[:：]\s*", re.I),
    re.compile(rf"{_ACK_EN}\b[,.!]*\s*", re.I),
    re.compile(rf"{_ACK_EN}\b.*(?:here|prompt|instruction|optimi|rewr|refin|improv).*", re.I),
    re.compile(r"here(?:'s| is| are)\b.*(?:prompt|instruction|version|rewrite).*", re.I),
]
# A label before the body, possibly on the body's first line: only the label goes.
_LEAD_LABEL = re.compile(
    rf"(?:{_REWRITE}(?:后|过)的?(?:提示词|指令|版本|prompt)"
    r"|(?:optimi[sz]ed|refined|improved|rewritten|revised) (?:prompt|instruction)s?)"
    r"(?:\s*[*_]*\s*[:：]\s*[*_]*\s*|\s*[*_]*\s*$)",
    re.I,
)
# Lines after the body that speak to the person: offers, wishes, notes on the rewrite.
_TRAIL_LINES = [
    re.compile(r"希望(?:这|以上|上面|本|此)?.{0,12}(?:对你|对您|能帮|帮到|有所帮助|有帮助|有用)"),
    re.compile(r"(?:如|如果|若|要是)(?:需|需要|有|要|还|想).{0,40}(?:告诉我|联系我|随时|吩咐)"),
    re.compile(r"(?:需要|要不要|是否需要)我.{0,40}"),
    re.compile(r"(?:随时|欢迎).{0,10}(?:告诉我|吩咐|提问|找我)"),
    re.compile(r"我(?:还|也)?可以.{0,30}(?:帮|为)(?:你|您)"),
    re.compile(r"(?:i )?hope (?:this|that|it) helps", re.I),
    re.compile(r"let me know if", re.I),
    re.compile(r"feel free to", re.I),
    re.compile(r"would you like me to", re.I),
    re.compile(r"if you(?:'d like| would like| want| need)", re.I),
    re.compile(r"happy to help", re.I),
]
# A label opening notes on the rewrite, addressed to the person: it and what follows go.
_NOTES_LABEL = re.compile(
    rf"(?:(?:{_REWRITE}|改动|修改)(?:说明|要点|思路|了什么)"
    r"|changes(?: made)?|what i changed|explanation)\s*[*_]*\s*[:：]?\s*",
    re.I,
)
_SEPARATOR = re.compile(r"\s*(?:-{3,}|\*{3,}|_{3,})\s*")
_FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})\s*([^`\s]*)\s*")


def _is_lead(line: str) -> bool:
    text = _undecorated(line).rstrip(" *_")
    return any(p.fullmatch(text) for p in _LEAD_LINES)


def _is_trail(line: str) -> bool:
    if is_contract_line(line):
        return False
    text = _undecorated(line).lstrip("（(")
    return any(p.match(text) for p in _TRAIL_LINES)


def _strip_lead(lines: list[str], stripped: list[str]) -> None:
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and _is_lead(lines[0]):
        stripped.append(lines.pop(0).strip())
        while lines and (not lines[0].strip() or _SEPARATOR.fullmatch(lines[0])):
            if lines[0].strip():
                stripped.append(lines[0].strip())
            lines.pop(0)
    if lines and (label := _LEAD_LABEL.match(_undecorated(lines[0]))):
        rest = _undecorated(lines[0])[label.end() :]
        stripped.append(label.group().strip())
        if rest.strip():
            lines[0] = rest
        else:
            lines.pop(0)
            _strip_lead(lines, stripped)


def _strip_trail(lines: list[str], stripped: list[str]) -> None:
    removed: list[str] = []
    for i in range(len(lines) - 1, 0, -1):
        if is_contract_line(lines[i]):
            break  # notes come after the instruction's last line, never inside it
        if _NOTES_LABEL.fullmatch(_undecorated(lines[i]).rstrip(" *_")):
            removed = [line.strip() for line in lines[i:] if line.strip()]
            del lines[i:]
            removed.reverse()
            break
    while lines and (not lines[-1].strip() or _SEPARATOR.fullmatch(lines[-1])):
        lines.pop()
    while lines and _is_trail(lines[-1]):
        removed.append(lines.pop().strip())
        while lines and (not lines[-1].strip() or _SEPARATOR.fullmatch(lines[-1])):
            if lines[-1].strip():
                removed.append(lines[-1].strip())
            lines.pop()
    stripped.extend(reversed(removed))


def _unfence(lines: list[str], stripped: list[str]) -> bool:
    """Unwrap a fence around the whole answer: the first line opens it, the last closes it,
    and (CommonMark) nothing in between closes it earlier."""
    if len(lines) < 2 or not (opener := _FENCE.fullmatch(lines[0])):
        return False
    mark = opener.group(1)
    for i, line in enumerate(lines[1:], start=1):
        closer = _FENCE.fullmatch(line)
        if closer and closer.group(1)[0] == mark[0] and len(closer.group(1)) >= len(mark):
            if closer.group(2):
                continue  # an opener of an inner block, not a closer
            if i != len(lines) - 1:
                return False
            stripped.append(lines[0].strip())
            stripped.append(lines[-1].strip())
            del lines[-1], lines[0]
            return True
    return False


def strip_recipient(output: str) -> tuple[str, list[str]]:
    """The output without what speaks to the person, and the pieces removed, in order.

    Removed: preamble lines ("以下是优化后的提示词：", "好的，我来帮你优化", "Here's the
    refined prompt:"), a label before the body ("优化后的指令："), a code fence around the
    whole answer, closing offers and wishes ("希望对你有帮助", "如需调整随时告诉我", "Let me
    know if…", "优化说明："). Only whole lines at the start or the end go (a label, only
    itself), never the ask section or the self-check line. An answer made only of words to
    the person comes back empty (with what was stripped): there is nothing for the agent, and
    the caller must not pass those words on as an instruction.
    """
    lines = output.splitlines()
    stripped: list[str] = []
    for _ in range(3):  # a fence may wrap a preamble, or a preamble a fence
        before = len(stripped)
        _strip_lead(lines, stripped)
        _strip_trail(lines, stripped)
        if not _unfence(lines, stripped) and len(stripped) == before:
            break
    text = "\n".join(lines).strip("\n")
    if not stripped:
        return output, []
    return (text if text.strip() else ""), stripped
