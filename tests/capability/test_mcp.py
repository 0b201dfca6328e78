"""An MCP server started to be probed dies with the process probing it: killed (SIGKILL) while
the server still has not answered, its whole group goes too."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ..support.procs import left, running_in_group, wait_until

# A stdio server that says who it is (its pid, its group's id), starts a child, never answers.
SILENT = """
import os, subprocess, sys, time
subprocess.Popen(["sleep", "300"])
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(300)
"""
PROBE = """
import sys
from dshkit.capability.mcp import Server, probe
server = Server("silent", "cfg", "stdio", command=sys.executable, args=sys.argv[1:])
probe(server, timeout=300)
"""


@pytest.mark.process
def test_a_probed_server_dies_with_the_probe(tmp_path: Path) -> None:
    server, pid = tmp_path / "silent.py", tmp_path / "pid"
    server.write_text(SILENT)
    process = subprocess.Popen([sys.executable, "-c", PROBE, str(server), str(pid)])
    wait_until(lambda: pid.exists() and pid.read_text(), "the probe never started the server")
    group = int(pid.read_text())
    assert len(running_in_group(group)) == 2  # the server and its child
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    assert left(lambda: running_in_group(group)) == []
