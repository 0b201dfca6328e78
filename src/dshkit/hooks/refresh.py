"""On Stop and SessionEnd: an incremental scan and the profile trigger check, detached.

The agent is not kept waiting: a separate process runs `dshkit refresh`, and none is started
while a scan holds the store's lease (at most one at a time, decided through the store). The
rule is `dshkit.inject.rules.refresh_on_pause`, which the preview runs too (starting nothing).
"""

from __future__ import annotations

from ..hookio import Answer, Call
from ..inject import rules


def on_session_pause(call: Call) -> Answer | None:
    return rules.refresh_on_pause(call)
