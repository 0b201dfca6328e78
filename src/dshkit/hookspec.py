"""The hook handlers registered, with what the runtime and installer need to know.

Each handler is declared by its capability's descriptor (`dshkit.plugins`, a `Hook`); this
module builds the entries from them (`HANDLERS`). What the hooks are, not how they run: the
runtime that calls the handlers is `dshkit.hooks`, the installer that writes their events into
a harness's settings is `dshkit.install`; both read this module, and neither imports the other.

An entry names its event, its handler ("module:function", imported only when the event fires
for it, and only while the file it may name in the state directory exists), its own time
budget, the tools it looks at (vocabulary names from the harness registry, resolved per
harness to concrete tool names), the harnesses it serves (None: all), its order (lower
runs first, and its context has the first claim on the output cap) and whether it fails
closed (a policy that must not let a call it could not read go through).

`install-hooks` installs every event some entry has, with the narrowest matcher the entries
allow (their tool vocabularies; the words a tool's name must hold, `names`; an entry waiting
for its file, `when_exists`, only once the file is there) and, where the harness has
per-handler conditions, one handler per tool and file pattern (`paths`), so that the harness
starts no process for a call no handler would look at (`installed_events`, `conditions`);
`doctor` checks an install against the same list: a handler
added to a descriptor later is installed by running `install-hooks` again. The plugins this
checkout ships (Claude Code, Codex) are written from the same list (`install.plugin`,
`scripts/gen-plugins.py`), so a plugin runs exactly the hooks `install-hooks` would write.

A handler takes a `hookio.Call` and returns None (no opinion) or a `hookio.Answer`: a context,
a decision (allow, ask or deny a tool call; block a prompt or a stop) and a `commit` the
runtime calls, in the call's store, only after the answer carrying it was written to the
harness (a side effect that must not happen unless the agent really got the result, e.g.
marking a session as injected). A handler of one's own (`DSHKIT_HOOK_HANDLERS`) may answer
in dshkit's words instead: a dict with any of `additionalContext`, `decision: "block"` with
`reason`, `permissionDecision` ("deny", "ask", "allow") with `permissionDecisionReason`, and
`commit`, a callable taking no argument.

Kept free of heavy imports: the hook entry point reads it on every tool call.
"""

from __future__ import annotations

from . import harnesses, plugins
from .quiet import AFTER as AFTER  # (what a quiet check answers: `dshkit.quiet`)
from .quiet import Say as Say

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from .harnesses import Harness
    from .plugins import Hook

    Quiet = bool | str | Say  # what a `quiet` check answers: True, False, AFTER, a Say

EVENTS = harnesses.EVENTS  # dshkit's canonical event names; each dialect names its own
TOOL_EVENTS = ("PreToolUse", "PostToolUse")  # the events whose matcher is a tool name

HOOK_TIMEOUT_S = 30  # the timeout install-hooks writes for each hook: the harness kills us then
# Within it: reading the payload (harnesses write it at once; one that never closes stdin
# must not hold the agent), the handlers of one event together, then the commits of what was
# delivered, with the rest left for starting the interpreter and answering.
PAYLOAD_READ_S = 2.0
HANDLERS_TOTAL_S = 23.0
COMMITS_TOTAL_S = 3.0
MAX_PAYLOAD_BYTES = 8 << 20  # a longer payload is not read on: it is not a hook call
DEFAULT_BUDGET_S = 5.0
EXTRA_ORDER = 1000  # DSHKIT_HOOK_HANDLERS entries run after the built-in ones
_VOCABULARIES = harnesses.VOCABULARIES  # (an Entry's `harnesses` argument shadows the module)


class Entry:
    """One registered handler."""

    __slots__ = (
        "budget",
        "event",
        "fails_closed",
        "handler",
        "harnesses",
        "names",
        "order",
        "paths",
        "quiet",
        "tools",
        "when_exists",
    )

    def __init__(
        self,
        event: str,
        handler: str,
        *,
        budget: float = DEFAULT_BUDGET_S,
        tools: tuple[str, ...] | None = None,
        harnesses: tuple[str, ...] | None = None,
        order: int = 100,
        when_exists: str | None = None,
        fails_closed: bool = False,
        quiet: Callable[[str, bytes], Quiet] | None = None,
        paths: tuple[str, ...] | None = None,
        names: tuple[str, ...] | None = None,
    ) -> None:
        if event not in EVENTS:
            raise ValueError(f"unknown hook event {event!r} (known: {', '.join(EVENTS)})")
        if tools is not None:
            if event not in TOOL_EVENTS:
                raise ValueError(f"{handler}: {event} has no tool to match (only {TOOL_EVENTS})")
            unknown = [kind for kind in tools if kind not in _VOCABULARIES]
            if unknown:
                raise ValueError(
                    f"{handler}: unknown tool vocabulary {unknown[0]!r} "
                    f"(known: {', '.join(_VOCABULARIES)})"
                )
        self.event = event
        self.handler = handler
        self.budget = budget
        self.tools = tools
        self.harnesses = harnesses
        self.order = order
        # A file in the state directory without which the handler has nothing to do: the
        # entry point does not even start the handler (its payload unparsed) while it is absent.
        self.when_exists = when_exists
        # The command guard: a call of its tools whose payload cannot be read whole gets the
        # guard's decision for a command it cannot understand, not "no opinion" (which lets
        # the command through unjudged).
        self.fails_closed = fails_closed
        # Given the state directory and the raw payload, True (or AFTER) when the handler
        # surely has nothing to say to this call: the entry point does not start it (nothing
        # parsed), or starts it only once the call is answered (AFTER).
        self.quiet = quiet
        # File-name patterns a call of its tools must name for it to have anything to say.
        if paths is not None and tools is None:
            raise ValueError(f"{handler}: paths narrow a tool vocabulary; it names none")
        self.paths = paths
        # Without tools: words one of which another tool's name holds (every tool: None).
        if names is not None and (tools is not None or not all(w.isalpha() for w in names)):
            raise ValueError(f"{handler}: names are letters-only words for an entry of no tools")
        self.names = names

    def armed(self, state: str | None) -> bool:
        """Whether an install made for the state directory `state` must start it (None:
        for any state directory, a plugin's): not while the file it waits for is absent."""
        if state is None or self.when_exists is None:
            return True
        import os  # not at the top: the hot path never asks this

        return os.path.exists(os.path.join(state, self.when_exists))

    def serves(self, harness: str) -> bool:
        """Whether it runs for this harness name ("unknown" counts as every harness)."""
        return self.harnesses is None or harness == "unknown" or harness in self.harnesses

    def tool_names(self, harness: Harness | None) -> frozenset[str] | None:
        """The concrete tool names it looks at in `harness` (every harness's when None);
        None: every tool (or an event without tools)."""
        if self.tools is None:
            return None
        if harness is None:
            return frozenset().union(*(harnesses.tools(kind) for kind in self.tools))
        return frozenset().union(*(harness.tools[kind] for kind in self.tools))

    def __repr__(self) -> str:
        return f"<hook {self.event} {self.handler}>"


def named(reference: str) -> Any:
    """The function `reference` names ("module:function"), its module imported now: how
    the runtime reaches what a descriptor, or a hint, names."""
    module, _, name = reference.partition(":")
    return getattr(__import__(module, fromlist=[name]), name)


def _lazy(reference: str) -> Callable[[str, bytes], Quiet]:
    """The function `reference` names ("module:function"), imported at its first call: the
    module of a `quiet` check is loaded only for the events it is about."""

    def call(state: str, raw: bytes) -> Quiet:
        found: Callable[[str, bytes], Quiet] = named(reference)
        return found(state, raw)

    return call


def _entry(hook: Hook) -> Entry:
    return Entry(
        hook.event,
        hook.handler,
        budget=hook.budget,
        tools=hook.tools,
        harnesses=hook.harnesses,
        order=hook.order,
        when_exists=hook.when_exists,
        fails_closed=hook.fails_closed,
        quiet=None if hook.quiet is None else _lazy(hook.quiet),
        paths=hook.paths,
        names=hook.names,
    )


# Every descriptor's handlers (what each does and why it runs where it does: `plugins`).
HANDLERS: tuple[Entry, ...] = tuple(_entry(hook) for hook in plugins.hooks())


def extra_entries(spec: str) -> tuple[Entry, ...]:
    """`DSHKIT_HOOK_HANDLERS`: `Event=module:function` or `Event[vocabulary,…]=module:function`
    items separated by `;`, run after the built-in handlers. ValueError names a bad item."""
    found = []
    for number, item in enumerate(filter(None, (i.strip() for i in spec.split(";")))):
        head, _, handler = item.partition("=")
        event, _, rest = head.strip().partition("[")
        tools = tuple(filter(None, (t.strip() for t in rest.rstrip("]").split(",")))) or None
        if not handler.strip() or ":" not in handler or (rest and not rest.endswith("]")):
            raise ValueError(
                f"DSHKIT_HOOK_HANDLERS item {item!r}: expected Event=module:function "
                "or Event[vocabulary]=module:function"
            )
        found.append(Entry(event.strip(), handler.strip(), tools=tools, order=EXTRA_ORDER + number))
    return tuple(found)


def entries(event: str, extra: Iterable[Entry] = ()) -> list[Entry]:
    """The handlers of `event`, built-in and extra, in the order they run."""
    return sorted(
        (e for e in (*HANDLERS, *extra) if e.event == event), key=lambda entry: entry.order
    )


def installed_events(
    harness: Harness,
    extra: Iterable[Entry] = (),
    builtin: Iterable[Entry] = HANDLERS,
    state: str | None = None,
) -> dict[str, str]:
    """What `install-hooks` puts in `harness`'s settings: event → matcher ("" matches all).

    A tool event whose entries all name vocabularies (or words a tool's name holds) gets an
    anchored regex of the tool names, then the words spelt case-blind (Claude Code, Codex and
    DSH's bridge all accept it); one whose vocabularies are empty in this harness is left out.
    An entry waiting for a file in `state` (`when_exists`) counts once the file is there
    (`state` None: always, as a plugin installed for any state directory must).
    """
    import re  # not at the top: the hot path never asks this

    found: dict[str, str] = {}
    every = _serving(harness, extra, builtin, state)
    for event in EVENTS:
        names: set[str] = set()
        words: set[str] = set()
        matches_all = False
        for entry in (e for e in every if e.event == event):
            tools = entry.tool_names(harness)
            if tools is None and entry.names is None:
                matches_all = True
            names |= tools or set()
            words |= set(entry.names or ())
        if matches_all:
            found[event] = ""
        elif names or words:
            alternatives = []
            if names:
                alternatives.append("^(" + "|".join(re.escape(n) for n in sorted(names)) + ")$")
            alternatives += [_blind(word) for word in sorted(words)]
            found[event] = "|".join(alternatives)
    return found


def conditions(
    harness: Harness,
    extra: Iterable[Entry] = (),
    builtin: Iterable[Entry] = HANDLERS,
    state: str | None = None,
) -> dict[str, tuple[str, ...]]:
    """The per-handler conditions of each tool event whose handlers all look at some files
    only (`Entry.paths`) or at named tools only, where the harness has such conditions
    (`HookDialect.condition`): event → one condition per tool (the tool alone where some
    handler looks at all its calls) or per tool and file pattern. Never two for one call: a
    harness runs each handler whose condition matches. An event missing here is installed
    as one handler, its matcher alone deciding."""
    form = harness.dialect.condition
    if form is None:
        return {}
    found: dict[str, tuple[str, ...]] = {}
    every = _serving(harness, extra, builtin, state)
    for event in TOOL_EVENTS:
        mine = [e for e in every if e.event == event]
        if not any(e.paths for e in mine) or any(e.tools is None for e in mine):
            continue  # nothing narrower than the matcher, or a tool it cannot name
        said: list[str] = []
        for tool in sorted(frozenset().union(*(e.tool_names(harness) or () for e in mine))):
            looking = [e for e in mine if tool in (e.tool_names(harness) or ())]
            if any(e.paths is None for e in looking):
                said.append(tool)
                continue
            patterns = sorted({p for e in looking for p in e.paths or ()})
            said += [form.format(tool=tool, path=pattern) for pattern in patterns]
        if said:
            found[event] = tuple(said)
    return found


def _serving(
    harness: Harness, extra: Iterable[Entry], builtin: Iterable[Entry], state: str | None
) -> list[Entry]:
    return [e for e in (*builtin, *extra) if e.serves(harness.name) and e.armed(state)]


def _blind(word: str) -> str:
    """`word` as a regex matching it in any case, without an inline flag (JavaScript's
    RegExp, which Claude Code builds a matcher with, has none)."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)
