"""dshkit's MCP server in a JSON `mcpServers` map, read and written: Claude Code's user file
`~/.claude.json` and a project's `.mcp.json`.

The entry `mcpServers.dshkit`, as `claude mcp add` writes it; nobody else's server or
setting changes (Claude Code rewrites `~/.claude.json` all the time: only dshkit's entry
is dshkit's).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..harnesses.config_files import Unreadable, dump_json, load_json
from .commands import SERVER_NAME, runs_dshkit
from .model import InstallError, unreadable


def with_server(path: Path, text: str | None, command: list[str]) -> str:
    """The file with `mcpServers.dshkit` running `command`; `text` itself when it already
    does. A server of that name that is not dshkit's is refused."""
    settings = _load(path, text)
    servers = _servers(path, settings)
    current = servers.get(SERVER_NAME)
    if current is not None and not _ours(current):
        raise InstallError(
            f"{path} already has an MCP server named {SERVER_NAME!r} that does not run dshkit "
            f"({json.dumps(current)}); rename or remove it first"
        )
    entry = {**(current or {}), "type": "stdio", "command": command[0], "args": command[1:]}
    if entry == current:
        return text or ""
    servers[SERVER_NAME] = entry
    settings["mcpServers"] = servers
    return dump_json(settings)


def without_server(path: Path, text: str) -> str:
    """The file without dshkit's server; `text` itself when it has none."""
    settings = _load(path, text)
    servers = _servers(path, settings)
    if not _ours(servers.get(SERVER_NAME)):
        return text
    del servers[SERVER_NAME]
    if servers:
        settings["mcpServers"] = servers
    else:
        settings.pop("mcpServers")  # dshkit's server was all it held
    return dump_json(settings)


def _load(path: Path, text: str | None) -> dict[str, Any]:
    try:
        return load_json(str(path), text)
    except Unreadable as exc:
        raise unreadable(exc) from exc


def _servers(path: Path, settings: dict[str, Any]) -> dict[str, Any]:
    servers = settings.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: 'mcpServers' is not an object; fix it by hand first")
    return servers


def _ours(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    args = entry.get("args") or []
    words = [str(entry.get("command") or ""), *(args if isinstance(args, list) else [])]
    return runs_dshkit([str(w) for w in words], "mcp")
