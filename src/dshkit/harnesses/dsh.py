"""DSH, the DeepSeek Harness: everything dshkit knows about it, in one `Harness`.

- Home `$DSH_HOME` (default `~/.dsh`, where dshkit keeps its own state too); logs under
  `sessions/<projectKey>/<session>/session[.vN].jsonl[.zstd]`, read by
  `dshkit.sessions.dsh:DshAdapter`; a session's log generations repeat each other's events.
- Hooks: only through its Claude-Code hook bridge (`@deepseek-ai/dsh-hooks-claude-code`),
  mounted by a block in a profile's patch layer `profiles/<profile>/cordis.patch.yml` on a
  Claude-Code-shaped settings file dshkit keeps in its state directory. The bridge speaks
  Claude Code's dialect, names and answers alike; its payloads carry a transcript named
  `session…` (the DSH log). It runs SessionStart detached (that context misses the first
  request), fires UserPromptSubmit before every model step, honours a PreToolUse "ask", and
  steers the agent on with a Stop block without ever setting `stop_hook_active`.
- MCP servers: the `@deepseek-ai/dsh-mcp-client` entries of its patch layers (format
  `dsh-patch`), all in its own home, each started unless `disabled: true`.
- Sandbox modes are `sandbox/mode` events in its log; it has no command that runs a program
  inside its sandbox. Its prompt input gives `/` and `@` a meaning.
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
    Bridge,
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
    from collections.abc import Iterator, Mapping
    from typing import Any

    from .config_files import Server

# The log versions its session reader reads (`sessions.dsh`): 0 and 4 are seen in real logs;
# 1–3 share v4's header shape (migration writes the next generation beside the old one, so an
# older generation must stay readable).
VERSIONS = frozenset(range(5))
MCP_CLIENT = "@deepseek-ai/dsh-mcp-client"  # the DSH plugin that runs one MCP server
PATCH = "dsh-patch"  # the config format of its patch layers (`cordis.patch.yml`)


def dsh_home() -> str:
    """`$DSH_HOME`, defaulting to `~/.dsh` (the DSH harness's own home); absolute or refused."""
    return location("DSH_HOME", "~/.dsh")


def _withheld(name: str) -> bool:
    """Whether DSH withholds the variable `name` from the processes it starts."""
    upper = name.upper()
    return upper.startswith("DSH_") or any(
        word in upper for word in ("KEY", "PASSWORD", "SECRET", "TOKEN")
    )


def profile_patch(profile: str) -> str:
    """The patch layer of one DSH profile (it mounts the hook bridge and dshkit's MCP server)."""
    return os.path.join(dsh_home(), "profiles", profile, "cordis.patch.yml")


def _mcp_configs(cwd: str) -> list[tuple[str, str]]:
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
    return [(layer, PATCH) for layer in layers]


def _mcp_trust(cwd: str, servers: list[Server], errors: list[str]) -> None:
    """Its servers are all in its own home: each starts unless switched off."""
    from .mcp_trust import judge_own

    judge_own(cwd, servers, errors)


def plugins(document: Any) -> Iterator[Mapping[str, Any]]:
    """Every plugin entry of a DSH patch layer (a mapping with an `id`), wherever its
    operations (`insert`, …) nest it, in the order of the file."""
    from collections.abc import Mapping

    if isinstance(document, Mapping):
        if "id" in document:
            yield document
        for value in document.values():
            if isinstance(value, list):
                yield from plugins(value)
    elif isinstance(document, list):
        for item in document:
            yield from plugins(item)


def servers(path: str, document: Any) -> list[Server]:
    """The `dsh-mcp-client` entries of a patch layer: `config` holds each one's server."""
    from collections.abc import Mapping

    from .config_files import Server, Unreadable

    found = []
    for entry in plugins(document):
        if entry.get("name") != MCP_CLIENT:
            continue
        config = entry.get("config") or {}
        if not isinstance(config, Mapping):
            raise Unreadable(path, f"entry {entry.get('id')!r}: config is not a mapping")
        args = config.get("args") or []
        if not isinstance(args, list):
            raise Unreadable(path, f"entry {entry.get('id')!r}: args is not a list")
        transport = str(config.get("transport") or "stdio")
        found.append(
            Server(
                str(config.get("serverName") or entry.get("id")),
                path,
                "stdio" if transport == "stdio" else "http",
                command=str(config.get("command") or ""),
                args=[str(a) for a in args],
                url=str(config.get("url") or ""),
                enabled=entry.get("disabled") is not True,
            )
        )
    return found


def _patch_servers(path: str, text: str, cwd: str) -> list[Server]:
    from .config_files import load_yaml

    return servers(path, load_yaml(path, text))


HARNESS = Harness(
    name="dsh",
    label="DSH",
    home=dsh_home,
    places=lambda: (dsh_home(),),
    sessions_root=lambda: os.path.join(dsh_home(), "sessions"),
    adapter_name="dshkit.sessions.dsh:DshAdapter",
    log_name=r"^session(\.v[1-9][0-9]*)?\.jsonl(\.zstd)?$",
    log_literals=("session.jsonl.zstd", "session.jsonl"),
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
        profile_patch,
    ),
    # The bridge takes Claude Code's names and answers; a payload names the DSH log. It runs
    # SessionStart, UserPromptSubmit, Pre/PostToolUse, Stop and the sub-agent events only:
    # SessionEnd and PreCompact are among the events its README lists as unsupported
    # (dsh-hooks-claude-code 0.0.1-rc.5, "Known Limitations"), so they are not installed.
    # Its README also says a `systemMessage` is "logged + warned but not surfaced": it shows
    # the person no line of a hook's (the warning names none of it), so none is written.
    dialect=HookDialect(names={"SessionEnd": None, "PreCompact": None}, transcripts="session"),
    # The bridge runs SessionStart detached: its context misses the first request.
    context_event="UserPromptSubmit",
    generations_repeat=True,
    # rc.8 starts a new session per headless run and cannot resume one headlessly. Its
    # headless app takes the task as positional words only (dsh-headless's startup.js:
    # `argument("[task...]")`, no stdin, no file), so the message stays on its command line;
    # graft redacts every secret out of it before it gets there.
    # Its children (the hook bridge's commands, MCP servers) start from its environment less
    # every credential-shaped name and every DSH_* name (rc.8's dsh-subprocess,
    # `scrubbedParentEnv`), while a new `dsh` reads its key from the environment first
    # (dsh-credentials-local; then $DSH_HOME/.credentials.yaml and .env files, under a
    # DSH_HOME that is withheld too).
    launcher=Launcher(
        "dsh",
        lambda message: ["--profile", "headless", message],
        None,
        "DSH_BIN",
        withheld=_withheld,
    ),
    capability=Capability(
        mcp_configs=_mcp_configs,
        mcp_trust=_mcp_trust,
        full_access={"sandbox": frozenset({"danger-full-access"})},
        log_modes={"sandbox": ("sandbox/mode", "mode"), "approval": ("approval/policy", "policy")},
        # The profile's patch layer, beside the hook bridge's block.
        mcp_register={"user": lambda project, profile: (profile_patch(profile), PATCH)},
    ),
    config_formats={PATCH: _patch_servers},
    # DSH reads Agent Skills where Codex does, in the project's `.agents/skills`.
    skills={"project": lambda project: os.path.join(project, ".agents", "skills")},
    # Run for real (rc.8, hook bridge rc.5, headless): an ask hook's call went to DSH's
    # approval; with no approval channel the tool was refused, nothing ran.
    honours_ask=True,
    # Run for real (rc.8, hook bridge rc.5, headless; notes/real-dsh-offline.md): the bridge
    # fired UserPromptSubmit again before a later model step of the same turn (one where
    # contexts came in), its prompt those contexts; tests/real/test_optimizer_dsh.py.
    asks_every_step=True,
    # The bridge (dsh-hooks-claude-code 0.0.1-rc.5): a block steers the agent with the reason
    # for another step (`agent.steer`; run on rc.8: the next request carried it), but
    # `stop_hook_active` is always false and the bridge has no cap on consecutive blocks (its
    # README and lib/index.js): the loop guard must be the hook's own.
    stop=StopSupport(blocks=True, loop_flag=False),
    # Its records are the session layer's events as they are (`sessions.dsh`), after a
    # `session` header, in zstd frames of lines (or plain lines).
    event_log=EventLog(header="session", versions=VERSIONS),
    # Its modes are `sandbox/mode` events in its log (Capability.log_modes); rc.8 has no
    # command that runs a program inside its sandbox: no runner.
    # Read from the shipped CLI: `/` commands and `@` references.
    prompt_prefixes=(
        ("/", "slash command", True),
        ("@", "file or session reference", False),
    ),
)
