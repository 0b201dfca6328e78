"""The command risk policy: what a shell command is (risk) apart from what to do about it.

`classify_command` reads a bash or PowerShell line with a real lexer (`lexer.py`) and judges
every command in it (`rules.py`): `safe`, `unknown` (it cannot be understood: eval, a decoded
or downloaded payload run by a shell) or `destructive` (a delete leaving the workspace, a disk
or permission wipe, a force push to a shared branch), and separately whether it is a global
search (a recursive scan rooted at `/`, a drive root, the home directory or AppData).
`policy_decision` turns that into allow / ask / deny through one table per mode.
"""

from __future__ import annotations

from .rules import DESTRUCTIVE, SAFE, UNKNOWN, Classification, classify_command

MODES = ("strict", "balanced", "autonomous")
DEFAULT_MODE = "balanced"  # `[guard] mode` (config.py) defaults to it
RISKS = (SAFE, UNKNOWN, DESTRUCTIVE)
DECISIONS = ("allow", "ask", "deny")  # from the loosest to the strictest

# The operator's table: each row a risk, each column a mode. A global search is its own row:
# blocked before it runs, never allowed.
TABLE: dict[str, dict[str, str]] = {
    #                  strict   balanced  autonomous
    SAFE: dict(zip(MODES, ("allow", "allow", "allow"), strict=True)),
    UNKNOWN: dict(zip(MODES, ("deny", "ask", "allow"), strict=True)),
    DESTRUCTIVE: dict(zip(MODES, ("deny", "deny", "ask"), strict=True)),
    "globalSearch": dict(zip(MODES, ("deny", "deny", "ask"), strict=True)),
}


def policy_decision(risk: str, global_search: bool, mode: str) -> str:
    """ "allow", "ask" or "deny": the strictest of the risk's row and, for a global search,
    the global-search row. ValueError names an unknown risk or mode."""
    if risk not in RISKS:
        raise ValueError(f"unknown risk {risk!r} (known: {', '.join(RISKS)})")
    if mode not in MODES:
        raise ValueError(f"unknown policy mode {mode!r} (known: {', '.join(MODES)})")
    decision = TABLE[risk][mode]
    if global_search:
        decision = strictest(decision, TABLE["globalSearch"][mode])
    return decision


def strictest(*decisions: str) -> str:
    """The strictest of the decisions: deny over ask over allow."""
    return max(decisions, key=DECISIONS.index)


def decisions(classification: Classification) -> dict[str, str]:
    """The decision of every mode for one classification."""
    return {
        mode: policy_decision(classification.risk, classification.global_search, mode)
        for mode in MODES
    }


__all__ = [
    "DEFAULT_MODE",
    "DESTRUCTIVE",
    "MODES",
    "SAFE",
    "TABLE",
    "UNKNOWN",
    "Classification",
    "classify_command",
    "decisions",
    "policy_decision",
    "strictest",
]
