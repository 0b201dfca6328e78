"""The command guard: what an agent's shell command risks, apart from what to do about it.

`classify` reads a bash or PowerShell line with a real lexer (`lexer.py`), walks every command
in it, seeing through wrappers, shells and inline code (`walk.py`), and judges each by its own
rule (`commands.py`, options read by `options.py`, places by `paths.py`): `safe`, `unknown`
(it cannot be understood: eval, a decoded or downloaded payload run by a shell) or
`destructive` (a delete leaving the workspace, a disk or permission wipe, a force push to a
shared branch), and separately whether it is a global search (a recursive scan rooted at `/`,
a drive root, the home directory or AppData). `decide` turns that into allow / ask / deny
through one table per mode (`policy.py`), after the person's own allow and deny rules
(`rules.py`); `explain_line` shows the words the walker saw and the rule that decided.
"""

from __future__ import annotations

from ..lazy import lazy_names
from .policy import (
    DECISIONS,
    DEFAULT_MODE,
    DESTRUCTIVE,
    MODES,
    RISKS,
    SAFE,
    TABLE,
    UNKNOWN,
    decide,
    strictest,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from .service import SHELLS, Classification, classify, decisions, explain, explain_line

# The judge (lexer, walker, rules) is loaded at the first use of its names: a file tool's hook
# (guard/edits.py) imports this package on every Read, and needs none of it.
_HOMES = {
    name: "service"
    for name in ("SHELLS", "Classification", "classify", "decisions", "explain", "explain_line")
}
__getattr__, __dir__ = lazy_names(globals(), _HOMES)

__all__ = [
    "DECISIONS",
    "DEFAULT_MODE",
    "DESTRUCTIVE",
    "MODES",
    "RISKS",
    "SAFE",
    "SHELLS",
    "TABLE",
    "UNKNOWN",
    "Classification",
    "classify",
    "decide",
    "decisions",
    "explain",
    "explain_line",
    "strictest",
]
