"""A text over the cap is kept as its head and tail around a marker that says what was cut, and
the line stays the JSON it was, however it is fed."""

from __future__ import annotations

import json
import random

import orjson
import pytest

from dshkit.sessions.cap import (
    MARKER,
    TEXT_CAP,
    Cut,
    LineCutter,
    cap_line,
    cap_lines,
    cuts,
    full_length,
)

# What a cut must never split: escapes (simple, \u, surrogate pairs when written as ASCII),
# UTF-8 sequences of every length, quotes and backslashes.
ALPHABET = ["a", " ", "é", "中", "😀", "\n", '"', "\\", "/", "\t", "\u2028", "\x01"]
PIECES = [1, 2, 3, 5, 7, 13, 4096, 70_000, 300_000, 1 << 20]


def fed(line: bytes, rng: random.Random) -> bytes:
    """`line` cut by a LineCutter fed in pieces of random sizes."""
    cutter = LineCutter()
    at = 0
    while at < len(line):
        size = rng.choice(PIECES)
        cutter.feed(line[at : at + size])
        at += size
    return cutter.finish()


def check(original: str, stored: str) -> None:
    """`stored` is `original` whole, or its head and tail around one marker saying so."""
    found = cuts(stored)
    if not found:
        assert stored == original
        return
    assert len(json.dumps(original)) - 2 > TEXT_CAP  # its longest JSON form is over the cap
    (cut,) = found
    head, tail = stored.split(MARKER.format(cut=cut.cut, total=cut.total))
    assert cut.total == len(original) == full_length(stored)
    assert original.startswith(head) and original.endswith(tail)
    assert len(head) + cut.cut + len(tail) == len(original)
    assert head and tail


@pytest.mark.parametrize("seed", range(4))
def test_long_strings_are_cut_at_whole_characters_wherever_the_pieces_end(seed: int) -> None:
    rng = random.Random(seed)
    cut = whole = 0
    for _ in range(6):
        sizes = [rng.choice([0, 40, TEXT_CAP // 8, TEXT_CAP // 3, TEXT_CAP]) for _ in range(3)]
        texts = ["".join(rng.choices(ALPHABET, k=n)) for n in sizes]
        record = {"type": "user", "content": [{"type": "text", "text": t} for t in texts], "n": 5}
        if rng.random() < 0.5:
            line = orjson.dumps(record)  # UTF-8 as it is
        else:  # every non-ASCII character escaped, astral ones as surrogate pairs
            line = json.dumps(record, separators=(",", ":")).encode()
        stored = fed(line, rng)
        assert stored == cap_line(line)  # one piece or many: the same line
        parsed = orjson.loads(stored)
        assert parsed["n"] == 5
        for original, block in zip(texts, parsed["content"], strict=True):
            check(original, block["text"])
            cut += bool(cuts(block["text"]))
            whole += not cuts(block["text"])
        # What is kept is bounded whatever the line's length: halves of the cap per string.
        assert len(stored) < len(texts) * (TEXT_CAP + 200) + 200
    assert cut and whole  # both kinds met


def test_a_huge_string_is_stored_as_the_cap_and_its_length() -> None:
    text = "".join(f"{n} " for n in range(3_000_000))
    line = orjson.dumps({"type": "user", "message": {"content": text}})
    stored = cap_line(line)
    assert len(stored) < TEXT_CAP + 200
    kept = orjson.loads(stored)["message"]["content"]
    assert cuts(kept) == [Cut(len(text) - len(kept) + len(_marker(kept)), len(text))]
    check(text, kept)


def _marker(text: str) -> str:
    (cut,) = cuts(text)
    return MARKER.format(cut=cut.cut, total=cut.total)


def test_short_lines_and_strings_are_left_as_they_are() -> None:
    short = orjson.dumps({"a": "x" * 1000}) + b"\n"
    many = orjson.dumps({"a": ["x" * (TEXT_CAP // 2)] * 4})  # long, but no string over the cap
    assert cap_lines(short) is short
    assert cap_line(many) == many
    assert cap_lines(short + many + b"\n" + short) == short + many + b"\n" + short
    assert cuts("no marker here") == [] and full_length("no marker here") == 14


def test_lines_of_a_text_are_capped_each_and_the_rest_kept() -> None:
    long = orjson.dumps({"text": "z" * (2 * TEXT_CAP)})
    text = b'{"a":1}\n' + long + b'\n{"b":2}\n' + long + b"\n"
    lines = cap_lines(text).split(b"\n")
    assert lines[0] == b'{"a":1}' and lines[2] == b'{"b":2}' and lines[4] == b""
    for line in (lines[1], lines[3]):
        check("z" * (2 * TEXT_CAP), orjson.loads(line)["text"])


def test_a_line_that_is_not_json_is_not_made_json() -> None:
    for bad in (
        b'{"a": "' + b"x" * (3 * TEXT_CAP) + b'", oops}',
        b'{"a": "' + b"x" * (3 * TEXT_CAP),  # a string never closed
        b'{"a": "' + b"x" * (3 * TEXT_CAP) + b'\\q"}',  # an escape JSON does not have
    ):
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(cap_line(bad))
