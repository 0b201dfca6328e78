"""Registering dshkit's MCP server with a harness, taking it out again, and checking it.

`dshkit install-hooks` registers the server where the harness registry says
(`Capability.mcp_register`), in that file's own format; `uninstall-hooks` takes it out;
`dshkit doctor` reports a registration that is missing or stale. Nobody else's servers or
settings change. As with the hooks, user scope names this `dshkit` by absolute path and its
state directory; project scope runs `dshkit mcp` found on PATH.

- `claude-user` (`~/.claude.json`) and `mcp-json` (a project's `.mcp.json`): the entry
  `mcpServers.dshkit`, as `claude mcp add` writes it.
- `codex-toml` (`~/.codex/config.toml`): a marked block holding `[mcp_servers.dshkit]`.
- `dsh-patch` (a DSH profile's patch layer): a marked block inserting one
  `@deepseek-ai/dsh-mcp-client` entry (its `serverName` is `dshkit`).

The writing itself (atomic, keeping the mode, the first backup) is the hook installer's.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import harnesses
from ..harnesses.config_files import DSH_MCP_CLIENT, configured
from ..hooks.install import (
    _STANDS_FOR_EMPTY,
    BROKEN,
    PROJECT_PROGRAM,
    WARN,
    Inspection,
    InstallError,
    Problem,
    _dump,
    _inspect_command,
    _parse,
    dshkit_command,
    without_block,
    yaml_content,
)

NAME = "dshkit"  # the server's name in every harness: its tools are `mcp__dshkit__<tool>`
_BEGIN = "# >>> dshkit MCP server (managed by `dshkit install-hooks`; `uninstall-hooks` removes it)"
_END = "# <<< dshkit MCP server"
_DSH_ID = "mcp-dshkit"  # the entry's id in a DSH patch layer
# The handoff tools the watermark asks the model to call: `codex exec` (approval policy never)
# refuses an MCP tool that needs approval, so installing dshkit approves these in its block.
APPROVED = ("graft_prepare", "graft_slice_and_inject", "graft_read_result", "graft_search_history")
# Codex starts an MCP server with a few variables of its environment only (PATH, HOME, …);
# the CLI a handoff starts from the server needs the model provider's key (each provider's
# `env_key`, besides these) and the network settings Codex itself runs with.
_CODEX_ENV = (
    "CODEX_HOME",
    "OPENAI_API_KEY",
    *(f"{name}_proxy" for name in ("http", "https", "all", "no")),
    *(f"{name}_PROXY" for name in ("HTTP", "HTTPS", "ALL", "NO")),
)


def server_command(scope: str, state_dir: Path, harness: str) -> list[str]:
    """What `harness` runs to start dshkit's MCP server: it reads that harness's sessions, so a
    handoff tool finds the session calling it; its instructions leave the profile out, which
    the hooks installed beside it inject once per session."""
    if scope == "project":
        return [PROJECT_PROGRAM, "mcp", "--harness", harness, "--no-profile"]
    return [
        *dshkit_command(),
        *("mcp", "--harness", harness, "--no-profile", "--state-dir", str(state_dir)),
    ]


@dataclass(frozen=True)
class Target:
    """The file that registers dshkit's MCP server for one harness in one scope."""

    harness: str
    scope: str
    path: Path
    format: str

    def add(self, state_dir: Path) -> Callable[[str | None], str]:
        """The edit that makes the file's registration run this dshkit with `state_dir`."""
        command = server_command(self.scope, state_dir, self.harness)
        return lambda text: _FORMATS[self.format][0](self.path, text, command)

    def remove(self, text: str) -> str:
        """The file without dshkit's registration (anything else stays as it was)."""
        return _FORMATS[self.format][1](self.path, text)


def target(harness: harnesses.Harness, scope: str, project: Path, profile: str) -> Target | None:
    """Where `harness` registers MCP servers in `scope` (None: it has no such file)."""
    where = harness.capability.mcp_register.get(scope) if harness.capability else None
    if where is None:
        return None
    path, kind = where(str(project), profile)
    return Target(harness.name, scope, Path(path), kind)


def inspect(
    harness: harnesses.Harness,
    scope: str,
    project: Path,
    state_dir: Path,
    profile: str,
    hooks_installed: bool,
) -> Inspection | None:
    """Whether dshkit's MCP server is registered here and runs this dshkit with this state
    directory; missing where the hooks are installed is worth a warning. None: the harness
    has no registration file in this scope."""
    found = target(harness, scope, project, profile)
    if found is None:
        return None
    result = Inspection(harness.name, scope, found.path, False)
    errors: list[str] = []
    listed = configured([(str(found.path), found.format)], str(project), errors)
    servers = [server for server in listed if server.name == NAME]
    result.problems += [Problem(error, BROKEN) for error in errors]
    again = f"run `dshkit install-hooks --harness {harness.name} --scope {scope}` again"
    if not servers:
        if hooks_installed and not errors:
            message = "dshkit's hooks are installed but its MCP server is not registered in "
            result.problems.append(Problem(f"{message}{found.path}: {again}", WARN))
        return result
    result.installed = True
    for server in servers:
        words = [server.command, *server.args]
        if server.transport != "stdio" or not _runs_dshkit(words):
            shown = server.url or " ".join(words)
            message = f"an MCP server named {NAME!r} in {found.path} is not dshkit's ({shown})"
            result.problems.append(Problem(message, BROKEN))
            continue
        result.problems += _inspect_command(shlex.join(words), state_dir, again, verb="mcp")
    return result


def _runs_dshkit(words: list[str]) -> bool:
    """Whether a command line is `… dshkit mcp …` (a script, or `python -m dshkit`)."""
    if "mcp" not in words:
        return False
    return any(os.path.basename(w) == "dshkit" for w in words[: words.index("mcp")])


# -- JSON: Claude Code's user file and a project's .mcp.json ----------------------------------


def _json_add(path: Path, text: str | None, command: list[str]) -> str:
    settings = _parse(path, text)
    servers = _json_servers(path, settings)
    current = servers.get(NAME)
    if current is not None and not _json_ours(current):
        raise InstallError(
            f"{path} already has an MCP server named {NAME!r} that does not run dshkit "
            f"({json.dumps(current)}); rename or remove it first"
        )
    entry = {**(current or {}), "type": "stdio", "command": command[0], "args": command[1:]}
    if entry == current:
        return text or ""
    servers[NAME] = entry
    settings["mcpServers"] = servers
    return _dump(settings)


def _json_remove(path: Path, text: str) -> str:
    settings = _parse(path, text)
    servers = _json_servers(path, settings)
    if not _json_ours(servers.get(NAME)):
        return text
    del servers[NAME]
    if servers:
        settings["mcpServers"] = servers
    else:
        settings.pop("mcpServers")  # dshkit's server was all it held
    return _dump(settings)


def _json_servers(path: Path, settings: dict[str, Any]) -> dict[str, Any]:
    servers = settings.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: 'mcpServers' is not an object; fix it by hand first")
    return servers


def _json_ours(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    args = entry.get("args") or []
    words = [str(entry.get("command") or ""), *(args if isinstance(args, list) else [])]
    return _runs_dshkit([str(w) for w in words])


# -- marked blocks: Codex's config.toml and DSH's patch layers ---------------------------------


def _toml_add(path: Path, text: str | None, command: list[str]) -> str:
    before = text or ""
    rest = without_block(before, _BEGIN, _END)
    try:
        config = tomllib.loads(rest)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(f"{path} is not valid TOML ({exc}); fix it by hand first") from exc
    servers = config.get("mcp_servers")
    if isinstance(servers, dict) and NAME in servers:
        raise InstallError(
            f"{path} already configures [mcp_servers.{NAME}] outside dshkit's block; "
            "remove it first"
        )
    providers = config.get("model_providers")
    keys = [
        provider["env_key"]
        for provider in (providers.values() if isinstance(providers, dict) else ())
        if isinstance(provider, dict) and isinstance(provider.get("env_key"), str)
    ]
    env_vars = list(dict.fromkeys([*keys, *_CODEX_ENV]))
    # JSON strings and arrays of strings are TOML basic strings and arrays.
    body = (
        f"[mcp_servers.{NAME}]\ncommand = {json.dumps(command[0])}\n"
        f"args = {json.dumps(command[1:])}\nenv_vars = {json.dumps(env_vars)}\n"
    ) + "".join(
        f'[mcp_servers.{NAME}.tools.{tool}]\napproval_mode = "approve"\n' for tool in APPROVED
    )
    after = _with_block(before, body)
    try:
        written = tomllib.loads(after)["mcp_servers"][NAME]
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise InstallError(
            f"{path} cannot take a [mcp_servers.{NAME}] table after its content ({exc}); "
            f"add this by hand:\n{body}"
        ) from exc
    wanted = {
        "command": command[0],
        "args": command[1:],
        "env_vars": env_vars,
        "tools": {tool: {"approval_mode": "approve"} for tool in APPROVED},
    }
    if written != wanted:
        raise InstallError(f"{path}: the [mcp_servers.{NAME}] table read back differently")
    return after


def _dsh_add(path: Path, text: str | None, command: list[str]) -> str:
    before = text or ""
    rest = without_block(before, _BEGIN, _END)
    if re.search(rf"^\s*serverName:\s*['\"]?{NAME}['\"]?\s*$", rest, re.MULTILINE):
        raise InstallError(
            f"{path} already configures an MCP server named {NAME!r} outside dshkit's block; "
            "remove it first"
        )
    args = "".join(f"\n          - {json.dumps(word)}" for word in command[1:])
    body = (
        f"- insert:\n    - id: {_DSH_ID}\n      name: '{DSH_MCP_CLIENT}'\n      config:\n"
        f"        serverName: {NAME}\n        transport: stdio\n"
        f"        command: {json.dumps(command[0])}\n        args:{args}\n"
    )
    content = yaml_content(rest)
    if [line.strip() for line in content] == ["[]"]:
        # `dsh plugin add` writes an empty flow list; the block stands in for it.
        lines = rest.splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if line.strip() == "[]")
        lines[at] = f"{_BEGIN}{_STANDS_FOR_EMPTY}\n{body}{_END}\n"
        return "".join(lines)
    if any(not line.startswith(("-", " ")) for line in content):
        raise InstallError(
            f"{path} is not a YAML block list dshkit can extend; add this entry by hand:\n{body}"
        )
    return _with_block(before, body)


def _with_block(text: str, body: str) -> str:
    """`text` with dshkit's block holding `body`: replaced where it is, else appended."""
    start = text.find(_BEGIN)
    if start >= 0:
        first = text.find("\n", start) + 1
        end = text.find(_END, first)
        if end < 0:
            raise InstallError(f"dshkit's block has no end line ({_END}); fix it by hand first")
        return text[:first] + body + text[end:]
    prefix = text if not text or text.endswith("\n") else text + "\n"
    return f"{prefix}{_BEGIN}\n{body}{_END}\n"


def _block_remove(path: Path, text: str) -> str:
    return without_block(text, _BEGIN, _END)


_FORMATS: dict[
    str, tuple[Callable[[Path, str | None, list[str]], str], Callable[[Path, str], str]]
] = {
    "claude-user": (_json_add, _json_remove),
    "mcp-json": (_json_add, _json_remove),
    "codex-toml": (_toml_add, _block_remove),
    "dsh-patch": (_dsh_add, _block_remove),
}
