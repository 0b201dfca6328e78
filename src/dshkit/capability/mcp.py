"""Whether each MCP server a harness has configured really answers.

The servers themselves are read from the harness's config files by
`harnesses.config_files.configured` (below the capabilities, so the installer reads the
same files the same way). A stdio server answers when its command starts and replies to
`initialize` within the bound; an http one when a POST of `initialize` to its URL gets a
2xx. Every failure keeps its raw reason.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from typing import Any

from ..harnesses.config_files import Server
from ..procs import start_watched

__all__ = ["PROTOCOL_VERSION", "Server", "probe"]

PROTOCOL_VERSION = "2025-11-25"  # what DSH's MCP client speaks
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
        # Its own process group, killed whole below, or by its watchdog if this process
        # dies first (a server left running would run a command nobody still wants).
        watched = start_watched(
            [server.command, *server.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=server.cwd,
            env={**os.environ, **server.env},
        )
    except OSError as exc:
        return False, f"cannot start {server.command}: {exc.strerror or exc}"
    proc = watched.process
    try:
        assert proc.stdin and proc.stdout and proc.stderr
        proc.stdin.write(json.dumps(_INITIALIZE).encode() + b"\n")
        proc.stdin.flush()
        return _read_reply(proc, time.monotonic() + timeout, timeout)
    except BrokenPipeError:
        proc.wait(timeout)
        return False, _exited(proc)
    finally:
        watched.end()


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
