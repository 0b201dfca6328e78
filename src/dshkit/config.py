"""dshkit's settings: `<state dir>/config.toml`, read once and checked against one schema.

Each capability owns one section of `SECTIONS` (a table header in the file): its keys, their
type, the values allowed, the default and what the key does. A key may also be a table of
names to values (`[graft.windows]`: model name → tokens), each entry checked like a key. A
value that does not fit, a key or section nobody knows, a section that is not a table, a file
that is not UTF-8 or not TOML, and an environment override that does not fit are all one
error, `ConfigError`, naming the file (or variable), `[section] key`, the value and what is
allowed. A capability that needs settings adds its section here and reads it with
`load_config(state_dir)[name]`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .errors import Invalid

CONFIG_NAME = "config.toml"
DEFAULT_BASE_URL = "https://api.deepseek.com"
DEFAULT_MODEL = "deepseek-chat"


class ConfigError(Invalid):
    """The configuration cannot be used as it is (the message says where and what is allowed):
    a file, a variable or a setting given on a surface. Not a ValueError: callers catch it by
    name or as part of the error tree, never by accident."""


@dataclass(frozen=True)
class Setting:
    """One key of a section: its type (str, int, float or bool), bounds and default; or, with
    `entry`, a table (kind dict) whose keys are non-empty names and whose values fit `entry`."""

    kind: type[Any]
    default: Any
    doc: str
    minimum: float | None = None  # inclusive
    above: float | None = None  # exclusive lower bound
    maximum: float | None = None  # inclusive
    choices: tuple[Any, ...] = ()
    check: Callable[[Any], bool] | None = None  # a further rule, described by `rule`
    rule: str = ""
    why: Callable[[Any], str] | None = None  # what in a value `check` refused is wrong
    env: str | None = None  # an environment variable that overrides the file
    secret: bool = False  # never shown in a message
    entry: Setting | None = None  # a table key: what each of its values must be

    def allowed(self) -> str:
        """What this key accepts, in words."""
        if self.entry is not None:
            return f"a table of {self.rule or 'names'} = {self.entry.allowed()}"
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        words = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
        text = self.rule or words[self.kind]
        bounds = []
        if self.minimum is not None:
            bounds.append(f"at least {_number(self.minimum)}")
        if self.above is not None:
            bounds.append(f"above {_number(self.above)}")
        if self.maximum is not None:
            bounds.append(f"at most {_number(self.maximum)}")
        return f"{text} {' and '.join(bounds)}" if bounds else text

    def accepts(self, value: Any) -> Any:
        """`value` in this key's type (an integer for a number), or None when it does not fit."""
        if isinstance(value, bool) != (self.kind is bool):
            return None
        if self.kind is float and isinstance(value, int):
            value = float(value)
        if not isinstance(value, self.kind):
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return None
        fits = (
            (not self.choices or value in self.choices)
            and (self.minimum is None or value >= self.minimum)
            and (self.above is None or value > self.above)
            and (self.maximum is None or value <= self.maximum)
            and (self.check is None or self.check(value))
        )
        return value if fits else None


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


def _prompt_input() -> Any:
    from .harnesses import prompt_input  # where each harness's own prefixes are known

    return prompt_input


def _http_url(value: str) -> bool:
    return value.startswith(("http://", "https://")) and len(value) > len("https://")


def _token(value: str) -> bool:
    return bool(value) and all("!" <= c <= "~" for c in value)


_PATTERNS = (
    'an array of command patterns such as "git push:*", "Bash(npm run *)" or "make test" '
    "(non-empty, at most 1000 characters each, starting with a command name, at most 500)"
)


def _patterns(value: Any) -> bool:
    """A `[guard]` allow or deny array: patterns as guard/rules.py reads them."""
    if not isinstance(value, list) or len(value) > 500:
        return False
    for pattern in value:
        if not isinstance(pattern, str) or not pattern.strip() or len(pattern) > 1000:
            return False
        body = pattern.strip()
        for opening in ("Bash(", "PowerShell(", "Shell("):
            if body.startswith(opening):
                if not body.endswith(")"):
                    return False
                body = body[len(opening) : -1].strip()
        first = body.removesuffix(":*").split()[:1]
        if not first or any(c in first[0] for c in "*?["):
            return False
    return True


def _projects(value: Any) -> bool:
    """`[guard.projects]`: absolute directories, each a table of allow and deny arrays."""
    return all(
        isinstance(directory, str)
        and os.path.isabs(os.path.expanduser(directory))
        and isinstance(table, dict)
        and set(table) <= {"allow", "deny"}
        and all(_patterns(rules) for rules in table.values())
        for directory, table in value.items()
    )


_REGEXES = (
    "an array of regular expressions (Python's re syntax, searched in the text; at most 200, "
    "each at most 1000 characters)"
)


def _regex_problem(value: Any) -> str:
    """What is wrong with an array of regular expressions ("" when nothing is)."""
    import re  # only for a file that sets patterns: the hooks' path mostly reads none

    if not isinstance(value, list):
        return "not an array"
    if len(value) > 200:
        return f"{len(value)} patterns"
    for index, pattern in enumerate(value):
        if not isinstance(pattern, str) or not pattern or len(pattern) > 1000:
            return f"pattern {index + 1} is not a string of 1 to 1000 characters"
        try:
            re.compile(pattern)
        except re.error as exc:
            return f"pattern {index + 1}, {pattern!r}, is not a valid regular expression: {exc}"
    return ""


# Every section dshkit knows, in one place. A capability adds its own table here.
SECTIONS: dict[str, dict[str, Setting]] = {
    "llm": {
        "base_url": Setting(
            str,
            DEFAULT_BASE_URL,
            "the OpenAI-compatible API's base URL, where chat completions live",
            check=_http_url,
            rule="an http:// or https:// URL",
            env="DSHKIT_LLM_BASE_URL",
        ),
        "api_key": Setting(
            str,
            None,
            "the API key, sent as a bearer token and never stored or logged",
            check=_token,
            rule="visible ASCII characters without spaces",
            env="DSHKIT_LLM_API_KEY",
            secret=True,
        ),
        "model": Setting(
            str,
            DEFAULT_MODEL,
            "the model name the API is asked for",
            check=_token,
            rule="a model name (visible ASCII characters without spaces)",
            env="DSHKIT_LLM_MODEL",
        ),
        "max_tokens": Setting(
            int, 8192, "the most tokens one reply may have", minimum=1, maximum=1_000_000
        ),
        "timeout_s": Setting(
            float,
            120.0,
            "seconds the server may stay silent: to connect, and between two reads",
            above=0,
            maximum=3600,
        ),
        "deadline_s": Setting(
            float,
            300.0,
            "seconds one call (or one tool loop) may take in all, however the server streams",
            above=0,
            maximum=86400,
        ),
        "context_tokens": Setting(
            int,
            65_536,
            "the model's context window in tokens: a prompt whose estimate and max_tokens "
            "together exceed it is refused before any call",
            minimum=1_024,
            maximum=10_000_000,
        ),
        # docs/design/llm.md#a-calls-prompt-and-reply-are-kept-for-a-while
        "keep_calls": Setting(
            int,
            500,
            "the newest model calls kept with their prompts and replies; older ones are "
            "deleted as a call is recorded",
            minimum=1,
            maximum=1_000_000,
        ),
        "keep_days": Setting(
            int,
            30,
            "days a model call is kept with its prompt and reply, however few calls there are",
            minimum=1,
            maximum=36_500,
        ),
        "reasoning_effort": Setting(
            str,
            "",
            "the reasoning effort sent with each call ('': none sent)",
            choices=("", "minimal", "low", "medium", "high"),
        ),
    },
    # The profile's generation (prompt-adapt).
    "profile": {
        "prompt_tokens": Setting(
            int,
            32_000,
            "the most tokens a profile prompt may take (estimated); the newest of the person's "
            "messages that fit are sent, the older ones left out and counted",
            minimum=2_000,
            maximum=1_000_000,
        ),
    },
    # The prompt optimizer's defaults; a session may override them (dshkit optimize settings).
    "optimizer": {
        "tier": Setting(
            str,
            "off",
            "how much the optimizer does: off passes the raw words through untouched",
            choices=("off", "basic", "advanced", "extreme"),
        ),
        "form": Setting(
            str, "ptc", "the delivery form the instruction is written for", choices=("ptc", "chat")
        ),
        "turns": Setting(
            int, 3, "recent exchanges of the session shown to the optimizer", minimum=0, maximum=10
        ),
        "full": Setting(bool, False, "show the optimizer everything the working agent sees"),
        "permission": Setting(
            str,
            "auto",
            "auto: the refined instruction goes to the agent; review: the prompt is held for you",
            choices=("auto", "review"),
        ),
        "skip_prefix": Setting(
            str,
            "",
            "a prompt starting with this goes to the agent unoptimized, and it followed by ok "
            "or rework alone marks the last run ('': the harnesses' safe default, 》)",
            check=lambda value: _prompt_input().safe_prefix(value),
            rule="a string that neither starts nor is started by a harness's own prefix ("
            + " ".join(["!", "/", "@", "#", "?", "$"])
            + ")",
        ),
        "skip_trivial": Setting(
            bool,
            True,
            "pass without a model call what needs none: a bare continuation (继续, ok, yes) or "
            "a command to the harness itself (a slash command)",
        ),
        "trivial_words": Setting(
            str,
            "",
            "more bare continuations that pass without a model call, separated by commas",
            rule="a string",
        ),
        "timeout_s": Setting(
            float,
            15.0,
            "seconds an optimization may take before the raw words pass untouched",
            above=0,
            maximum=600,
        ),
        "stall_s": Setting(
            float,
            8.0,
            "seconds the model may send nothing before the raw words pass untouched",
            above=0,
            maximum=600,
        ),
        "max_tokens": Setting(
            int, 4096, "the most tokens the optimizer's answer may have", minimum=64, maximum=65536
        ),
        "budget_s": Setting(
            float,
            10.0,
            "seconds a typed prompt may wait for the optimizer in the prompt hook, whatever the "
            "model does (13 at most, the hook's own limit); then the raw words go on and the "
            "person is told",
            above=0,
            maximum=600,
        ),
        "strategy": Setting(
            str,
            "v6",
            "the strategy text the tiers are written in: v6, with the guard rails F1-F7 of basic "
            "and advanced; v5, without them (a comparison and a way back)",
            choices=("v6", "v5"),
        ),
        "model": Setting(
            str, "", "the model the optimizer asks ('': the [llm] model)", rule="a string"
        ),
        "reasoning_effort": Setting(
            str,
            "",
            "the reasoning effort asked of the optimizer's model ('': the [llm] one)",
            choices=("", "minimal", "low", "medium", "high"),
        ),
    },
    # The delivery gate: web deliverables judged in headless Chromium (dshkit gate).
    "gate": {
        "rework": Setting(
            bool, True, "send a deliverable's measured failure back to the agent as rework"
        ),
        "budget_s": Setting(
            float,
            20.0,
            "seconds `dshkit gate` and the service sample a page",
            minimum=1,
            maximum=300,
        ),
        "hook_budget_s": Setting(
            float,
            12.0,
            "seconds the gate samples a page written by the agent (within the hook's time)",
            minimum=1,
            maximum=14,  # with the browser's start and the screenshot: the handler's 18 s
        ),
    },
    # The friction signals counted from sessions (dshkit/profile/signals.py): what every reader
    # of them (`dshkit signals`, the profile's generation, the console) counts with.
    "signals": {
        "delegate_builtin": Setting(
            bool,
            True,
            "count delegateRuns with dshkit's own patterns, Chinese and English (请你执行…, "
            "please run…, you'll need to…); off: only delegate_patterns",
        ),
        "delegate_patterns": Setting(
            list,
            (),
            "more patterns of a turn's last assistant message asking the person to act "
            "themselves (delegateRuns), added to the built-in ones",
            check=lambda value: not _regex_problem(value),
            rule=_REGEXES,
            why=_regex_problem,
        ),
    },
    # Context handoff: when a session hands off (dshkit/graft/watermark.py).
    "graft": {
        "mode": Setting(
            str,
            "dynamic",
            "dynamic: the cut falls where a handoff still fits; fixed: warning_ratio/forced_ratio",
            choices=("dynamic", "fixed"),
        ),
        "warning_ratio": Setting(
            float,
            0.70,
            "fixed mode: the share of the window where the model is warned",
            above=0,
            maximum=1,
        ),
        "forced_ratio": Setting(
            float,
            0.75,
            "fixed mode: the share of the window where the session is cut",
            above=0,
            maximum=1,
        ),
        "warning_margin": Setting(
            float,
            0.05,
            "dynamic mode: how far below the forced cut the warning starts",
            minimum=0,
            maximum=0.5,
        ),
        "forced": Setting(
            bool, True, "cut at the forced watermark (off: the warning band runs to 100%)"
        ),
        "model_driven": Setting(
            bool,
            True,
            "tell the model in the warning band that it may hand off, and escalate when it "
            "does not (off: no warning, no escalation: only the forced cut)",
        ),
        "search_scope": Setting(
            bool,
            False,
            "tell every session's model once, with its first context, to search only its "
            "workspace (the prompt side of the guard's global-search block; a handoff's first "
            "message always says it)",
        ),
        "reserve_turns": Setting(
            int, 3, "turns of growth kept free for the handoff to finish", minimum=0, maximum=50
        ),
        "growth_tokens_per_turn": Setting(
            int,
            4_000,
            "context growth per turn assumed before a session shows its own",
            minimum=0,
            maximum=1_000_000,
        ),
        "handoff_tokens": Setting(
            int,
            12_000,
            "tokens a handoff itself takes (reading the card, the injected state)",
            minimum=0,
            maximum=1_000_000,
        ),
        "window_tokens": Setting(
            int,
            200_000,
            "the context window when the session's log announces none",
            minimum=1_000,
            maximum=100_000_000,
        ),
        "card_chars": Setting(
            int,
            1_400,
            "the handoff's task board at most this many characters (cut with a notice beyond)",
            minimum=400,
            maximum=20_000,
        ),
        "ignite_target": Setting(
            bool,
            True,
            "start the new session through the harness's CLI at once (off: the handoff waits "
            "for the next session started in the same directory)",
        ),
        "ignite_timeout_s": Setting(
            float, 20.0, "seconds one start of the new session may take", minimum=1, maximum=600
        ),
        "ignite_attempts": Setting(
            int, 3, "starts tried before the handoff is rolled back", minimum=1, maximum=10
        ),
        "ignite_spacing_s": Setting(
            float,
            20.0,
            "seconds from the start of one attempt to the start of the next (an instant "
            "failure is not retried at once)",
            minimum=0,
            maximum=600,
        ),
        "force_retry_s": Setting(
            float,
            120.0,
            "seconds before a failed forced cut is tried again (doubled after each failure)",
            minimum=0,
            maximum=86_400,
        ),
        "force_retry_cap_s": Setting(
            float,
            1_800.0,
            "the longest wait between two tries of a failing forced cut",
            minimum=0,
            maximum=86_400,
        ),
        "report_wait_s": Setting(
            float,
            30.0,
            "seconds graft_slice_and_inject waits for the new session before it answers",
            minimum=0,
            maximum=600,
        ),
        "constraint_budget_chars": Setting(
            int,
            8_000,
            "room for the human's standing rules in a handoff; more aborts it (never cut)",
            minimum=500,
            maximum=200_000,
        ),
        # [graft.windows]: "claude-opus-4-1[1m]" = 1000000 (Claude Code's log names the model
        # but not its window).
        "windows": Setting(
            dict,
            MappingProxyType({}),
            "each model's context window, for a log that announces none; other models: "
            "window_tokens",
            rule="non-empty model names",
            entry=Setting(int, None, "tokens", minimum=1_000, maximum=100_000_000),
        ),
    },
    # The command risk policy on the agents' shell commands (dshkit/guard).
    "guard": {
        "mode": Setting(
            str,
            "balanced",
            "what an agent's shell command needs (dshkit guard explain): strict denies "
            "destructive, unknown and global-search commands and opaque code; balanced asks "
            "about unknown ones and opaque code; autonomous allows unknown ones and asks about "
            "the rest (opaque code, e.g. curl … | sh, is asked about in every mode)",
            choices=("strict", "balanced", "autonomous"),
            env="DSHKIT_GUARD_MODE",
        ),
        # The person's own rules (guard/rules.py), before the built-in judgement.
        "allow": Setting(
            list,
            (),
            "commands let through whatever the built-in judgement says, each simple command "
            "of a line matched on its own (dshkit guard explain shows the words matched)",
            check=_patterns,
            rule=_PATTERNS,
        ),
        "deny": Setting(
            list,
            (),
            "commands denied in every mode, wherever they appear in a line; deny wins over allow",
            check=_patterns,
            rule=_PATTERNS,
        ),
        "projects": Setting(
            dict,
            MappingProxyType({}),
            "more allow and deny rules for sessions working in a directory or below it: "
            '[guard.projects."/abs/dir"] with allow = […] and deny = […]',
            check=_projects,
            rule="a table of absolute directories = tables with allow and deny arrays of "
            + _PATTERNS.removeprefix("an array of "),
        ),
    },
    # What sessions learned, kept per workspace and handed to the next one (dshkit/memory).
    "memory": {
        "inject": Setting(
            bool, True, "give a new session its workspace's memory (facts, negative paths, …)"
        ),
        "inject_chars": Setting(
            int,
            2_500,
            "the most characters of memory a session start is given (beside the profile)",
            minimum=200,
            maximum=9_000,
        ),
        "workspaces": Setting(
            list,
            (),
            "directories that are workspaces of their own inside a repository (a monorepo's "
            "subprojects); by default a repository is one workspace",
            check=lambda value: all(isinstance(v, str) and os.path.isabs(v) for v in value),
            rule="an array of absolute directories",
        ),
        "mcp_other_workspaces": Setting(
            bool,
            False,
            "the MCP memory tools (memory_search, memory_get) also answer for a workspace other "
            "than the session's own when the agent names one (by default they answer only for "
            "the workspace of the directory the session's MCP server runs in)",
        ),
        "llm": Setting(
            bool,
            False,
            "harvests started by the hooks also ask the model ([llm]) what the evidence alone "
            "does not settle (`dshkit memory harvest --llm` asks it once)",
        ),
        "harvest_interval_s": Setting(
            float,
            120.0,
            "at the agent's Stop, a session harvested less than this long ago is not harvested "
            "again (SessionEnd always harvests; where a harness has no SessionEnd, as DSH, every "
            "Stop does)",
            minimum=0,
            maximum=86_400,
        ),
        "confirm": Setting(
            bool,
            False,
            'what a harvest learned on its own (all but the person\'s "remember …" words) '
            "waits, pending and given to no session, until the person accepts it (`dshkit "
            "memory review` or the console)",
        ),
    },
}


@dataclass(frozen=True)
class Config:
    """Every known section of one state directory's config, checked, defaults filled in."""

    path: Path
    sections: Mapping[str, Mapping[str, Any]]

    def __getitem__(self, section: str) -> dict[str, Any]:
        return dict(self.sections[section])


def load_config(state_dir: Path, environ: Mapping[str, str] | None = None) -> Config:
    """Read `<state_dir>/config.toml` (absent: the defaults), then the environment on top."""
    env = os.environ if environ is None else environ
    path = Path(state_dir) / CONFIG_NAME
    document = _read(path)
    unknown = sorted(set(document) - set(SECTIONS))
    if unknown:
        raise ConfigError(
            f"{path}: unknown section{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(f'[{name}]' for name in unknown)}; "
            f"known: {', '.join(f'[{name}]' for name in SECTIONS)}"
        )
    sections: dict[str, dict[str, Any]] = {}
    for name, schema in SECTIONS.items():
        table = document.get(name, {})
        if not isinstance(table, dict):
            raise ConfigError(
                f"{path}: [{name}] must be a table (a [{name}] header with keys under it), "
                f"not {_shown(table, secret=False)}"
            )
        values = check_section(name, table, str(path))
        for key in schema:
            override = env_override(name, key, env)
            if override is not None:
                values[key] = override
        sections[name] = values
    return Config(path, sections)


def env_override(section: str, key: str, environ: Mapping[str, str]) -> Any:
    """The value the environment gives `[section] key` (its variable set and not empty),
    checked (ConfigError when it does not fit); None when it gives none."""
    setting = SECTIONS[section][key]
    raw = environ.get(setting.env) if setting.env else None
    return _from_env(section, key, setting, raw) if raw else None


def check_section(name: str, values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """`values` of section `name` checked, with defaults for what is missing (None is unset)."""
    schema = SECTIONS[name]
    unknown = sorted(set(values) - set(schema))
    if unknown:
        raise ConfigError(
            f"{where}: [{name}] has unknown keys {unknown}; known: {', '.join(schema)}"
        )
    checked: dict[str, Any] = {}
    for key, setting in schema.items():
        value = values.get(key)
        if value is None:
            checked[key] = setting.default
            continue
        if setting.entry is not None and isinstance(value, Mapping):
            checked[key] = _check_table(name, key, setting, setting.entry, value, where)
            continue
        fitted = setting.accepts(value)
        if fitted is None:
            wrong = setting.why(value) if setting.why is not None else ""
            raise ConfigError(
                f"{where}: [{name}] {key} = {_shown(value, setting.secret)} is not allowed"
                f"{f' ({wrong})' if wrong else ''}: expected {setting.allowed()} ({setting.doc})"
            )
        checked[key] = fitted
    return checked


def _check_table(
    section: str, key: str, setting: Setting, entry: Setting, table: Mapping[str, Any], where: str
) -> Mapping[str, Any]:
    """A table key's entries, each checked (read-only: settings are shared, never edited)."""
    checked: dict[str, Any] = {}
    for name, value in table.items():
        fitted = entry.accepts(value)
        named = isinstance(name, str) and name != "" and name == name.strip()
        if not named or fitted is None:
            raise ConfigError(
                f"{where}: [{section}.{key}] {name!r} = {_shown(value, setting.secret)} is not "
                f"allowed: expected {setting.allowed()} ({setting.doc})"
            )
        checked[name] = fitted
    return MappingProxyType(checked)


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}"
        ) from exc
    import tomllib  # only for a file that is there: the hooks' path mostly reads none

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc


def _from_env(section: str, key: str, setting: Setting, raw: str) -> Any:
    value: Any = raw
    if setting.kind in (int, float):
        try:
            value = setting.kind(raw)
        except ValueError:
            value = raw
    fitted = setting.accepts(value)
    if fitted is None:
        raise ConfigError(
            f"{setting.env}={_shown(raw, setting.secret)} is not allowed: expected "
            f"{setting.allowed()} (it overrides [{section}] {key}: {setting.doc})"
        )
    return fitted


_KINDS: dict[type[Any], str] = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    dict: "a table",
    list: "an array",
}


def _shown(value: Any, secret: bool) -> str:
    """A value as a message may show it: a secret only by its type and length."""
    kind = _KINDS.get(type(value), "a date or time")
    if secret:
        return f"({kind} of {len(str(value))} characters, not shown)"
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({kind})"
