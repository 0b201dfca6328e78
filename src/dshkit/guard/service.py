"""The command guard's face: what a command line risks (`classify`), what a mode does about
it (`decide`, `decisions`), and the record that explains both (`explain`), the person's own
rules (rules.py) applied before the built-in judgement."""

from __future__ import annotations

import os

from .dialect import dialects, places_for
from .policy import DEFAULT_MODE, DESTRUCTIVE, MODES, RISKS, SAFE, UNKNOWN, Kind, decide
from .walk import Judge

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every shell command)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .commands import Command
    from .rules import Pattern, Rules
    from .wire import (
        CommandWords,
        ExplainJson,
        LogEntryJson,
        LogPageJson,
        ModeStateJson,
        RuleAddedJson,
        RuleJson,
    )

SHELLS = ("bash", "pwsh")
MAX_COMMAND_CHARS = 100_000


class Classification:
    """A command line's risk, whether it is a global search, whether it runs code the guard
    cannot see (`opaque`), and why (names the command), with the kind of harm that reason is
    (`policy.Kind`: what a person can do instead); the person's rule that denies it (a deny
    decides in every mode) and those that allowed parts of it; the walk it came from; for a
    secret sent off the machine (`Kind.LEAK`), what leaves and where to (`leak`).
    (A plain class: dataclasses cost this hot path more than the classification itself.)"""

    __slots__ = ("allowed", "denied", "global_search", "judge", "kind", "leak", "opaque", "reason",
                 "risk")  # fmt: skip

    def __init__(
        self,
        risk: str,
        global_search: bool,
        reason: str,
        opaque: bool = False,
        *,
        denied: Pattern | None = None,
        allowed: tuple[Pattern, ...] = (),
        judge: Judge | None = None,
        kind: str = "",
        leak: tuple[str, str] | None = None,
    ) -> None:
        self.risk = risk
        self.global_search = global_search
        self.reason = reason
        self.opaque = opaque
        self.kind = kind or (Kind.OPAQUE if opaque and risk == UNKNOWN else risk)
        self.denied = denied
        self.allowed = allowed
        self.judge = judge
        self.leak = leak

    def decision(self, mode: str) -> str:
        """allow, ask or deny under `mode`: the person's deny, else the decision table."""
        if self.denied is not None:
            return "deny"
        return decide(self.risk, self.global_search, mode, self.opaque)

    def __repr__(self) -> str:
        return (
            f"Classification({self.risk!r}, global_search={self.global_search}, "
            f"opaque={self.opaque}, {self.reason!r})"
        )


def classify(
    command: str,
    shell: str = "bash",
    cwd: str | None = None,
    *,
    home: str | None = None,
    workdir: str | None = None,
    rules: Rules | None = None,
    traced: bool = False,
) -> Classification:
    """Judge `command` (a bash or pwsh line) run in `workdir` (default: `cwd`) for the
    workspace `cwd` (default: the current directory): every command in it, the worst
    winning, the person's `rules` first. `home` defaults to the user's; `traced` keeps which
    command made each finding (for `explain`). ValueError names an unknown shell."""
    if shell not in SHELLS:
        raise ValueError(f"unknown shell {shell!r} (known: {', '.join(SHELLS)})")
    if len(command) > MAX_COMMAND_CHARS:  # what it runs was not seen
        return Classification(
            UNKNOWN, False, f"over {MAX_COMMAND_CHARS} characters: not read", True
        )
    places = places_for(shell, cwd if cwd is not None else os.getcwd(), home)
    judge = Judge(places, rules or None, traced)
    judge.line(command, shell, places.resolve(workdir) if workdir else places.workspace, 0)
    findings = judge.findings
    found, searches, opaque = findings.found, findings.searches, findings.opaque
    # The first of the riskiest findings names the command (opaque code, among unknowns).
    worst = max(range(len(found)), key=lambda i: RISKS.index(found[i][0]), default=None)
    risk, reason, kind = (SAFE, "", SAFE) if worst is None else found[worst]
    if risk == UNKNOWN and opaque:
        reason, kind = opaque[0], Kind.OPAQUE
    if risk == SAFE:
        reason = searches[0] if searches else "no destructive or opaque command"
    elif searches:
        reason = f"{reason}; {searches[0]}"
    denied = judge.denied[0][0] if judge.denied else None
    allowed = tuple(dict.fromkeys(pattern for pattern, _ in judge.allowed))
    if denied is not None:
        reason = f"denied by the rule {denied.text!r} ({denied.origin})"
    elif allowed and risk == SAFE and not searches:
        reason = f"allowed by the rule {allowed[0].text!r} ({allowed[0].origin})"
    return Classification(
        risk,
        bool(searches),
        reason,
        bool(opaque),
        denied=denied,
        allowed=allowed,
        judge=judge,
        kind=kind,
        leak=findings.leaks.get(worst) if kind == Kind.LEAK and worst is not None else None,
    )


def classify_sent(
    command: str,
    tool: str = "",
    cwd: str | None = None,
    *,
    home: str | None = None,
    workdir: str | None = None,
    platform: str | None = None,
    rules: Rules | None = None,
    traced: bool = False,
) -> Classification:
    """Judge `command` as a harness's tool `tool` sent it, on `platform` (the harness's, when
    it says): in the shell the tool names and, where the platform or the line's shape says the
    other may run it (dialect.py), in that one too, the worse reading winning. The other
    reading counts only when it finds a destruction or a global search: its unknowns are
    mostly its lexer meeting the first shell's syntax."""
    first, *others = dialects(command, tool, cwd, platform)
    given = {"home": home, "workdir": workdir, "rules": rules, "traced": traced}
    found = classify(command, first, cwd, **given)  # type: ignore[arg-type]
    for shell in others:
        other = classify(command, shell, cwd, **given)  # type: ignore[arg-type]
        name = "PowerShell" if shell == "pwsh" else shell
        if other.denied is not None and found.denied is None:  # the person's deny wins
            other.reason = f"{other.reason} (read as {name})"
            return other
        worse = other.risk == DESTRUCTIVE and found.risk != DESTRUCTIVE
        if worse or (other.global_search and not found.global_search):
            risk = other.risk if worse else found.risk
            reason = other.reason if worse or found.risk == SAFE else found.reason
            if reason != other.reason:
                reason = f"{reason}; {other.reason}"
            searched = found.global_search or other.global_search
            found = Classification(
                risk,
                searched,
                f"{reason} (read as {name})",
                found.opaque,
                denied=found.denied,
                allowed=found.allowed,
                judge=other.judge if worse else found.judge,
                kind=other.kind if worse else found.kind,
                leak=other.leak if worse else found.leak,
            )
    return found


def explain_line(
    command: str,
    shell: str = "bash",
    cwd: str | None = None,
    mode: str | None = None,
    *,
    settings: Mapping[str, Any] | None = None,
    where: str = "config.toml",
    home: str | None = None,
) -> ExplainJson:
    """`explain`'s record for one line judged traced, with the person's rules of `settings`
    (a checked `[guard]` section, from the file `where`) for the workspace `cwd`; `mode`
    defaults to the section's. ValueError names an unknown shell or mode."""
    workspace = cwd if cwd is not None else os.getcwd()
    rules = None
    if settings is not None:
        rules = rules_for(settings, workspace, where) or None
        mode = mode or str(settings["mode"])
    if mode is not None and mode not in MODES:
        raise ValueError(f"unknown policy mode {mode!r} (known: {', '.join(MODES)})")
    found = classify(command, shell, workspace, home=home, rules=rules, traced=True)
    record = explain(found, mode)
    if mode is not None:
        record["mode"] = mode
    from . import trace  # the trace: rebuilt from the walk, never on the hook's path

    seen = found.judge.seen if found.judge is not None else []
    wrapped = trace.wrappers(seen)
    record["workspace"] = found.judge.places.workspace if found.judge else workspace
    record["segments"] = trace.segments(seen, wrapped)
    record["wrappers"] = trace.wrapper_list(seen, wrapped)
    record["expansions"] = trace.expansions(found, command, shell)
    record["paths"] = trace.paths(found, wrapped)
    record["advice"] = trace.advice(found, record.get("decision"))
    return record


def rules_for(section: Mapping[str, Any], workspace: str | None, where: str) -> Rules:
    """The person's rules (rules.py) of a checked `[guard]` section for a workspace; `where`
    names the file they came from."""
    from .rules import rules_for as read  # only when the config has rules

    return read(section, workspace, where)


def decisions(found: Classification) -> dict[str, str]:
    """The decision of every mode for one classification."""
    return {mode: found.decision(mode) for mode in MODES}


def explain(found: Classification, mode: str | None = None) -> ExplainJson:
    """The record of a classification: its risk, whether it is a global search and runs
    opaque code, each mode's decision and the reason; with `mode`, that mode's decision too.
    A traced one (`classify(traced=True)`) also has the words of each simple command the
    walker saw (wrappers peeled) and the rule that decided: the person's pattern and where it
    came from, or the built-in rule and the command it judged."""
    record: ExplainJson = {
        "risk": found.risk,
        "globalSearch": found.global_search,
        "opaque": found.opaque,
        "decisions": decisions(found),
        "reason": found.reason,
    }
    if mode is not None:
        record["decision"] = found.decision(mode)
    if found.leak is not None:
        record["leak"] = {"what": found.leak[0], "where": found.leak[1] or None}
    judge = found.judge
    if judge is not None and judge.owners is not None:
        record["commands"] = [_words(c) for c in judge.seen]
        record["rule"] = _deciding(found, judge)
        record["allowedBy"] = [
            {**pattern.as_json(), "command": _words(command)["words"]}
            for pattern, command in judge.allowed
        ]
    return record


def _words(command: Command) -> CommandWords:
    words = [command.name, *(w.shown for w in command.args)]
    return {"words": words, "depth": command.depth, "shell": command.shell}


def _deciding(found: Classification, judge: Judge) -> RuleJson:
    """The rule that decided: the person's deny, the built-in rule of the riskiest finding,
    or, with nothing found, the person's allow that took a command out of the judgement."""
    if found.denied is not None:
        command = next(c for p, c in judge.denied if p is found.denied)
        return _pattern_rule(found.denied, command)
    findings = judge.findings.found
    if found.risk != SAFE and findings:
        worst = max(range(len(findings)), key=lambda i: RISKS.index(findings[i][0]))
        if found.opaque and found.risk == UNKNOWN:
            worst = next(i for i, f in enumerate(findings) if f[1] == judge.findings.opaque[0])
        owner = judge.owners.get(worst) if judge.owners is not None else None
        finding = findings[worst][1]
        if owner is not None:
            words = _words(owner[0])["words"]
            return {"kind": "builtin", "finding": finding, "name": owner[1], "command": words}
        # the line itself: a redirection onto a disk, unreadable
        return {"kind": "builtin", "finding": finding, "name": "line"}
    if judge.findings.searches:
        return {"kind": "builtin", "name": "search", "finding": judge.findings.searches[0]}
    if found.allowed:
        return _pattern_rule(found.allowed[0])
    return {"kind": "builtin", "name": "none", "finding": found.reason}


def _pattern_rule(pattern: Pattern, command: Command | None = None) -> RuleJson:
    """One of the person's rules as the rule that decided, with the command it matched."""
    rule: RuleJson = {"kind": pattern.kind, "pattern": pattern.text, "origin": pattern.origin}
    if command is not None:
        rule["command"] = _words(command)["words"]
    return rule


# -- the mode commands are judged under ----------------------------------------------------

# In the state directory, the mode a person chose (one word): it wins over config.toml's
# `[guard] mode` and yields to DSHKIT_GUARD_MODE. Absent, config.toml decides. A file rather than
# a store row: the hook reads it on every shell command, and a missing file costs one failed
# open where SQLite would cost its import.
MODE_FILE = "guard-mode"
MODE_ENV = "DSHKIT_GUARD_MODE"  # `[guard] mode`'s override (config.py)
STRICT = "strict"


class ModeState:
    """The mode commands are judged under and why (`source`): `unreadable` (the settings
    cannot be read: strict, `problem` says what to fix), `env` (DSHKIT_GUARD_MODE), `chosen`
    (the console or `dshkit guard mode`), `config` (config.toml) or `default`. Beside it,
    config.toml's own mode (None when it cannot be read) and the person's choice (None when
    none), kept and shown even while something over it decides; `section`, the checked
    `[guard]` section the person's rules come from (None when none was read)."""

    __slots__ = ("chosen", "config_mode", "mode", "problem", "section", "source")

    def __init__(
        self,
        mode: str,
        source: str,
        config_mode: str | None,
        chosen: str | None = None,
        problem: str = "",
        section: Mapping[str, Any] | None = None,
    ) -> None:
        self.mode, self.source, self.config_mode = mode, source, config_mode
        self.chosen, self.problem, self.section = chosen, problem, section

    def as_json(self) -> ModeStateJson:
        return {
            "mode": self.mode,
            "source": self.source,
            "problem": self.problem or None,
            "configMode": self.config_mode,
            "chosen": self.chosen,
            "modes": list(MODES),
        }


def mode_state(
    state_dir: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> ModeState:
    """The one rule of which mode commands are judged under, for the hook, the CLI and the
    console alike. Settings that cannot be read (a broken config.toml, an environment override
    that does not fit) are strict over everything, a choice included: a guard fails closed
    (docs/design/guard.md#the-guard-fails-closed). Else DSHKIT_GUARD_MODE, else the person's
    choice (an unreadable one is strict), else config.toml's `[guard] mode`, else the default.

    Cheap on the hook's path (every shell command): one open for the choice, and without a
    config.toml or an override no TOML read and no config module or pathlib loaded."""
    env = os.environ if environ is None else environ
    directory = os.fspath(state_dir)
    chosen, unreadable = _chosen(directory)
    override = env.get(MODE_ENV)
    if not override and not os.path.exists(os.path.join(directory, "config.toml")):
        if chosen is not None:
            return ModeState(chosen, "chosen", DEFAULT_MODE, chosen, unreadable)
        return ModeState(DEFAULT_MODE, "default", DEFAULT_MODE)
    from pathlib import Path

    from ..config import ConfigError, env_override, load_config

    try:  # the file, and every other override (as every reader of the config sees them)
        section = load_config(Path(directory), {k: v for k, v in env.items() if k != MODE_ENV})
    except ConfigError as exc:
        return ModeState(STRICT, "unreadable", None, chosen, str(exc))
    guard = section["guard"]
    config_mode = str(guard["mode"])
    if override:
        try:
            forced = str(env_override("guard", "mode", env))
        except ConfigError as exc:
            return ModeState(STRICT, "unreadable", config_mode, chosen, str(exc))
        return ModeState(forced, "env", config_mode, chosen, section=guard)
    if chosen is not None:
        return ModeState(chosen, "chosen", config_mode, chosen, unreadable, guard)
    return ModeState(config_mode, "config", config_mode, section=guard)


def chosen_mode(state_dir: str) -> str | None:
    """The mode chosen for `state_dir`, None when none was; an unreadable or unknown word is
    strict (a guard fails closed)."""
    return _chosen(state_dir)[0]


def _chosen(state_dir: str) -> tuple[str | None, str]:
    """The chosen mode (a string path: pathlib is not loaded on the hook's path) and, when
    the file cannot be read or holds no mode, why it is strict."""
    path = os.path.join(state_dir, MODE_FILE)
    try:
        with open(path, "rb") as chosen:
            word = chosen.read(64).decode("ascii", "replace").strip()
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return STRICT, f"{path} cannot be read: {exc.strerror or exc}"
    if word not in MODES:
        return STRICT, f"{path} holds {word!r}, not one of {', '.join(MODES)}"
    return word, ""


def set_mode(
    state_dir: str | os.PathLike[str], mode: str, environ: Mapping[str, str] | None = None
) -> ModeState:
    """Choose `mode` for every agent's shell commands, or `config` to leave it to config.toml
    again. The file is replaced whole (never half-written) and readable by its owner only."""
    from pathlib import Path

    from ..errors import Invalid
    from ..paths import private_dir, replace_whole

    directory = Path(state_dir)
    target = directory / MODE_FILE
    if mode == "config":
        target.unlink(missing_ok=True)
    elif mode in MODES:
        private_dir(directory)
        replace_whole(target, (mode + "\n").encode())
    else:
        raise Invalid(
            f"mode must be one of {', '.join(MODES)} or config, got {mode!r}", field="mode"
        )
    return mode_state(directory, environ)


# -- the log of what was stopped, and turning a false alarm into a rule --------------------


def log_page(
    state_dir: str | os.PathLike[str],
    workspace: str | None = None,
    limit: int = 100,
    before: int | None = None,
) -> LogPageJson:
    """The guard's decisions that were not a plain allow, newest first (guard/audit.py): of
    `workspace` (and below it) when given, at most `limit` (1 to 1,000), older than the id
    `before`; `next` pages on."""
    from pathlib import Path

    from ..errors import Invalid
    from ..store import Store
    from .audit import entries

    if not 1 <= limit <= 1_000:
        raise Invalid(f"limit must be between 1 and 1000, got {limit}", field="limit")
    with Store(Path(state_dir)) as store:
        found = entries(store, workspace, limit + 1, before)
    more = len(found) > limit
    found = found[:limit]
    return {"entries": found, "next": found[-1]["id"] if more and found else None}


def log_entry(state_dir: str | os.PathLike[str], entry_id: int) -> LogEntryJson:
    """One of the guard's logged decisions; NotFound names the id."""
    from pathlib import Path

    from ..errors import NotFound
    from ..store import Store
    from .audit import entries

    with Store(Path(state_dir)) as store:
        found = entries(store, None, 1, entry_id + 1)
    if not found or found[0]["id"] != entry_id:
        raise NotFound(f"no decision {entry_id} in the guard's log", field="id")
    return found[0]


def add_rule(
    state_dir: str | os.PathLike[str],
    pattern: str,
    kind: str = "allow",
    project: str | None = None,
) -> RuleAddedJson:
    """Write the person's rule `pattern` into `<state dir>/config.toml`: `[guard] allow` (or
    deny), or the `[guard.projects."project"]` table (rulefile.py); the next command is judged
    with it. Invalid names a bad pattern or a file that cannot be edited safely."""
    from pathlib import Path

    from .rulefile import add_rule as write

    config = Path(state_dir) / "config.toml"
    table, added = write(config, pattern, kind, project)
    return {"kind": kind, "pattern": pattern, "table": table, "path": str(config), "added": added}


def explain_in(
    state_dir: str | os.PathLike[str], command: str, shell: str = "bash", cwd: str | None = None
) -> ExplainJson:
    """`explain_line` under the settings of a state directory: its config.toml's `[guard]`
    mode and rules (Invalid names an unknown shell or a config that cannot be read)."""
    from pathlib import Path

    from ..config import ConfigError, load_config
    from ..errors import Invalid

    if shell not in SHELLS:
        raise Invalid(f"shell must be one of {', '.join(SHELLS)}, got {shell!r}", field="shell")
    try:
        config = load_config(Path(state_dir))
    except ConfigError as exc:
        raise Invalid(str(exc), field="config") from exc
    mode = mode_state(state_dir).mode
    return explain_line(command, shell, cwd, mode, settings=config["guard"], where=str(config.path))
