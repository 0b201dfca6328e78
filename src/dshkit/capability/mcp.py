"""The MCP servers a harness has configured, and whether each one really answers.

Formats (named by the registry's `Capability.mcp_configs`): `claude-user` (Claude Code's
`~/.claude.json`: `mcpServers`, and `projects[cwd].mcpServers`), `mcp-json` (a project's
`.mcp.json`), `codex-toml` (Codex's `[mcp_servers.NAME]`), `dsh-patch` (DSH patch layers, whose
`@deepseek-ai/dsh-mcp-client` entries each configure one server). A stdio server answers when
its command starts and replies to `initialize` within the bound; an http one when a POST of
`initialize` to its URL gets a 2xx. Every failure keeps its raw reason.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import subprocess
import time
import tomllib
from dataclasses import dataclass, field
from typing import Any

from ..chromium import kill_group

PROTOCOL_VERSION = "2025-11-25"  # what DSH's MCP client speaks
DSH_MCP_CLIENT = "@deepseek-ai/dsh-mcp-client"
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "dshkit-capability-probe", "version": "1"},
    },
}


@dataclass
class Server:
    """One configured MCP server."""

    name: str
    source: str  # the file that configures it
    transport: str  # "stdio", "http" or "sse"
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)


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
            servers += _READERS[kind](path, data, cwd)
        except (ValueError, TypeError, AttributeError) as exc:  # JSON/TOML errors are ValueErrors
            errors.append(f"{path}: not readable as {kind}: {exc}")
    return servers


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
            )
        )
    return found


def _claude_user(path: str, data: bytes, cwd: str) -> list[Server]:
    config = json.loads(data)
    project = (config.get("projects") or {}).get(cwd) or {}
    return _from_mapping(path, config.get("mcpServers")) + _from_mapping(
        path, project.get("mcpServers")
    )


def _mcp_json(path: str, data: bytes, cwd: str) -> list[Server]:
    return _from_mapping(path, json.loads(data).get("mcpServers"))


def _codex_toml(path: str, data: bytes, cwd: str) -> list[Server]:
    return _from_mapping(path, tomllib.loads(data.decode()).get("mcp_servers"))


_KEY = re.compile(r"^(\s*)(?:- )?([A-Za-z_][\w-]*):\s*(.*?)\s*$")


def _dsh_patch(path: str, data: bytes, cwd: str) -> list[Server]:
    """The `dsh-mcp-client` entries of a patch layer. Patch layers are YAML, of which this
    reads the subset they use for these entries (`key: scalar`, `[a, 'b']` lists and `- item`
    lists under a key); an entry it cannot read this way is reported, not guessed."""
    entries: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    indent = 0
    last_key = ""
    for line in data.decode().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY.match(line)
        if match and match.group(2) == "id" and "- " in line[: match.end(1) + 2]:
            current, indent = {}, len(match.group(1))
            entries.append(current)
        if current is None:
            continue
        stripped = line.strip()
        if match and len(match.group(1)) >= indent:
            last_key, value = match.group(2), match.group(3)
            current[last_key] = _scalar(value) if value else []
        elif stripped.startswith("- ") and isinstance(current.get(last_key), list):
            current[last_key].append(_scalar(stripped[2:]))
    found = []
    for entry in entries:
        if entry.get("name") != DSH_MCP_CLIENT:
            continue
        transport = str(entry.get("transport") or "stdio")
        args = entry.get("args") or []
        if not isinstance(args, list):
            raise ValueError(f"entry {entry.get('id')!r}: args is not a list")
        found.append(
            Server(
                str(entry.get("serverName") or entry.get("id")),
                path,
                "stdio" if transport == "stdio" else "http",
                command=str(entry.get("command") or ""),
                args=[str(a) for a in args],
                url=str(entry.get("url") or ""),
            )
        )
    return found


def _scalar(text: str) -> Any:
    if text.startswith("[") and text.endswith("]"):
        return [_scalar(part.strip()) for part in text[1:-1].split(",") if part.strip()]
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


_READERS = {
    "claude-user": _claude_user,
    "mcp-json": _mcp_json,
    "codex-toml": _codex_toml,
    "dsh-patch": _dsh_patch,
}


def probe(server: Server, timeout: float = 5.0) -> dict[str, Any]:
    """`{"name", "source", "transport", "ok", "reason"}` for one server."""
    try:
        if server.transport == "stdio":
            ok, reason = _probe_stdio(server, timeout)
        else:
            ok, reason = _probe_http(server, timeout)
    except Exception as exc:  # a probe reports, never raises
        ok, reason = False, f"{type(exc).__name__}: {exc}"
    return {
        "name": server.name,
        "source": server.source,
        "transport": server.transport,
        "ok": ok,
        "reason": reason,
    }


def _probe_stdio(server: Server, timeout: float) -> tuple[bool, str]:
    if not server.command:
        return False, "no command configured"
    try:
        proc = subprocess.Popen(
            [server.command, *server.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=server.cwd,
            env={**os.environ, **server.env},
            start_new_session=True,
        )
    except OSError as exc:
        return False, f"cannot start {server.command}: {exc.strerror or exc}"
    try:
        assert proc.stdin and proc.stdout and proc.stderr
        proc.stdin.write(json.dumps(_INITIALIZE).encode() + b"\n")
        proc.stdin.flush()
        return _read_reply(proc, time.monotonic() + timeout, timeout)
    except BrokenPipeError:
        proc.wait(timeout)
        return False, _exited(proc)
    finally:
        kill_group(proc)


def _read_reply(proc: subprocess.Popen[bytes], deadline: float, timeout: float) -> tuple[bool, str]:
    """The `initialize` reply among the server's stdout lines, before the deadline."""
    assert proc.stdout is not None
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                proc.wait(max(0.1, deadline - time.monotonic()))
                return False, _exited(proc)
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue  # a log line on stdout: not the reply
                if not isinstance(message, dict) or message.get("id") != 1:
                    continue
                if "result" in message:
                    info = (message["result"] or {}).get("serverInfo") or {}
                    return True, f"initialize answered ({info.get('name', 'unnamed server')})"
                return False, f"initialize refused: {json.dumps(message.get('error'))}"
    return False, f"no answer to initialize within {timeout:g} s"


def _exited(proc: subprocess.Popen[bytes]) -> str:
    assert proc.stderr is not None
    err = proc.stderr.read(4000).decode(errors="replace").strip().splitlines()
    tail = f": {err[-1]}" if err else ""
    return f"exited with status {proc.returncode} before answering initialize{tail}"


def _probe_http(server: Server, timeout: float) -> tuple[bool, str]:
    if not server.url:
        return False, "no url configured"
    import httpx  # here, not at the top: the hooks import this module and never probe

    headers = {"accept": "application/json, text/event-stream", **server.headers}
    with httpx.Client(timeout=timeout, trust_env=False) as client:
        try:
            if server.transport == "sse":
                with client.stream("GET", server.url, headers=headers) as response:
                    status = response.status_code
            else:
                status = client.post(server.url, json=_INITIALIZE, headers=headers).status_code
        except httpx.HTTPError as exc:
            return False, f"{type(exc).__name__}: {exc}"
    if 200 <= status < 300:
        return True, f"HTTP {status}"
    return False, f"HTTP {status} from {server.url}"
