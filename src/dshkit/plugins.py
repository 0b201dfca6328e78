"""One descriptor per capability: what it plugs into the surfaces, from which every central table is
derived.

A descriptor names, as strings, what the surfaces reach of a capability: its CLI commands
(name → "module:attribute", imported when invoked), its web router ("module:function" building
it from the `App`, mounted at `/api/<name>/`), its hook handlers (`Hook`: functions of its hook
face, `dshkit.<name>.hook`, what `hookspec.Entry` is built from, and whether `dshkit inject
show` previews each), its change counter (the SQL whose
figure moves when its data changes: the console's live topic `<name>`) and the MCP tools a
harness may run without asking. The tables the surfaces read are derived here once:
`hookspec.HANDLERS`, the CLI's commands, `web.routers.ROUTERS`, `inject.service.RULES` and
`NOT_PREVIEWED`, `overview.TOPICS`, `install.codex_config.APPROVED`; no other module lists
capabilities (tests/test_plugins.py looks).

Besides the capability packages (`capability=True`: layer 4, tests/test_architecture.py reads
them from here) the core has descriptors of its own, for what is neither a capability nor a
surface: the sessions, the injection preview, the installer, the job runner, the status view
and its change stream, the friction signals.

Strings and constants only, imported by the hook entry point on every tool call: nothing is
imported here, so no capability is loaded by naming it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Iterable


class Hook:
    """One hook handler: its event, its handler ("module:function" of the package's hook face,
    `<package>/hook.py`, imported only when the event fires for it), its own time budget and
    its order (lower runs first, and its context has the first claim on the output cap); what
    `hookspec.Entry` takes besides (tools, harnesses, when_exists, fails_closed, quiet as
    "module:function", paths, names); and why it is `unpreviewed` (its answer depends on what
    the event carries), where it is: every other handler `dshkit inject show` runs itself, dry.

    `paths` and `names` narrow what the harness starts dshkit for (`hookspec.installed_events`):
    `paths`, file-name patterns one of which a call of its tools must name for the handler to
    have anything to say (written as the harness's per-handler conditions where it has them);
    `names`, for a handler of no tool vocabulary, words one of which another tool's name must
    hold (matched case-blind), instead of every tool.

    For the lean foreground (`hooks.lean`, a prompt or start answered from its session's
    hint), as "module:function": `live`, the check the foreground runs itself instead of the
    handler (state directory, parsed payload → True when the handler surely says nothing,
    AFTER when it says nothing and is still to run, `Say` with its words and still to run, as
    a quiet check answers, `dshkit.quiet`; for a handler whose answer depends on what moves at
    every call), and `words`, for a handler
    that reads the prompt's words, what says for which words its answer is not "nothing" (the
    `Call` → their prefixes, or None when every prompt's words matter). `once`, for a handler
    whose words are delivered once (its commit records them in the deliveries ledger): run
    again on what it read, as its commit left it, it says nothing, so a call whose words were
    all such handlers' (or live ones') still leaves the session's hint."""

    __slots__ = (
        "budget",
        "event",
        "fails_closed",
        "handler",
        "harnesses",
        "live",
        "names",
        "once",
        "order",
        "paths",
        "quiet",
        "tools",
        "unpreviewed",
        "when_exists",
        "words",
    )

    def __init__(
        self,
        event: str,
        handler: str,
        *,
        budget: float,
        order: int,
        tools: tuple[str, ...] | None = None,
        harnesses: tuple[str, ...] | None = None,
        when_exists: str | None = None,
        fails_closed: bool = False,
        quiet: str | None = None,
        unpreviewed: str | None = None,
        paths: tuple[str, ...] | None = None,
        names: tuple[str, ...] | None = None,
        live: str | None = None,
        words: str | None = None,
        once: bool = False,
    ) -> None:
        self.event = event
        self.handler = handler
        self.budget = budget
        self.order = order
        self.tools = tools
        self.harnesses = harnesses
        self.when_exists = when_exists
        self.fails_closed = fails_closed
        self.quiet = quiet
        self.unpreviewed = unpreviewed
        self.paths = paths
        self.names = names
        self.live = live
        self.words = words
        self.once = once

    def __repr__(self) -> str:
        return f"<hook {self.event} {self.handler}>"


class Plugin:
    """One capability (or part of the core) as the surfaces see it; `package` is the package
    under `dshkit` it describes, when it is one (a capability's is its own name)."""

    __slots__ = (
        "approved",
        "capability",
        "commands",
        "counter",
        "hooks",
        "name",
        "package",
        "router",
    )

    def __init__(
        self,
        name: str,
        *,
        capability: bool = False,
        package: str | None = None,
        commands: dict[str, str] | None = None,
        router: str | None = None,
        hooks: tuple[Hook, ...] = (),
        counter: str | None = None,
        approved: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.capability = capability
        self.package = name if capability else package
        self.commands = commands or {}
        self.router = router
        self.hooks = hooks
        self.counter = counter
        self.approved = approved

    def __repr__(self) -> str:
        return f"<plugin {self.name}>"


# -- the descriptors, in the order the web app mounts their routers -------------------------

JOBS = Plugin("jobs", router="dshkit.web.routers.jobs:from_app")  # background jobs, progress

PROFILE = Plugin(
    "profile",
    capability=True,
    commands={"profile": "dshkit.cli.profile:profile"},
    router="dshkit.web.routers.profile:from_app",
    hooks=(
        # Once per session, on the harness's context event (profile/hook.py).
        Hook(
            "SessionStart",
            "dshkit.profile.hook:on_session_start",
            budget=5.0,
            order=10,
            once=True,
        ),
        Hook(
            "UserPromptSubmit",
            "dshkit.profile.hook:on_prompt",
            budget=3.0,
            order=10,
            once=True,
        ),
    ),
    # The removals too: restoring one deletes its record and stores no version.
    counter="SELECT (SELECT COALESCE(MAX(version), 0) FROM profile_versions) || ':' || "
    "(SELECT COALESCE(GROUP_CONCAT(length(value)), '') FROM meta WHERE key LIKE 'profile.%') "
    "|| ':' || (SELECT COUNT(*) || '.' || COALESCE(MAX(id), 0) FROM profile_removals)",
)

OPTIMIZER = Plugin(
    "optimizer",
    capability=True,
    commands={
        "optimize": "dshkit.cli.optimize:optimize_command",
        "outcome": "dshkit.cli.optimize:outcome_command",
        "runs": "dshkit.cli.optimize:runs_command",
    },
    router="dshkit.web.routers.optimizer:from_app",
    hooks=(
        # optimizer/hook.py: its own deadline is inside this budget.
        Hook(
            "UserPromptSubmit",
            "dshkit.optimizer.hook:on_prompt",
            budget=16.0,
            order=20,
            unpreviewed="the prompt optimizer refines each prompt as it is sent",
            words="dshkit.optimizer.hook:words_free",  # tier off: only its prefix matters
        ),
    ),
    counter="SELECT COALESCE(MAX(id), 0) || ':' || COUNT(outcome) || ':' "
    "|| COALESCE(MAX(outcome_at), 0) FROM optimizer_runs",
)

CAPABILITY = Plugin(
    "capability",
    capability=True,
    commands={"capability": "dshkit.cli.capability:capability"},
    router="dshkit.web.routers.capability:from_app",
    hooks=(
        # capability/hook.py: read from the cache, probes started detached.
        Hook(
            "SessionStart",
            "dshkit.capability.hook:on_session_start",
            budget=2.0,
            order=15,
            once=True,
        ),
        Hook(
            "UserPromptSubmit",
            "dshkit.capability.hook:on_prompt",
            budget=1.0,
            order=15,
            once=True,
        ),
    ),
)

GATE = Plugin(
    "gate",
    capability=True,
    commands={"gate": "dshkit.cli.gate:gate"},
    router="dshkit.web.routers.gate:from_app",
    hooks=(
        # gate/hook.py: a written web deliverable (or one a shell command changed) judged in
        # the background; a failure handed back at Stop (which waits for a verdict still
        # coming within its budget) or with the next prompt
        # (docs/design/gate.md#a-failure-is-handed-back-once-per-content).
        Hook(
            "PostToolUse",
            "dshkit.gate.hook:on_write",
            budget=2.0,
            order=50,
            tools=("write",),
            # gate.rework.DELIVERABLE_SUFFIXES (not imported: the hot path); checked by
            # tests/test_plugins.py. Another file written is nothing to the gate.
            paths=("*.html", "*.htm", "*.xhtml", "*.svg"),
            # where the harness runs it for every write: no such name in the payload's bytes
            quiet="dshkit.gate.glance:quiet_write",
            unpreviewed="the delivery gate judges a web deliverable once written "
            "(in the background)",
        ),
        Hook(
            "PostToolUse",
            "dshkit.gate.hook:on_command",
            budget=2.0,
            order=51,
            tools=("command",),
            # no turn of the session began, or no deliverable changed under its cwd since
            quiet="dshkit.gate.glance:quiet_command",
            unpreviewed="the delivery gate looks for deliverables a shell command changed",
        ),
        Hook(
            "UserPromptSubmit",
            "dshkit.gate.hook:on_prompt",
            budget=1.0,
            order=30,
            once=True,  # a failure handed back once per content
            unpreviewed="the delivery gate hands back a failure judged since the last stop "
            "(see `dshkit gate rework`)",
        ),
        Hook(
            "Stop",
            "dshkit.gate.hook:on_stop",
            budget=18.0,
            order=50,
            # nothing recorded for the session, nothing changed since its turn began: the
            # turn is ended after the answer
            quiet="dshkit.gate.glance:quiet_stop",
            unpreviewed="the delivery gate hands back a failure of a deliverable the turn "
            "wrote, once per content",
        ),
    ),
    counter="SELECT COALESCE(MAX(id), 0) FROM gate_verdicts",
)

GRAFT = Plugin(
    "graft",
    capability=True,
    commands={"graft": "dshkit.cli.graft:graft"},
    router="dshkit.web.routers.graft:from_app",
    hooks=(
        # graft/hook.py: a handed-off session takes no new prompt or tool call (first, so its
        # block wins); the watermark after every tool call and with each prompt; a waiting
        # handoff handed to the next session started in its directory
        # (docs/design/graft.md#the-hooks-watch-every-step).
        Hook(
            "SessionStart",
            "dshkit.graft.hook:on_session_start",
            budget=3.0,
            order=12,
        ),
        Hook(
            "UserPromptSubmit",
            "dshkit.graft.hook:on_prompt",
            budget=2.0,
            order=1,
            live="dshkit.graft.marker:quiet_prompt",  # the watermark reads the moving log
        ),
        Hook(
            "PreToolUse",
            "dshkit.graft.hook:on_tool",
            budget=1.0,
            order=1,
            # graft.marker.NAME (not imported: the hot path), written before the first
            # handoff ever begins; tests/test_plugins.py checks the spelling.
            when_exists="graft.used",
            quiet="dshkit.graft.standing:quiet_tool",  # no ledger row names the session
        ),
        Hook(
            "PostToolUse",
            "dshkit.graft.hook:after_tool",
            budget=3.0,
            order=40,
            quiet="dshkit.graft.marker:quiet_payload",  # a session far below the band
        ),
        # After a forced cut, the person is told where the work went (it waits, briefly, for
        # the detached handoff to start the new session: what the gate's check leaves).
        Hook(
            "Stop",
            "dshkit.graft.hook:on_stop",
            budget=2.0,  # its wait (`graft.hook.STOP_WAIT_S`), with room for a loaded machine
            order=60,
            when_exists="graft.used",
            quiet="dshkit.graft.standing:quiet_stop",  # no forced cut was started for it
        ),
    ),
    counter="SELECT (SELECT COUNT(*) || ':' || COALESCE(MAX(updated_at), 0) FROM graft_txns) "
    "|| ':' || (SELECT COALESCE(MAX(id), 0) FROM graft_audit)",
    # The read-only handoff tools the watermark has the model call: `codex exec` (approval
    # policy never) refuses an MCP tool that needs approval. Not `graft_slice_and_inject`: it
    # starts a new agent, so Codex asks the person each time (and `codex exec`, with nobody
    # to ask, refuses it).
    approved=("graft_prepare", "graft_read_result", "graft_search_history"),
)

SESSIONS = Plugin(
    "sessions",
    package="sessions",
    commands={
        "forget": "dshkit.cli.forget:forget",
        "refresh": "dshkit.cli.refresh:refresh",
        "scan": "dshkit.cli.scan:scan",
        "sessions": "dshkit.cli.sessions:sessions",
    },
    router="dshkit.web.routers.sessions:from_app",
    hooks=(
        # A detached refresh when the agent pauses (sessions/hook.py): only a process start
        # (2 s, so that a turn's end also leaves graft's report the time it needs).
        Hook(
            "Stop",
            "dshkit.sessions.hook:on_session_pause",
            budget=2.0,
            order=90,
            quiet="dshkit.quiet:afterwards",  # it says nothing: started after the answer
        ),
        Hook(
            "SessionEnd",
            "dshkit.sessions.hook:on_session_pause",
            budget=2.0,
            order=90,
            quiet="dshkit.quiet:afterwards",
        ),
    ),
    counter="SELECT COUNT(*) || ':' || COALESCE(SUM(revision), 0) FROM sessions",
)

# The friction signals (the profile's): totals over time and their hits, counts per session.
SIGNALS = Plugin(
    "signals",
    commands={"signals": "dshkit.cli.signals:signals"},
    router="dshkit.web.routers.signals:from_app",
)

# What dshkit knows and what is missing; the store's changes as one stream.
STATUS = Plugin("status", router="dshkit.web.routers.status:from_app")
EVENTS = Plugin("events", router="dshkit.web.routers.events:from_app")

# What each hook event would inject into a session (a preview).
INJECT = Plugin(
    "inject",
    package="inject",
    commands={"inject": "dshkit.cli.inject:inject"},
    router="dshkit.web.routers.inject:from_app",
)

MEMORY = Plugin(
    "memory",
    capability=True,
    commands={"memory": "dshkit.cli.memory:memory"},
    router="dshkit.web.routers.memory:from_app",
    hooks=(
        # memory/hook.py: the workspace's memory at session start, after the profile, handoff
        # and capability facts (it takes the room they leave); a detached harvest when the
        # agent pauses or the session ends (only a process start here).
        Hook(
            "SessionStart",
            "dshkit.memory.hook:on_session_start",
            budget=3.0,
            order=18,
            once=True,
        ),
        Hook(
            "Stop",
            "dshkit.memory.hook:on_stop",
            budget=1.0,
            order=91,
            quiet="dshkit.quiet:afterwards",  # it says nothing: started after the answer
            unpreviewed="starts a detached harvest of the session's memory (not within a "
            "short while of the last one, unless the harness has no SessionEnd)",
        ),
        Hook(
            "SessionEnd",
            "dshkit.memory.hook:on_session_end",
            budget=1.0,
            order=91,
            quiet="dshkit.quiet:afterwards",
            unpreviewed="starts a detached harvest of the session's memory",
        ),
    ),
    counter="SELECT COUNT(*) || ':' || COALESCE(MAX(id), 0) || ':' || "
    "COALESCE(SUM(quarantined), 0) FROM memory_records",
)

GUARD = Plugin(
    "guard",
    capability=True,
    commands={"guard": "dshkit.cli.guard:guard"},
    router="dshkit.web.routers.guard:from_app",  # the mode commands are judged under
    hooks=(
        # guard/hook.py: a pure function of the command line
        # (docs/design/guard.md#the-guard-fails-closed).
        Hook(
            "PreToolUse",
            "dshkit.guard.hook:on_command",
            budget=2.0,
            order=5,
            tools=("command",),
            fails_closed=True,
            unpreviewed="the command guard judges each command line (see `dshkit guard classify`)",
        ),
        # guard/edits.py: where a write, an edit or a Codex patch lands (never read as shell).
        Hook(
            "PreToolUse",
            "dshkit.guard.hook:on_write",
            budget=1.0,
            order=6,
            tools=("write",),
            fails_closed=True,
            unpreviewed="the guard judges where each file write lands",
        ),
        # A read of a credential file (a byte scan leaves every other read unparsed).
        Hook(
            "PreToolUse",
            "dshkit.guard.hook:on_read",
            budget=1.0,
            order=7,
            tools=("read",),
            quiet="dshkit.guard.edits:quiet_read",
            unpreviewed="the guard judges whether a read opens a credential file",
        ),
        # Any other tool (MCP's) whose name says delete, drop or destroy.
        Hook(
            "PreToolUse",
            "dshkit.guard.hook:on_tool",
            budget=1.0,
            order=8,
            quiet="dshkit.guard.edits:quiet_tool",
            # guard.edits.DELETE_WORDS (checked by tests/test_plugins.py): a tool whose name
            # holds none of them is not started for.
            names=("delete", "drop", "destroy", "purge", "wipe", "erase", "truncate"),
            unpreviewed="the guard judges tools whose name says they delete",
        ),
    ),
)

# Installing dshkit into each harness, and checking the install.
INSTALL = Plugin(
    "install",
    package="install",
    commands={
        "doctor": "dshkit.cli.doctor:doctor",
        "install-hooks": "dshkit.cli.hooks:install_hooks",
        "service": "dshkit.cli.resident:service",
        "uninstall-hooks": "dshkit.cli.hooks:uninstall_hooks",
    },
)

# The resident hooks: `dshkit hook EVENT` answered in the service's process
# (`install-hooks --resident`).
HOOKS = Plugin("hooks", router="dshkit.web.routers.hooks:from_app")

PLUGINS: tuple[Plugin, ...] = (
    JOBS,
    PROFILE,
    OPTIMIZER,
    CAPABILITY,
    GATE,
    GRAFT,
    SESSIONS,
    SIGNALS,
    STATUS,
    EVENTS,
    INJECT,
    MEMORY,
    GUARD,
    INSTALL,
    HOOKS,
)
CAPABILITIES: tuple[str, ...] = tuple(p.name for p in PLUGINS if p.capability)


# -- the tables derived from them ------------------------------------------------------------


def hooks() -> tuple[Hook, ...]:
    """Every hook handler of every descriptor (`hookspec.HANDLERS` is built from these)."""
    return tuple(hook for plugin in PLUGINS for hook in plugin.hooks)


def commands() -> dict[str, str]:
    """CLI command name → "module:attribute"; ValueError when two descriptors name one."""
    return _merged((plugin.name, plugin.commands) for plugin in PLUGINS)


def routers() -> dict[str, str]:
    """Router name (its descriptor's) → "module:function" building it from the `App`, in the
    order they are mounted."""
    return {plugin.name: plugin.router for plugin in PLUGINS if plugin.router}


def counters() -> dict[str, str]:
    """Topic (its descriptor's name) → the SQL of its change counter."""
    return {plugin.name: plugin.counter for plugin in PLUGINS if plugin.counter}


def approved() -> tuple[str, ...]:
    """The MCP tools a harness may run without asking the person."""
    return tuple(tool for plugin in PLUGINS for tool in plugin.approved)


def _merged(tables: Iterable[tuple[str, dict[str, str]]]) -> dict[str, str]:
    found: dict[str, str] = {}
    owner: dict[str, str] = {}
    for name, table in tables:
        for key, value in table.items():
            if key in found:
                raise ValueError(f"{key!r} is named by both {owner[key]} and {name}")
            found[key] = value
            owner[key] = name
    return found
