"""The config files the harnesses keep, parsed in one place per format, and the MCP servers
each one configures.

Formats (the names the registry's `Capability.mcp_configs` and `mcp_register` give):
`claude-user` (Claude Code's `~/.claude.json`: `mcpServers`, and per project
`projects[<project>].mcpServers`), `mcp-json` (a project's `.mcp.json`), `codex-toml` (Codex's
`config.toml`, `[mcp_servers.NAME]`), `dsh-patch` (a DSH patch layer `cordis.patch.yml`, whose
`@deepseek-ai/dsh-mcp-client` entries each configure one server). The hook settings files
(Claude Code's `settings.json`, Codex's `hooks.json`, DSH's bridge file) are JSON objects too.

Here below the capabilities and the installer, so both read these files the same way: the
capability probes the servers read here that their harness would start (`mcp_trust` says
which), the installer edits the files (`dshkit.install`).
A file that is not valid in its format raises `Unreadable`, naming the file and the problem.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import Invalid

DSH_MCP_CLIENT = "@deepseek-ai/dsh-mcp-client"  # the DSH plugin that runs one MCP server


class Unreadable(Invalid):
    """A config file that is not valid in its format (`problem` says how, without the path)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path} {problem}", field="path")
        self.path = path
        self.problem = problem


def load_json(path: str, text: str | None) -> dict[str, Any]:
    """A JSON settings file's object; a missing or blank file is the empty object."""
    if not text or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(path, f"is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise Unreadable(path, "is not a JSON object")
    return value


def dump_json(value: dict[str, Any]) -> str:
    """A JSON settings file as the harnesses write theirs: 2-space indent, a final newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def load_toml(path: str, text: str) -> dict[str, Any]:
    import tomllib  # (here: reading a JSON config, as a hook mostly does, needs none)

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Unreadable(path, f"is not valid TOML ({exc})") from exc


def load_yaml(path: str, text: str) -> Any:
    """A YAML file as ruamel.yaml's round-trip loader reads it (None: nothing but comments);
    tags of the harness's own (DSH's `!!js`) are kept as tagged values, not refused."""
    from ruamel.yaml import YAML  # here: only the DSH patch layers need it
    from ruamel.yaml.error import YAMLError

    try:
        return YAML(typ="rt", pure=True).load(text)
    except YAMLError as exc:
        problem = " ".join(str(exc).split())  # ruamel's message spans several lines
        raise Unreadable(path, f"is not valid YAML ({problem})") from exc


def dsh_plugins(document: Any) -> Iterator[Mapping[str, Any]]:
    """Every plugin entry of a DSH patch layer (a mapping with an `id`), wherever its
    operations (`insert`, …) nest it, in the order of the file."""
    if isinstance(document, Mapping):
        if "id" in document:
            yield document
        for value in document.values():
            if isinstance(value, list):
                yield from dsh_plugins(value)
    elif isinstance(document, list):
        for item in document:
            yield from dsh_plugins(item)


# -- the MCP servers a config file configures -------------------------------------------------


@dataclass
class Server:
    """One configured MCP server, and whether its harness would start it."""

    name: str
    source: str  # the file that configures it
    transport: str  # "stdio", "http" or "sse"
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    kind: str = ""  # the format of its file (`configured` sets it)
    enabled: bool = True  # False: its own entry switches it off (`enabled = false`, `disabled`)
    # Why its harness would not start it ("" when it would), set by `mcp_trust.judge`: a
    # server nobody approved is never started by dshkit either.
    withheld: str = ""


def configured(sources: list[tuple[str, str]], cwd: str, errors: list[str]) -> list[Server]:
    """The servers every readable source configures; an unreadable one adds to `errors`."""
    servers: list[Server] = []
    for path, kind in sources:
        try:
            with open(path, "rb") as file:
                data = file.read()
        except FileNotFoundError:
            continue
        except OSError as exc:
            errors.append(f"{path}: {exc}")
            continue
        try:
            found = mcp_servers(kind, path, data.decode(), cwd)
        except Unreadable as exc:
            errors.append(f"{path}: not readable as {kind}: {exc.problem}")
            continue
        except (ValueError, TypeError, AttributeError) as exc:  # a value of the wrong shape
            errors.append(f"{path}: not readable as {kind}: {exc}")
            continue
        for server in found:
            server.kind = kind
        servers += found
    return servers


def mcp_servers(kind: str, path: str, text: str, cwd: str) -> list[Server]:
    """The servers the file `path` (of format `kind`, its content `text`) configures for a
    session working in `cwd`."""
    if kind == "claude-user":
        config = load_json(path, text)
        servers = _from_mapping(path, config.get("mcpServers"))
        for project in claude_projects(config, cwd):
            servers += _from_mapping(path, project.get("mcpServers"))
        return servers
    if kind == "mcp-json":
        return _from_mapping(path, load_json(path, text).get("mcpServers"))
    if kind == "codex-toml":
        return _from_mapping(path, load_toml(path, text).get("mcp_servers"))
    if kind == "dsh-patch":
        return dsh_servers(path, load_yaml(path, text))
    raise ValueError(f"unknown MCP config format {kind!r}")


def project_root(cwd: str) -> str | None:
    """The repository `cwd` is in: the nearest directory up from it holding `.git` (a
    directory, or a worktree's file), None outside any."""
    here = os.path.abspath(cwd)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def project_dirs(cwd: str) -> list[str]:
    """The project a session working in `cwd` is in, as Claude Code and Codex file it in
    their own config (`projects[<path>]`): its repository's root, or outside any repository
    the directory itself, as given and resolved."""
    project = project_root(cwd) or os.path.abspath(cwd)
    return list(dict.fromkeys([project, os.path.realpath(project)]))


def claude_projects(config: Mapping[str, Any], cwd: str) -> list[Mapping[str, Any]]:
    """The entries of `~/.claude.json`'s `projects` for a session working in `cwd`."""
    projects = config.get("projects") or {}
    if not isinstance(projects, Mapping):
        raise ValueError("projects is not an object")
    found = [projects.get(name) for name in project_dirs(cwd)]
    unique = {id(entry): entry for entry in found if isinstance(entry, Mapping)}
    return list(unique.values())


def _from_mapping(path: str, entries: Any) -> list[Server]:
    """Servers from a `{name: {type|transport, command, args, env, cwd, url, headers}}` map."""
    found = []
    for name, spec in (entries or {}).items():
        kind = str(spec.get("type") or spec.get("transport") or "")
        url = str(spec.get("url") or "")
        transport = (
            "sse" if kind == "sse" else ("http" if url and not spec.get("command") else "stdio")
        )
        found.append(
            Server(
                str(name),
                path,
                transport,
                command=str(spec.get("command") or ""),
                args=[str(a) for a in spec.get("args") or ()],
                env={str(k): str(v) for k, v in (spec.get("env") or {}).items()},
                cwd=spec.get("cwd"),
                url=url,
                headers={str(k): str(v) for k, v in (spec.get("headers") or {}).items()},
                enabled=spec.get("enabled") is not False and spec.get("disabled") is not True,
            )
        )
    return found


def dsh_servers(path: str, document: Any) -> list[Server]:
    """The `dsh-mcp-client` entries of a patch layer: `config` holds each one's server."""
    found = []
    for entry in dsh_plugins(document):
        if entry.get("name") != DSH_MCP_CLIENT:
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
