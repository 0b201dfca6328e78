"""Quote verification: whether words were said by the person, and where.

A model asked to cite the person's words may cite a line of a README the agent read, its own
sentence, injected runtime context, a date, or nothing anyone said. Only the person's stored
messages count (`sessions` already tells them from tool output, assistant text and what a
harness injects: docs/design/sessions.md#only-typed-words-are-human-messages), so a quote is
looked up there and nowhere else.

The lookup forgives what does not change the words — runs of blank space, full-width forms,
letter case, punctuation of either language (a model rewrites 「」 as "" and drops a final 。),
the backticks around code — and nothing that does: a changed, added or dropped word is not the
person's quote (docs/design/provenance.md#a-quote-is-the-persons-words-folded-not-paraphrased).
Too short a quote proves nothing ("ok" is in half of anyone's messages), so a quote must carry
at least MIN_QUOTE_WEIGHT (a Han character weighs two, any other letter or digit one).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..sessions.catalog import Catalog, SessionKey

MIN_QUOTE_WEIGHT = 6
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
# Dropped before comparing: blank space, punctuation, characters that render as nothing, and
# modifier symbols (the backticks of `code`, which a model adds or drops when it quotes).
_DROPPED_CATEGORIES = ("Z", "P", "Cc", "Cf", "Sk")


@lru_cache(maxsize=8192)
def _fold_char(char: str) -> str:
    """One character as the comparison sees it: '' when it is dropped."""
    out = []
    for folded in unicodedata.normalize("NFKC", char).casefold():
        category = unicodedata.category(folded)
        if folded.isspace() or category.startswith(_DROPPED_CATEGORIES):
            continue
        out.append(folded)
    return "".join(out)


def fold(text: str) -> str:
    """`text` as quotes are compared: width, case, blank space and punctuation folded."""
    return "".join(_fold_char(char) for char in text)


def _fold_with_map(text: str) -> tuple[str, list[int]]:
    """`fold(text)`, and for each of its characters the index in `text` it came from."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for folded in _fold_char(char):
            chars.append(folded)
            origin.append(index)
    return "".join(chars), origin


def weight(folded: str) -> int:
    """How much a folded quote says: a Han character two, any other character one."""
    return len(folded) + len(_HAN.findall(folded))


@dataclass(frozen=True)
class Message:
    """One message the person typed, where it was said (the sessions layer's human message)."""

    harness: str
    session_id: str
    seq: int | None
    time: int | None  # ms since the epoch, when the harness recorded one
    text: str


@dataclass(frozen=True)
class Said:
    """Where a quote was said: the message, and the person's own words that matched it (the
    span of the message, as they typed it)."""

    words: str
    harness: str
    session_id: str
    seq: int | None
    time: int | None
    times: int = 1  # how many of the messages hold it

    def as_json(self) -> dict[str, object]:
        return {
            "quote": self.words,
            "harness": self.harness,
            "session": self.session_id,
            "seq": self.seq,
            "at": self.time,
        }


def said_in(message: Message, quote: str) -> Said | None:
    """Where `quote` is in this one message (folded as `fold` does), or None."""
    needle = fold(quote)
    if weight(needle) < MIN_QUOTE_WEIGHT:
        return None
    return _span(message, needle)


def _span(message: Message, needle: str) -> Said | None:
    folded, origin = _fold_with_map(message.text)
    start = folded.find(needle)
    if start < 0:
        return None
    first, last = origin[start], origin[start + len(needle) - 1]
    return Said(
        message.text[first : last + 1],
        message.harness,
        message.session_id,
        message.seq,
        message.time,
    )


class PersonWords:
    """The person's messages, folded once, to look quotes up in: `find` answers where a quote
    was said (the newest message holding it), or None when the person never said it."""

    def __init__(self, messages: Iterable[Message]) -> None:
        self.messages: Sequence[Message] = list(messages)
        self._folded = [fold(m.text) for m in self.messages]

    def __len__(self) -> int:
        return len(self.messages)

    def find(self, quote: str) -> Said | None:
        """Where the person said `quote` (folded), the newest message first; None when no
        message of theirs holds it, or it is too short to prove anything."""
        needle = fold(quote)
        if weight(needle) < MIN_QUOTE_WEIGHT:
            return None
        holding = [i for i, text in enumerate(self._folded) if needle in text]
        if not holding:
            return None
        newest = max(holding, key=lambda i: (self.messages[i].time or 0, i))
        found = _span(self.messages[newest], needle)
        assert found is not None  # the folded text holds it
        return Said(
            found.words, found.harness, found.session_id, found.seq, found.time, len(holding)
        )


def person_words(catalog: Catalog, keys: Iterable[SessionKey] | None = None) -> PersonWords:
    """The person's stored messages of the sessions `keys` (every stored one when None)."""
    return PersonWords(
        Message(m.harness, m.session_id, m.seq, m.time, m.text)
        for m in catalog.human_messages(keys)
    )
