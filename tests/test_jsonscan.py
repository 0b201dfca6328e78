"""The interpreter's C JSON scanner and encoder for the hot path (`dshkit.jsonscan`)."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from dshkit.jsonscan import dumps, line_value, scanner

ALPHABET = 'ab "\\/\n\t\x00\x1f\x7f中文\u2028\U0001f600'


def value(rng: random.Random, depth: int = 0) -> Any:
    """A JSON value such as a log holds, drawn at random."""
    draw = rng.randrange(7 if depth < 4 else 5)
    if draw == 0:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 12)))
    if draw == 1:
        return rng.randrange(-(2**53), 2**53)
    if draw == 2:
        return rng.choice((0.5, -1.25e-7, 3.0, 1e300, 0.1 + 0.2))  # (exponents spelled otherwise)
    if draw == 3:
        return rng.choice((None, True, False))
    if draw == 4:
        return ""
    if draw == 5:
        return [value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {f"k{n}{rng.choice(ALPHABET)}": value(rng, depth + 1) for n in range(rng.randrange(4))}


def spelled(text: str) -> str:
    """JSON text with its floats' exponents spelled one way (no plus, no leading zero)."""
    return text.replace("e+", "e").replace("e-0", "e-").replace("e0", "e")


def test_dumps_writes_what_orjson_writes_and_the_scanner_reads_it_back() -> None:
    # The fold writes a mapped call's arguments with it where the adapter writes them with
    # orjson (graft.fold): the same value, and the same text but for how a float's exponent
    # is spelled (1e-07 and 1e-7).
    rng = random.Random(7)
    scan = scanner()
    for _ in range(2_000):
        held = value(rng)
        text, theirs = dumps(held), orjson.dumps(held).decode()
        assert line_value(scan, text.encode()) == held == orjson.loads(text)
        assert spelled(text) == spelled(theirs), held


def test_dumps_refuses_what_json_has_no_form_for() -> None:
    with pytest.raises(TypeError, match="set is not JSON"):
        dumps({"a": {1, 2}})
