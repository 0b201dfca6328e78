"""The config files the harnesses keep: one reader per file format, and the MCP servers a
file configures, whichever harness's format it is.

What each format holds is its harness's knowledge: a harness module names the formats it
defines (`Harness.config_formats`: format → what servers a file configures), here are the
parsers they share (JSON, TOML, YAML), the common `{name: {command, args, …}}` server map and
the repository a working directory is in. The hook settings files (Claude Code's
`settings.json`, Codex's `hooks.json`, DSH's bridge file) are JSON objects too.

Here below the capabilities and the installer, so both read these files the same way: the
capability probes the servers read here that their harness would start (each harness's
`Capability.mcp_trust` says which), the installer edits the files (`dshkit.install`).
A file that is not valid in its format raises `Unreadable`, naming the file and the problem.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import Invalid


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
    session working in `cwd`, read by the harness whose format it is."""
    from . import format_reader

    reader = format_reader(kind)
    if reader is None:
        raise ValueError(f"unknown MCP config format {kind!r}")
    return reader(path, text, cwd)


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


def from_mapping(path: str, entries: Any) -> list[Server]:
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
