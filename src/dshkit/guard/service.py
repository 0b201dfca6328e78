"""The command guard's face: what a command line risks (`classify`), what a mode does about
it (`decide`, `decisions`), and the record that explains both (`explain`)."""

from __future__ import annotations

import os

from .dialect import dialects, places_for
from .policy import DESTRUCTIVE, MODES, RISKS, SAFE, UNKNOWN, decide
from .walk import Judge

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every shell command)
if TYPE_CHECKING:
    from typing import Any

SHELLS = ("bash", "pwsh")
MAX_COMMAND_CHARS = 100_000


class Classification:
    """A command line's risk, whether it is a global search, and why (names the command).
    (A plain class: dataclasses cost this hot path more than the classification itself.)"""

    __slots__ = ("global_search", "reason", "risk")

    def __init__(self, risk: str, global_search: bool, reason: str) -> None:
        self.risk = risk
        self.global_search = global_search
        self.reason = reason

    def __repr__(self) -> str:
        return f"Classification({self.risk!r}, global_search={self.global_search}, {self.reason!r})"


def classify(
    command: str,
    shell: str = "bash",
    cwd: str | None = None,
    *,
    home: str | None = None,
    workdir: str | None = None,
) -> Classification:
    """Judge `command` (a bash or pwsh line) run in `workdir` (default: `cwd`) for the
    workspace `cwd` (default: the current directory): every command in it, the worst
    winning. `home` defaults to the user's. ValueError names an unknown shell."""
    if shell not in SHELLS:
        raise ValueError(f"unknown shell {shell!r} (known: {', '.join(SHELLS)})")
    if len(command) > MAX_COMMAND_CHARS:
        return Classification(UNKNOWN, False, f"over {MAX_COMMAND_CHARS} characters: not read")
    places = places_for(shell, cwd if cwd is not None else os.getcwd(), home)
    judge = Judge(places)
    judge.line(command, shell, places.resolve(workdir) if workdir else places.workspace, 0)
    found, searches = judge.findings.found, judge.findings.searches
    # The first of the riskiest findings names the command.
    risk, reason = max(found, key=lambda f: RISKS.index(f[0]), default=(SAFE, ""))
    if risk == SAFE:
        reason = searches[0] if searches else "no destructive or opaque command"
    elif searches:
        reason = f"{reason}; {searches[0]}"
    return Classification(risk, bool(searches), reason)


def classify_sent(
    command: str,
    tool: str = "",
    cwd: str | None = None,
    *,
    home: str | None = None,
    workdir: str | None = None,
    platform: str | None = None,
) -> Classification:
    """Judge `command` as a harness's tool `tool` sent it, on `platform` (the harness's, when
    it says): in the shell the tool names and, where the platform or the line's shape says the
    other may run it (dialect.py), in that one too, the worse reading winning. The other
    reading counts only when it finds a destruction or a global search: its unknowns are
    mostly its lexer meeting the first shell's syntax."""
    first, *others = dialects(command, tool, cwd, platform)
    found = classify(command, first, cwd, home=home, workdir=workdir)
    for shell in others:
        other = classify(command, shell, cwd, home=home, workdir=workdir)
        worse = other.risk == DESTRUCTIVE and found.risk != DESTRUCTIVE
        if worse or (other.global_search and not found.global_search):
            name = "PowerShell" if shell == "pwsh" else shell
            risk = other.risk if worse else found.risk
            reason = other.reason if worse or found.risk == SAFE else found.reason
            if reason != other.reason:
                reason = f"{reason}; {other.reason}"
            searched = found.global_search or other.global_search
            found = Classification(risk, searched, f"{reason} (read as {name})")
    return found


def decisions(found: Classification) -> dict[str, str]:
    """The decision of every mode for one classification."""
    return {mode: decide(found.risk, found.global_search, mode) for mode in MODES}


def explain(found: Classification, mode: str | None = None) -> dict[str, Any]:
    """The record of a classification: its risk, whether it is a global search, each mode's
    decision and the reason; with `mode`, that mode's decision too."""
    record: dict[str, Any] = {
        "risk": found.risk,
        "globalSearch": found.global_search,
        "decisions": decisions(found),
        "reason": found.reason,
    }
    if mode is not None:
        record["decision"] = decide(found.risk, found.global_search, mode)
    return record
