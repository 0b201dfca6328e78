"""Profile injection: the effective text reaches the model once per session
(docs/design/profile.md#the-profile-reaches-a-session-once).

Claude Code and Codex deliver SessionStart context before the first request, so it goes
there. DSH's bridge delivers SessionStart context only from the second request, and fires
UserPromptSubmit before *every* model step (after the first, its prompt is the contexts
injected so far): there the text goes with the session's first UserPromptSubmit, and later
firings are recognised because the session is marked as injected — once the text was
written to the harness, not before. A start that could not deliver it (a locked store, an
answer never written) leaves it owed: the session's next prompt carries it, once. A
compaction or a /clear drops what was injected, so those SessionStarts inject again. Empty
text: nothing. The rule is `dshkit.inject.rules.profile`, which the preview runs too.
"""

from __future__ import annotations

from ..hookio import Answer, Call
from ..inject import rules


def on_session_start(call: Call) -> Answer | None:
    return rules.profile(call)


def on_prompt(call: Call) -> Answer | None:
    return rules.profile(call)
