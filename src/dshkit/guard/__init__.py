"""The command risk policy: what a shell command is (risk) apart from what to do about it.

`classify_command` reads a bash or PowerShell line with a real lexer (`lexer.py`), walks every
command in it, seeing through wrappers, shells and inline code (`walk.py`), and judges each by
its own rule (`commands.py`, options read by `options.py`, places by `paths.py`): `safe`,
`unknown` (it cannot be understood: eval, a decoded or downloaded payload run by a shell) or
`destructive` (a delete leaving the workspace, a disk or permission wipe, a force push to a
shared branch), and separately whether it is a global search (a recursive scan rooted at `/`,
a drive root, the home directory or AppData). `policy_decision` turns that into allow / ask /
deny through one table per mode (`policy.py`).
"""

from __future__ import annotations

from .policy import (
    DECISIONS,
    DEFAULT_MODE,
    DESTRUCTIVE,
    MODES,
    RISKS,
    SAFE,
    TABLE,
    UNKNOWN,
    policy_decision,
    strictest,
)
from .service import Classification, classify_command


def decisions(classification: Classification) -> dict[str, str]:
    """The decision of every mode for one classification."""
    return {
        mode: policy_decision(classification.risk, classification.global_search, mode)
        for mode in MODES
    }


__all__ = [
    "DECISIONS",
    "DEFAULT_MODE",
    "DESTRUCTIVE",
    "MODES",
    "RISKS",
    "SAFE",
    "TABLE",
    "UNKNOWN",
    "Classification",
    "classify_command",
    "decisions",
    "policy_decision",
    "strictest",
]
