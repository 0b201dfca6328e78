"""The provenance audit: every sentence of an output is traced or freedom
(docs/design/optimizer.md#every-sentence-is-traced-or-declared-freedom).

The output is cut into units: each line is one unit or several sentences, a fenced code block
is one unit. Lines the contract requires (the ask heading, a "无" line, the self-check line),
headings (a `#` line, a line that is all bold, a short label ending in a colon) and separators
are structure, not counted. An ask item (a numbered line with a question mark, as the ask gate
counts it) hands a decision to the person: freedom. Any other line drops its list marker and
splits after 。！？!? (and after "." followed by a space or the line's end), closing quotes and
brackets staying with their sentence; `；` does not split.

A sentence is, in this order:
- untraced, if the optimizer narrates itself (按我的理解, 我读到, 我未读到, …; and in basic and
  advanced, where F3 forbids it, any 按 X 理解): the output is the person's command to the
  agent, and an unknown is handed over as an instruction ("先确认 X 再动手");
- untraced, if one of its citations does not check out: every `path:line` / `path:a-b` must
  lie inside what the grounding tools read (`evidence`, ranges (path, first_line, last_line))
  and every history mark (`HISTORY_MARK`) must name a seq in `history_seqs` (a made-up source
  is the defect, whatever else the sentence says);
- otherwise judged clause by clause (its commas, semicolons and joining words such as 并且
  part them; a clause under 4 characters claims nothing alone), so that a demand riding on a
  restated clause, or a claim beside a freedom marker, stands on its own. A clause is freedom
  if it says 按…理解, 待确认, 自由度 or 先确认; traced to the raw words if at least
  `RAW_OVERLAP` of its character bigrams (letters, digits and CJK only, lower-cased) occur in
  them, or if it repairs them (at least `REPAIR_SHARE` of its characters are theirs, in
  order: a typo fixed); traced to a file it cites when the cited lines carry its words (an
  identifier or a CJK bigram of it; checked when `lines`, the text the tools showed, is
  given), else untraced; traced to history when it cites a mark the model was shown and
  (when `history`, the cited messages' words as shown, is given) the message carries it:
  a quotation in it (「…」, “…”, "…") must be that message's words as the provenance layer's
  quote check folds them, and an unquoted clause must share an identifier or a CJK bigram
  with it, as a file citation's lines must; otherwise untraced. One untraced clause makes
  the sentence untraced (the defect count); else a traced clause makes it traced, and
  freedom alone makes it freedom.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .gates import is_ask_heading, is_ask_item, is_nothing_line, is_self_check
from .strategies import HISTORY_MARK_RE
from .wire import UnitJson

RAW_OVERLAP = 0.5  # share of a clause's bigrams found in the raw words for it to restate them
# Share of a clause's characters that are the raw words' own, in order, for it to repair them.
REPAIR_SHARE = 0.6
_CLAUSE_CHARS = 4  # a clause shorter than this (letters, digits, CJK) claims nothing alone
_F3_TIERS = ("basic", "advanced")  # where F3 forbids "按 X 理解"
READING_RE = re.compile(r"按(?![钮键下住压])[^，,。；;！？!?\n]{1,30}?理解")
# Where a sentence's clauses part: its commas and semicolons, and the words that join a
# further demand onto a first one.
_CLAUSE_SPLIT = re.compile(r"[，；;]|(?:并且|而且|同时|另外|此外|以及)")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_CJK = re.compile(r"[\u4e00-\u9fff]+")

FREEDOM_RE = re.compile(
    r"按(?![钮键下住压])[^，,。；;！？!?\n]{1,30}?理解|待(?:用户)?确认|自由度|先确认"
    r"|to be confirmed|before starting, confirm",
    re.I,
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

    def as_json(self) -> UnitJson:
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

    def detail(self) -> list[UnitJson]:
        return [u.as_json() for u in self.units]


def audit(
    output: str,
    *,
    raw: str,
    evidence: Iterable[tuple[str, int, int]],
    history_seqs: Iterable[int],
    lines: Mapping[str, Mapping[int, str]] | None = None,
    tier: str | None = None,
    history: Mapping[int, str] | None = None,
) -> Audit:
    """Audit every sentence of `output` against the raw words, what the tools read, and the
    seqs of the history messages the model was shown. `lines` (path → line → text, of what
    the tools showed) lets a citation be checked against the words of the cited lines;
    `tier` basic or advanced makes "按 X 理解" the optimizer's own reading (F3); `history`
    (seq → the words of that history message as the model was shown them) lets a history
    citation be checked against the cited message's words."""
    checker = _Sources(raw, evidence, history_seqs, lines, tier, history)
    units: list[Unit] = []
    rows = output.splitlines()
    i = 0
    while i < len(rows):
        line = rows[i]
        fence = _FENCE.match(line)
        if fence:
            end = _fence_end(rows, i, fence.group(1))
            block = "\n".join(rows[i + 1 : end]).strip("\n")
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


def split_clauses(sentence: str) -> list[str]:
    """The clauses of one sentence (its commas, semicolons and joining words part them)."""
    return [part.strip() for part in _CLAUSE_SPLIT.split(sentence) if part.strip()]


def _supported(clause: str, cited: list[str], paths: list[str]) -> bool:
    """Whether the cited lines carry the clause's words: one of its identifiers (not a
    piece of a cited path) or one of its CJK bigrams occurs in them. A clause with neither
    makes no checkable claim about the lines, and passes."""
    text = "\n".join(cited).lower()
    pieces = {piece.lower() for path in paths for piece in re.split(r"[/.:\-]", path)}
    words = {w.lower() for w in _WORD.findall(clause)} - pieces
    grams = {g for run in _CJK.findall(clause) for g in _bigrams(run)}
    grams -= {"修复", "改成", "改为", "修改", "这里", "这个", "那个", "里的", "中的"}
    if not words and not grams:
        return True
    if not cited:
        return False
    if any(word in text for word in words):
        return True
    return any(gram in text for gram in grams)


# A quotation of someone's words in a clause: 「…」, “…” or "…".
_QUOTED = re.compile(r"「([^」]+)」|“([^”]+)”|\"([^\"]+)\"")


def _weighty(quote: str) -> bool:
    """Whether a quotation says enough to be checked (the quote check's minimum weight)."""
    from ..provenance.quotes import MIN_QUOTE_WEIGHT, fold, weight

    return weight(fold(quote)) >= MIN_QUOTE_WEIGHT


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
        self,
        raw: str,
        evidence: Iterable[tuple[str, int, int]],
        history_seqs: Iterable[int],
        lines: Mapping[str, Mapping[int, str]] | None = None,
        tier: str | None = None,
        history: Mapping[int, str] | None = None,
    ) -> None:
        self.history = None if history is None else dict(history)
        self.lines = (
            None if lines is None else {_norm_path(p): dict(found) for p, found in lines.items()}
        )
        self.strict_reading = tier in _F3_TIERS
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
        if self.strict_reading and READING_RE.search(sentence):
            # F3: in basic and advanced "按 X 理解" is the optimizer's own reading.
            return Unit(number, sentence, "untraced", "self-narration")
        files, bad_file, cited_lines = self._file_cites(sentence)
        marks = [int(m) for m in HISTORY_MARK_RE.findall(sentence)]
        cites = tuple(files + [f"#{seq}" for seq in marks])
        if bad_file:
            return Unit(number, sentence, "untraced", "bad-file-cite", cites)
        if any(seq not in self.seqs for seq in marks):
            return Unit(number, sentence, "untraced", "bad-history-seq", cites)
        # Each clause stands on its own: a constraint riding on a restated clause, or a
        # claim beside a freedom marker, is judged by itself.
        kinds: list[tuple[str, str]] = []
        overlaps: list[float] = []
        for clause in split_clauses(sentence):
            kind, why, overlap = self._clause(clause, files, marks, cited_lines)
            if overlap is not None:
                overlaps.append(overlap)
            if kind:
                kinds.append((kind, why))
        overlap = min(overlaps) if overlaps else None
        untraced = [why for kind, why in kinds if kind == "untraced"]
        if untraced:
            return Unit(number, sentence, "untraced", untraced[0], cites, overlap)
        traced = [why for kind, why in kinds if kind == "traced"]
        if traced or (cites and not kinds):
            why = "+".join(w for w, used in (("file", files), ("history", marks)) if used)
            return Unit(number, sentence, "traced", why or traced[0], cites, overlap)
        if kinds:
            return Unit(number, sentence, "freedom", "marker", cites, overlap)
        return Unit(number, sentence, "untraced", "no-source", cites, overlap)

    def _clause(
        self,
        clause: str,
        files: list[str],
        marks: list[int],
        cited_lines: list[str] | None,
    ) -> tuple[str, str, float | None]:
        """(kind, why, raw overlap) of one clause; kind "" for a connective too short to
        claim anything on its own."""
        bare = CITE_RE.sub("", HISTORY_MARK_RE.sub("", clause))
        if FREEDOM_RE.search(clause):
            return "freedom", "marker", None
        # A clause citing a message itself must be carried by it, whatever else it restates.
        own = [int(m) for m in HISTORY_MARK_RE.findall(clause)]
        if own and self._history(clause, bare, own) == "untraced":
            return "untraced", "unsupported-history-cite", self._overlap(bare)
        if len(_normal(bare)) < _CLAUSE_CHARS:
            return "", "", None
        overlap = self._overlap(bare)
        if overlap >= RAW_OVERLAP:
            return "traced", "raw", overlap
        if self._repairs(bare):
            return "traced", "raw-repair", overlap
        if files and (cited_lines is None or _supported(bare, cited_lines, files)):
            return "traced", "file", overlap
        if files:
            return "untraced", "unsupported-cite", overlap
        if marks:  # a clause riding on the sentence's citation: the cited words carry it
            if self._history(clause, bare, marks) == "untraced":
                return "untraced", "unsupported-history-cite", overlap
            return "traced", "history", overlap
        return "untraced", "no-source", overlap

    def _history(self, clause: str, bare: str, marks: list[int]) -> str:  # (the kind)
        """ "traced" when the cited messages carry the clause (its quotations their words,
        else its words), "untraced" when not; traced when their words were not given."""
        if self.history is None:
            return "traced"
        cited = [self.history[seq] for seq in marks if seq in self.history]
        quoted = [part for groups in _QUOTED.findall(clause) for part in groups if part]
        if quoted:
            from ..provenance.quotes import Message, said_in  # (the audit alone needs it)

            messages = [Message("", "", None, None, text) for text in cited]
            heavy = [q for q in quoted if _weighty(q)]
            if heavy and all(any(said_in(m, q) for m in messages) for q in heavy):
                return "traced"
            if heavy:
                return "untraced"
        return "traced" if _supported(bare, cited, []) else "untraced"

    def _repairs(self, text: str) -> bool:
        """Whether `text` is a language repair of the raw words: most of its characters are
        the raw words' own, in their order (a typo or two fixed, words reordered little)."""
        clause = _normal(text)
        if len(clause) < _CLAUSE_CHARS or not self.raw:
            return False
        matcher = difflib.SequenceMatcher(None, clause, self.raw, autojunk=False)
        kept = sum(block.size for block in matcher.get_matching_blocks())
        return kept >= 3 and kept / len(clause) >= REPAIR_SHARE

    def _file_cites(self, sentence: str) -> tuple[list[str], bool, list[str] | None]:
        """The sentence's file citations, whether one is outside what was read, and the text
        of the cited lines (None when the lines' text was not given)."""
        cites: list[str] = []
        bad = False
        texts: list[str] | None = None if self.lines is None else []
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
            elif texts is not None and self.lines is not None:
                shown = self.lines.get(path, {})
                texts.extend(shown[n] for n in range(first, last + 1) if n in shown)
        return cites, bad, texts

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
