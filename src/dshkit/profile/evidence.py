"""An entry's evidence checked against what the person said: verified quotes with where they
were said, and what could not be traced.

The model is asked to cite the person's words, and it cites a line of a README the agent
read, its own sentence, a date, the template's placeholder, or nothing anyone said. Each item
of an entry's evidence is therefore looked up (docs/design/profile.md#evidence-is-verified):

- `[n]` (a number of the material the prompt listed, as the prompt writes them) stands for
  that message: the person's words by construction, at a known place. A number outside the
  list is not evidence.
- anything else is a quote, found in the person's stored messages by the provenance layer
  (`provenance.quotes`), after the decoration a model adds is taken off: a leading `[n]`, a
  date, surrounding quotation marks.

What is kept is the person's own words, never the model's rendering of them, each with its
place (harness, session, seq, time): evidence stays traceable after the prompt that numbered
it is gone. A quote longer than MAX_QUOTE_CHARS is kept to that length with an ellipsis, and
said so; at most MAX_EVIDENCE items are kept per entry.

A claim that repeats the prompt's own words (a category's definition, the counted-signal
line) is no observation of the person, whatever its evidence: `echoes` tells it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..provenance.quotes import Message, PersonWords, Said, fold, said_in
from ..provenance.secrets import redact
from .wire import SourceJson

MAX_EVIDENCE = 5  # verified items kept per entry
MAX_QUOTE_CHARS = 200  # of one quote's words; a longer one is kept that long, with "…"
ECHO_SHARE = 0.6  # a claim with this share of its trigrams in the prompt's own text echoes it
_NUMBERED = re.compile(r"^\s*[\[［【(（]\s*(\d{1,5})\s*[\]］】)）]\s*")
_DATE = re.compile(r"^\s*\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?\s*")
_QUOTES = "\"'“”‘’「」『』《》`"


# One message of the material, as the prompt numbered it: a message of the person's, where said.
Cited = Message


@dataclass
class Checked:
    """An entry's evidence after the check: the verified sources (the person's words, where
    said) and the items that could not be traced, each with why."""

    sources: list[SourceJson] = field(default_factory=list)
    untraced: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def quotes(self) -> list[str]:
        return [source["quote"] for source in self.sources]


class EvidenceCheck:
    """Checks evidence against the person's messages `words` and the numbered `material` the
    prompt listed (material[0] is `[1]`)."""

    def __init__(self, words: PersonWords, material: Sequence[Cited] = ()) -> None:
        self.words = words
        self.material = list(material)

    def check(self, items: Sequence[object]) -> Checked:
        checked = Checked()
        seen: set[tuple[str, str, int | None, str]] = set()
        for item in items:
            said, why = self._one(str(item))
            if said is None:
                checked.untraced.append(f"{str(item)[:80]!r}: {why}")
                continue
            source = _source(said)
            key = (source["harness"], source["session"], source["seq"], fold(source["quote"]))
            if key in seen:
                continue
            seen.add(key)
            if len(checked.sources) == MAX_EVIDENCE:
                checked.notes.append(
                    f"evidence beyond {MAX_EVIDENCE} items not kept: {str(item)[:40]!r}"
                )
                continue
            if len(said.words) > MAX_QUOTE_CHARS:
                checked.notes.append(
                    f"a quote of {len(said.words)} characters kept to its first "
                    f"{MAX_QUOTE_CHARS} (the rest is at its seq)"
                )
            checked.sources.append(source)
        return checked

    def _one(self, item: str) -> tuple[Said | None, str]:
        numbered = _NUMBERED.match(item)
        rest = item[numbered.end() :] if numbered else item
        rest = _DATE.sub("", rest, count=1).strip().strip(_QUOTES).strip()
        if fold(rest):
            # The material as the model read it first (its secrets already markers), then all
            # the person said.
            found = self._in_material(rest) or self.words.find(rest)
            if found is not None:
                return found, ""
            if not numbered:
                return None, "the person never said this"
        if numbered:
            number = int(numbered.group(1))
            if not 1 <= number <= len(self.material):
                return None, f"[{number}] is no message of the material (1-{len(self.material)})"
            cited = self.material[number - 1]
            if fold(rest) and fold(rest) not in fold(cited.text):
                return None, f"[{number}] does not say this"
            return Said(cited.text, cited.harness, cited.session_id, cited.seq, cited.time), ""
        return None, "no words to look up (a date or a number alone is not a quote)"

    def _in_material(self, quote: str) -> Said | None:
        for cited in reversed(self.material):
            said = said_in(cited, quote)
            if said is not None:
                return said
        return None


def _source(said: Said) -> SourceJson:
    # The person's words, with any secret in them a marker naming its kind
    # (docs/design/provenance.md): a quote travels into every session.
    words = " ".join(redact(said.words).text.split())
    if len(words) > MAX_QUOTE_CHARS:
        words = words[:MAX_QUOTE_CHARS] + "…"
    return {
        "quote": words,
        "harness": said.harness,
        "session": said.session_id,
        "seq": said.seq,
        "at": said.time,
    }


def echoes(claim: str, prompt_text: str) -> bool:
    """Whether `claim` is mostly the prompt's own words (its trigrams, folded, found there)."""
    folded = fold(claim)
    if len(folded) < 3:
        return False
    own = fold(prompt_text)
    grams = [folded[i : i + 3] for i in range(len(folded) - 2)]
    return sum(1 for gram in grams if gram in own) / len(grams) >= ECHO_SHARE
