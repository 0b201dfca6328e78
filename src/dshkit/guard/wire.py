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


class WrapperJson(TypedDict):
    """A wrapper peeled off (`sudo`, `env`, `timeout`; `nested`: a shell or inline code that
    runs a line of its own, `bash -c`) and the command it runs."""

    wrapper: str
    runs: str
    nested: bool


class ExpansionJson(TypedDict):
    """A variable (or `~`) of the line and the value the guard took for it (null: only known
    when the line runs)."""

    name: str
    value: str | None


class PathJson(TypedDict):
    """A path a command names, as written, resolved against the workspace (null when it is
    only known when it runs), and where it lands: inside, workspace, outside or unknown."""

    word: str
    command: str
    path: str | None
    where: str


class LeakJson(TypedDict):
    """A secret the line sends off the machine: what it is, and where to (None when its words
    name no place)."""

    what: str
    where: str | None


class ExplainJson(TypedDict):
    """A command line judged (`dshkit guard --json`): its risk, whether it is a global search
    and runs code the guard cannot see, each mode's decision and why; with a mode, that mode
    and its decision; for a secret sent off the machine, what leaves and where to; traced,
    each simple command seen, the rule that decided, the person's rules that allowed parts
    of it."""

    risk: str
    globalSearch: bool
    opaque: bool
    decisions: dict[str, str]
    reason: str
    decision: NotRequired[str]
    leak: NotRequired[LeakJson]
    commands: NotRequired[list[CommandWords]]
    rule: NotRequired[RuleJson]
    allowedBy: NotRequired[list[PatternUse]]
    mode: NotRequired[str]
    workspace: NotRequired[str]
    segments: NotRequired[list[list[str]]]
    wrappers: NotRequired[list[WrapperJson]]
    expansions: NotRequired[list[ExpansionJson]]
    paths: NotRequired[list[PathJson]]
    advice: NotRequired[str | None]


class CaseJson(ExplainJson):
    """One case of `dshkit guard --file` judged, with its `id` as the file gave it."""

    id: NotRequired[Any]


class LogEntryJson(TypedDict):
    """One decision of the guard's log (`dshkit guard log --json`, `/api/guard/log`): deny or
    ask (`relaxed`: an ask where the person's own latest message asked for it), where and under
    which mode, the command (or file tool and path) redacted, why and by which rule, and the
    allow rule that would let it through (null when none can be written for it)."""

    id: int
    at: int
    kind: str
    decision: str
    relaxed: bool
    harness: str | None
    sessionId: str | None
    workspace: str | None
    command: str
    risk: str
    mode: str
    reason: str
    rule: str | None
    tool: str | None
    suggested: str | None


class LogPageJson(TypedDict):
    """The guard's log, newest first, and the id to page on from (null at the end)."""

    entries: list[LogEntryJson]
    next: int | None


class RuleAddedJson(TypedDict):
    """An allow or deny rule written into config.toml: the pattern, the table it went into,
    the file, and whether it was there already."""

    kind: str
    pattern: str
    table: str
    path: str
    added: bool
