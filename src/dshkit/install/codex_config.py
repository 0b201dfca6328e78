"""dshkit's MCP server in Codex's `config.toml`, read and written: a marked block holding
`[mcp_servers.dshkit]`.

TOML is read with tomllib; dshkit writes its table as a marked block of its own and reads
the whole file back before it is written, so the person's part keeps every byte (comments,
order, spacing) and taking the block out gives it back as it was. A file where that table
cannot go (it is already configured elsewhere, or the content before the block would take
the table in) is refused untouched, with the table to add by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import plugins
from ..chromium import EXECUTABLE_ENV
from ..config import SECTIONS
from ..harnesses.config_files import Unreadable, load_toml
from .blocks import Block
from .commands import SERVER_NAME
from .model import InstallError, unreadable

BLOCK = Block(
    "# >>> dshkit MCP server (managed by `dshkit install-hooks`; `uninstall-hooks` removes it)",
    "# <<< dshkit MCP server",
)
# The tools the descriptors let a harness run without asking (`dshkit.plugins`, each says why):
# `codex exec` (approval policy never) refuses an MCP tool that needs approval, so dshkit's
# block approves these.
APPROVED = plugins.approved()
# Codex starts an MCP server with a few variables of its environment only (PATH, HOME, …);
# these are what the server reads besides: Codex's home (its sessions; the handoff's CLI
# finds its config and login there) and CLI, dshkit's own settings (config.toml's overrides,
# the gate's Chromium) and the network settings its model calls and the handoff's CLI go
# through. No model key of Codex's: the server never uses one (a provider's `env_key`, which
# the handoff's CLI cannot start without, is added from the file).
_CODEX_ENV = (
    "CODEX_HOME",
    "CODEX_BIN",
    *(s.env for section in SECTIONS.values() for s in section.values() if s.env),
    EXECUTABLE_ENV,
    *(f"{name}_proxy" for name in ("http", "https", "all", "no")),
    *(f"{name}_PROXY" for name in ("HTTP", "HTTPS", "ALL", "NO")),
)


def with_server(path: Path, text: str | None, command: list[str]) -> str:
    """The file with dshkit's block configuring `[mcp_servers.dshkit]` to run `command`."""
    before = text or ""
    config = _load(path, BLOCK.remove(before))
    servers = config.get("mcp_servers")
    if isinstance(servers, dict) and SERVER_NAME in servers:
        raise InstallError(
            f"{path} already configures [mcp_servers.{SERVER_NAME}] outside dshkit's block; "
            "remove it first"
        )
    providers = config.get("model_providers")
    keys = [
        provider["env_key"]
        for provider in (providers.values() if isinstance(providers, dict) else ())
        if isinstance(provider, dict) and isinstance(provider.get("env_key"), str)
    ]
    env_vars = list(dict.fromkeys([*keys, *_CODEX_ENV]))
    wanted: dict[str, Any] = {
        "command": command[0],
        "args": command[1:],
        "env_vars": env_vars,
        "tools": {tool: {"approval_mode": "approve"} for tool in APPROVED},
    }
    body = _table(wanted)
    after = BLOCK.put(before, body, path)
    try:
        written = load_toml(str(path), after)["mcp_servers"][SERVER_NAME]
    except (Unreadable, KeyError, TypeError) as exc:
        why = exc.problem if isinstance(exc, Unreadable) else repr(exc)
        raise InstallError(
            f"{path} cannot take a [mcp_servers.{SERVER_NAME}] table after its content ({why}); "
            f"add this by hand:\n{body}"
        ) from exc
    if written != wanted:
        raise InstallError(f"{path}: the [mcp_servers.{SERVER_NAME}] table read back differently")
    return after


def without_server(path: Path, text: str) -> str:
    """The file without dshkit's block (anything else stays as it was)."""
    return BLOCK.remove(text)


def _table(wanted: dict[str, Any]) -> str:
    """dshkit's table as TOML text: JSON strings and arrays of strings are TOML basic strings
    and arrays, and the result is read back before it is written."""
    head = f"[mcp_servers.{SERVER_NAME}]\n" + "".join(
        f"{key} = {json.dumps(wanted[key])}\n" for key in ("command", "args", "env_vars")
    )
    return head + "".join(
        f'[mcp_servers.{SERVER_NAME}.tools.{tool}]\napproval_mode = "approve"\n'
        for tool in wanted["tools"]
    )


def _load(path: Path, text: str) -> dict[str, Any]:
    try:
        return load_toml(str(path), text)
    except Unreadable as exc:
        raise unreadable(exc) from exc
