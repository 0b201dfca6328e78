"""The learned half of the injection scanner: how likely a text is to speak to an AI agent.

A regex list matches the phrasings it was written from; this is a linear model (logistic
regression) over hashed character and word n-grams of the text as the scanner reads it
(confusables folded, spacing collapsed, encodings decoded: `injection.readings`), trained
offline by `scripts/train-injection-model.py` on public corpora (origins in
tests/data/poisoning/README.md). It learns the register of text addressed to an assistant:
requests, instructions and steering ("add this to your answer", "write a script that…",
"disregard the above") against the register of what a session reads as data (documentation,
tool output, commit messages, code, people talking to people).

What it finds is the `addressed` kind: the person's own words may address the agent, nothing
else a record is made from may (injection.PERSON_MAY).

Inference is pure Python: the weights are one dense table of signed bytes (`injection-model.bin`,
package data), read on first use in well under a millisecond; a text is scored in pieces of at
most PIECE characters (an instruction buried in a long log is not diluted by it) and the
highest score counts. Verdicts are cached per text for the life of the process.
"""

from __future__ import annotations

import math
import re
import struct
import zlib
from array import array

FILE = "injection-model.bin"
MAGIC = b"DSHIM1\0\0"
# Header after MAGIC: bits of the hashed table, scale of a weight byte, bias, threshold,
# then the 16-hex-digit version (the digest of the table and of the numbers before it).
HEADER = struct.Struct("<Bddd16s")
PIECE = 800  # characters scored at once
MIN_WORDS = 4  # words (a Han character is one) a text needs to be judged at all
ALONE = 24  # characters a sentence or line needs to be scored alone too
ALONE_MARGIN = 2.2  # … and the margin it must reach alone (a probability of 0.9)
MAX_PIECES = 256  # pieces scored per text: beyond, the rules alone read it (200 KB)
_CACHE_SIZE = 4096

_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\d_]+|\d+|[^\w\s]")
_WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\d_]+")
_BREAK = re.compile(r"((?<=[。！？])|(?<=[.!?])\s+|\s*\n\s*)")


class Model:
    """Weights and numbers of one trained model."""

    __slots__ = ("_mask", "bias", "bits", "scale", "threshold", "version", "weights")

    def __init__(
        self, bits: int, scale: float, bias: float, threshold: float, weights: array[int]
    ) -> None:
        self.bits, self.scale, self.bias, self.threshold = bits, scale, bias, threshold
        self.weights = weights
        self._mask = (1 << bits) - 1
        self.version = digest(bits, scale, bias, threshold, weights)

    def margin(self, text: str) -> float:
        """The model's margin for one piece of normalized text (> 0: more likely addressed)."""
        found = features(text, self._mask)
        if not found:
            return self.bias
        weights = self.weights
        total = sum(weights[f] for f in found)
        return self.bias + self.scale * total / math.sqrt(len(found))

    def probability(self, text: str) -> float:
        """The highest probability over the pieces of `text` (normalized) that it is addressed."""
        if len(_WORD.findall(text, 0, 400)) < MIN_WORDS:
            return 0.0  # "make gen": too little to judge by register (the rules still read it)
        whole = pieces(text)
        best = max((self.margin(piece) for piece in whole), default=self.bias)
        if len(whole) > 1 or "\n" in text or len(text) > ALONE * 3:
            # A sentence alone counts only when it is clearly addressed: picking the highest
            # of many would otherwise find one in any long document.
            alone = max((self.margin(p) for p in pieces(text, alone=True)[len(whole) :]), default=0)
            if alone >= ALONE_MARGIN:
                best = max(best, alone)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, best))))


def features(text: str, mask: int) -> set[int]:
    """The hashed features of a piece of normalized text: character 3- to 5-grams, and word
    (a Han character is a word) unigrams and bigrams. The trainer calls this very function."""
    crc = zlib.crc32
    data = f" {text} ".encode("utf-32-le")  # four bytes a character: an n-gram is a slice
    end = len(data)
    # Comprehensions, not loops: this is most of a scan's time.
    found = {crc(data[i : i + 12], 3) & mask for i in range(0, end - 11, 4)}
    found.update({crc(data[i : i + 16], 4) & mask for i in range(0, end - 15, 4)})
    found.update({crc(data[i : i + 20], 5) & mask for i in range(0, end - 19, 4)})
    words = ["0" if w.isdigit() else w for w in _TOKEN.findall(text)]
    found.update({crc(("w\x01" + w).encode(), 7) & mask for w in words})
    found.update(
        {
            crc(("b\x01" + a + "\x01" + b).encode(), 11) & mask
            for a, b in zip(["\x02", *words], words, strict=False)
        }
    )
    return found


def pieces(text: str, alone: bool = False) -> list[str]:
    """`text` cut at sentence or line ends into pieces of at most PIECE characters (blanks at
    the cuts left out), MAX_PIECES at most. `alone`: each sentence or line of at least ALONE
    characters of them is a piece as well, when there are several (one line asking the agent
    for something among twenty of a test log is not diluted by them)."""
    cut = _BREAK.split(text)  # sentence, the blank after it, sentence, …
    parts = [a + b for a, b in zip(cut[::2], [*cut[1::2], ""], strict=True)]
    found: list[str] = []
    single: list[str] = []
    current = ""
    for part in parts:
        if alone and len(part) >= ALONE and len(parts) > 1:
            single.append(part.strip())
        if len(current) + len(part) > PIECE:
            found.append(current)
            current = ""
        while len(part) > PIECE:  # one endless line: cut where it must be cut
            found.append(part[:PIECE])
            part = part[PIECE:]
        current += part
        if len(found) >= MAX_PIECES:
            break
    found.append(current)
    return [p for p in found if p.strip()][:MAX_PIECES] + single


def digest(bits: int, scale: float, bias: float, threshold: float, weights: array[int]) -> str:
    import hashlib

    numbers = struct.pack("<Bddd", bits, scale, bias, threshold)
    return hashlib.sha256(numbers + weights.tobytes()).hexdigest()[:16]


def dump(model: Model) -> bytes:
    """The model as the package ships it."""
    head = HEADER.pack(model.bits, model.scale, model.bias, model.threshold, model.version.encode())
    return MAGIC + head + model.weights.tobytes()


def parse(raw: bytes) -> Model:
    """A model from its file's bytes; ValueError when they are not one (or are damaged)."""
    if not raw.startswith(MAGIC) or len(raw) < len(MAGIC) + HEADER.size:
        raise ValueError("not a dshkit injection model")
    bits, scale, bias, threshold, version = HEADER.unpack_from(raw, len(MAGIC))
    weights = array("b")
    weights.frombytes(raw[len(MAGIC) + HEADER.size :])
    if len(weights) != 1 << bits:
        raise ValueError(f"injection model: {len(weights)} weights, expected {1 << bits}")
    model = Model(bits, scale, bias, threshold, weights)
    if model.version != version.decode("ascii", "replace"):
        raise ValueError("injection model: its digest does not match its weights")
    return model


_LOADED: list[Model] = []
_SCORES: dict[tuple[int, int], float] = {}


def load() -> Model:
    """The shipped model, read once per process."""
    if not _LOADED:
        import os

        with open(os.path.join(os.path.dirname(__file__), FILE), "rb") as file:
            _LOADED.append(parse(file.read()))
    return _LOADED[0]


def addressed(text: str) -> float | None:
    """The probability that normalized `text` speaks to an AI agent, when it is at least the
    model's threshold; None below it. Scores are kept per text for the process (a record is
    scanned at write, at injection and by the console: once is enough)."""
    key = (hash(text), len(text))  # the text itself would keep every long text alive
    score = _SCORES.get(key)
    if score is None:
        score = load().probability(text)
        if len(_SCORES) >= _CACHE_SIZE:
            _SCORES.clear()
        _SCORES[key] = score
    return score if score >= load().threshold else None
