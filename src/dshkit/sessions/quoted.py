"""Which of a session's human messages a set of quotes comes from: where a profile entry's
evidence was said in one session, for the marks on its timeline. Read-only.

A quote is found as `browse.quote_sources` finds it (the exact text inside a kept human
message), here within one session only and for many quotes at once, each with the label of
what it is evidence for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..store import Store
from .browse import QUOTE_LIMIT
from .catalog import SessionInfo
from .wire import QuotedJson

QUOTES_LIMIT = 2_000  # quotes looked up in one call at most


@dataclass(frozen=True, slots=True)
class Quoted:
    """One human message of the session holding one quote."""

    label: str  # what the quote is evidence for (a profile entry's id)
    quote: str
    seq: int | None
    time: int | None

    def as_json(self) -> QuotedJson:
        return {"label": self.label, "quote": self.quote, "seq": self.seq, "time": self.time}


def quoted_in(store: Store, info: SessionInfo, quotes: Iterable[tuple[str, str]]) -> list[Quoted]:
    """The human messages of `info` holding each (label, quote), in log order; a quote empty
    or over QUOTE_LIMIT characters is passed over (it is found nowhere)."""
    found: list[Quoted] = []
    for number, (label, quote) in enumerate(quotes):
        if number >= QUOTES_LIMIT:
            break
        text = quote.strip()
        if not text or len(text) > QUOTE_LIMIT:
            continue
        rows = store.db.execute(
            "SELECT seq, time FROM human_messages "
            "WHERE harness = ? AND session_id = ? AND instr(text, ?) > 0",
            (*info.key, text),
        ).fetchall()
        found.extend(Quoted(label, text, seq, at) for seq, at in rows)
    found.sort(key=lambda q: (q.seq if q.seq is not None else -1, q.label))
    return found
