"""Capability facts for the agent: on its first request, and again when they changed.

The report goes with the harness's context event (SessionStart for Claude Code and Codex;
the first UserPromptSubmit for DSH, whose bridge delivers SessionStart context late), again
after a compaction or /clear, and on a later UserPromptSubmit when the session's modes
changed (a changed mode voids old conclusions), when probes pending at the last delivery
have results now, or when none was delivered yet (a start that could not make it). Nothing
waits for a probe: a missing or expired result starts one detached `dshkit capability
--probe`. A session's delivery is recorded by the commit, once the answer was written to the
harness. `DSHKIT_CAPABILITY=off` turns it off. The rule is
`dshkit.inject.rules.capability_facts`, which the preview runs too.
"""

from __future__ import annotations

from ..hookio import Answer, Call
from ..inject import rules


def on_session_start(call: Call) -> Answer | None:
    return rules.capability_facts(call)


def on_prompt(call: Call) -> Answer | None:
    return rules.capability_facts(call)
