"""Capability facts as the hooks deliver them in tests: a hook call with the facts on, the
wait for the background probes, and an MCP server that says it was started."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

from dshkit.store import Store

from . import hooks

MARKER_SERVER = textwrap.dedent(
    """
    import json, pathlib, sys
    pathlib.Path(sys.argv[1]).write_text("started")
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "initialize":
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {}, "serverInfo": {"name": "marker", "version": "1"}}}), flush=True)
    """
)
TRUSTED = {"hasTrustDialogAccepted": True}  # what Claude Code's folder-trust dialog records


def hook(home: Path, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    return hooks.hook(home, event, payload, DSHKIT_CAPABILITY="on")[0]


def wait_for_probes(state: Path) -> None:
    """Until no probe is running and at least one finished (the hooks start them detached)."""
    deadline = time.monotonic() + 60
    while True:
        with Store(state) as store:
            rows = store.db.execute("SELECT at, started FROM capability_probes").fetchall()
        if rows and all(at is not None and started is None for at, started in rows):
            return
        assert time.monotonic() < deadline, f"the background probes never finished: {rows}"
        time.sleep(0.2)
