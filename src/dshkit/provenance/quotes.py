"""Quote verification: whether words were said by the person, and where.

A model asked to cite the person's words may cite a line of a README the agent read, its own
sentence, injected runtime context, a date, or nothing anyone said. Only the person's stored
messages count (`sessions` already tells them from tool output, assistant text and what a
harness injects: docs/design/sessions.md#only-typed-words-are-human-messages), so a quote is
looked up there and nowhere else.

The lookup forgives what does not change the words — runs of blank space, full-width forms,
letter case, punctuation and symbols of either language (a model rewrites 「」 as "" and drops a
final 。): only letters and digits are compared, as `words.normalise` compares them — and nothing
that does: a changed, added or dropped word is not the person's quote
(docs/design/provenance.md#a-quote-is-the-persons-words-folded-not-paraphrased). Too short a
quote proves nothing ("ok" is in half of anyone's messages), so a quote must carry at least
MIN_QUOTE_WEIGHT (a Han character weighs two, any other letter or digit one).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:  # (the injection verifies quotes at a session's start: no catalog there)
    from ..sessions.catalog import Catalog, SessionKey

MIN_QUOTE_WEIGHT = 6
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")


@lru_cache(maxsize=8192)
def _fold_char(char: str) -> str:
    """One character as the comparison sees it: '' when it is dropped."""
    return "".join(c for c in unicodedata.normalize("NFKC", char).casefold() if c.isalnum())


def fold(text: str) -> str:
    """`text` as quotes are compared: its letters and digits, width and case folded."""
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


def said_in(message: Message, quote: str) -> Said | None:
    """Where `quote` is in this one message (folded as `fold` does), or None."""
    needle = fold(quote)
    if weight(needle) < MIN_QUOTE_WEIGHT:
        return None
    return _span(message, needle, quote)


def _span(message: Message, needle: str, quote: str) -> Said | None:
    """The first place `needle` (the folded `quote`) is in the message where it is the same
    words: it does not start or end inside a word ("ways run" is not in "always run"), and it
    splits Latin words where the message does ("the rapist" is not "therapist")."""
    folded, origin = _fold_with_map(message.text)
    start = folded.find(needle)
    words = _words(quote)
    while start >= 0:
        first, last = origin[start], origin[start + len(needle) - 1]
        if (
            _edge(message.text, first - 1, needle[0])
            and _edge(message.text, last + 1, needle[-1])
            and _words(message.text[first : last + 1]) == words
        ):
            return Said(
                message.text[first : last + 1],
                message.harness,
                message.session_id,
                message.seq,
                message.time,
            )
        start = folded.find(needle, start + 1)
    return None


_LATIN_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    """The Latin words and numbers of `text`, width and case folded."""
    return _LATIN_WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _edge(text: str, index: int, char: str) -> bool:
    """Whether a quote whose edge character is `char` may end beside `text[index]`: not when
    both are ASCII letters or digits (the word would go on). Han text has no such edges."""
    if not (char.isascii() and char.isalnum()) or not 0 <= index < len(text):
        return True
    beside = text[index]
    return not (beside.isascii() and beside.isalnum())


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
        candidates = [i for i, text in enumerate(self._folded) if needle in text]
        found = [(i, said) for i in candidates if (said := _span(self.messages[i], needle, quote))]
        if not found:
            return None
        _, newest = max(found, key=lambda pair: (self.messages[pair[0]].time or 0, pair[0]))
        return Said(
            newest.words,
            newest.harness,
            newest.session_id,
            newest.seq,
            newest.time,
            len(found),
        )


def person_words(catalog: Catalog, keys: Iterable[SessionKey] | None = None) -> PersonWords:
    """The person's stored messages of the sessions `keys` (every stored one when None)."""
    return PersonWords(
        Message(m.harness, m.session_id, m.seq, m.time, m.text)
        for m in catalog.human_messages(keys)
    )
