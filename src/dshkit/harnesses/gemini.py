"""The Gemini CLI: everything dshkit knows about it, in one `Harness`.

Read from the shipped bundle of `@google/gemini-cli` 0.61.0 and run for real against a fake
Gemini API on 127.0.0.1 (docs/hooks.md#gemini-cli):

- Home `$GEMINI_CLI_HOME/.gemini` (default `~/.gemini`); sessions under
  `tmp/<project slug>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl` (`.project_root` beside
  `chats/` names the project), read by `dshkit.sessions.gemini:GeminiAdapter`.
- Hooks: `settings.json` (user) or `<project>/.gemini/settings.json`, Claude Code's shape
  with a timeout in milliseconds. Its own event names (`BeforeAgent`, `BeforeTool`,
  `AfterTool`, `AfterAgent`, `PreCompress`; SessionStart and SessionEnd as Claude Code's);
  a block or deny is exit code 2 with the reason on stderr (the reason reaches the model as
  the tool's error). Its transcripts are named
  `session-…jsonl`. Additional context is escaped (`<` as `&lt;`) and wrapped in
  `<hook_context>`: SessionStart's is put before the person's first prompt, BeforeAgent's
  after it, in the same user message.
- MCP servers: `mcpServers` in the user's and the project's `settings.json`; a project's
  counts only in a folder the person trusted (`trustedFolders.json`).
"""

from __future__ import annotations

import os

from .harness import (
    COMMAND,
    READ,
    SEARCH,
    WRITE,
    Capability,
    EventLog,
    Harness,
    HookDialect,
    Launcher,
    StopSupport,
    location,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from .config_files import Server

SETTINGS = "gemini-settings"  # the format of its `settings.json` (an `mcpServers` map)
MCP_JSON = "mcp-json"  # the same map as a `.mcp.json` holds it: how dshkit registers its own

# dshkit's events as the Gemini CLI names them (0.61.0's HookEventName); it has more
# (BeforeModel, AfterModel, BeforeToolSelection, Notification) that dshkit does not use.
NAMES = {
    "UserPromptSubmit": "BeforeAgent",
    "PreToolUse": "BeforeTool",
    "PostToolUse": "AfterTool",
    "Stop": "AfterAgent",
    "PreCompact": "PreCompress",
}


_CREDENTIALS = frozenset(
    {"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"}
)


def _home() -> str:
    """`$GEMINI_CLI_HOME/.gemini`: the variable stands for the whole home, not `.gemini`."""
    return os.path.join(location("GEMINI_CLI_HOME", "~"), ".gemini")


def _settings() -> str:
    return os.path.join(_home(), "settings.json")


def _project_settings(project: str) -> str:
    return os.path.join(project, ".gemini", "settings.json")


def _mcp_configs(cwd: str) -> list[tuple[str, str]]:
    """Its user settings, then the project's (read only in a trusted folder)."""
    from .config_files import project_root

    project = project_root(os.path.abspath(cwd)) or os.path.abspath(cwd)
    own, theirs = _settings(), _project_settings(project)
    return [(own, SETTINGS)] + ([(theirs, SETTINGS)] if theirs != own else [])


def _settings_servers(path: str, text: str, cwd: str) -> list[Server]:
    from .config_files import from_mapping, load_json

    return from_mapping(path, load_json(path, text).get("mcpServers"))


def trusted(cwd: str, folders: object) -> bool:
    """Whether the Gemini CLI trusts the folder `cwd` by `trustedFolders.json`'s rules: an
    entry `TRUST_FOLDER` trusts its folder and everything below, `TRUST_PARENT` its parent
    folder and below, `DO_NOT_TRUST` distrusts; the entry nearest `cwd` wins."""
    if not isinstance(folders, dict):
        return False
    here = os.path.abspath(cwd)
    best, verdict = -1, False
    for path, level in folders.items():
        if not isinstance(path, str):
            continue
        root = os.path.dirname(path) if level == "TRUST_PARENT" else path
        root = os.path.abspath(root)
        if (here == root or here.startswith(root.rstrip(os.sep) + os.sep)) and len(root) > best:
            best, verdict = len(root), level in ("TRUST_FOLDER", "TRUST_PARENT")
    return verdict


def judge_trust(cwd: str, servers: list[Server], errors: list[str], *, user_settings: str) -> None:
    """Which servers the Gemini CLI starts: the user settings' own, and a project's only in
    a folder the person trusted (`$GEMINI_CLI_TRUSTED_FOLDERS_PATH`, default
    `trustedFolders.json` beside the user settings; `GEMINI_CLI_TRUST_WORKSPACE=true` trusts
    any). A server named in the user settings' `mcp.excluded` is switched off."""
    from .mcp_trust import NOT_APPROVED, SWITCHED_OFF, read_json

    folders_path = os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or os.path.join(
        os.path.dirname(user_settings), "trustedFolders.json"
    )
    workspace = os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true"
    ok = workspace or trusted(
        cwd, read_json(folders_path, errors) if os.path.exists(folders_path) else {}
    )
    mcp = read_json(user_settings, []).get("mcp")
    excluded = mcp.get("excluded") if isinstance(mcp, dict) else None
    for server in servers:
        if isinstance(excluded, list) and server.name in excluded:
            server.withheld = SWITCHED_OFF
        elif server.source != user_settings and not ok:
            server.withheld = NOT_APPROVED


def _mcp_trust(cwd: str, servers: list[Server], errors: list[str]) -> None:
    judge_trust(cwd, servers, errors, user_settings=_settings())


HARNESS = Harness(
    name="gemini",
    label="Gemini CLI",
    home=_home,
    places=lambda: (_home(),),
    sessions_root=lambda: os.path.join(_home(), "tmp"),
    adapter_name="dshkit.sessions.gemini:GeminiAdapter",
    # Its lines as the adapter maps them, by the adapter's own mapping (graft's fold).
    event_log=EventLog(mapping="dshkit.sessions.chats:events"),
    log_name=r"^session-.+\.jsonl$",
    tools={
        COMMAND: frozenset({"run_shell_command"}),
        READ: frozenset({"read_file", "read_many_files", "list_directory"}),
        WRITE: frozenset({"write_file", "replace"}),
        SEARCH: frozenset({"google_web_search", "web_fetch", "grep_search", "glob"}),
    },
    user_settings=lambda state_dir: _settings(),
    project_settings=_project_settings,
    bridge=None,
    # Its hooks' timeout is in milliseconds (0.61.0's `hookConfig.timeout`, default 60000).
    # Its BeforeAgent and AfterAgent `prompt` carries SessionStart's context in front of the
    # person's words (0.61.0, run for real, headless): taken out before a handler reads it.
    dialect=HookDialect(
        names=NAMES,
        transcripts="session-",
        block_exit=2,
        timeout_ms=True,
        context_tags=("<hook_context>", "</hook_context>"),
    ),
    context_event="SessionStart",
    generations_repeat=False,
    launcher=Launcher(
        "gemini",
        # Headless with the first message on stdin (0.61.0, run for real: a stdin that is not
        # a terminal is the prompt, and the run is headless), never in /proc's cmdline;
        # `--skip-trust` lets it run in a folder the person never trusted (it exits 55).
        lambda message: ["--skip-trust", message],
        lambda session, message: ["--skip-trust", "--resume", session, message],
        "GEMINI_BIN",
        lambda session: ["--resume", session],
        model_args=lambda model: ["-m", model],
        mode_args=lambda mode: ["--approval-mode", mode],
        message_on_stdin="",
        # With `security.environmentVariableRedaction` on, its hooks lose these (0.61.0's
        # sanitizeEnvironment): a target started from a hook needs them back.
        withheld=lambda name: name in _CREDENTIALS,
    ),
    capability=Capability(
        mcp_configs=_mcp_configs,
        mcp_trust=_mcp_trust,
        # Its approval mode and its sandbox (`--sandbox`, off by default) are two layers:
        # full access only when both are read and both say so.
        full_access={"permission": frozenset({"yolo"}), "sandbox": frozenset({"off"})},
        mcp_register={
            "user": lambda project, profile: (_settings(), MCP_JSON),
            "project": lambda project, profile: (_project_settings(project), MCP_JSON),
        },
    ),
    config_formats={SETTINGS: _settings_servers},
    # Its `decision: "ask"` is parsed but, headless, nobody is asked: not relied on.
    honours_ask=False,
    # 0.61.0, run for real: an AfterAgent block (exit 2) sends its reason to the model as the
    # next user message, and the AfterAgent that follows says `stop_hook_active: true`.
    stop=StopSupport(blocks=True, loop_flag=True),
    # That reason goes through BeforeAgent again as its `prompt` (run for real): a prompt hook
    # within a turn a Stop block kept open is not the person's (`dshkit.turns`).
    asks_every_step=True,
    prompt_prefixes=(
        ("!", "shell mode", True),
        ("/", "slash command", True),
        ("@", "file inclusion", False),
    ),
)
