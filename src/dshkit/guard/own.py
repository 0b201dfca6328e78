"""The guard's own switches and the files edits.py protects, reached from a shell: an agent's
command that loosens the guard (`dshkit guard mode autonomous`, `dshkit guard allow …`,
`dshkit uninstall-hooks`) or writes such a file by a redirection or `tee` (`>> ~/.bashrc`) is
judged as a file tool's write to it is.

Read from the simple commands the walker saw (wrappers peeled, so `sudo env dshkit …` and
`python -m dshkit …` are met too): no rule of the command table is needed, and the person
still runs these in a terminal of their own.
"""

from __future__ import annotations

import os
from itertools import pairwise

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .commands import Command
    from .edits import Places as EditPlaces
    from .service import Classification

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


_REDIRECTS = (">", ">>", ">|", "&>", "&>>")
_SHELLS = ("bash", "sh", "zsh", "dash", "ksh")


def shell_writes(found: Classification, line: str, shell: str, places: EditPlaces) -> str | None:
    """Why a line writes a credential, shell start-up, git hook or agent-settings file by a
    redirection (`>> ~/.bashrc`) or `tee` (edits.py's list of such files), or None. The line
    is lexed again, with the walk's variables, and a `bash -c` argument once more."""
    from .edits import _protected
    from .lexer import LexError, Word, lex

    judge = found.judge
    if judge is None:
        return None
    targets: list[str] = []
    lines = [(line, shell)]
    for command in judge.seen:
        name = os.path.basename(command.name)
        words = [w.text for w in command.args]
        if name == "tee":
            targets += [w for w in words if not w.startswith("-")]
        if name in _SHELLS and "-c" in words[:-1]:
            lines.append((words[words.index("-c") + 1], "bash"))
    for text, dialect in lines:
        if ">" not in text:
            continue
        known = judge.places.expansions(dialect, judge.places.workspace, judge.variables)
        try:
            lexed = lex(text, dialect, known, judge.places.home)
        except LexError:
            continue
        tokens = lexed.tokens
        for token, after in pairwise(tokens):
            if isinstance(token, str) and token in _REDIRECTS and isinstance(after, Word):
                targets.append(after.text)
    for target in targets:
        if "\0" in target:
            continue
        why = _protected(places.resolve(target), places)
        if why is not None:
            return f"writes {places.resolve(target)}: {why}"
    return None
