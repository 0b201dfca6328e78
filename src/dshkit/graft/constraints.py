"""The person's hard constraints: found in what they typed, carried across handoffs verbatim,
packed by capacity and never cut (docs/design/graft.md#hard-constraints-are-never-cut).

Where they come from. Only human messages (`source.kind == "user"`) are read, and of those not
dshkit's own handoff words (the ignition prompt, a card with an identity line): a rule is what
a person declared, never what we injected. Fenced code blocks in a message are pasted data and
are skipped; inline quotes are not special (a sentence that quotes a rule still states one).

What a constraint is (deterministic, no LLM). A message is cut into sentences at line breaks,
after `。！？` and after `. ! ?` followed by a space (a bare list number such as `1.` stays
with its sentence). A sentence is a constraint when it states a standing rule for the rest of
the work:

- a lasting marker — 以后 (not 以后再), 今后, 往后, 从现在起/开始, 从今以后, 始终, 总是, 一律,
  每次, 永远, 任何时候, 默认用…, 优先用…, always, every time, from now on, going forward, by
  default, prefer, never — always makes it one, whatever else it says;
- otherwise a prohibition or obligation — 不要, 不许, 不准, 禁止, 不得, 严禁, 切勿, 请勿, 别
  (not 特别/区别/别人…), 必须, 务必, 一定要, do not, don't, must, must not, should not — makes it
  one unless a one-shot marker confines it to now: 这次, 本次, 此次, 这回, 这一步, 暂时, 暂且,
  先别/先不, 现在, 立刻, 立即, 马上, 今天, this time, for now, right now, yet, immediately,
  today. "这次先别提交" is therefore a step for the board, "不要修改 tests/ 目录" a rule, and
  "以后每次提交前先跑测试" a rule despite its 先.
- An always-marker sentence that only reports a symptom ("测试总是失败", "it always crashes":
  a failure word and no 要/请/必须/should/must/make sure) is a report, not a rule.
- An imperative without such a marker ("立刻删除 foo.txt", "先把 X 改成 Y") is a task.

The heuristic leans to keeping: a false rule costs a line in the block, a lost one is the
failure this module exists to prevent.

Across generations. A target's first message carries the inherited rules in the block
`render_constraints` writes; `inherited_constraints` reads it back with each rule's original
generation and seq, and `extract_constraints` lists them before the session's own.

The block::

    ## 硬约束（逐字继承，不得违反）
    - 〔第0代 seq=12〕不要修改 tests/ 目录
    - 〔第1代 seq=40〕first line of a multi-line rule
      its next line, indented by two spaces (an empty line stays empty)
    （以上共 2 条硬约束，逐字完整）

With no rules the single item is `- 无` and the closing line says 0, so a reader knows there are
none rather than that the list is missing; the closing line's count makes a cut block visible.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import Invalid, Refused
from ..sessions.events import Event, human_messages, message_text
from .identity import generation, is_handoff_message, session_identity
from .wire import ConstraintJson, IntegrityJson

HEADING = "## 硬约束（逐字继承，不得违反）"
NONE_ITEM = "- 无"
GRAFT_ABORTED = "GRAFT_ABORTED"
ABORT_PREFIX = f"{GRAFT_ABORTED}: constraints truncated"
_ITEM = re.compile(r"^- 〔第(\d+)代 seq=(\d+)〕(.*)$")
_FOOTER = re.compile(r"^（以上共 (\d+) 条硬约束，逐字完整）$")
_INDENT = "  "


@dataclass(frozen=True, slots=True)
class Constraint:
    """One rule in the person's words, anchored where it was stated: the seq of the human
    message in the session of that generation (0 for a session a person started)."""

    text: str
    seq: int
    generation: int

    def __post_init__(self) -> None:
        if not self.text or self.text != self.text.strip():
            raise ValueError(f"constraint text must be non-empty and stripped: {self.text!r}")
        if self.seq < 0 or self.generation < 0:
            raise ValueError(f"constraint anchor must be non-negative: {self!r}")

    def as_json(self) -> ConstraintJson:
        return {"text": self.text, "seq": self.seq, "generation": self.generation}


class GraftAborted(Refused, RuntimeError):
    """The handoff cannot carry every constraint whole (the rule GRAFT_ABORTED); `report`, its
    `detail` too, says which and why. Still a RuntimeError for callers that catch it as one."""

    def __init__(self, reason: str, report: dict[str, Any]) -> None:
        super().__init__(GRAFT_ABORTED, f"{ABORT_PREFIX}: {reason}", detail=report)
        self.report = report


class ConstraintBlockError(Invalid, ValueError):
    """A constraints block that is present but damaged (cut, edited, miscounted)."""


# -- sentences and the rule heuristic ---------------------------------------------------------

_FENCED = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", re.MULTILINE | re.DOTALL)
_BREAK = re.compile(r"(?<=[。！？])|(?<=[.!?])[ \t]+|\r\n|\r|\n")
_LIST_NUMBER = re.compile(r"^\s*(?:\d+|[A-Za-z])[.)]$")

_LASTING = re.compile(
    r"以后(?!再)|今后|往后|从现在(?:起|开始)|现在开始|从今(?:以后|往后|天起)|从此|始终|总是|一律"
    r"|每次|每一次|永远|任何时候|无论何时|默认(?:用|使用|采用|走|都|一律|以)"
    r"|优先(?:用|使用|采用|选|选择|考虑|走)"
    r"|\b(?:always|every\s+time|each\s+time|from\s+now\s+on|going\s+forward|by\s+default"
    r"|prefer|never|at\s+all\s+times|whenever)\b",
    re.IGNORECASE,
)
_RULE = re.compile(
    r"(?<!要)不要|不许|不准|禁止|不得|严禁|切勿|请勿|必须|务必|一定要"
    r"|(?<![特区分级类识告差性个派辨离道鉴判组型])别(?![的人名处称])"
    r"|(?<!\bI )\b(?:do\s+not|don['’]?t|must(?:\s+not|n['’]?t)?|should(?:\s+not|n['’]?t)"
    r"|shall\s+not)\b",
    re.IGNORECASE,
)
_ONE_SHOT = re.compile(
    r"这次|这一次|本次|此次|这回|这一步|这一轮|暂时|暂且|先别|先不|现在|立刻|立即|马上|今天|今晚"
    r"|\b(?:this\s+time|for\s+now|right\s+now|yet|immediately|today)\b",
    re.IGNORECASE,
)
_SYMPTOM = re.compile(
    r"失败|报错|出错|崩溃|挂了|卡住|超时|\b(?:fail\w*|error\w*|crash\w*|broke\w*|hang\w*)\b",
    re.IGNORECASE,
)
_MODAL = re.compile(
    r"要|请|必须|务必|应该|应当|记得|记住|确保|\b(?:should|must|please|make\s+sure|ensure)\b",
    re.IGNORECASE,
)


def split_sentences(text: str) -> list[str]:
    """The sentences of a message, each stripped, fenced code blocks left out."""
    text = _FENCED.sub("\n", text)
    sentences: list[str] = []
    pending = ""
    for piece in _BREAK.split(text):
        piece = (pending + " " + piece.strip()) if pending else piece.strip()
        pending = ""
        if _LIST_NUMBER.match(piece):
            pending = piece  # "1. 不要…": the number belongs to the rule after it
        elif piece:
            sentences.append(piece)
    if pending:
        sentences.append(pending)
    return sentences


def is_standing_rule(sentence: str) -> bool:
    """Whether a sentence states a rule for the rest of the work (module docstring)."""
    if _LASTING.search(sentence):
        reported = _SYMPTOM.search(sentence) and not (
            _MODAL.search(sentence) or _RULE.search(sentence)
        )
        return not reported
    return _RULE.search(sentence) is not None and _ONE_SHOT.search(sentence) is None


# -- extraction -------------------------------------------------------------------------------


def extract_constraints(events: Sequence[Event]) -> list[Constraint]:
    """Every hard constraint the session holds: inherited ones first (original anchors), then
    the ones its own person stated, identical texts once (the earliest anchor kept)."""
    found = list(inherited_constraints(events))
    own_generation = generation(events)
    for event in human_messages(events):
        text = message_text(event)
        if is_handoff_message(text):
            continue
        found.extend(
            Constraint(sentence, int(event["seq"]), own_generation)
            for sentence in split_sentences(text)
            if is_standing_rule(sentence)
        )
    return _dedupe(found)


def _dedupe(constraints: Iterable[Constraint]) -> list[Constraint]:
    seen: set[str] = set()
    kept = []
    for constraint in constraints:
        if constraint.text not in seen:
            seen.add(constraint.text)
            kept.append(constraint)
    return kept


def inherited_constraints(events: Sequence[Event]) -> list[Constraint]:
    """The constraints a handoff gave this session, read from the block in its first human
    message (a handoff message: identity line present); [] for a session a person started.
    A damaged block raises ConstraintBlockError: losing an inherited rule silently is the one
    thing this must not do."""
    if session_identity(events) is None:
        return []
    first = human_messages(events)[0]
    parsed = parse_constraints(message_text(first))
    return [] if parsed is None else parsed


# -- the block --------------------------------------------------------------------------------


def _footer(count: int) -> str:
    return f"（以上共 {count} 条硬约束，逐字完整）"


def _item(constraint: Constraint) -> str:
    first, *rest = constraint.text.split("\n")
    lines = [f"- 〔第{constraint.generation}代 seq={constraint.seq}〕{first}"]
    lines += [_INDENT + line if line else "" for line in rest]
    return "\n".join(lines)


def render_constraints(constraints: Sequence[Constraint]) -> str:
    """The block (module docstring), lines joined by `\\n`, no trailing newline."""
    items = [_item(c) for c in constraints] or [NONE_ITEM]
    return "\n".join([HEADING, *items, _footer(len(constraints))])


def parse_constraints(text: str) -> list[Constraint] | None:
    """The constraints of the first block in `text`; None when there is no block. A block that
    is cut, has a line that belongs to no item, or whose count disagrees raises
    ConstraintBlockError."""
    lines = re.split(r"\r\n|\r|\n", text)
    try:
        start = lines.index(HEADING)
    except ValueError:
        return None
    items: list[tuple[int, int, list[str]]] = []
    none_seen = False
    for number, line in enumerate(lines[start + 1 :], start + 2):
        footer = _FOOTER.match(line)
        if footer:
            if int(footer.group(1)) != len(items) or (none_seen and items):
                raise ConstraintBlockError(
                    f"line {number}: the block says {footer.group(1)} constraints, "
                    f"{len(items)} are listed"
                )
            try:
                return [Constraint("\n".join(body), seq, gen) for gen, seq, body in items]
            except ValueError as error:  # an item with an empty or padded text
                raise ConstraintBlockError(str(error)) from error
        item = _ITEM.match(line)
        if item:
            items.append((int(item.group(1)), int(item.group(2)), [item.group(3)]))
        elif line == NONE_ITEM and not items and not none_seen:
            none_seen = True
        elif items and (line.startswith(_INDENT) or line == ""):
            items[-1][2].append(line[len(_INDENT) :])
        else:
            raise ConstraintBlockError(f"line {number} belongs to no constraint: {line[:80]!r}")
    raise ConstraintBlockError("the constraints block has no closing line: it was cut")


# -- packing and the integrity proof ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConstraintPack:
    """The rendered block, the constraints in it, and positive evidence that it is whole."""

    text: str
    constraints: tuple[Constraint, ...]
    integrity: IntegrityJson


def texts_digest(constraints: Iterable[Constraint]) -> str:
    """sha256 over the constraint texts joined by U+001E (a separator no typed rule holds)."""
    return hashlib.sha256("\x1e".join(c.text for c in constraints).encode()).hexdigest()


def pack_constraints(constraints: Sequence[Constraint], budget_chars: int) -> ConstraintPack:
    """Every constraint, whole, in a block of at most `budget_chars` characters; GraftAborted
    (with the ones that would not fit) when they do not all fit. Nothing is ever cut."""
    if isinstance(budget_chars, bool) or not isinstance(budget_chars, int) or budget_chars < 1:
        raise ValueError(f"budget_chars must be a positive integer, got {budget_chars!r}")
    block = render_constraints(constraints)
    if len(block) > budget_chars:
        # which ones would have made it, filling in order (heading and closing line first)
        used = len(HEADING) + 1 + len(_footer(len(constraints)))
        left_out = []
        for constraint in constraints:
            used += len(_item(constraint)) + 1
            if used > budget_chars:
                left_out.append(constraint.as_json())
        report = {
            "count": len(constraints),
            "charsNeeded": len(block),
            "budgetChars": budget_chars,
            "notFitting": left_out,
        }
        raise GraftAborted(
            f"{len(constraints)} constraints need {len(block)} chars, the budget is "
            f"{budget_chars}; {len(left_out)} would not fit "
            f"(seq {', '.join(str(c['seq']) for c in left_out) or '-'})",
            report,
        )
    integrity: IntegrityJson = {
        "count": len(constraints),
        "chars": len(block),
        "budgetChars": budget_chars,
        "sha256": texts_digest(constraints),
    }
    return ConstraintPack(block, tuple(constraints), integrity)


def assert_constraints_preserved(pack: ConstraintPack, rendered_text: str) -> None:
    """Raise GraftAborted unless `rendered_text` (the message as it will be delivered) holds
    the pack's block with every constraint, text and anchor, exactly."""
    expected = [c.as_json() for c in pack.constraints]
    try:
        parsed = parse_constraints(rendered_text)
    except ConstraintBlockError as error:
        raise GraftAborted(str(error), {"missing": expected, "altered": []}) from error
    if parsed is None:
        raise GraftAborted(
            "the message has no constraints block", {"missing": expected, "altered": []}
        )
    found = [c.as_json() for c in parsed]
    missing = [c for c in expected if c not in found]
    unexpected = [c for c in found if c not in expected]
    if missing or unexpected or texts_digest(parsed) != pack.integrity["sha256"]:
        raise GraftAborted(
            f"{len(missing)} constraints missing or altered in the rendered message "
            f"(seq {', '.join(str(c['seq']) for c in missing) or '-'})",
            {"missing": missing, "altered": unexpected},
        )
