"""Provenance: where each statement dshkit tells an agent comes from, and what may be said.

One layer every capability that writes into an agent's context goes through
(docs/design/provenance.md): quote verification against the person's stored messages
(`quotes`), the grades of sources (`grades`), secret redaction (`secrets`), and the scan for
text shaped to steer the agent that reads it (`injection`). The names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .grades import Grade
    from .quotes import MIN_QUOTE_WEIGHT, Message, PersonWords, Said, fold, person_words

_HOMES = {
    "Grade": "grades",
    "MIN_QUOTE_WEIGHT": "quotes",
    "Message": "quotes",
    "PersonWords": "quotes",
    "Said": "quotes",
    "fold": "quotes",
    "person_words": "quotes",
}
__all__ = [
    "MIN_QUOTE_WEIGHT",
    "Grade",
    "Message",
    "PersonWords",
    "Said",
    "fold",
    "person_words",
]

__getattr__, __dir__ = lazy_names(globals(), _HOMES)
