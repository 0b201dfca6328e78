"""Provenance: where each statement dshkit tells an agent comes from, and what may be said.

One layer every capability that writes into an agent's context goes through
(docs/design/provenance.md): quote verification against the person's stored messages
(`quotes`), the grades of sources (`grades`), secret redaction (`secrets`), and the scan for
text shaped to steer the agent that reads it (`injection`). The names load on first use.
"""

from __future__ import annotations

from ..lazy import lazy_names

# typing.TYPE_CHECKING without importing typing: memory's injection scan runs on the hooks'
# path, and importing it imports this package first.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .grades import Grade
    from .injection import Verdict, scan
    from .quotes import MIN_QUOTE_WEIGHT, Message, PersonWords, Said, fold, person_words
    from .secrets import Redacted, has_secret, redact

_HOMES = {
    "Grade": "grades",
    "MIN_QUOTE_WEIGHT": "quotes",
    "Message": "quotes",
    "PersonWords": "quotes",
    "Said": "quotes",
    "fold": "quotes",
    "person_words": "quotes",
    "Verdict": "injection",
    "scan": "injection",
    "Redacted": "secrets",
    "has_secret": "secrets",
    "redact": "secrets",
}
__all__ = [
    "MIN_QUOTE_WEIGHT",
    "Grade",
    "Message",
    "PersonWords",
    "Redacted",
    "Said",
    "Verdict",
    "fold",
    "has_secret",
    "person_words",
    "redact",
    "scan",
]

__getattr__, __dir__ = lazy_names(globals(), _HOMES)
