"""The Codex CLI: everything dshkit knows about it, in one `Harness`.

- Home `$CODEX_HOME` (default `~/.codex`); rollouts under
  `sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`, read by `dshkit.sessions.codex:CodexAdapter`.
- Hooks: `~/.codex/hooks.json`, run only when trusted (or with
  `--dangerously-bypass-hook-trust`). Its dialect is Claude Code's, names and answers
  (0.171.0, run for real: `additionalContext` arrives as a developer message, a PreToolUse
  deny blocks the command, a Stop block's reason reaches the model as a user message and the
  next Stop says `stop_hook_active: true`); its payloads carry `turn_id`, and its transcripts
  are named `rollout-…`. A PreToolUse "ask" is reported as failed and the command runs.
- MCP servers: `config.toml`'s `[mcp_servers.*]` (format `codex-toml`), and a project's
  `.codex/config.toml` layers, which count only in a project the person trusted.
- Sandbox: the modes of the rollout's latest turn context; `codex sandbox` runs a program
  inside one. Its prompt input gives `!`, `/`, `@` and `$` a meaning.
"""

from __future__ import annotations

import os

from .harness import (
    ASK,
    COMMAND,
    HUMAN_WAIT,
    SEARCH,
    WRITE,
    Capability,
    EventLog,
    Harness,
    HookDialect,
    Launcher,
    PluginFormat,
    Sandbox,
    StopSupport,
    last_log_value,
    location,
    log_tail,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .config_files import Server

TOML = "codex-toml"  # the format of its `config.toml`

# Where a session's log says its sandbox: in each turn's context (`sandbox_policy.type`).
_SANDBOX = rb'"sandbox_policy"\s*:\s*\{\s*"type"\s*:\s*"([a-z-]+)"'


def _home() -> str:
    return location("CODEX_HOME", "~/.codex")


def _config() -> str:
    return os.path.join(_home(), "config.toml")


def project_layers(cwd: str) -> list[str]:
    """A project's Codex config layers: `.codex/config.toml` in each directory from its
    repository's root (the working directory outside any) down to the working directory."""
    from .config_files import project_root

    here = os.path.abspath(cwd)
    root = project_root(here) or here
    chain = [here]
    while chain[-1] != root and os.path.dirname(chain[-1]) != chain[-1]:
        chain.append(os.path.dirname(chain[-1]))
    return [os.path.join(d, ".codex", "config.toml") for d in reversed(chain)]


def _mcp_configs(cwd: str) -> list[tuple[str, str]]:
    """Its own config.toml, then the project's layers (root first), which it reads only in a
    project the person trusted."""
    own = _config()
    return [(own, TOML)] + [(p, TOML) for p in project_layers(cwd) if p != own]


def judge_trust(cwd: str, servers: list[Server], errors: list[str], *, user_config: str) -> None:
    """Which servers Codex starts: `user_config` (`~/.codex/config.toml`)'s own are the
    person's (`enabled = false` switches one off); a project's `.codex/config.toml` layers
    count only in a project the person trusted (`[projects."<root>"] trust_level =
    "trusted"` in the same file)."""
    from collections.abc import Mapping

    from .config_files import project_dirs
    from .mcp_trust import NOT_APPROVED, SWITCHED_OFF, read_toml

    projects = read_toml(user_config, []).get("projects")  # (its errors: `configured` said them)
    levels: set[object] = set()
    if isinstance(projects, Mapping):
        for name in project_dirs(cwd):
            entry = projects.get(name)
            if isinstance(entry, Mapping):
                levels.add(entry.get("trust_level"))
    trusted = "trusted" in levels and "untrusted" not in levels
    for server in servers:
        if not server.enabled:
            server.withheld = SWITCHED_OFF
        elif server.source != user_config and not trusted:
            server.withheld = NOT_APPROVED


def _mcp_trust(cwd: str, servers: list[Server], errors: list[str]) -> None:
    judge_trust(cwd, servers, errors, user_config=_config())


def _toml_servers(path: str, text: str, cwd: str) -> list[Server]:
    from .config_files import from_mapping, load_toml

    return from_mapping(path, load_toml(path, text).get("mcp_servers"))


def _sandbox_modes(payload: Mapping[str, Any], errors: list[str]) -> dict[str, str]:
    """The sandbox and approval policy of the rollout's latest turn context (a mode switched
    mid-session is the latest one)."""
    import json

    transcript = str(payload.get("transcript_path") or "")
    if not transcript:
        return {}
    try:
        tail = log_tail(transcript)
    except OSError as exc:
        errors.append(f"{transcript}: {exc.strerror or exc}")
        return {}
    for line in reversed(tail.split(b"\n")):
        if b'"turn_context"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue  # the first line of the tail may be cut
        context = record.get("payload") if isinstance(record, dict) else None
        if record.get("type") != "turn_context" or not isinstance(context, dict):
            continue
        found: dict[str, str] = {}
        policy = context.get("sandbox_policy")
        mode = policy.get("type") if isinstance(policy, dict) else policy
        if isinstance(mode, str) and mode:
            found.update(sandbox=mode, **{"source:sandbox": "rollout turn context"})
        approval = context.get("approval_policy")
        if isinstance(approval, str) and approval:
            found.update(approval=approval, **{"source:approval": "rollout turn context"})
        return found
    return {}


def _program() -> str | None:
    """The Codex CLI: `$CODEX_BIN`, `codex` on PATH, else the binary of the Codex that runs
    this hook (an npm install puts its `codex-path` directory, beside the native binary's
    `bin`, first on its hooks' PATH and names its package in CODEX_MANAGED_PACKAGE_ROOT)."""
    import shutil  # (here: a hook that reads no Codex mode loads none of shutil's archivers)

    found = os.environ.get("CODEX_BIN") or shutil.which("codex")
    if found:
        return found
    places = [
        os.path.join(os.path.dirname(entry.rstrip("/")), "bin", "codex")
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if os.path.basename(entry.rstrip("/")) == "codex-path"
    ]
    root = os.environ.get("CODEX_MANAGED_PACKAGE_ROOT")
    if root:
        import glob

        places += sorted(
            glob.glob(os.path.join(root, "..", "codex-*", "vendor", "*", "bin", "codex"))
        )
    return next((p for p in places if os.path.isfile(p) and os.access(p, os.X_OK)), None)


def _sandbox_runner(mode: str, cwd: str) -> list[str] | None:
    """`codex sandbox [-c sandbox_mode="…"] -- COMMAND…` (0.171; run here: read-only refuses
    writes, and headless Chromium fails in read-only and workspace-write with `setsockopt:
    Operation not permitted`, as in a session's own shell)."""
    program = _program()
    if not program or not mode or mode == "unknown":
        return None
    # (`-C DIR` would need a named permission profile too: the program runs where it is run)
    return [program, "sandbox", "-c", f'sandbox_mode="{mode}"', "--"]


HARNESS = Harness(
    name="codex",
    label="Codex",
    home=_home,
    places=lambda: (_home(),),
    sessions_root=lambda: os.path.join(_home(), "sessions"),
    adapter_name="dshkit.sessions.codex:CodexAdapter",
    # Its lines as the adapter maps them, by the adapter's own mapping (graft's fold).
    event_log=EventLog(mapping="dshkit.sessions.rollout:events"),
    log_name=r"^rollout-.+\.jsonl$",
    tools={
        # Its hooks name exec_command `Bash`, with `tool_input.command` (0.171.0, run for
        # real: the PreToolUse payload of a model's exec_command call).
        COMMAND: frozenset({"Bash", "exec_command", "local_shell", "shell", "shell_command"}),
        ASK: frozenset({"request_user_input"}),
        HUMAN_WAIT: frozenset({"request_user_input"}),
        WRITE: frozenset({"apply_patch"}),
        SEARCH: frozenset({"web_search"}),
    },
    # `shell` takes an argv list as `command`; exec_command a string or an argv list as `cmd`.
    command_fields=("command", "cmd"),
    user_settings=lambda state_dir: os.path.join(_home(), "hooks.json"),
    project_settings=None,  # the notes document ~/.codex/hooks.json only
    bridge=None,
    # Claude Code's names and answers; only its payloads carry a turn id.
    # Its hook output schema takes `systemMessage` (0.171; `codex exec` does not print it,
    # its interactive screen shows it as a warning).
    dialect=HookDialect(fields=("turn_id",), transcripts="rollout-", person="systemMessage"),
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
        read_mode=lambda path: last_log_value(path, _SANDBOX),
        # `codex exec -` reads the prompt from stdin (0.171.0's `exec --help`): the first
        # message never stands in /proc/<pid>/cmdline.
        message_on_stdin="-",
    ),
    capability=Capability(
        mcp_configs=_mcp_configs,
        mcp_trust=_mcp_trust,
        full_access={"sandbox": frozenset({"danger-full-access"})},
        mcp_register={"user": lambda project, profile: (_config(), TOML)},
        config_modes=(_config, {"sandbox": "sandbox_mode", "approval": "approval_policy"}),
    ),
    config_formats={TOML: _toml_servers},
    # The open standard's folders, which Codex reads (not under CODEX_HOME).
    skills={
        "user": lambda project: os.path.join(os.path.expanduser("~"), ".agents", "skills"),
        "project": lambda project: os.path.join(project, ".agents", "skills"),
    },
    # Run for real (0.171.0, `exec`): an ask hook is reported as "PreToolUse Failed" and the
    # command runs (ask is as good as allow); its docs list ask as parsed, not supported.
    honours_ask=False,
    # 0.171 (run against a fake Responses server): a block's reason reaches the model as a
    # user message (`<hook_prompt …>reason`); the next Stop says `stop_hook_active: true`.
    stop=StopSupport(blocks=True, loop_flag=True),
    # Run for real (0.171.0, tests/real/test_plugin_codex.py): `args` of a hook are ignored,
    # so hooks are shell-form with the plugin's root in $PLUGIN_ROOT; an MCP server's command
    # and cwd are taken relative to the root, where no variable is substituted.
    plugin=PluginFormat(
        manifest=".codex-plugin/plugin.json",
        hooks_file="hooks/codex-hooks.json",
        exec_form=False,
        root="$PLUGIN_ROOT",
        record="config-plugins",
        remove="codex plugin remove {ident}",
        server_relative=True,
    ),
    sandbox=Sandbox(modes=_sandbox_modes, runner=_sandbox_runner, runner_name="codex sandbox"),
    # Read from the shipped CLI.
    prompt_prefixes=(
        ("!", "local shell command", True),
        ("/", "slash command", True),
        ("@", "file search", False),
        ("$", "app or skill mention", False),
    ),
)
