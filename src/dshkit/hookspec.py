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

`install-hooks` installs every event some entry has, with a matcher computed from the
entries' tool vocabularies, and `doctor` checks an install against the same list: a handler
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

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .harnesses import Harness
    from .plugins import Hook

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
        "order",
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
        quiet: Callable[[str, bytes], bool] | None = None,
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
        # Given the state directory and the raw payload, True when the handler surely has
        # nothing to say to this call: the entry point does not start it (nothing parsed).
        self.quiet = quiet

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


def _lazy(reference: str) -> Callable[[str, bytes], bool]:
    """The function `reference` names ("module:function"), imported at its first call: the
    module of a `quiet` check is loaded only for the events it is about."""
    module, _, name = reference.partition(":")

    def call(state: str, raw: bytes) -> bool:
        found: Callable[[str, bytes], bool] = getattr(__import__(module, fromlist=[name]), name)
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
    harness: Harness, extra: Iterable[Entry] = (), builtin: Iterable[Entry] = HANDLERS
) -> dict[str, str]:
    """What `install-hooks` puts in `harness`'s settings: event → matcher ("" matches all).

    A tool event whose entries all name vocabularies gets an anchored regex of the tool
    names (Claude Code, Codex and DSH's bridge all accept it); one whose vocabularies are
    empty in this harness is left out.
    """
    import re  # not at the top: the hot path never asks this

    found: dict[str, str] = {}
    every = [e for e in (*builtin, *extra) if e.serves(harness.name)]
    for event in EVENTS:
        names: set[str] = set()
        matches_all = False
        for entry in (e for e in every if e.event == event):
            tools = entry.tool_names(harness)
            if tools is None:
                matches_all = True
            names |= tools or set()
        if matches_all:
            found[event] = ""
        elif names:
            found[event] = "^(" + "|".join(re.escape(n) for n in sorted(names)) + ")$"
    return found
