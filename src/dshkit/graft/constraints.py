"""The person's hard constraints: found in what they typed, carried across handoffs verbatim,
packed by capacity and never cut (docs/design/graft.md#hard-constraints-are-never-cut).

Where they come from. Only human messages (`source.kind == "user"`) are read, and of those not
dshkit's own handoff words (the ignition prompt, a card with an identity line): a rule is what
a person declared, never what we injected. Fenced code blocks in a message are pasted data and
are skipped; inline quotes are not special (a sentence that quotes a rule still states one).

What a constraint is (deterministic, no LLM). A message is cut into sentences at line breaks,
after `。！？` and after `. ! ?` followed by a space (a bare list number such as `1.` stays
with its sentence). Each sentence is classified by the table in `rule_classes.py` (data: each
class with its cue patterns and the examples it must take, checked when the table loads): a
lasting marker (以后, 始终, always, never, …) makes a rule; a one-shot marker (这次, 现在,
for now, …) makes a step for the board; otherwise the four classes of standing rule —
prohibitions (不要, 不能, 不可以, 避免, Don't, Avoid, No new …), restrictions to a set (只能,
只用, Only use …), mandated tools or languages (请用, 都用, 用中文回复, Use X for …) and
invariants to keep (保持, 向后兼容, Keep …, preserve) — and plain obligations (必须, must,
make sure). "这次先别提交" is therefore a step, "不要修改 tests/ 目录" a rule, and
"以后每次提交前先跑测试" a rule despite its 先. Questions, thanks, status reports and one-off
tasks are recognised as what they are.

A sentence no class takes is not dropped: every one the person typed after their first
message, and every one of the first that the card's request does not show (it clips a long
one), goes, verbatim, into a second block, "maybe a rule" (`render_maybe_rules`), bounded
to `MAYBE_CHARS`, newest first and whole, what did not fit named by seq for reading back.
The heuristic leans to keeping: a false rule costs a line, a lost one is the failure this
module exists to prevent.

Secrets. A rule or maybe-rule is stored with each secret replaced by its marker
(`provenance.secrets.redact`): the person's words stay, the value does not travel.

Across generations. A target's first message carries the inherited rules in the block
`render_constraints` writes; `inherited_constraints` reads it back with each rule's original
generation and seq, and `extract_constraints` lists them before the session's own.

The blocks (the second only when it has something to carry)::

    ## 硬约束（逐字继承，不得违反）
    - 〔第0代 seq=12〕不要修改 tests/ 目录
    - 〔第1代 seq=40〕first line of a multi-line rule
      its next line, indented by two spaces (an empty line stays empty)
    （以上共 2 条硬约束，逐字完整）

    ## 可能是规则（人的原话，未能归类，逐字保留；与要做的事冲突时先问人）
    - 〔第1代 seq=44〕the API stays on v2 for the mobile client
    （以上 1 句未能归类的原话，逐字保留）

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
from ..provenance.secrets import redact
from ..sessions.events import Event, human_messages, message_text
from .identity import generation, is_handoff_message, session_identity
from .rule_classes import RULE, classify
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
    """Whether a sentence states a rule for the rest of the work (`rule_classes.TABLE`)."""
    found = classify(sentence)
    return found is not None and found.kind == RULE


# -- extraction -------------------------------------------------------------------------------


def extract_constraints(events: Sequence[Event]) -> list[Constraint]:
    """Every hard constraint the session holds: inherited ones first (original anchors), then
    the ones its own person stated, identical texts once (the earliest anchor kept). A secret
    in a rule becomes its marker; the rule's other words stay as typed."""
    return extract(events).constraints


@dataclass(frozen=True, slots=True)
class Said:
    """What the person's words hold for the card: the rules, and the later sentences no class
    took (maybe rules), inherited ones first in both."""

    constraints: list[Constraint]
    maybe: list[Constraint]


def extract(events: Sequence[Event], request: str | None = None) -> Said:
    """The session's rules and maybe-rules (module docstring). The person's first message is
    the request the card carries (`request`, as the card shows it): of its sentences, only
    those the card does not show (it clips a long request) can be maybe-rules."""
    shown = " ".join((request or "").split())
    found = list(inherited_constraints(events))
    maybe = list(inherited_maybe_rules(events))
    own_generation = generation(events)
    first = True
    for event in human_messages(events):
        text = message_text(event)
        if is_handoff_message(text):
            continue
        for sentence in split_sentences(text):
            kind = classify(sentence)
            if kind is not None and kind.kind == RULE:
                found.append(Constraint(_clean(sentence), int(event["seq"]), own_generation))
            elif kind is None and not (first and " ".join(_clean(sentence).split()) in shown):
                maybe.append(Constraint(_clean(sentence), int(event["seq"]), own_generation))
        first = False
    rules = _dedupe(found)
    known = {c.text for c in rules}
    return Said(rules, [c for c in _dedupe(maybe) if c.text not in known])


def _clean(sentence: str) -> str:
    """The sentence with each secret replaced by its marker (provenance.secrets)."""
    return redact(sentence).text.strip()


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
    return _parse_block(text, HEADING, _FOOTER, NONE_ITEM)


def _parse_block(
    text: str, heading: str, footer_pattern: re.Pattern[str], none_item: str | None
) -> list[Constraint] | None:
    lines = re.split(r"\r\n|\r|\n", text)
    try:
        start = lines.index(heading)
    except ValueError:
        return None
    items: list[tuple[int, int, list[str]]] = []
    none_seen = False
    for number, line in enumerate(lines[start + 1 :], start + 2):
        footer = footer_pattern.match(line)
        if footer:
            if int(footer.group(1)) != len(items) or (none_seen and items):
                raise ConstraintBlockError(
                    f"line {number}: the block says {footer.group(1)} items, "
                    f"{len(items)} are listed"
                )
            try:
                return [Constraint("\n".join(body), seq, gen) for gen, seq, body in items]
            except ValueError as error:  # an item with an empty or padded text
                raise ConstraintBlockError(str(error)) from error
        item = _ITEM.match(line)
        if item:
            items.append((int(item.group(1)), int(item.group(2)), [item.group(3)]))
        elif line == none_item and not items and not none_seen:
            none_seen = True
        elif items and (line.startswith(_INDENT) or line == ""):
            items[-1][2].append(line[len(_INDENT) :])
        else:
            raise ConstraintBlockError(f"line {number} belongs to no item: {line[:80]!r}")
    raise ConstraintBlockError(f"the block {heading!r} has no closing line: it was cut")


# -- maybe rules ------------------------------------------------------------------------------

MAYBE_HEADING = "## 可能是规则（人的原话，未能归类，逐字保留；与要做的事冲突时先问人）"
MAYBE_CHARS = 2_000  # the block's bound: newest sentences first, whole, the rest named
_MAYBE_FOOTER = re.compile(r"^（以上 (\d+) 句未能归类的原话，逐字保留(?:；[^\n]*)?）$")


@dataclass(frozen=True, slots=True)
class MaybeBlock:
    """The rendered maybe-a-rule block ("" when there is nothing to carry), the sentences in
    it and the ones its bound left out (named on its closing line)."""

    text: str
    carried: tuple[Constraint, ...]
    left_out: tuple[Constraint, ...]


NO_MAYBE = MaybeBlock("", (), ())


def render_maybe_rules(maybe: Sequence[Constraint], budget_chars: int = MAYBE_CHARS) -> MaybeBlock:
    """The block of sentences no class took, newest first within `budget_chars` (each whole),
    in the order they were said; what did not fit is named by seq on the closing line, to be
    read back. Nothing to carry: no block."""
    if not maybe:
        return NO_MAYBE
    used = len(MAYBE_HEADING) + 120  # the closing line, generously
    kept: list[Constraint] = []
    left_out: list[Constraint] = []
    for sentence in reversed(maybe):
        size = len(_item(sentence)) + 1
        if left_out or used + size > budget_chars:
            left_out.append(sentence)
            continue
        used += size
        kept.append(sentence)
    kept.reverse()
    left_out.reverse()
    footer = f"（以上 {len(kept)} 句未能归类的原话，逐字保留"
    if left_out:  # always the oldest ones: seq from the first to the last of them
        footer += (
            f"；更早的 {len(left_out)} 句放不下（seq {left_out[0].seq} 至 {left_out[-1].seq}），"
            "可用 graft_read_result 回读"
        )
    text = "\n".join([MAYBE_HEADING, *(_item(c) for c in kept), footer + "）"])
    return MaybeBlock(text, tuple(kept), tuple(left_out))


def parse_maybe_rules(text: str) -> list[Constraint] | None:
    """The sentences of the first maybe-a-rule block in `text` (None: no block)."""
    return _parse_block(text, MAYBE_HEADING, _MAYBE_FOOTER, None)


def inherited_maybe_rules(events: Sequence[Event]) -> list[Constraint]:
    """The maybe-rules a handoff gave this session (its first message's block), so that a
    sentence no class took is not lost at the next generation either."""
    if session_identity(events) is None:
        return []
    parsed = parse_maybe_rules(message_text(human_messages(events)[0]))
    return [] if parsed is None else parsed


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
