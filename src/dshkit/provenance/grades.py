"""Source grades: how far a statement dshkit hands an agent can be trusted, by where it came from.

Everything dshkit puts into a session (profile entries, memory, the handoff card) carries the
grade of its source, and the grade decides how it may be said
(docs/design/provenance.md#four-grades-of-source):

- `PERSON`: the person's own words, verified where they said them. Only these may be framed as
  rules for the agent to follow.
- `OBSERVED`: what dshkit saw itself (a command's exit status, a file written, a count).
- `MODEL`: a model's claim (an agent's sentence, a summary dshkit asked for) not backed by
  either of the above.
- `EXTERNAL`: text from outside (tool output, files, web pages). Never injected verbatim: it
  is summarised into dshkit's own template or referenced by id.
"""

from __future__ import annotations

from enum import IntEnum


class Grade(IntEnum):
    EXTERNAL = 0
    MODEL = 1
    OBSERVED = 2
    PERSON = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str) -> Grade:
        """A grade from its label ('person', 'observed', 'model', 'external')."""
        try:
            return cls[value.upper()]
        except KeyError:
            labels = ", ".join(g.label for g in cls)
            raise ValueError(f"unknown source grade {value!r} (one of {labels})") from None

    @property
    def verbatim(self) -> bool:
        """Whether text of this grade may reach an agent's context word for word."""
        return self is not Grade.EXTERNAL

    @property
    def may_instruct(self) -> bool:
        """Whether text of this grade may be framed as something the agent should follow."""
        return self is Grade.PERSON
