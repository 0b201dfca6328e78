"""Which configured MCP servers each harness would start itself: only those may be probed.

Starting a server runs its command, and a cloned repository's `.mcp.json` (or a project's
`.codex/config.toml`) can name any command: a server its harness would not start, because
the person never approved it there, is never started by dshkit either. Each judge marks such
a server's `withheld` with why, as its harness's own program decides:

- Claude Code (as 2.1.332 does it, what `claude mcp list` shows): servers of the user scope
  (`~/.claude.json` `mcpServers`) and of the local scope (`projects[<project>].mcpServers`)
  are the person's own. A project's `.mcp.json` server runs once approved, by
  `enableAllProjectMcpServers: true` or its name in `enabledMcpjsonServers`: in the user's
  `~/.claude/settings.json` always; in the project's own files (`.claude/settings.json`,
  `.claude/settings.local.json`, and `~/.claude.json` `projects[<project>]`, where older
  versions recorded it and from where 2.1 carries it to the local settings) only once the
  person trusted the folder (`projects[<project>].hasTrustDialogAccepted`): before that, a
  cloned repository's own settings approve nothing. A name in `disabledMcpjsonServers` is
  rejected, and one in `projects[<project>].disabledMcpServers` (the `/mcp` switch) is off,
  whatever its scope. `<project>` is the repository's root, else the working directory.
- Codex: `~/.codex/config.toml`'s `[mcp_servers.*]` are the person's own (`enabled = false`
  switches one off); a project's `.codex/config.toml` layers count only in a project the
  person trusted (`[projects."<root>"] trust_level = "trusted"` in the same file).
- DSH: its patch layers are in its own home, all its own (`disabled: true` switches one off).

A file of approvals that cannot be read approves nothing (and says why among the errors).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .config_files import (
    Server,
    Unreadable,
    claude_projects,
    load_json,
    load_toml,
    project_dirs,
    project_root,
)

NOT_APPROVED = "not approved"  # the person never approved it in its harness
SWITCHED_OFF = "switched off"  # the person turned it off in its harness


def judge_own(cwd: str, servers: list[Server], errors: list[str]) -> None:
    """Servers a harness keeps in its own home only: each starts unless switched off."""
    for server in servers:
        if not server.enabled:
            server.withheld = SWITCHED_OFF


def judge_claude(
    cwd: str, servers: list[Server], errors: list[str], *, user_file: str, user_settings: str
) -> None:
    """Claude Code's rule (see above): `user_file` is `~/.claude.json`, `user_settings` its
    `settings.json`."""
    try:  # (what is wrong with the user file, `configured` has said)
        projects = claude_projects(_json(user_file, []), cwd)
    except ValueError:
        projects = []
    trusted = any(p.get("hasTrustDialogAccepted") is True for p in projects)
    folders = dict.fromkeys([os.path.abspath(cwd), *project_dirs(cwd)])
    own = [
        _json(os.path.join(folder, ".claude", name), errors)
        for folder in folders
        for name in ("settings.json", "settings.local.json")
    ]
    approving = [_json(user_settings, errors), *((*projects, *own) if trusted else ())]
    # A rejection only ever keeps a server out: honoured wherever it is written.
    rejecting = [*approving, *projects, *own]
    rejected = _listed(rejecting, "disabledMcpjsonServers")
    approved = _listed(approving, "enabledMcpjsonServers")
    every = any(s.get("enableAllProjectMcpServers") is True for s in approving)
    switched_off = _listed(projects, "disabledMcpServers")
    for server in servers:
        if not server.enabled or server.name in switched_off:
            server.withheld = SWITCHED_OFF
        elif server.kind == "mcp-json" and (
            server.name in rejected or not (every or server.name in approved)
        ):
            server.withheld = NOT_APPROVED


def judge_codex(cwd: str, servers: list[Server], errors: list[str], *, user_config: str) -> None:
    """Codex's rule (see above): `user_config` is `~/.codex/config.toml`."""
    projects = _toml(user_config, []).get("projects")  # (its errors: `configured` said them)
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


def codex_layers(cwd: str) -> list[str]:
    """A project's Codex config layers: `.codex/config.toml` in each directory from its
    repository's root (the working directory outside any) down to the working directory."""
    here = os.path.abspath(cwd)
    root = project_root(here) or here
    chain = [here]
    while chain[-1] != root and os.path.dirname(chain[-1]) != chain[-1]:
        chain.append(os.path.dirname(chain[-1]))
    return [os.path.join(d, ".codex", "config.toml") for d in reversed(chain)]


def _listed(files: list[Mapping[str, Any]], key: str) -> set[str]:
    """The server names the lists under `key` of these files hold (anything else holds none)."""
    names: set[str] = set()
    for file in files:
        value = file.get(key)
        if isinstance(value, list):
            names.update(v for v in value if isinstance(v, str))
    return names


def _json(path: str, errors: list[str]) -> dict[str, Any]:
    text = _read(path, errors)
    if text is None:
        return {}
    try:
        return load_json(path, text)
    except Unreadable as exc:
        errors.append(f"{path}: not readable as JSON: {exc.problem}")
        return {}


def _toml(path: str, errors: list[str]) -> dict[str, Any]:
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
