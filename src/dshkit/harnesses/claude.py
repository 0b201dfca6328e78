"""Claude Code: everything dshkit knows about it, in one `Harness`.

- Home `$CLAUDE_CONFIG_DIR` (default `~/.claude`), its user file `~/.claude.json`;
  transcripts under `projects/<cwd with every non-alphanumeric character as "-">/<id>.jsonl`,
  read by `dshkit.sessions.claude:ClaudeAdapter`.
- Hooks: `settings.json` (user) or `<project>/.claude/settings.json`. Its dialect is the
  protocol's reference, names and answers (the shape `HookDialect` writes by default); its
  hooks get `CLAUDECODE=1` and its transcripts live under `/.claude/projects/`, both only
  hints. A Stop block makes the model go on with the reason, `stop_hook_active` set while it
  does; a PreToolUse "ask" prompts the person (in `-p`, the call is refused).
- MCP servers: `~/.claude.json` (`mcpServers`, per project `projects[<project>].mcpServers`,
  format `claude-user`) and a project's `.mcp.json` (`mcp-json`), trusted as 2.1.332 does
  (`judge_trust` below).
- Its bash sandbox (`sandbox.enabled` in its settings) runs inside the CLI: no command runs a
  given program under it. Its prompt input gives `!`, `/`, `#`, `@` and `?` a meaning.
"""

from __future__ import annotations

import os

from .harness import (
    ASK,
    COMMAND,
    HUMAN_WAIT,
    READ,
    SEARCH,
    WRITE,
    Capability,
    Harness,
    HookDialect,
    LaggingLog,
    Launcher,
    PluginFormat,
    QuietLines,
    Sandbox,
    StopSupport,
    last_log_value,
    location,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .config_files import Server

USER_FILE = "claude-user"  # the format of `~/.claude.json`
MCP_JSON = "mcp-json"  # the format of a project's `.mcp.json`

# Transcript entry types that carry nothing the event model holds: its session reader
# (`sessions.claude`) leaves them out, and the watermark's hot path may skip them.
# The model Claude Code names on assistant entries no model wrote: its own stand-ins ("No
# response requested." when a turn ends with nothing asked of the model) and API errors
# (`isApiErrorMessage`, "API Error: …"). Read for real from 2.1.332's cli.
SYNTHETIC_MODEL = "<synthetic>"
# A `user` entry's text the CLI wrote, not the person: a slash command's wrapper and output,
# a `!` shell's, and an interrupt's note; a reminder it adds is not a message at all.
COMMAND_MARKERS = (
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)
INTERRUPT = "[Request interrupted by user"
REMINDER = "<system-reminder>"
SKIPPED_TYPES = frozenset(
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

# Where a session's log says its permission mode: on each typed prompt (`permissionMode`).
_MODE = rb'"permissionMode"\s*:\s*"([A-Za-z]+)"'


def message_texts(record: Mapping[str, Any]) -> list[str]:
    """The text blocks of a `user` entry's message, but the CLI's reminders (a string content
    is one block); its tool results are not texts."""
    message = record.get("message") or {}
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    texts = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text":
            text = str(block.get("text", ""))
            if not text.lstrip().startswith(REMINDER):
                texts.append(text)
    return texts


def user_source(record: Mapping[str, Any], first: str) -> str:
    """Who wrote a `user` entry whose first text is `first`: `user` (a person's typed words,
    a new turn) or the kind of what else it is."""
    if record.get("isSidechain"):
        return "agent-message"  # (sessions.events.AGENT_MESSAGE)
    if record.get("isCompactSummary"):
        return "compact-checkpoint"
    if record.get("isMeta"):
        return "runtime-context"
    first = first.lstrip()
    if first.startswith(COMMAND_MARKERS):
        return "command"
    if first.startswith(INTERRUPT):
        return "interrupt"
    return "user"


def opens_turn(record: Mapping[str, Any]) -> bool:
    """Whether a `user` entry is a person's typed words: the session reader begins a turn."""
    texts = message_texts(record)
    return bool(texts) and user_source(record, texts[0]) == "user"


def _home() -> str:
    return location("CLAUDE_CONFIG_DIR", "~/.claude")


def _user_file() -> str:
    """Claude Code's user file, `~/.claude.json` (in `$CLAUDE_CONFIG_DIR` when that is set),
    where `claude mcp add --scope user` keeps servers."""
    return os.path.join(location("CLAUDE_CONFIG_DIR", "~"), ".claude.json")


def _mcp_configs(cwd: str) -> list[tuple[str, str]]:
    """Its user file (`mcpServers`, and per project under `projects`) and the project's
    `.mcp.json`."""
    return [(_user_file(), USER_FILE), (os.path.join(cwd, ".mcp.json"), MCP_JSON)]


def projects(config: Mapping[str, Any], cwd: str) -> list[Mapping[str, Any]]:
    """The entries of `~/.claude.json`'s `projects` for a session working in `cwd`."""
    from collections.abc import Mapping

    from .config_files import project_dirs

    entries = config.get("projects") or {}
    if not isinstance(entries, Mapping):
        raise ValueError("projects is not an object")
    found = [entries.get(name) for name in project_dirs(cwd)]
    unique = {id(entry): entry for entry in found if isinstance(entry, Mapping)}
    return list(unique.values())


def _user_servers(path: str, text: str, cwd: str) -> list[Server]:
    from .config_files import from_mapping, load_json

    config = load_json(path, text)
    found = from_mapping(path, config.get("mcpServers"))
    for project in projects(config, cwd):
        found += from_mapping(path, project.get("mcpServers"))
    return found


def _mcp_json_servers(path: str, text: str, cwd: str) -> list[Server]:
    from .config_files import from_mapping, load_json

    return from_mapping(path, load_json(path, text).get("mcpServers"))


def judge_trust(
    cwd: str, servers: list[Server], errors: list[str], *, user_file: str, user_settings: str
) -> None:
    """Which servers Claude Code starts (as 2.1.332 does it, what `claude mcp list` shows):
    `user_file` is `~/.claude.json`, `user_settings` its `settings.json`.

    Servers of the user scope (`~/.claude.json` `mcpServers`) and of the local scope
    (`projects[<project>].mcpServers`) are the person's own. A project's `.mcp.json` server
    runs once approved, by `enableAllProjectMcpServers: true` or its name in
    `enabledMcpjsonServers`: in the user's `~/.claude/settings.json` always; in the project's
    own files (`.claude/settings.json`, `.claude/settings.local.json`, and `~/.claude.json`
    `projects[<project>]`, where older versions recorded it and from where 2.1 carries it to
    the local settings) only once the person trusted the folder
    (`projects[<project>].hasTrustDialogAccepted`): before that, a cloned repository's own
    settings approve nothing. A name in `disabledMcpjsonServers` is rejected, and one in
    `projects[<project>].disabledMcpServers` (the `/mcp` switch) is off, whatever its scope.
    `<project>` is the repository's root, else the working directory."""
    from .config_files import project_dirs
    from .mcp_trust import NOT_APPROVED, SWITCHED_OFF, listed, read_json

    try:  # (what is wrong with the user file, `configured` has said)
        entries = projects(read_json(user_file, []), cwd)
    except ValueError:
        entries = []
    trusted = any(p.get("hasTrustDialogAccepted") is True for p in entries)
    folders = dict.fromkeys([os.path.abspath(cwd), *project_dirs(cwd)])
    own = [
        read_json(os.path.join(folder, ".claude", name), errors)
        for folder in folders
        for name in ("settings.json", "settings.local.json")
    ]
    approving = [read_json(user_settings, errors), *((*entries, *own) if trusted else ())]
    # A rejection only ever keeps a server out: honoured wherever it is written.
    rejecting = [*approving, *entries, *own]
    rejected = listed(rejecting, "disabledMcpjsonServers")
    approved = listed(approving, "enabledMcpjsonServers")
    every = any(s.get("enableAllProjectMcpServers") is True for s in approving)
    switched_off = listed(entries, "disabledMcpServers")
    for server in servers:
        if not server.enabled or server.name in switched_off:
            server.withheld = SWITCHED_OFF
        elif server.kind == MCP_JSON and (
            server.name in rejected or not (every or server.name in approved)
        ):
            server.withheld = NOT_APPROVED


def _mcp_trust(cwd: str, servers: list[Server], errors: list[str]) -> None:
    user_settings = os.path.join(_home(), "settings.json")
    judge_trust(cwd, servers, errors, user_file=_user_file(), user_settings=user_settings)


def _settings(cwd: str) -> list[str]:
    """Its settings files, lowest precedence first."""
    home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    files = [os.path.join(home, "settings.json")]
    if cwd:
        files += [os.path.join(cwd, ".claude", n) for n in ("settings.json", "settings.local.json")]
    return [*files, "/etc/claude-code/managed-settings.json"]


def _sandbox_modes(payload: Mapping[str, Any], errors: list[str]) -> dict[str, str]:
    """Whether its bash sandbox is on (`sandbox.enabled`, the last file that says)."""
    import json

    found: dict[str, str] = {}
    for path in _settings(str(payload.get("cwd") or "")):
        try:
            with open(path, "rb") as handle:
                settings = json.load(handle)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            errors.append(f"{path}: {exc}")
            continue
        sandbox = settings.get("sandbox") if isinstance(settings, dict) else None
        enabled = sandbox.get("enabled") if isinstance(sandbox, dict) else None
        if isinstance(enabled, bool):
            found = {"sandbox": "bash-sandbox" if enabled else "off", "source:sandbox": path}
    return found


HARNESS = Harness(
    name="claude",
    label="Claude Code",
    home=_home,
    places=lambda: (_home(), _user_file()),
    sessions_root=lambda: os.path.join(_home(), "projects"),
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
    user_settings=lambda state_dir: os.path.join(_home(), "settings.json"),
    project_settings=lambda project: os.path.join(project, ".claude", "settings.json"),
    bridge=None,
    # The reference dialect; its env and transcripts' place are imitated by others' hooks.
    # A handler's `if` is a permission rule (2.1.332's settings schema: "Only runs if the tool
    # call matches the pattern"); run for real (tests/real/test_hook_routes.py): `Write(*.html)`
    # fires for a Write of page.html, sub/deep.html and PAGE.HTML, never for an Edit or for
    # notes.txt, and two handlers whose conditions both match run twice (so ours never overlap).
    # Its `type: "http"` hooks POST the payload and read the answer as a command's stdout; a
    # failure is a non-blocking error (so never the guard's PreToolUse), and 2.1.332 skips
    # one on SessionStart ("HTTP hooks are not supported for SessionStart").
    dialect=HookDialect(
        paths=("/.claude/projects/",),
        env=(("CLAUDECODE", "1"),),
        # A hook output's `systemMessage` is shown to the person, never sent to the model.
        person="systemMessage",
        condition="{tool}({path})",
        http_events=("UserPromptSubmit", "PostToolUse", "Stop"),
    ),
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
        read_mode=lambda path: last_log_value(path, _MODE),
        # `-p` with no prompt argument reads it from stdin: the first message (the person's
        # words, the card) never stands in /proc/<pid>/cmdline.
        message_on_stdin="",
    ),
    # Run for real (2.1.332, tests/real/test_graft.py): a tool result with structured
    # content reached the model as that JSON, its text left out.
    mcp_shows_structured=True,
    # Run for real (2.1.332, tests/real/test_plugin_claude.py): exec-form hooks with
    # ${CLAUDE_PLUGIN_ROOT} substituted, options asked for and kept in the keychain.
    plugin=PluginFormat(
        manifest=".claude-plugin/plugin.json",
        hooks_file="hooks/hooks.json",
        exec_form=True,
        root="${CLAUDE_PLUGIN_ROOT}",
        record="enabled-plugins",
        remove="claude plugin uninstall {ident}",
        options=True,
    ),
    capability=Capability(
        mcp_configs=_mcp_configs,
        mcp_trust=_mcp_trust,
        # Its permission mode and its bash sandbox are two layers: both must say so.
        full_access={"permission": frozenset({"bypassPermissions"}), "sandbox": frozenset({"off"})},
        mcp_register={
            "user": lambda project, profile: (_user_file(), USER_FILE),
            "project": lambda project, profile: (os.path.join(project, ".mcp.json"), MCP_JSON),
        },
    ),
    config_formats={USER_FILE: _user_servers, MCP_JSON: _mcp_json_servers},
    skills={
        "user": lambda project: os.path.join(_home(), "skills"),
        "project": lambda project: os.path.join(project, ".claude", "skills"),
    },
    # Run for real (2.1.332, `-p`): an ask hook's Bash call was refused (listed in
    # permission_denials, the model got the reason), nothing ran; interactively it prompts.
    honours_ask=True,
    quiet_lines=QuietLines(
        silent=SKIPPED_TYPES,  # what its session reader leaves out, by definition
        attachment="attachment",
        spoken="hook_additional_context",
        results="user",
        result="tool_result",
        request="assistant",
        usage_keys=("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
        synthetic="<",
        request_ids=("requestId", "id"),  # the line's, else its message's
        call="tool_use",
        opens_turn=opens_turn,
    ),
    # Read from the shipped CLI (2.1.x): the transcript is appended from a write queue drained
    # every 100 ms, and a PostToolUse hook starts as soon as the tool ends; a quick tool's
    # hook ran before its own request's line was written under load (a real CI run). Its
    # payload's `tool_use_id` is the tool_use block's `id` in that line.
    lagging_log=LaggingLog(call_field="tool_use_id", wait_s=1.0),
    # Seen in its hooks' environment (2.1.x, a real run): each session's process has its own
    # pid, and a messaging socket and token of its own (a credential: never written down).
    volatile_env=("CLAUDE_PID", "CLAUDE_CODE_MESSAGING_SOCKET", "CLAUDE_CODE_MESSAGING_TOKEN"),
    # `{"decision": "block", "reason": …}` makes the model go on with the reason; the
    # payload's `stop_hook_active` is true while it goes on because of a Stop hook.
    stop=StopSupport(blocks=True, loop_flag=True),
    # Its bash sandbox is sandbox-runtime over bubblewrap inside the CLI, which offers no
    # command that runs a given program under it: the modes only, no runner.
    sandbox=Sandbox(modes=_sandbox_modes),
    # Read from the shipped CLI.
    prompt_prefixes=(
        ("!", "shell mode", True),
        ("/", "slash command", True),
        ("#", "memory", True),
        ("@", "file path mention", False),
        ("?", "shortcuts", True),
    ),
)
