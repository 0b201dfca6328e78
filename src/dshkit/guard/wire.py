"""The JSON shapes of the command guard's results: one TypedDict per shape (`dshkit guard
--json`, `dshkit guard mode --json` and `/api/guard/` alike). The guard runs on every shell
command and imports no typing there: its modules name these under TYPE_CHECKING only."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class ModeStateJson(TypedDict):
    """The mode commands are judged under now, where it comes from (`unreadable`, `env`,
    `chosen`, `config`, `default`), what to fix when the settings cannot be read, config.toml's
    own mode (null when it cannot be read), the person's choice (null when none; kept even
    while something over it decides), and every mode there is."""

    mode: str
    source: str
    problem: str | None
    configMode: str | None
    chosen: str | None
    modes: list[str]


class PatternJson(TypedDict):
    """One of the person's rules: allow or deny, its pattern, and where it was written."""

    kind: str
    pattern: str
    origin: str


class CommandWords(TypedDict):
    """One simple command as the walker saw it (wrappers peeled): its words, how deep it was
    nested, and its shell."""

    words: list[str]
    depth: int
    shell: str


class PatternUse(PatternJson):
    """One of the person's rules, and the command it matched."""

    command: list[str]


class RuleJson(TypedDict):
    """The rule that decided: the person's (`kind` allow or deny, its pattern and origin) or
    a built-in one (`kind` builtin, its name and finding), and the command it judged."""

    kind: str
    pattern: NotRequired[str]
    origin: NotRequired[str]
    finding: NotRequired[str]
    name: NotRequired[str]
    command: NotRequired[list[str]]


class ExplainJson(TypedDict):
    """A command line judged (`dshkit guard --json`): its risk, whether it is a global search
    and runs code the guard cannot see, each mode's decision and why; with a mode, that mode
    and its decision; traced, each simple command seen, the rule that decided, the person's
    rules that allowed parts of it."""

    risk: str
    globalSearch: bool
    opaque: bool
    decisions: dict[str, str]
    reason: str
    decision: NotRequired[str]
    commands: NotRequired[list[CommandWords]]
    rule: NotRequired[RuleJson]
    allowedBy: NotRequired[list[PatternUse]]
    mode: NotRequired[str]


class CaseJson(ExplainJson):
    """One case of `dshkit guard --file` judged, with its `id` as the file gave it."""

    id: NotRequired[Any]
