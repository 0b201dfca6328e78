"""The one registry of harnesses: everything dshkit knows about DSH, Claude Code and Codex.

Every capability asks this registry — for a harness's sessions root, its log adapter, the
names of its tools, where its hook settings live, which hook event carries injected context,
how to start a headless session — and never compares a harness name itself.

Kept free of heavy imports (no dataclasses, pathlib, JSON, and not even `re` or `typing` at
import): the hook entry point reads it on every tool call. Adapters and log-name patterns
are made only when asked for.
"""

from __future__ import annotations

import os

from ..errors import Invalid

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterator, Mapping
    from typing import Any

    from .config_files import Server

# Tool vocabularies: what each kind of tool is called in a harness.
COMMAND = "command"  # runs a shell command
ASK = "ask"  # asks the person a question and waits for the answer
HUMAN_WAIT = "humanWait"  # its wall time is a wait (on a person, a job or a subagent)
READ = "read"
WRITE = "write"  # writes or edits a file
SEARCH = "search"
VOCABULARIES = (COMMAND, ASK, HUMAN_WAIT, READ, WRITE, SEARCH)


class Launch:
    """One headless run of a harness's CLI: the command line, where to run it, extra env."""

    __slots__ = ("argv", "cwd", "env")

    def __init__(self, argv: list[str], cwd: str, env: Mapping[str, str] | None = None) -> None:
        self.argv = argv
        self.cwd = cwd
        self.env = dict(env or {})

    def __repr__(self) -> str:
        return f"Launch({self.argv!r}, cwd={self.cwd!r})"


class Launcher:
    """How to start a new headless session in a working directory with a first message, and
    how to continue one (None where the harness's CLI cannot resume headlessly).

    `program` is the CLI's name on PATH; `$<env_override>` names another executable.
    """

    __slots__ = (
        "env_override",
        "mode_args",
        "model_args",
        "open_args",
        "program",
        "read_mode",
        "resume_args",
        "start_args",
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
    ) -> None:
        self.program = program
        self.start_args = start_args
        self.resume_args = resume_args
        self.env_override = env_override
        self.open_args = open_args  # session id → how a person reopens it interactively
        # How a new session is started on a given model and in a given permission mode, and
        # where a session's own log says its mode (its transcript's path → the mode, or None).
        self.model_args = model_args
        self.mode_args = mode_args
        self.read_mode = read_mode

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
        """A headless start with `message`; on `model` and in `mode` where the CLI takes them
        (their options go just before the message: after a subcommand such as `exec`)."""
        args = self.start_args(message)
        extra = [*(self.model_args(model) if model and self.model_args else ())]
        extra += [*(self.mode_args(mode) if mode and self.mode_args else ())]
        at = args.index(message)
        return Launch([self.executable(env), *args[:at], *extra, *args[at:]], cwd)

    def resume(
        self, cwd: str, session_id: str, message: str, env: Mapping[str, str] | None = None
    ) -> Launch | None:
        if self.resume_args is None:
            return None
        return Launch([self.executable(env), *self.resume_args(session_id, message)], cwd)

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
        full_access: frozenset[str],
        log_modes: Mapping[str, tuple[str, str]] | None = None,
        config_modes: tuple[Callable[[], str], Mapping[str, str]] | None = None,
        mcp_register: Mapping[str, Callable[[str, str], tuple[str, str]]] | None = None,
    ) -> None:
        self.mcp_configs = mcp_configs  # cwd → [(path, format)], formats of config_files.py
        # (cwd, servers, errors) → marks each server the harness would not start (`mcp_trust`)
        self.mcp_trust = mcp_trust
        self.full_access = full_access  # a sandbox or permission mode that restricts nothing
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
    leading `synthetic` mark names no model)."""

    __slots__ = (
        "attachment",
        "request",
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
    ) -> None:
        self.silent, self.attachment, self.spoken = silent, attachment, spoken
        self.results, self.result, self.request = results, result, request
        self.usage_keys, self.synthetic = usage_keys, synthetic


class Harness:
    """What dshkit knows about one harness."""

    __slots__ = (
        "_adapter",
        "_log_name",
        "adapter_name",
        "asks_every_step",
        "bridge",
        "capability",
        "context_event",
        "generations_repeat",
        "home",
        "honours_ask",
        "label",
        "launcher",
        "log_pattern",
        "name",
        "places",
        "project_settings",
        "quiet_lines",
        "sessions_root",
        "skills",
        "tools",
        "user_settings",
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
        tools: Mapping[str, frozenset[str]],
        user_settings: Callable[[str], str],
        project_settings: Callable[[str], str] | None,
        bridge: Bridge | None,
        context_event: str,
        generations_repeat: bool,
        launcher: Launcher,
        capability: Capability | None = None,
        honours_ask: bool = False,
        skills: Mapping[str, Callable[[str], str]] | None = None,
        asks_every_step: bool = False,
        quiet_lines: QuietLines | None = None,
    ) -> None:
        self.name = name
        self.label = label
        self.home = home
        # Where it keeps its configuration: any of them there means it is installed here.
        self.places = places
        self.sessions_root = sessions_root
        self.adapter_name = adapter_name
        self.log_pattern = log_name
        self._log_name: re.Pattern[str] | None = None
        self.tools = {kind: tools.get(kind, frozenset()) for kind in VOCABULARIES}
        self.user_settings = user_settings  # state dir → the hooks settings file (user scope)
        self.project_settings = project_settings  # project dir → file; None: no project scope
        self.bridge = bridge
        # The first hook event whose additionalContext reaches the model's first request.
        self.context_event = context_event
        # Whether a session's log files can repeat each other's events (DSH generations).
        self.generations_repeat = generations_repeat
        self.launcher = launcher
        self.capability = capability
        # Whether a PreToolUse hook's `permissionDecision: "ask"` puts the call before the
        # person (or, with nobody to ask, refuses it). Where it does not, a policy's ask is
        # delivered as a deny saying how to run the command anyway (hooks/guard.py).
        self.honours_ask = honours_ask
        # Where it reads Agent Skills (SKILL.md folders): scope ("user", "project") → the
        # folder, given the project's root; empty: no skills folder is known.
        self.skills = dict(skills or {})
        # Whether UserPromptSubmit fires before every model step, not only for a person's
        # prompt (then a later one in the same turn is a step: `dshkit.turns` tells them apart).
        self.asks_every_step = asks_every_step
        # The log lines the watermark may skip without a full check (None: it skips none).
        self.quiet_lines = quiet_lines
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


def dsh_home() -> str:
    """`$DSH_HOME`, defaulting to `~/.dsh` (the DSH harness's own home); absolute or refused."""
    return location("DSH_HOME", "~/.dsh")


def _claude_home() -> str:
    return location("CLAUDE_CONFIG_DIR", "~/.claude")


def _codex_home() -> str:
    return location("CODEX_HOME", "~/.codex")


def _dsh_profile_patch(profile: str) -> str:
    """The patch layer of one DSH profile (it mounts the hook bridge and dshkit's MCP server)."""
    return os.path.join(dsh_home(), "profiles", profile, "cordis.patch.yml")


def _dsh_mcp_configs(cwd: str) -> list[tuple[str, str]]:
    """DSH's patch layers, whose `dsh-mcp-client` entries are its MCP servers: the home layer
    and every profile's (a hook payload does not say which profile the session runs)."""
    home = dsh_home()
    profiles = os.path.join(home, "profiles")
    try:
        names = sorted(os.listdir(profiles))
    except OSError:
        names = []
    layers = [os.path.join(home, "cordis.patch.yml")]
    layers += [os.path.join(profiles, name, "cordis.patch.yml") for name in names]
    return [(layer, "dsh-patch") for layer in layers]


def _claude_user_file() -> str:
    """Claude Code's user file, `~/.claude.json` (in `$CLAUDE_CONFIG_DIR` when that is set),
    where `claude mcp add --scope user` keeps servers."""
    return os.path.join(location("CLAUDE_CONFIG_DIR", "~"), ".claude.json")


def _claude_mcp_configs(cwd: str) -> list[tuple[str, str]]:
    """Claude Code's user file (`mcpServers`, and per project under `projects`) and the
    project's `.mcp.json`."""
    return [(_claude_user_file(), "claude-user"), (os.path.join(cwd, ".mcp.json"), "mcp-json")]


def _claude_mcp_trust(cwd: str, servers: list[Server], errors: list[str]) -> None:
    """Claude Code starts project servers the person approved (`mcp_trust.judge_claude`)."""
    from .mcp_trust import judge_claude

    user_settings = os.path.join(_claude_home(), "settings.json")
    judge_claude(cwd, servers, errors, user_file=_claude_user_file(), user_settings=user_settings)


def _codex_config() -> str:
    return os.path.join(_codex_home(), "config.toml")


def _codex_mcp_configs(cwd: str) -> list[tuple[str, str]]:
    """Codex's own config.toml, then the project's layers (root first), which it reads only
    in a project the person trusted."""
    from .mcp_trust import codex_layers

    own = _codex_config()
    return [(own, "codex-toml")] + [(p, "codex-toml") for p in codex_layers(cwd) if p != own]


def _codex_mcp_trust(cwd: str, servers: list[Server], errors: list[str]) -> None:
    from .mcp_trust import judge_codex

    judge_codex(cwd, servers, errors, user_config=_codex_config())


def _own_mcp_trust(cwd: str, servers: list[Server], errors: list[str]) -> None:
    """A harness whose servers are all in its own home: it starts each one not switched off."""
    from .mcp_trust import judge_own

    judge_own(cwd, servers, errors)


# Where a session's log says its permission mode: Claude Code on each typed prompt
# (`permissionMode`), Codex in each turn's context (`sandbox_policy.type`).
_CLAUDE_MODE = rb'"permissionMode"\s*:\s*"([A-Za-z]+)"'
_CODEX_SANDBOX = rb'"sandbox_policy"\s*:\s*\{\s*"type"\s*:\s*"([a-z-]+)"'
_MODE_TAIL = 1 << 20  # the mode is read from the end of the log (the latest one wins)


def _last_log_value(path: str, pattern: bytes) -> str | None:
    """The last value `pattern` captures in the log's last MiB (opened read-only), or None."""
    import re

    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _MODE_TAIL))
            tail = handle.read()
    except OSError:
        return None
    found = re.findall(pattern, tail)
    return found[-1].decode() if found else None


_DSH = Harness(
    name="dsh",
    label="DSH",
    home=dsh_home,
    places=lambda: (dsh_home(),),
    sessions_root=lambda: os.path.join(dsh_home(), "sessions"),
    adapter_name="dshkit.sessions.dsh:DshAdapter",
    log_name=r"^session(\.v[1-9][0-9]*)?\.jsonl(\.zstd)?$",
    tools={
        COMMAND: frozenset({"bash", "pwsh", "workflow", "job_output", "job_kill"}),
        ASK: frozenset({"ask_user_question"}),
        HUMAN_WAIT: frozenset(
            {
                "ask_user_question",
                "job_output",
                "job_list",
                "job_kill",
                "subagent",
                "subagent_fork",
                "list_agents",
                "send_message",
                "plugin_manager",
            }
        ),
        READ: frozenset({"read", "read_image"}),
        WRITE: frozenset({"write", "edit", "str_replace_editor"}),
        SEARCH: frozenset({"grep", "glob", "web_search"}),
    },
    # DSH's hooks run through its Claude-Code bridge, whose settings file dshkit keeps.
    user_settings=lambda state_dir: os.path.join(state_dir, "dsh-hooks.json"),
    project_settings=None,
    bridge=Bridge(
        "hooks-claude-code",
        (
            "@deepseek-ai/dsh-hooks-claude-code@0.0.1-rc.5",
            "@deepseek-ai/dsh-hook-protocol@0.0.1-rc.1",
        ),
        _dsh_profile_patch,
    ),
    # The bridge runs SessionStart detached: its context misses the first request.
    context_event="UserPromptSubmit",
    generations_repeat=True,
    # rc.8 starts a new session per headless run and cannot resume one headlessly.
    launcher=Launcher("dsh", lambda message: ["--profile", "headless", message], None, "DSH_BIN"),
    capability=Capability(
        mcp_configs=_dsh_mcp_configs,
        mcp_trust=_own_mcp_trust,
        full_access=frozenset({"danger-full-access"}),
        log_modes={"sandbox": ("sandbox/mode", "mode"), "approval": ("approval/policy", "policy")},
        # The profile's patch layer, beside the hook bridge's block.
        mcp_register={"user": lambda project, profile: (_dsh_profile_patch(profile), "dsh-patch")},
    ),
    # Run for real (rc.8, hook bridge rc.5, headless): an ask hook's call went to DSH's
    # approval; with no approval channel the tool was refused, nothing ran.
    honours_ask=True,
    # Run for real (rc.8, hook bridge rc.5, headless; notes/real-dsh-offline.md): the bridge
    # fired UserPromptSubmit again before a later model step of the same turn (one where
    # contexts came in), its prompt those contexts; tests/real/test_optimizer_dsh.py.
    asks_every_step=True,
)

# Claude Code transcript entry types that carry nothing the event model holds: its session
# reader (`sessions.claude`) leaves them out, and the watermark's hot path may skip them.
CLAUDE_SKIPPED_TYPES = frozenset(
    {
        "queue-operation",
        "last-prompt",
        "file-history-snapshot",
        "system",
        "progress",
        "custom-title",
        "ai-title",
        "agent-name",
        "tag",
        "pr-link",
        "cost-state",
        "tools-used",
        "api-request",
        "api-request-start",
        "api-request-end",
    }
)

_CLAUDE = Harness(
    name="claude",
    label="Claude Code",
    home=_claude_home,
    places=lambda: (_claude_home(), _claude_user_file()),
    sessions_root=lambda: os.path.join(_claude_home(), "projects"),
    adapter_name="dshkit.sessions.claude:ClaudeAdapter",
    log_name=r"^[^/]+\.jsonl$",
    tools={
        COMMAND: frozenset({"Bash"}),
        ASK: frozenset({"AskUserQuestion"}),
        HUMAN_WAIT: frozenset({"AskUserQuestion", "Task", "Agent"}),
        READ: frozenset({"Read", "NotebookRead"}),
        WRITE: frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"}),
        SEARCH: frozenset({"Grep", "Glob", "WebSearch"}),
    },
    user_settings=lambda state_dir: os.path.join(_claude_home(), "settings.json"),
    project_settings=lambda project: os.path.join(project, ".claude", "settings.json"),
    bridge=None,
    context_event="SessionStart",
    generations_repeat=False,
    launcher=Launcher(
        "claude",
        lambda message: ["-p", message, "--output-format", "json"],
        lambda session, message: ["-p", "--resume", session, message, "--output-format", "json"],
        "CLAUDE_BIN",
        lambda session: ["--resume", session],
        model_args=lambda model: ["--model", model],
        mode_args=lambda mode: ["--permission-mode", mode],
        read_mode=lambda path: _last_log_value(path, _CLAUDE_MODE),
    ),
    capability=Capability(
        mcp_configs=_claude_mcp_configs,
        mcp_trust=_claude_mcp_trust,
        full_access=frozenset({"bypassPermissions"}),
        mcp_register={
            "user": lambda project, profile: (_claude_user_file(), "claude-user"),
            "project": lambda project, profile: (os.path.join(project, ".mcp.json"), "mcp-json"),
        },
    ),
    skills={
        "user": lambda project: os.path.join(_claude_home(), "skills"),
        "project": lambda project: os.path.join(project, ".claude", "skills"),
    },
    # Run for real (2.1.332, `-p`): an ask hook's Bash call was refused (listed in
    # permission_denials, the model got the reason), nothing ran; interactively it prompts.
    honours_ask=True,
    quiet_lines=QuietLines(
        silent=CLAUDE_SKIPPED_TYPES,  # what its session reader leaves out, by definition
        attachment="attachment",
        spoken="hook_additional_context",
        results="user",
        result="tool_result",
        request="assistant",
        usage_keys=("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
        synthetic="<",
    ),
)

_CODEX = Harness(
    name="codex",
    label="Codex",
    home=_codex_home,
    places=lambda: (_codex_home(),),
    sessions_root=lambda: os.path.join(_codex_home(), "sessions"),
    adapter_name="dshkit.sessions.codex:CodexAdapter",
    log_name=r"^rollout-.+\.jsonl$",
    tools={
        # Its hooks name exec_command `Bash`, with `tool_input.command` (0.171.0, run for
        # real: the PreToolUse payload of a model's exec_command call).
        COMMAND: frozenset({"Bash", "exec_command", "local_shell", "shell", "shell_command"}),
        ASK: frozenset({"request_user_input"}),
        HUMAN_WAIT: frozenset({"request_user_input"}),
        READ: frozenset(),
        WRITE: frozenset({"apply_patch"}),
        SEARCH: frozenset({"web_search"}),
    },
    user_settings=lambda state_dir: os.path.join(_codex_home(), "hooks.json"),
    project_settings=None,  # the notes document ~/.codex/hooks.json only
    bridge=None,
    context_event="SessionStart",
    generations_repeat=False,
    launcher=Launcher(
        "codex",
        # The target works where its source does: no git-repository check stops it there.
        lambda message: [
            "exec",
            "--dangerously-bypass-hook-trust",
            "--skip-git-repo-check",
            message,
        ],
        lambda session, message: [
            "exec",
            "--dangerously-bypass-hook-trust",
            "--skip-git-repo-check",
            "resume",
            session,
            message,
        ],
        "CODEX_BIN",
        lambda session: ["resume", session],
        model_args=lambda model: ["--model", model],
        mode_args=lambda mode: ["--sandbox", mode],
        read_mode=lambda path: _last_log_value(path, _CODEX_SANDBOX),
    ),
    capability=Capability(
        mcp_configs=_codex_mcp_configs,
        mcp_trust=_codex_mcp_trust,
        full_access=frozenset({"danger-full-access"}),
        mcp_register={
            "user": lambda project, profile: (
                os.path.join(_codex_home(), "config.toml"),
                "codex-toml",
            )
        },
        config_modes=(
            lambda: os.path.join(_codex_home(), "config.toml"),
            {"sandbox": "sandbox_mode", "approval": "approval_policy"},
        ),
    ),
    # The open standard's folders, which Codex reads (not under CODEX_HOME).
    skills={
        "user": lambda project: os.path.join(os.path.expanduser("~"), ".agents", "skills"),
        "project": lambda project: os.path.join(project, ".agents", "skills"),
    },
    # Run for real (0.171.0, `exec`): an ask hook is reported as "PreToolUse Failed" and the
    # command runs (ask is as good as allow); its docs list ask as parsed, not supported.
    honours_ask=False,
)

HARNESSES: dict[str, Harness] = {h.name: h for h in (_DSH, _CLAUDE, _CODEX)}
NAMES: tuple[str, ...] = tuple(HARNESSES)


class UnknownHarness(Invalid, KeyError):
    def __init__(self, name: str) -> None:
        super().__init__(f"unknown harness {name!r} (known: {', '.join(NAMES)})", field="harness")

    def __str__(self) -> str:
        return self.message


def get(name: str) -> Harness:
    """The harness called `name`; UnknownHarness names the known ones."""
    try:
        return HARNESSES[name]
    except KeyError:
        raise UnknownHarness(name) from None


def all_harnesses() -> Iterator[Harness]:
    return iter(HARNESSES.values())


def quiet_lines() -> tuple[QuietLines, ...]:
    """Every harness's log lines the watermark may skip (a line quiet in one of them is)."""
    return tuple(h.quiet_lines for h in HARNESSES.values() if h.quiet_lines is not None)


def tools(kind: str) -> frozenset[str]:
    """A tool vocabulary across every harness (for logs whose harness does not matter)."""
    return frozenset().union(*(h.tools[kind] for h in HARNESSES.values()))


def command_line(tool_input: dict[str, Any]) -> str | None:
    """The shell line a command tool runs: `command` (Claude Code Bash, DSH bash/pwsh, Codex
    shell as an argv list) or `cmd` (Codex exec_command, a string or an argv list)."""
    value = tool_input.get("command", tool_input.get("cmd"))
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
    """Which harness runs a hook: from the transcript it names first, then payload and env.

    Returns a harness name, or "unknown".
    """
    transcript = str(payload.get("transcript_path") or "")
    name = os.path.basename(transcript)
    # The patterns' fixed starts first: compiling one loads `re` (milliseconds a tool call).
    if name.startswith("session") and _DSH.log_name.match(name):
        return _DSH.name
    if "turn_id" in payload or (name.startswith("rollout-") and _CODEX.log_name.match(name)):
        return _CODEX.name
    if env.get("CLAUDECODE") == "1" or "/.claude/projects/" in transcript:
        return _CLAUDE.name
    return "unknown"
