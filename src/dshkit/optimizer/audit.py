"""The provenance audit (seed 000 W3, §7.1): every sentence of an output is traced or freedom.

The output is cut into units: each line is one unit or several sentences, a fenced code block
is one unit. Lines the contract requires (the ask heading, a "无" line, the self-check line),
headings (a `#` line, a line that is all bold, a short label ending in a colon) and separators
are structure, not counted. An ask item (a numbered line with a question mark, as the ask gate
counts it) hands a decision to the person: freedom. Any other line drops its list marker and
splits after 。！？!? (and after "." followed by a space or the line's end), closing quotes and
brackets staying with their sentence; `；` does not split.

A sentence is, in this order:
- untraced, if the optimizer narrates itself (按我的理解, 我读到, 我未读到, …): the output is
  the person's command to the agent, and an unknown is handed over as an instruction
  ("先确认 X 再动手"), never as the optimizer's own reading;
- traced or untraced by its citations, if it has any: every `path:line` / `path:a-b` must lie
  inside what the grounding tools read (`evidence`, ranges (path, first_line, last_line)) and
  every history mark (`HISTORY_MARK`) must name a seq in `history_seqs`; one citation that
  does not check out makes the sentence untraced (a made-up source is the defect, whatever
  else the sentence says);
- freedom, if it says 按…理解, 待确认, 自由度 or 先确认 (F3's way to hand over an unknown);
- traced to the raw words if at least `RAW_OVERLAP` of its character bigrams (letters, digits
  and CJK only, lower-cased) occur in the raw words;
- otherwise untraced: the defect count.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .gates import is_ask_heading, is_ask_item, is_nothing_line, is_self_check
from .strategies import HISTORY_MARK_RE

RAW_OVERLAP = 0.5  # share of a sentence's bigrams found in the raw words for it to restate them

FREEDOM_RE = re.compile(
    r"按(?![钮键下住压])[^，,。；;！？!?\n]{1,30}?理解|待(?:用户)?确认|自由度|先确认"
)
# The optimizer speaking of its own reading, in the first person.
SELF_NARRATION_RE = re.compile(
    r"[按依据照]我(?:们)?的?(?:理解|判断|看法|推测)"
    r"|我(?:们)?(?:没有?|未|已经?)?(?:读到|读过|看到|看过|查到|找到|理解为?|认为|推测|猜测?)"
)
# `path:line` or `path:first-last`; a path is ASCII (CJK around it is the sentence). A candidate
# is a citation when the path has a "/" or a "." and a letter, or is a path the tools read.
CITE_RE = re.compile(
    r"(?<![A-Za-z0-9_./\-])((?:[A-Za-z0-9_.\-]+/)*[A-Za-z0-9_.\-]+)[:：](\d+)"
    r"(?:\s*[-–~]\s*(\d+))?(?!\d)"
)

_FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})")
_SEPARATOR = re.compile(r"\s*(?:-{3,}|\*{3,}|_{3,})\s*")
_LIST_MARKER = re.compile(
    r"\s*(?:[-*+•]\s+|\d{1,3}\s*[.．、)）](?!\d)\s*|[（(]\d{1,3}[)）]\s*|[①-⑳]\s*)"
)
_BOLD_LINE = re.compile(r"\s*(\*\*|__)[^*_]+\1\s*[:：]?\s*")
_LABEL_CHARS = 16  # a line this short ending in a colon is a label, not a claim
_ENDS = "。！？!?"
_CLOSERS = "”’」』）)】\"'"


@dataclass(frozen=True)
class Unit:
    """One audited sentence (or structural line) of an output."""

    line: int  # 1-based line of the output it starts on
    text: str
    kind: str  # "traced" | "freedom" | "untraced" | "structure"
    why: str  # traced: file / history / file+history / raw; freedom: ask / marker;
    # untraced: self-narration / bad-file-cite / bad-history-seq / no-source; structure: what
    # the line is
    cites: tuple[str, ...] = ()
    overlap: float | None = None  # bigram share found in the raw words, when it was measured

    def as_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "text": self.text,
            "kind": self.kind,
            "why": self.why,
            "cites": list(self.cites),
            "overlap": self.overlap,
        }


@dataclass(frozen=True)
class Audit:
    """The units of one output; `counts()` goes in the run's summary, `detail()` in its record."""

    units: tuple[Unit, ...]

    def counts(self) -> dict[str, int]:
        """{"sentences", "traced", "freedom", "untraced"}; structure is not a sentence."""
        kinds = [u.kind for u in self.units if u.kind != "structure"]
        return {
            "sentences": len(kinds),
            "traced": kinds.count("traced"),
            "freedom": kinds.count("freedom"),
            "untraced": kinds.count("untraced"),
        }

    def detail(self) -> list[dict[str, Any]]:
        return [u.as_json() for u in self.units]


def audit(
    output: str,
    *,
    raw: str,
    evidence: Iterable[tuple[str, int, int]],
    history_seqs: Iterable[int],
) -> Audit:
    """Audit every sentence of `output` against the raw words, what the tools read, and the
    seqs of the history messages the model was shown."""
    checker = _Sources(raw, evidence, history_seqs)
    units: list[Unit] = []
    lines = output.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            end = _fence_end(lines, i, fence.group(1))
            block = "\n".join(lines[i + 1 : end]).strip("\n")
            if block.strip():
                units.append(checker.classify(i + 2, block))
            i = end + 1
            continue
        units.extend(_line_units(i + 1, line, checker))
        i += 1
    return Audit(tuple(units))


def _fence_end(lines: list[str], start: int, mark: str) -> int:
    for j in range(start + 1, len(lines)):
        stripped = lines[j].strip()
        if stripped.startswith(mark[0] * len(mark)) and not stripped.strip(mark[0]):
            return j
    return len(lines)  # an unclosed fence runs to the end


def _line_units(number: int, line: str, checker: _Sources) -> list[Unit]:
    text = line.strip()
    if not text or _SEPARATOR.fullmatch(text):
        return []
    for test, why in (
        (is_ask_heading, "ask-heading"),
        (is_nothing_line, "nothing-to-ask"),
        (is_self_check, "self-check"),
    ):
        if test(line):
            return [Unit(number, text, "structure", why)]
    if is_ask_item(line):
        return [Unit(number, text, "freedom", "ask")]
    if _is_heading(text):
        return [Unit(number, text, "structure", "heading")]
    marker = _LIST_MARKER.match(text)
    body = text[marker.end() :] if marker else text
    return [checker.classify(number, s) for s in split_sentences(body) if _normal(s)]


def _is_heading(text: str) -> bool:
    if text.startswith("#") or _BOLD_LINE.fullmatch(text):
        return True
    return text.endswith((":", "：")) and len(_normal(text)) <= _LABEL_CHARS


def split_sentences(text: str) -> list[str]:
    """Sentences of one line: after 。！？!? (and "." before a space or the end), closing
    quotes and brackets staying with the sentence they close."""
    sentences: list[str] = []
    start, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        ends = c in _ENDS or (c == "." and (i + 1 == n or text[i + 1].isspace()))
        i += 1
        if ends:
            while i < n and (text[i] in _ENDS or text[i] in _CLOSERS):
                i += 1
            sentences.append(text[start:i].strip())
            start = i
    if text[start:].strip():
        sentences.append(text[start:].strip())
    return [s for s in sentences if s]


def _normal(text: str) -> str:
    """Letters, digits and CJK only, lower-cased: what the bigram overlap compares."""
    return "".join(c for c in text.lower() if c.isalnum())


def _bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def _norm_path(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


class _Sources:
    """What a sentence can be traced to: raw words, read line ranges, history seqs."""

    def __init__(
        self, raw: str, evidence: Iterable[tuple[str, int, int]], history_seqs: Iterable[int]
    ) -> None:
        self.raw = _normal(raw)
        self.raw_bigrams = _bigrams(self.raw)
        self.seqs = set(history_seqs)
        spans: dict[str, list[tuple[int, int]]] = {}
        for path, first, last in evidence:
            if first < 1 or last < first:
                raise ValueError(
                    f"evidence range {path}:{first}-{last} is not a range of lines "
                    "(lines start at 1, first <= last)"
                )
            spans.setdefault(_norm_path(path), []).append((first, last))
        self.ranges = {path: _merged(found) for path, found in spans.items()}

    def classify(self, number: int, sentence: str) -> Unit:
        if SELF_NARRATION_RE.search(sentence):
            return Unit(number, sentence, "untraced", "self-narration")
        files, bad_file = self._file_cites(sentence)
        marks = [int(m) for m in HISTORY_MARK_RE.findall(sentence)]
        cites = tuple(files + [f"#{seq}" for seq in marks])
        if cites:
            if bad_file:
                return Unit(number, sentence, "untraced", "bad-file-cite", cites)
            if any(seq not in self.seqs for seq in marks):
                return Unit(number, sentence, "untraced", "bad-history-seq", cites)
            why = "+".join(w for w, used in (("file", files), ("history", marks)) if used)
            return Unit(number, sentence, "traced", why, cites)
        if FREEDOM_RE.search(sentence):
            return Unit(number, sentence, "freedom", "marker")
        overlap = self._overlap(sentence)
        kind, why = ("traced", "raw") if overlap >= RAW_OVERLAP else ("untraced", "no-source")
        return Unit(number, sentence, kind, why, overlap=overlap)

    def _file_cites(self, sentence: str) -> tuple[list[str], bool]:
        cites: list[str] = []
        bad = False
        for match in CITE_RE.finditer(sentence):
            path = _norm_path(match.group(1))
            known = path in self.ranges
            if not re.search(r"[A-Za-z]", path) or not (known or "/" in path or "." in path):
                continue  # a time, a version, host:port — not a citation
            first = int(match.group(2))
            last = int(match.group(3) or first)
            cites.append(f"{path}:{first}" + (f"-{last}" if last != first else ""))
            if not known or not any(a <= first <= last <= b for a, b in self.ranges[path]):
                bad = True
        return cites, bad

    def _overlap(self, sentence: str) -> float:
        text = _normal(sentence)
        if len(text) < 2:
            return 1.0 if text and text in self.raw else 0.0
        grams = _bigrams(text)
        return round(len(grams & self.raw_bigrams) / len(grams), 3)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Line ranges joined where they overlap or touch, so a citation across two reads counts."""
    out: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if out and first <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out
