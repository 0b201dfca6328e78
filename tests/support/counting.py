"""Work counted instead of time: a compiled pattern that stands in for another and tells, for
each text it is asked to read, how long the text was (linear-time tests count what reaches
the patterns; a loaded machine slows a clock, not a count)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator


class CountedPattern:
    """`pattern`'s match, search and finditer, each first telling `seen` the text's length."""

    def __init__(self, pattern: re.Pattern[str], seen: Callable[[int], object]) -> None:
        self.pattern, self.seen = pattern, seen

    def match(self, text: str) -> re.Match[str] | None:
        self.seen(len(text))
        return self.pattern.match(text)

    def search(self, text: str) -> re.Match[str] | None:
        self.seen(len(text))
        return self.pattern.search(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        self.seen(len(text))
        return self.pattern.finditer(text)
