"""The guard's own switches, reached from a shell: an agent's command that loosens the guard
(`dshkit guard mode autonomous`, `dshkit guard allow …`, `dshkit uninstall-hooks`) is judged
as rewriting the agent's own guard, as a file tool's write to its settings is (edits.py).

Read from the simple commands the walker saw (wrappers peeled, so `sudo env dshkit …` and
`python -m dshkit …` are met too): no rule of the command table is needed, and the person
still runs these in a terminal of their own.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .commands import Command

_LOOSER_MODES = ("balanced", "autonomous", "config")


def loosening(seen: list[Command]) -> str | None:
    """Why one of the commands loosens the guard (English, naming it), or None."""
    for command in seen:
        words = [w.text for w in command.args]
        name = os.path.basename(command.name.replace("\\", "/")).lower()
        if name.startswith("python") and words[:2] == ["-m", "dshkit"]:
            words = words[2:]
        elif name not in ("dshkit", "dshkit.exe"):
            continue
        said = _loosens([w for w in words if not w.startswith("--state-dir")])
        if said is not None:
            return f"dshkit {said}: loosens the agent's own command guard"
    return None


def _loosens(words: list[str]) -> str | None:
    plain = [w for w in words if not w.startswith("-")]
    if plain[:1] == ["uninstall-hooks"]:
        return "uninstall-hooks"
    if plain[:1] != ["guard"]:
        return None
    if plain[1:2] == ["mode"] and len(plain) > 2 and plain[2] in _LOOSER_MODES:
        return f"guard mode {plain[2]}"
    if plain[1:2] == ["allow"] and "--deny" not in words:
        return "guard allow"
    return None
