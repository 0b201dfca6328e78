"""The one registry of harnesses, built from one module per harness (`MODULES`).

Each harness's module (`dsh.py`, `claude.py`, `codex.py`, `gemini.py`) holds everything
dshkit knows about it as one `Harness` named `HARNESS`: its roots and log adapter, tool
vocabulary, hook settings and hook dialect, launcher, config files, MCP trust, sandbox and
reserved prompt prefixes.
Every capability asks this registry (a harness by name, or what holds across all of them)
and never compares a harness name itself; adding a harness is adding its module's name here.

Kept free of heavy imports (no dataclasses, pathlib, JSON, and not even `re` or `typing` at
import): the hook entry point reads it on every tool call. The registry itself (`HARNESSES`,
`NAMES`) is built when first asked for, and one harness asked for by name loads its own
module alone (a prompt answered from its hint writes in its harness's dialect and asks for no
other: three modules fewer on that path); `detect` loads them in order and stops at a mark
a harness alone has, and `names` needs none of them. Adapters and log-name patterns are made
only when asked for, and the error tree is loaded only for an unknown name.
"""

from __future__ import annotations

from ..lazy import lazy_names
from .dsh import dsh_home
from .harness import (
    ASK,
    COMMAND,
    EVENTS,
    HUMAN_WAIT,
    NO_STOP,
    PROVEN,
    READ,
    SEARCH,
    VOCABULARIES,
    WRITE,
    Bridge,
    Capability,
    EventLog,
    Harness,
    HookDialect,
    LaggingLog,
    Launch,
    Launcher,
    PluginFormat,
    QuietLines,
    Reply,
    Sandbox,
    StopSupport,
    absolute,
    location,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping
    from typing import Any

    from .harness import FormatReader
    from .unknown import UnknownHarness

__all__ = [
    "ASK",
    "COMMAND",
    "EVENTS",
    "HUMAN_WAIT",
    "READ",
    "SEARCH",
    "VOCABULARIES",
    "WRITE",
    "Bridge",
    "Capability",
    "EventLog",
    "Harness",
    "HookDialect",
    "LaggingLog",
    "Launch",
    "Launcher",
    "PluginFormat",
    "QuietLines",
    "Reply",
    "Sandbox",
    "StopSupport",
    "UnknownHarness",
    "absolute",
    "dsh_home",
    "location",
]

# The harness modules, in the order harnesses are listed (and a payload two of them could
# claim equally is taken to be the first's); a dotted name is a module outside this package.
MODULES = ("dsh", "claude", "codex", "gemini")


def build(modules: Iterable[str]) -> dict[str, Harness]:
    """The registry these harness modules make: each one's `HARNESS`, by name."""
    found: dict[str, Harness] = {}
    for module in modules:
        qualified = module if "." in module else f"{__name__}.{module}"
        harness: Harness = __import__(qualified, fromlist=("HARNESS",)).HARNESS
        if harness.name in found:
            raise ValueError(f"{qualified}: a harness named {harness.name!r} is registered")
        found[harness.name] = harness
    return found


if TYPE_CHECKING:
    HARNESSES: dict[str, Harness]  # every harness, by name (built when first asked for)
    NAMES: tuple[str, ...]  # their names, in `MODULES`' order


def _registry() -> dict[str, Harness]:
    """`HARNESSES`, built the first time (and `NAMES` with it)."""
    registry: dict[str, Harness] | None = globals().get("HARNESSES")
    if registry is None:
        registry = build(MODULES)
        globals().update(HARNESSES=registry, NAMES=tuple(registry))
    return registry


def names() -> tuple[str, ...]:
    """`NAMES` without loading a module where each is named for its harness (the built-in
    ones: a template's look for each harness's file needs their names alone)."""
    registry: dict[str, Harness] | None = globals().get("HARNESSES")
    if registry is None and not any("." in module for module in MODULES):
        return MODULES
    return tuple(_registry())


def _named(name: str) -> Harness | None:
    """The harness called `name` (None: no such harness): from the registry once it is built,
    else from its own module alone (each module of `MODULES` registers the harness of its
    name; one that does not is looked up in the whole registry)."""
    registry: dict[str, Harness] | None = globals().get("HARNESSES")
    if registry is None and name in MODULES and "." not in name:
        harness: Harness = __import__(f"{__name__}.{name}", fromlist=("HARNESS",)).HARNESS
        if harness.name == name:
            return harness
    return _registry().get(name)


# `UnknownHarness`, loaded with the error tree only when asked for (the hot path never does).
_lazy, __dir__ = lazy_names(globals(), {"UnknownHarness": "unknown"})


def __getattr__(name: str) -> Any:
    if name in ("HARNESSES", "NAMES"):
        _registry()
        return globals()[name]
    return _lazy(name)


def get(name: str) -> Harness:
    """The harness called `name`; UnknownHarness names the known ones."""
    harness = _named(name)
    if harness is None:
        from .unknown import UnknownHarness

        raise UnknownHarness(name) from None
    return harness


def all_harnesses() -> Iterator[Harness]:
    return iter(_registry().values())


def quiet_lines() -> tuple[QuietLines, ...]:
    """Every harness's log lines the watermark may skip (a line quiet in one of them is)."""
    return tuple(h.quiet_lines for h in _registry().values() if h.quiet_lines is not None)


def lagging_logs() -> tuple[LaggingLog, ...]:
    """How each harness whose log may lag its hooks names, in a payload, the call the hook
    is about (`graft.marker.caught_up` waits for its line)."""
    return tuple(h.lagging_log for h in _registry().values() if h.lagging_log is not None)


def volatile_env() -> frozenset[str]:
    """The variables any harness gives each of its processes anew (`Harness.volatile_env`)."""
    return frozenset(name for h in _registry().values() for name in h.volatile_env)


def tools(kind: str) -> frozenset[str]:
    """A tool vocabulary across every harness (for logs whose harness does not matter)."""
    return frozenset().union(*(h.tools[kind] for h in _registry().values()))


def command_line(tool_input: dict[str, Any]) -> str | None:
    """The shell line a command tool runs, from the first of the harnesses' command fields
    its input has (`Harness.command_fields`): a string, or an argv list quoted for a shell."""
    fields = dict.fromkeys(f for h in _registry().values() for f in h.command_fields)
    value = next((tool_input[field] for field in fields if field in tool_input), None)
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return " ".join(_quoted(v) for v in value)
    return None


def _quoted(word: str) -> str:
    if word and all(c.isalnum() or c in "-_./=:@%+," for c in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


# The hook protocol's cap on one output string (Claude Code's; the other harnesses run the
# same protocol): nothing longer may be emitted, and nothing is emitted cut.
HOOK_TEXT_LIMIT = 10_000


def text_length(text: str) -> int:
    """Characters as the harnesses count them (JavaScript strings: UTF-16 code units), e.g.
    against a hook answer's 10,000-character cap."""
    return len(text.encode("utf-16-le")) // 2


def detect(payload: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """Which harness runs a hook, by its dialect's marks in the payload and the environment
    (`Harness.recognise`): the surest claim wins, the first harness of equals.

    Returns a harness name, or "unknown". The harnesses are asked in order, each module
    loaded as it is reached: a proven claim is the surest, so the first one ends the look
    (a DSH payload loads no other harness's module)."""
    transcript = str(payload.get("transcript_path") or "")
    found, sure = "unknown", 0
    for name in names():
        harness = _named(name)
        assert harness is not None  # (a name `names` gave)
        claim = harness.recognise(payload, transcript, env)
        if claim >= PROVEN:
            return harness.name
        if claim > sure:
            found, sure = harness.name, claim
    return found


def dialect(name: str) -> HookDialect:
    """How the harness called `name` speaks the hook protocol (an unknown one: the
    protocol's reference dialect, which every harness here reads)."""
    harness = _named(name)
    return harness.dialect if harness is not None else _REFERENCE


_REFERENCE = HookDialect()


def marks() -> tuple[str, ...]:
    """The payload fields some harness's payloads alone carry (for telling a harness from a
    payload that cannot be parsed, by the keys it holds)."""
    return tuple(dict.fromkeys(f for h in _registry().values() for f in h.dialect.fields))


def format_reader(kind: str) -> FormatReader | None:
    """What reads the MCP servers of a config file of format `kind` (None: no harness has
    that format)."""
    return next(
        (h.config_formats[kind] for h in _registry().values() if kind in h.config_formats), None
    )


def stop_support(name: str) -> StopSupport:
    """What the harness called `name` does with a Stop hook's block (an unknown one: nothing
    assumed)."""
    harness = _named(name)
    return harness.stop if harness is not None else NO_STOP


def sandbox(name: str) -> Sandbox:
    """How the harness called `name` has its sandbox read and entered (an unknown one:
    neither)."""
    harness = _named(name)
    return harness.sandbox if harness is not None else Sandbox()
