"""The person's own rules: allow and deny patterns matched against each simple command the
walker meets, before the built-in judgement.

A pattern is written as in Claude Code's permission rules, `Bash(git push:*)`, or bare,
`npm run *`: the words of a command, the last one `*` (or the pattern ending in `:*`) for
"and any words after"; a `*`, `?` or `[…]` inside a word is a wildcard for that word. It is
matched against a command as the walker sees it: its name as it runs (`/usr/bin/git` is git,
`sudo git push` reaches `git push` too) and its arguments after quotes are removed. A deny
anywhere in the line denies the line in every mode; an allow takes only what its own command
does out of the judgement, so `git push x && rm -rf ~` with `git push:*` allowed is still
judged by its `rm`.

Rules come from `config.toml`: `[guard] allow`/`deny` for every session, and
`[guard.projects."/abs/path"]` for sessions whose workspace is that directory or below it.
A file inside the project would be one the agent can write: its rules could allow anything.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from .commands import Command
    from .wire import PatternJson

ALLOW, DENY = "allow", "deny"
MAX_PATTERN_CHARS = 1_000
_WRAPPED = ("Bash(", "PowerShell(", "Shell(")
_WILD = "*?["


class Pattern:
    """One rule: its text as written, whether it denies, where it came from (e.g. `config.toml
    [guard] allow`), its words, and whether any further words may follow."""

    __slots__ = ("deny", "origin", "prefix", "text", "words")

    def __init__(self, text: str, deny: bool, origin: str) -> None:
        self.text = text
        self.deny = deny
        self.origin = origin
        words, self.prefix = _words(text)
        self.words = words

    @property
    def kind(self) -> str:
        return DENY if self.deny else ALLOW

    def matches(self, words: list[str], fold: bool) -> bool:
        """Whether a command's words (its name first) match; `fold`: names in any case."""
        mine = self.words
        if len(words) < len(mine) or (len(words) > len(mine) and not self.prefix):
            return False
        for index, (want, got) in enumerate(zip(mine, words, strict=False)):
            if index == 0 and fold:
                want, got = want.lower(), got.lower()
            if want == got:
                continue
            if not any(c in want for c in _WILD):
                return False
            from fnmatch import fnmatchcase  # only for a pattern with a wildcard

            if not fnmatchcase(got, want):
                return False
        return True

    def as_json(self) -> PatternJson:
        return {"kind": self.kind, "pattern": self.text, "origin": self.origin}

    def __repr__(self) -> str:
        return f"Pattern({self.text!r}, {self.kind}, {self.origin!r})"


class Rules:
    """The person's rules that apply to one workspace, deny first."""

    __slots__ = ("patterns",)

    def __init__(self, patterns: Iterable[Pattern]) -> None:
        self.patterns = sorted(patterns, key=lambda p: not p.deny)  # deny is tried first

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def match(self, command: Command) -> Pattern | None:
        """The first deny matching `command`, else the first allow, else None."""
        words = [command.name, *(w.text for w in command.args)]
        for pattern in self.patterns:
            if pattern.matches(words, command.pwsh):
                return pattern
        return None


def problem(text: str) -> str | None:
    """What is wrong with a pattern as written (for the config check), or None."""
    if not text.strip():
        return "is empty"
    if len(text) > MAX_PATTERN_CHARS:
        return f"is over {MAX_PATTERN_CHARS} characters"
    if text.startswith(_WRAPPED) and not text.endswith(")"):
        return "opens a Bash( … ) without closing it"
    words, _ = _words(text)
    if not words:
        return "names no command"
    if any(c in words[0] for c in _WILD):
        return "must start with a command name, not a wildcard"
    return None


def _words(text: str) -> tuple[list[str], bool]:
    """A pattern's words and whether further words may follow (`:*`, or a last word `*`)."""
    body = text.strip()
    for opening in _WRAPPED:
        if body.startswith(opening) and body.endswith(")"):
            body = body[len(opening) : -1].strip()
            break
    prefix = body.endswith(":*")
    if prefix:
        body = body[:-2]
    words = body.split()
    if words and words[-1] == "*":
        words, prefix = words[:-1], True
    return words, prefix


def rules_for(section: Mapping[str, Any], workspace: str | None, where: str) -> Rules:
    """The rules of a checked `[guard]` section (config.py) for a workspace: `[guard] allow`
    and `deny`, and those of every `[guard.projects."DIR"]` the workspace is in. `where`
    names the file."""
    found: list[Pattern] = []
    for kind in (DENY, ALLOW):
        found += [Pattern(p, kind == DENY, f"{where} [guard] {kind}") for p in section[kind]]
    projects: Mapping[str, Mapping[str, Any]] = section.get("projects") or {}
    if workspace and projects:
        here = _real(workspace)
        for directory, table in projects.items():
            root = _real(directory)
            if here == root or here.startswith(root.rstrip(os.sep) + os.sep):
                origin = f'{where} [guard.projects."{directory}"]'
                for kind in (DENY, ALLOW):
                    found += [
                        Pattern(p, kind == DENY, f"{origin} {kind}") for p in table.get(kind, ())
                    ]
    return Rules(found)


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))
