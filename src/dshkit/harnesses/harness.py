"""What a harness module declares: the classes every harness fills in, its hook dialect first.

One module per harness (`harnesses/dsh.py`, `claude.py`, `codex.py`) builds one `Harness`
from these: its roots, the adapter reading its logs, its tool vocabulary, its launcher, its
config files and MCP trust, its sandbox and Stop support, its reserved prompt prefixes, and
its `HookDialect`: its names for dshkit's hook events, how an answer is written to it, and
how its payloads are told apart. What they share (finding a place from an environment
variable, reading the end of a log) is here too; nothing here names a harness.

Kept free of heavy imports (no dataclasses, pathlib, JSON, and not even `re` or `typing` at
import): the hook entry point loads the registry, and so this module, on every tool call.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Mapping
    from typing import Any

    from .config_files import Server

    # (path, text, cwd) → the MCP servers a file of one config format configures.
    FormatReader = Callable[[str, str, str], list[Server]]

# Tool vocabularies: what each kind of tool is called in a harness.
COMMAND = "command"  # runs a shell command
ASK = "ask"  # asks the person a question and waits for the answer
HUMAN_WAIT = "humanWait"  # its wall time is a wait (on a person, a job or a subagent)
READ = "read"
WRITE = "write"  # writes or edits a file
SEARCH = "search"
VOCABULARIES = (COMMAND, ASK, HUMAN_WAIT, READ, WRITE, SEARCH)

# How surely a payload is a harness's (`Harness.recognise`): a mark of its own alone, or one
# another harness could imitate.
PROVEN, HINTED = 2, 1

# dshkit's hook events: the canonical names its handlers are registered under and the word
# `dshkit hook EVENT` is installed with (Claude Code's names, where the protocol began); a
# harness's dialect says what it calls each one
# (docs/design/hooks.md#one-protocol-a-dialect-per-harness).
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionEnd",
    "PreCompact",
)


class Reply:
    """An answer as one harness takes it: the JSON for stdout ({}: nothing written), the text
    for stderr ("" none) and the exit code."""

    __slots__ = ("code", "error", "output")

    def __init__(self, output: dict[str, Any], error: str = "", code: int = 0) -> None:
        self.output = output
        self.error = error
        self.code = code

    def __bool__(self) -> bool:
        """Whether anything is said (an empty reply is "no opinion": nothing written, 0)."""
        return bool(self.output or self.error or self.code)

    def __repr__(self) -> str:
        return f"Reply({self.output!r}, error={self.error!r}, code={self.code})"


class HookDialect:
    """How one harness speaks the command-hook protocol.

    - `names`: its name for each of dshkit's events (`EVENTS`) where it is not the canonical
      one; None for an event it lacks (no hook is installed for it).
    - How an answer is written (`reply`): by default the shape Claude Code defined and Codex
      and DSH's bridge read too, JSON on stdout with exit 0 (`hookSpecificOutput` with the
      event's name, `additionalContext`, `permissionDecision` and its reason; a top-level
      `decision: "block"` with its `reason`). With `block_exit`, a block or a deny is that
      exit code instead, its reason on stderr and nothing on stdout. A harness whose answers
      differ further subclasses this in its own module and overrides `reply`.
    - `person`: the output key whose text the harness shows the person, not the model (Claude
      Code's and Codex's `systemMessage`; None: it has none, as DSH's bridge logs it unseen,
      and a notice for the person is not written).
    - How its payloads are told from the others' (`Harness.recognise`): payload `fields`
      only its payloads carry, a transcript file name starting with `transcripts` (and
      matching its log pattern), an event name of its own in `hook_event_name`: each is
      proof; a transcript path holding one of `paths`, or an environment variable set as in
      `env`, are hints (another harness may imitate them).
    - `timeout_ms`: its settings give a hook's timeout in milliseconds, not seconds.
    - `context_tags`: the (opening, closing) tags it wraps hooks' additional context in where
      it puts that context into the `prompt` its later payloads carry: `incoming` takes those
      blocks out, so that a handler reads the person's words only.
    - How a hook handler is limited to the calls of one tool naming a file that matches a
      pattern (`condition`, a format of `tool` and `path`), None for a harness whose hooks
      have no per-handler condition: dshkit's handlers that look only at some files then
      start no process for the others (`hookspec.conditions`).
    - The events it can send to an HTTP endpoint instead of running a command
      (`http_events`; `install-hooks --resident` points those at the service).
    """

    __slots__ = (
        "block_exit",
        "condition",
        "context_tags",
        "env",
        "events",
        "fields",
        "http_events",
        "own",
        "paths",
        "person",
        "timeout_ms",
        "transcripts",
    )

    def __init__(
        self,
        *,
        names: Mapping[str, str | None] | None = None,
        fields: tuple[str, ...] = (),
        transcripts: str = "",
        paths: tuple[str, ...] = (),
        env: tuple[tuple[str, str], ...] = (),
        block_exit: int | None = None,
        person: str | None = None,
        timeout_ms: bool = False,
        context_tags: tuple[str, str] | None = None,
        condition: str | None = None,
        http_events: tuple[str, ...] = (),
    ) -> None:
        unknown = [event for event in names or () if event not in EVENTS]
        if unknown:
            raise ValueError(f"unknown hook event {unknown[0]!r} (known: {', '.join(EVENTS)})")
        self.events: dict[str, str | None] = {event: event for event in EVENTS}
        self.events.update(names or {})
        # Its names no canonical event has: one in a payload says it is this harness's.
        self.own = frozenset(n for n in self.events.values() if n is not None and n not in EVENTS)
        self.fields = fields
        self.transcripts = transcripts
        self.paths = paths
        self.env = env
        self.block_exit = block_exit
        self.person = person
        self.timeout_ms = timeout_ms
        self.context_tags = context_tags
        self.condition = condition
        self.http_events = http_events

    def incoming(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload as handlers read it: its `prompt` without the blocks of hooks' context
        the harness wrapped in `context_tags` (the payload itself when it has none; a block
        left open leaves the prompt as it is)."""
        prompt = payload.get("prompt")
        if self.context_tags is None or not isinstance(prompt, str):
            return payload
        opening, closing = self.context_tags
        if opening not in prompt:
            return payload
        kept, rest = [], prompt
        while opening in rest:
            before, _, after = rest.partition(opening)
            _, closed, rest = after.partition(closing)
            if not closed:
                return payload
            kept.append(before)
        return {**payload, "prompt": "".join([*kept, rest]).strip()}

    def timeout(self, seconds: int) -> int:
        """A hook timeout of `seconds` as its settings file gives it."""
        return seconds * 1000 if self.timeout_ms else seconds

    def name(self, event: str) -> str | None:
        """What the harness calls dshkit's `event` (None: it has no such hook)."""
        return self.events.get(event)

    def event(self, name: str) -> str | None:
        """dshkit's event for the harness's `name` (None: none of dshkit's)."""
        return next((event for event, own in self.events.items() if own == name), None)

    def installed(self, wanted: Mapping[str, str]) -> dict[str, tuple[str, str]]:
        """dshkit's events to install (event → matcher) as the harness names them: its
        name → (dshkit's event, matcher); an event it lacks is left out."""
        found: dict[str, tuple[str, str]] = {}
        for event, matcher in wanted.items():
            name = self.name(event)
            if name is not None:
                found[name] = (event, matcher)
        return found

    def reply(self, event: str, verdict: Mapping[str, Any]) -> Reply:
        """dshkit's merged answer to `event` (`verdict`, in the handlers' own words:
        `additionalContext`, `permissionDecision` with `permissionDecisionReason`,
        `decision: "block"` with `reason`; `systemMessage`, a line for the person) as this
        harness takes it."""
        blocked = verdict.get("decision") == "block"
        if self.block_exit is not None and (blocked or verdict.get("permissionDecision") == "deny"):
            reason = verdict["reason"] if blocked else verdict.get("permissionDecisionReason")
            return Reply({}, str(reason or ""), self.block_exit)
        specific = {key: verdict[key] for key in _SPECIFIC if key in verdict}
        output: dict[str, Any] = {}
        if specific:
            output["hookSpecificOutput"] = {"hookEventName": self.name(event) or event, **specific}
        if blocked:
            output.update(decision="block", reason=verdict["reason"])
        if self.person is not None and verdict.get("systemMessage"):
            output[self.person] = verdict["systemMessage"]
        return Reply(output)


_SPECIFIC = ("additionalContext", "permissionDecision", "permissionDecisionReason")


class Launch:
    """One headless run of a harness's CLI: the command line, where to run it, extra env, and
    the text to give it on stdin (its first message, where the CLI reads it there: a command
    line is readable by every local user in /proc; None: nothing)."""

    __slots__ = ("argv", "cwd", "env", "stdin")

    def __init__(
        self,
        argv: list[str],
        cwd: str,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> None:
        self.argv = argv
        self.cwd = cwd
        self.env = dict(env or {})
        self.stdin = stdin

    def __repr__(self) -> str:
        return f"Launch({self.argv!r}, cwd={self.cwd!r})"


class Launcher:
    """How to start a new headless session in a working directory with a first message, and
    how to continue one (None where the harness's CLI cannot resume headlessly).

    `program` is the CLI's name on PATH; `$<env_override>` names another executable.
    `message_on_stdin`: where the CLI reads its message from stdin, what stands on the command
    line in its place (`""`: nothing, `"-"`: a dash); None for a CLI that takes it on the
    command line only (the message then stays in its argv, readable in /proc).
    """

    __slots__ = (
        "env_override",
        "message_on_stdin",
        "mode_args",
        "model_args",
        "open_args",
        "program",
        "read_mode",
        "resume_args",
        "start_args",
        "withheld",
    )

    def __init__(
        self,
        program: str,
        start_args: Callable[[str], list[str]],
        resume_args: Callable[[str, str], list[str]] | None,
        env_override: str,
        open_args: Callable[[str], list[str]] | None = None,
        *,
        model_args: Callable[[str], list[str]] | None = None,
        mode_args: Callable[[str], list[str]] | None = None,
        read_mode: Callable[[str], str | None] | None = None,
        withheld: Callable[[str], bool] | None = None,
        message_on_stdin: str | None = None,
    ) -> None:
        self.program = program
        self.message_on_stdin = message_on_stdin
        self.start_args = start_args
        self.resume_args = resume_args
        self.env_override = env_override
        self.open_args = open_args  # session id → how a person reopens it interactively
        # How a new session is started on a given model and in a given permission mode, and
        # where a session's own log says its mode (its transcript's path → the mode, or None).
        self.model_args = model_args
        self.mode_args = mode_args
        self.read_mode = read_mode
        # The variables of the person's environment (by name) that the harness withholds
        # from the processes it starts (hooks, MCP servers) while a new session of it needs
        # them: its credentials. A target is started with them, read from the harness's own
        # process, passed in the child's environment only (None: it withholds nothing).
        self.withheld = withheld

    def executable(self, env: Mapping[str, str] | None = None) -> str:
        return (env if env is not None else os.environ).get(self.env_override) or self.program

    def start(
        self,
        cwd: str,
        message: str,
        env: Mapping[str, str] | None = None,
        *,
        model: str | None = None,
        mode: str | None = None,
    ) -> Launch:
        """A headless start with `message` (on stdin where the CLI reads it there); on
        `model` and in `mode` where the CLI takes them (their options go just before the
        message: after a subcommand such as `exec`)."""
        extra = [*(self.model_args(model) if model and self.model_args else ())]
        extra += [*(self.mode_args(mode) if mode and self.mode_args else ())]
        return self._launch(self.start_args(message), message, extra, cwd, env)

    def resume(
        self, cwd: str, session_id: str, message: str, env: Mapping[str, str] | None = None
    ) -> Launch | None:
        if self.resume_args is None:
            return None
        return self._launch(self.resume_args(session_id, message), message, [], cwd, env)

    def _launch(
        self,
        args: list[str],
        message: str,
        extra: list[str],
        cwd: str,
        env: Mapping[str, str] | None,
    ) -> Launch:
        at = args.index(message)
        before, after = [self.executable(env), *args[:at], *extra], args[at + 1 :]
        if self.message_on_stdin is None:
            return Launch([*before, message, *after], cwd)
        stand = [self.message_on_stdin] if self.message_on_stdin else []
        return Launch([*before, *stand, *after], cwd, stdin=message)

    def reopen(self, cwd: str, session_id: str) -> Launch | None:
        """How a person continues the session in the harness's own interface (None: no way)."""
        if self.open_args is None:
            return None
        return Launch([self.program, *self.open_args(session_id)], cwd)


class Bridge:
    """A harness that runs Claude-Code-style hooks through a plugin: the packages to add and
    the patch file that mounts it (DSH's Claude-Code hook bridge)."""

    __slots__ = ("packages", "patch_path", "plugin_id", "plugin_name")

    def __init__(
        self, plugin_id: str, packages: tuple[str, ...], patch_path: Callable[[str], str]
    ) -> None:
        self.plugin_id = plugin_id  # its id in the patch layer
        self.packages = packages  # pinned npm specs: the bridge first, then what it needs
        self.plugin_name = packages[0].rpartition("@")[0]
        self.patch_path = patch_path  # profile name → the patch layer that mounts the bridge


class PluginFormat:
    """How a harness takes dshkit as a plugin of its own (`dshkit.install.plugin` writes the
    manifests from these and reads the install back): where the manifest and hooks file sit in
    the plugin, whether its hooks run in exec form (`command` + `args`, no shell), the text a
    hook's command uses for the plugin's root, whether it asks the person for options
    (`userConfig`), which record says it is installed, and the command that removes it."""

    __slots__ = (
        "exec_form",
        "hooks_file",
        "manifest",
        "options",
        "record",
        "remove",
        "root",
        "server_relative",
    )

    def __init__(
        self,
        *,
        manifest: str,
        hooks_file: str,
        exec_form: bool,
        root: str,
        record: str,
        remove: str,
        options: bool = False,
        server_relative: bool = False,
    ) -> None:
        self.manifest = manifest  # the manifest's path in the plugin
        self.hooks_file = hooks_file  # the hooks file's path in the plugin
        self.exec_form = exec_form
        self.root = root  # how a hook's command names the plugin's root
        # The record of installs `install.plugin` reads: "enabled-plugins" (settings'
        # `enabledPlugins` and `plugins/installed_plugins.json`) or "config-plugins"
        # (`[plugins."name@market"]` in config.toml).
        self.record = record
        self.remove = remove  # the removal command, `{ident}` standing for `name@market`
        self.options = options  # whether the manifest may declare `userConfig`
        # Whether its MCP server's command is taken relative to the plugin's root (and no
        # root variable is substituted there).
        self.server_relative = server_relative


class Capability:
    """Where a harness says what a session may do and which MCP servers it has (read by
    `dshkit.capability`): facts in its session log, facts in its config file, the values that
    mean full access, the files that configure MCP servers for a working directory and which
    of those servers it would start itself; and where `dshkit install-hooks` registers
    dshkit's own MCP server, per scope."""

    __slots__ = (
        "config_modes",
        "full_access",
        "log_modes",
        "mcp_configs",
        "mcp_register",
        "mcp_trust",
    )

    def __init__(
        self,
        *,
        mcp_configs: Callable[[str], list[tuple[str, str]]],
        mcp_trust: Callable[[str, list[Server], list[str]], None],
        full_access: Mapping[str, frozenset[str]],
        log_modes: Mapping[str, tuple[str, str]] | None = None,
        config_modes: tuple[Callable[[], str], Mapping[str, str]] | None = None,
        mcp_register: Mapping[str, Callable[[str, str], tuple[str, str]]] | None = None,
    ) -> None:
        self.mcp_configs = mcp_configs  # cwd → [(path, format)]: formats some harness reads
        # (cwd, servers, errors) → marks each server the harness would not start (`withheld`)
        self.mcp_trust = mcp_trust
        # Per layer (fact → the values that restrict nothing there): full access only when
        # every layer says so (bypassPermissions inside a bash sandbox is not full access).
        self.full_access = dict(full_access)
        self.log_modes = log_modes  # fact → (event type, data key) in the session log
        self.config_modes = config_modes  # (TOML path, fact → top-level key)
        # scope ("user", "project") → (project dir, DSH profile) → (path, format): the file
        # that registers dshkit's MCP server; a scope not listed has none.
        self.mcp_register = dict(mcp_register or {})

    def mcp_servers(self, cwd: str, errors: list[str]) -> list[Server]:
        """Every MCP server configured for a session in `cwd`, each one the harness would not
        start itself marked `withheld` (with why); what cannot be read adds to `errors`."""
        from .config_files import configured

        servers = configured(self.mcp_configs(cwd), cwd, errors)
        self.mcp_trust(cwd, servers, errors)
        return servers


class QuietLines:
    """The lines of a harness's session log that change nothing the graft watermark reads,
    as the log writes them: what `graft.marker` may skip on the hot path without a full check.

    `silent` are the line types the session reader leaves out; an `attachment` line is quiet
    unless its attachment is `spoken` (the one the reader makes a message of); a `results`
    line holding only `result` blocks carries a tool's output; a `request` line is a model
    request, whose context is the sum of its usage's `usage_keys` (a model named with a
    leading `synthetic` mark names no model).

    What `graft.fold` needs besides to fold such lines as the session reader does: a request
    is named by the first of its line's `request_ids` it has (the line's key, else its
    message's: every line of one request repeats its usage, counted once), a tool call is a
    `call` block of its message (its `input`), and `opens_turn` says whether a `results` line
    is a person's words (the reader begins a turn there)."""

    __slots__ = (
        "attachment",
        "call",
        "opens_turn",
        "request",
        "request_ids",
        "result",
        "results",
        "silent",
        "spoken",
        "synthetic",
        "usage_keys",
    )

    def __init__(
        self,
        *,
        silent: frozenset[str],
        attachment: str,
        spoken: str,
        results: str,
        result: str,
        request: str,
        usage_keys: tuple[str, ...],
        synthetic: str,
        request_ids: tuple[str, str],
        call: str,
        opens_turn: Callable[[Mapping[str, Any]], bool],
    ) -> None:
        self.silent, self.attachment, self.spoken = silent, attachment, spoken
        self.results, self.result, self.request = results, result, request
        self.usage_keys, self.synthetic = usage_keys, synthetic
        self.request_ids, self.call, self.opens_turn = request_ids, call, opens_turn


class EventLog:
    """A session log whose lines are dshkit's event model: as they are (DSH's: its own records
    are the events the session layer reads), after a first line of type `header` whose
    `version` is one of `versions` (lines or zstd frames of lines); or as its adapter maps
    them (`mapping`, "module:function" of the adapter's own mapping, importable on the hot
    path: a line, the adapter's state as the log's cursor keeps it, which it moves on, and a
    JSON writer → the line's events as (kind, data); Codex's). What `graft.fold` folds on the
    hot path, event by event, as the watermark's digest does."""

    __slots__ = ("_mapped", "header", "mapping", "versions")

    def __init__(
        self,
        *,
        header: str | None = None,
        versions: frozenset[int] = frozenset(),
        mapping: str | None = None,
    ) -> None:
        self.header, self.versions, self.mapping = header, versions, mapping
        self._mapped: Callable[..., list[tuple[str, Any]]] | None = None

    def mapped(self) -> Callable[..., list[tuple[str, Any]]] | None:
        """The function `mapping` names, imported on first use (None: the lines are events)."""
        if self._mapped is None and self.mapping is not None:
            module, _, attribute = self.mapping.partition(":")
            self._mapped = getattr(__import__(module, fromlist=(attribute,)), attribute)
        return self._mapped


class LaggingLog:
    """A session log written behind the hooks: the harness queues its log lines and writes
    them on a timer, so a hook after a tool call can run before the line holding that call
    (and the usage of the request that made it) is in the file. The payload's `call_field`
    holds the call's id as that line spells it; a hook that reads the log waits for it, at
    most `wait_s` seconds."""

    __slots__ = ("call_field", "wait_s")

    def __init__(self, *, call_field: str, wait_s: float) -> None:
        self.call_field, self.wait_s = call_field, wait_s


class StopSupport:
    """What a harness does with a Stop hook's answer."""

    __slots__ = ("blocks", "loop_flag")

    def __init__(self, *, blocks: bool, loop_flag: bool) -> None:
        self.blocks = blocks  # a "block" with a reason makes the agent go on with it
        self.loop_flag = loop_flag  # `stop_hook_active` is really set while it goes on


NO_STOP = StopSupport(blocks=False, loop_flag=False)  # nothing assumed


class Sandbox:
    """How a harness's sandbox is known and entered: the modes read from its own files for a
    session, and how a program runs inside the sandbox of a mode (None: it cannot be)."""

    __slots__ = ("modes", "runner", "runner_name")

    def __init__(
        self,
        *,
        modes: Callable[[Mapping[str, Any], list[str]], dict[str, str]] | None = None,
        runner: Callable[[str, str], list[str] | None] | None = None,
        runner_name: str = "",
    ) -> None:
        self.modes = modes  # (hook payload, errors) → {fact: value, "source:" + fact: where}
        self.runner = runner  # (mode, cwd) → the argv prefix that runs a program inside it
        self.runner_name = runner_name  # how the runner is spelled for people


# A prompt prefix a harness's own input box gives a meaning to: (prefix, what the harness
# does with it, whether the line is a command to the harness rather than words for the agent).
Prefix = tuple[str, str, bool]


class Harness:
    """What dshkit knows about one harness."""

    __slots__ = (
        "_adapter",
        "_log_name",
        "adapter_name",
        "asks_every_step",
        "bridge",
        "capability",
        "command_fields",
        "config_formats",
        "context_event",
        "dialect",
        "event_log",
        "generations_repeat",
        "home",
        "honours_ask",
        "label",
        "lagging_log",
        "launcher",
        "log_literals",
        "log_pattern",
        "mcp_shows_structured",
        "name",
        "places",
        "plugin",
        "project_settings",
        "prompt_prefixes",
        "quiet_lines",
        "sandbox",
        "sessions_root",
        "skills",
        "stop",
        "tools",
        "user_settings",
        "volatile_env",
    )

    def __init__(
        self,
        *,
        name: str,
        label: str,
        home: Callable[[], str],
        places: Callable[[], tuple[str, ...]],
        sessions_root: Callable[[], str],
        adapter_name: str,
        log_name: str,
        log_literals: tuple[str, ...] = (),
        tools: Mapping[str, frozenset[str]],
        command_fields: tuple[str, ...] = ("command",),
        user_settings: Callable[[str], str],
        project_settings: Callable[[str], str] | None,
        bridge: Bridge | None,
        dialect: HookDialect,
        context_event: str,
        generations_repeat: bool,
        launcher: Launcher,
        capability: Capability | None = None,
        config_formats: Mapping[str, FormatReader] | None = None,
        honours_ask: bool = False,
        skills: Mapping[str, Callable[[str], str]] | None = None,
        asks_every_step: bool = False,
        quiet_lines: QuietLines | None = None,
        event_log: EventLog | None = None,
        lagging_log: LaggingLog | None = None,
        stop: StopSupport = NO_STOP,
        sandbox: Sandbox | None = None,
        prompt_prefixes: tuple[Prefix, ...] = (),
        mcp_shows_structured: bool = False,
        plugin: PluginFormat | None = None,
        volatile_env: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.label = label
        self.home = home
        # Where it keeps its configuration: any of them there means it is installed here.
        self.places = places
        self.sessions_root = sessions_root
        # "module:Class" of its log adapter in `dshkit.sessions`, imported on first use.
        self.adapter_name = adapter_name
        self.log_pattern = log_name
        self._log_name: re.Pattern[str] | None = None
        # File names that match the pattern, told without it (compiling it loads `re`, ~3 ms
        # of a hook that recognises a payload by its transcript: a new DSH session's first
        # prompt); a test holds each to the pattern.
        self.log_literals = frozenset(log_literals)
        self.tools = {kind: tools.get(kind, frozenset()) for kind in VOCABULARIES}
        # The keys of a command tool's input that hold its shell line, first found wins (a
        # string, or an argv list): `harnesses.command_line`.
        self.command_fields = command_fields
        self.user_settings = user_settings  # state dir → the hooks settings file (user scope)
        self.project_settings = project_settings  # project dir → file; None: no project scope
        self.bridge = bridge
        self.dialect = dialect
        # The first hook event whose additionalContext reaches the model's first request.
        self.context_event = context_event
        # Whether a session's log files can repeat each other's events (DSH generations).
        self.generations_repeat = generations_repeat
        self.launcher = launcher
        self.capability = capability
        # The config file formats it defines: format name → what servers a file configures
        # (`config_files.mcp_servers` reads a file of any harness's format through these).
        self.config_formats = dict(config_formats or {})
        # Whether a PreToolUse hook's `permissionDecision: "ask"` puts the call before the
        # person (or, with nobody to ask, refuses it). Where it does not, a policy's ask is
        # delivered as a deny saying how to run the command anyway (guard/hook.py).
        self.honours_ask = honours_ask
        # Where it reads Agent Skills (SKILL.md folders): scope ("user", "project") → the
        # folder, given the project's root; empty: no skills folder is known.
        self.skills = dict(skills or {})
        # Whether UserPromptSubmit fires before every model step, not only for a person's
        # prompt (then a later one in the same turn is a step: `dshkit.turns` tells them apart).
        self.asks_every_step = asks_every_step
        # The log lines the watermark may skip without a full check (None: it skips none).
        self.quiet_lines = quiet_lines
        self.event_log = event_log
        # Whether its log may lag the hooks, and how a hook tells it caught up (None: never).
        self.lagging_log = lagging_log
        self.stop = stop  # what its Stop hook's block does
        self.sandbox = sandbox or Sandbox()  # how its sandbox is read and entered
        # The prefixes its own prompt input gives a meaning to (`prompt_input` keeps dshkit's
        # own prefix clear of them).
        self.prompt_prefixes = prompt_prefixes
        # Whether its MCP client shows the model a tool result's structured content instead
        # of its text (then a tool whose text is an instruction answers with text only).
        self.mcp_shows_structured = mcp_shows_structured
        self.plugin = plugin  # how it takes dshkit as a plugin (None: it has no plugins)
        # The variables it gives each of its processes anew (a pid, a per-process token or
        # socket) that no handler reads: no hint holds to them (`hooks.hint.env_key`), nor
        # writes them down.
        self.volatile_env = volatile_env
        self._adapter: Any = None

    @property
    def log_name(self) -> re.Pattern[str]:
        """The pattern a session log's file name matches (compiled on first use)."""
        if self._log_name is None:
            import re

            self._log_name = re.compile(self.log_pattern)
        return self._log_name

    @property
    def adapter(self) -> Any:
        """The session-log adapter (a `sessions.harness.Adapter`), imported on first use."""
        if self._adapter is None:
            import importlib

            module, _, attribute = self.adapter_name.partition(":")
            self._adapter = getattr(importlib.import_module(module), attribute)()
        return self._adapter

    def is_tool(self, kind: str, name: str) -> bool:
        return name in self.tools[kind]

    def recognise(self, payload: Mapping[str, Any], transcript: str, env: Mapping[str, str]) -> int:
        """How surely a hook payload is this harness's (its dialect's marks): PROVEN (a
        field or an event name of its own, its transcript's file name), HINTED (a path or an
        environment variable another harness could imitate), 0 not at all."""
        dialect = self.dialect
        if any(field in payload for field in dialect.fields):
            return PROVEN
        name = os.path.basename(transcript)
        # The fixed start first: matching the pattern compiles it, which loads `re`.
        if (
            dialect.transcripts
            and name.startswith(dialect.transcripts)
            and (name in self.log_literals or self.log_name.match(name))
        ):
            return PROVEN
        if dialect.own and payload.get("hook_event_name") in dialect.own:
            return PROVEN
        if any(part in transcript for part in dialect.paths):
            return HINTED
        return HINTED if any(env.get(key) == value for key, value in dialect.env) else 0

    def found(self) -> str | None:
        """Where this harness shows it is installed on this machine: the first of its places
        that is there, else its CLI on PATH (None: neither, it is not installed here)."""
        for place in self.places():
            if os.path.lexists(place) and not _only_dshkit_state(place):
                return place
        import shutil  # here: the hook path never asks

        return shutil.which(self.launcher.executable())

    def __repr__(self) -> str:
        return f"<harness {self.name}>"


def _only_dshkit_state(place: str) -> bool:
    """Whether `place` is a directory holding nothing but `dshkit`: dshkit's own state
    directory, which it keeps in DSH's home by default, is no sign of DSH."""
    try:
        return os.listdir(place) == ["dshkit"]
    except OSError:
        return False


def absolute(path: str, given: str, name: str, field: str | None = None) -> str:
    """`path` (`given` with `~` expanded), refused unless it is absolute: a relative one would
    be taken from whatever directory dshkit runs in, the agent's own. Invalid says `name`
    (the variable, or what the input is) and the value as given; its field is `field`
    (default: `name`)."""
    if os.path.isabs(path):
        return path
    from ..errors import Invalid  # here: only a refusal needs it

    raise Invalid(
        f"{name} must be an absolute path, got {given!r}: dshkit does not take a place "
        "relative to the directory it happens to run in",
        field=field or name,
    )


def location(variable: str, default: str) -> str:
    """`$variable` (`default` when unset or empty) with `~` expanded, absolute or refused
    (Invalid naming the variable, or HOME when the default is what is relative)."""
    given = os.environ.get(variable)
    if given:
        return absolute(os.path.expanduser(given), given, variable)
    home = os.environ.get("HOME", "")
    return absolute(os.path.expanduser(default), home, "HOME")


LOG_TAIL = 1 << 20  # a mode is read from the end of a session log (the latest one wins)


def log_tail(path: str) -> bytes:
    """The last MiB of a session log, opened read-only (OSError when it cannot be read)."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - LOG_TAIL))
        return handle.read()


def last_log_value(path: str, pattern: bytes) -> str | None:
    """The last value `pattern` captures in the log's last MiB, or None."""
    import re

    try:
        tail = log_tail(path)
    except OSError:
        return None
    found = re.findall(pattern, tail)
    return found[-1].decode() if found else None
