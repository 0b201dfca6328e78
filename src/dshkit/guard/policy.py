"""The decision table: a command's risk, whether it is a global search and whether it runs
code the guard cannot see, under a mode, give allow, ask or deny.

What a command *is* (its risk) is the rules' business; what to *do* about it is this table's
alone, one row a risk, one column a mode, the strictest applicable row winning.
"""

from __future__ import annotations

SAFE, UNKNOWN, DESTRUCTIVE = "safe", "unknown", "destructive"
RISKS = (SAFE, UNKNOWN, DESTRUCTIVE)  # from the least to the most risky
MODES = ("strict", "balanced", "autonomous")
DEFAULT_MODE = "balanced"  # `[guard] mode` (config.py) defaults to it
DECISIONS = ("allow", "ask", "deny")  # from the loosest to the strictest
GLOBAL_SEARCH = "globalSearch"
OPAQUE = "opaque"


class Kind:
    """What kind of harm a finding is: not a row of the table (its risk is), but what a person
    can do instead, which differs between a delete outside the workspace and a force push to
    main. A finding's kind is its risk unless its rule names one; code the guard cannot see
    is `OPAQUE`. (A namespace: `paths` names places OUTSIDE and WORKSPACE too.)"""

    UNKNOWN, DESTRUCTIVE, OPAQUE = UNKNOWN, DESTRUCTIVE, OPAQUE
    OUTSIDE = "outside"  # deletes, moves or changes files outside the workspace
    WORKSPACE = "workspace"  # deletes (or moves away) the whole workspace
    DISK = "disk"  # wipes or overwrites a disk, a partition or a volume's free space
    WORK = "work"  # git throws away uncommitted changes, unmerged commits or the way back
    SHARED = "shared"  # a force push rewriting a branch others share
    MACHINE = "machine"  # the machine or what others use: shutdown, firewall, kill -1
    REMOTE = "remote"  # deletes on another machine
    CONFIG = "config"  # writes a credential, shell-start or harness-config file (its own guard)
    SECRET = "secret"  # reads a credential file into the agent's context (file tools)
    LEAK = "leak"  # sends a secret off the machine (leaks.py): what leaves, and where to
    ALL = (UNKNOWN, DESTRUCTIVE, OPAQUE, OUTSIDE, WORKSPACE, DISK, WORK, SHARED, MACHINE, REMOTE,
           CONFIG, SECRET, LEAK)  # fmt: skip


# The operator's table: each row a risk, each column a mode. A global search is its own row:
# blocked before it runs, never allowed. So is opaque code (a download or a decoded payload
# run by a shell, eval of a variable, a command name only known when it runs): unlike an
# unknown program with plain arguments, nothing of what it runs was seen, so even autonomous
# asks.
TABLE: dict[str, dict[str, str]] = {
    #                  strict   balanced  autonomous
    SAFE: dict(zip(MODES, ("allow", "allow", "allow"), strict=True)),
    UNKNOWN: dict(zip(MODES, ("deny", "ask", "allow"), strict=True)),
    DESTRUCTIVE: dict(zip(MODES, ("deny", "deny", "ask"), strict=True)),
    GLOBAL_SEARCH: dict(zip(MODES, ("deny", "deny", "ask"), strict=True)),
    OPAQUE: dict(zip(MODES, ("deny", "ask", "ask"), strict=True)),
}


def decide(risk: str, global_search: bool, mode: str, opaque: bool = False) -> str:
    """ "allow", "ask" or "deny": the strictest of the risk's row and, for a global search
    and for opaque code, their rows. ValueError names an unknown risk or mode."""
    if risk not in RISKS:
        raise ValueError(f"unknown risk {risk!r} (known: {', '.join(RISKS)})")
    if mode not in MODES:
        raise ValueError(f"unknown policy mode {mode!r} (known: {', '.join(MODES)})")
    decision = TABLE[risk][mode]
    if global_search:
        decision = strictest(decision, TABLE[GLOBAL_SEARCH][mode])
    if opaque:
        decision = strictest(decision, TABLE[OPAQUE][mode])
    return decision


def strictest(*decisions: str) -> str:
    """The strictest of the decisions: deny over ask over allow."""
    return max(decisions, key=DECISIONS.index)
