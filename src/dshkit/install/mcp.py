"""dshkit's MCP server registered with a harness, taken out again, and checked.

`install-hooks` registers the server where the harness registry says
(`Capability.mcp_register`), in that file's own format; `uninstall-hooks` takes it out;
`doctor` reports a registration that is missing or stale. As with the hooks, user scope
names this `dshkit` by absolute path and its state directory; project scope runs
`dshkit mcp` found on PATH.

- `claude-user` (`~/.claude.json`) and `mcp-json` (a project's `.mcp.json`): `mcp_json`.
- `codex-toml` (`~/.codex/config.toml`): `codex_config`.
- `dsh-patch` (a DSH profile's patch layer): `dsh_patch`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import harnesses
from ..harnesses.config_files import configured
from . import codex_config, dsh_patch, mcp_json
from .commands import SERVER_NAME, inspect_command, runs_dshkit, server_command
from .model import BROKEN, WARN, Inspection, Problem

# format → (the file with dshkit's server running a command, the file without it)
_FORMATS: dict[
    str, tuple[Callable[[Path, str | None, list[str]], str], Callable[[Path, str], str]]
] = {
    "claude-user": (mcp_json.with_server, mcp_json.without_server),
    "mcp-json": (mcp_json.with_server, mcp_json.without_server),
    "codex-toml": (codex_config.with_server, codex_config.without_server),
    "dsh-patch": (dsh_patch.with_mcp_server, dsh_patch.without_mcp_server),
}


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
    servers = [server for server in listed if server.name == SERVER_NAME]
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
        if server.transport != "stdio" or not runs_dshkit(words, "mcp"):
            shown = server.url or " ".join(words)
            message = f"an MCP server named {SERVER_NAME!r} in {found.path} is not dshkit's"
            result.problems.append(Problem(f"{message} ({shown})", BROKEN))
            continue
        result.problems += inspect_command(shlex.join(words), state_dir, again, verb="mcp")
    return result
