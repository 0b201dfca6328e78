"""Which configured MCP servers a harness would start itself: only those may be probed.

Starting a server runs its command, and a cloned repository's `.mcp.json` (or a project's
`.codex/config.toml`) can name any command: a server its harness would not start, because
the person never approved it there, is never started by dshkit either. Each harness's
`Capability.mcp_trust` marks such a server's `withheld` with why, as its harness's own
program decides; the rules are its module's (`claude.judge_trust`, `codex.judge_trust`), and
what they share is here: the two reasons, the rule of a harness whose servers are all its
own (`judge_own`), and reading files of approvals.

A file of approvals that cannot be read approves nothing (and says why among the errors).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .config_files import Server, Unreadable, load_json, load_toml

NOT_APPROVED = "not approved"  # the person never approved it in its harness
SWITCHED_OFF = "switched off"  # the person turned it off in its harness


def judge_own(cwd: str, servers: list[Server], errors: list[str]) -> None:
    """Servers a harness keeps in its own home only: each starts unless switched off."""
    for server in servers:
        if not server.enabled:
            server.withheld = SWITCHED_OFF


def listed(files: list[Mapping[str, Any]], key: str) -> set[str]:
    """The server names the lists under `key` of these files hold (anything else holds none)."""
    names: set[str] = set()
    for file in files:
        value = file.get(key)
        if isinstance(value, list):
            names.update(v for v in value if isinstance(v, str))
    return names


def read_json(path: str, errors: list[str]) -> dict[str, Any]:
    """A JSON file of approvals ({} when missing or unreadable, which adds to `errors`)."""
    text = _read(path, errors)
    if text is None:
        return {}
    try:
        return load_json(path, text)
    except Unreadable as exc:
        errors.append(f"{path}: not readable as JSON: {exc.problem}")
        return {}


def read_toml(path: str, errors: list[str]) -> dict[str, Any]:
    """A TOML file of approvals ({} when missing or unreadable, which adds to `errors`)."""
    text = _read(path, errors)
    if text is None:
        return {}
    try:
        return load_toml(path, text)
    except Unreadable as exc:
        errors.append(f"{path}: not readable as TOML: {exc.problem}")
        return {}


def _read(path: str, errors: list[str]) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(f"{path}: {exc}")
        return None
