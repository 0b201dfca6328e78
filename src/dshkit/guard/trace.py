"""The trace `dshkit guard explain` prints, rebuilt from a traced walk without touching it: the
line's segments, the wrappers peeled off each, the variables and `~` it expands, the paths its
commands name resolved against the workspace, and what to do instead.

The walker keeps every simple command it met, in order, wrappers included (`sudo env X=1 rm
-rf d` is met as itself, then `env X=1 rm -rf d`, then `rm -rf d`): a command whose words end
with the next one's, or whose next one is nested a level deeper (`bash -c '…'`), is a wrapper
of it. The rest is read from those commands and the path model (paths.py), so the hook's
path pays nothing for it.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import TYPE_CHECKING

from .paths import NOWHERE
from .policy import Kind

if TYPE_CHECKING:
    from .commands import Command
    from .service import Classification
    from .wire import ExpansionJson, PathJson, WrapperJson

MAX_PATHS = 50
_VARIABLE = re.compile(
    r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?|\$env:([A-Za-z_][A-Za-z0-9_]*)|(?<![\w/])~"
)
# What a person can do instead, per kind of harm (the hook says it in the person's language).
ADVICE = {
    Kind.DESTRUCTIVE: "What this removes cannot be brought back: act only on objects this task "
    "made and names; if it must run, run it yourself in a terminal.",
    Kind.OUTSIDE: "Delete or change files inside the workspace only; for files outside it, "
    "run the command yourself.",
    Kind.WORKSPACE: "This empties the whole workspace: delete the exact files or build outputs "
    "(build, dist) instead.",
    Kind.DISK: "This wipes a disk, partition or volume and cannot be undone: not for an agent.",
    Kind.WORK: "This throws away uncommitted changes, unmerged commits or the way back to them: "
    "commit, `git stash` or branch first.",
    Kind.SHARED: "Push to a new branch of your own (without --force) and open a merge request.",
    Kind.MACHINE: "This affects the whole machine or services others use: not for an agent.",
    Kind.REMOTE: "This deletes or changes things on another machine, which cannot be checked "
    "or undone from here: run it yourself.",
    Kind.CONFIG: "Credentials, shell start-up files, git hooks and the agent's own settings "
    "change every later run: edit them yourself.",
    Kind.SECRET: "This puts a key in the model's context: read a non-secret file "
    "(.env.example) or set the value in the environment yourself.",
    Kind.LEAK: "This sends a credential off this machine, where no one can take it back: "
    "never send credentials away; let the person issue the service a token of its own.",
    Kind.UNKNOWN: "Write paths and arguments as plain values, and inline code into a file "
    "first; or use the balanced mode, where such commands are asked about.",
    Kind.OPAQUE: "Save what would run (a downloaded or decoded script) to a file, read it, "
    "then run that file.",
}
SEARCH_ADVICE = "Search the workspace or one directory (`grep -r key src/`), not /, a drive "
SEARCH_ADVICE += "root, the home directory or AppData."


def wrappers(seen: list[Command]) -> list[int]:
    """The indexes of the commands that only run the command after them."""
    found = []
    for index, (command, after) in enumerate(pairwise(seen)):
        words, then = _words(command), _words(after)
        if after.depth > command.depth or (
            after.depth == command.depth and len(then) < len(words) and words[-len(then) :] == then
        ):
            found.append(index)
    return found


def _words(command: Command) -> list[str]:
    return [command.name, *(w.text for w in command.args)]


def segments(seen: list[Command], wrapped: list[int]) -> list[list[str]]:
    """The line's own commands (depth 0), each as written before its wrappers were peeled."""
    peeled = set(wrapped)
    found = []
    for index, command in enumerate(seen):
        if command.depth == 0 and (index == 0 or index - 1 not in peeled):
            found.append([command.name, *(w.shown for w in command.args)])
    return found


def wrapper_list(seen: list[Command], wrapped: list[int]) -> list[WrapperJson]:
    return [
        {
            "wrapper": seen[i].name,
            "runs": seen[i + 1].name,
            "nested": seen[i + 1].depth > seen[i].depth,
        }
        for i in wrapped
    ]


def expansions(found: Classification, line: str, shell: str) -> list[ExpansionJson]:
    """Each variable (and `~`) the line names, with the value the guard took for it, or null
    when it is only known when the line runs."""
    judge = found.judge
    if judge is None:
        return []
    places = judge.places
    known = places.expansions(shell, places.workspace, judge.variables)
    if shell == "pwsh":
        known = {k.lower(): v for k, v in known.items()}
    shown: dict[str, str | None] = {}
    for match in _VARIABLE.finditer(line):
        if match.group(0) == "~":
            shown.setdefault("~", places.home)
        elif match.group(2):
            name = f"env:{match.group(2)}"
            shown.setdefault(f"$env:{match.group(2)}", known.get(name.lower()))
        else:
            name = match.group(1)
            key = name.lower() if shell == "pwsh" else name
            shown.setdefault(f"${name}", known.get(key))
    return [{"name": name, "value": value} for name, value in shown.items()]


def paths(found: Classification, wrapped: list[int]) -> list[PathJson]:
    """The paths the commands name (not their options), resolved against the workspace, and
    where each lands: inside it, the workspace itself, outside it, or unknown."""
    judge = found.judge
    if judge is None:
        return []
    places, peeled = judge.places, set(wrapped)
    judged = {id(command) for command, _ in (judge.owners or {}).values()}
    result: list[PathJson] = []
    met: set[tuple[str, str]] = set()
    for index, command in enumerate(judge.seen):
        if index in peeled:
            continue
        for word in command.args:
            text = word.text
            if text.startswith("-") or any(c.isspace() for c in text):
                continue
            if id(command) not in judged and not _path_like(text):
                continue
            where = places.where(word, command.cwd)
            resolved = None
            if where != NOWHERE and not word.dynamic:
                resolved = places.resolve(text.replace("\0", ""), command.cwd)
            key = (word.shown, command.name)
            if key in met:
                continue
            met.add(key)
            result.append(
                {"word": word.shown, "command": command.name, "path": resolved, "where": where}
            )
            if len(result) >= MAX_PATHS:
                return result
    return result


def _path_like(text: str) -> bool:
    return (
        "/" in text
        or "\\" in text
        or text.startswith(("~", ".", "$"))
        or text in ("*", "..")
        or "\0" in text
    )


def advice(found: Classification, decision: str | None) -> str | None:
    """What to do instead, when the decision is not allow (None for an allow)."""
    if decision == "allow" or (decision is None and found.risk == "safe"):
        return None
    if found.denied is not None:
        return "Your own deny rule decided: change the command, or the rule."
    if found.risk == "safe" and found.global_search:
        return SEARCH_ADVICE
    if found.kind == Kind.LEAK and found.leak is not None:
        from .leaks import said

        return said(*found.leak, "en")  # what would leave, and where to
    return ADVICE.get(found.kind, ADVICE[Kind.DESTRUCTIVE])
