"""Which language a person writes in, Chinese or English: the one rule every capability uses
when it speaks to them (the optimizer's label, the guard's deny text, memory's templates).

A Han character says about as much as four Latin letters, so a Chinese request naming files
and identifiers stays Chinese, and an English one quoting a Chinese label stays English. With
nothing to go by, `default` (dshkit's first language is Chinese).

Pure and standard-library only: the hooks use it on their hot path.
"""

from __future__ import annotations

ZH, EN = "zh", "en"
LANGUAGES = (ZH, EN)
HAN_WEIGHT = 4  # Latin letters one Han character is worth


def is_han(char: str) -> bool:
    """A CJK ideograph (the unified block, extension A and the compatibility block)."""
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def letters(text: str) -> tuple[int, int]:
    """(Han characters, ASCII letters) of `text`."""
    han = latin = 0
    for char in text:
        if is_han(char):
            han += 1
        elif char.isascii() and char.isalpha():
            latin += 1
    return han, latin


def decide(han: int, latin: int, default: str = ZH) -> str:
    """The language of words holding `han` Han characters and `latin` Latin letters."""
    if not han and not latin:
        return default
    return ZH if han and han * HAN_WEIGHT >= latin else EN


def language_of(text: str, default: str = ZH) -> str:
    """ZH when `text` is mostly Chinese (module docstring), else EN; `default` for none."""
    return decide(*letters(text), default)
