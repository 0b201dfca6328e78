"""The capability probes' children die with the process probing: killed (SIGKILL) before the
child finished, the screenshot probe's browser goes with its whole group and its scratch
directory (profile included), and so does the subprocess probe's command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dshkit import chromium
from dshkit.capability.probes import BROWSER_ENV

from ..support.paths import own_temporary
from ..support.procs import left, running_in_group, wait_until

# Records what it was started with (the profile, its own pid: its group's id), then hangs as a
# browser that never writes its screenshot, or a sandbox runner whose command never ends.
HANGS = """#!/bin/sh
for arg; do
    case "$arg" in --user-data-dir=*) echo "${arg#--user-data-dir=}" > "$0.profile";; esac
done
echo $$ > "$0.pid"
sleep 300 &
exec sleep 300
"""


def hanging(tmp_path: Path) -> Path:
    script = tmp_path / "hangs.sh"
    script.write_text(HANGS)
    script.chmod(0o755)
    return script


def probing(call: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A process running one probe (`call`, after importing the probes' module)."""
    code = f"from dshkit.capability.probes import *\n{call}"
    return subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **(env or {})})


def killed_while_running(process: subprocess.Popen[bytes], script: Path) -> int:
    """Once the probe's child runs, SIGKILL the probing process: the child's group id."""
    pid = Path(f"{script}.pid")
    wait_until(lambda: pid.exists() and pid.read_text().strip(), "the probe never started it")
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    return int(pid.read_text())


# Runs the real Chromium as the probe starts it, but never writes the screenshot: a browser
# still running when its probe is killed.
NEVER_SHOOTS = """#!/bin/sh
for arg; do
    shift
    case "$arg" in --screenshot=*) ;; *) set -- "$@" "$arg";; esac
done
exec "$DSHKIT_REAL_CHROMIUM" "$@"
"""


@pytest.mark.browser
def test_a_killed_screenshot_probe_leaves_nothing_in_the_temporary_directory(
    tmp_path: Path,
) -> None:
    # Chromium keeps its singleton socket in a directory of its own under TMPDIR, which a
    # browser ended by a kill never removes: it belongs in the probe's scratch directory,
    # which the watchdog removes.
    real = chromium.find()
    assert real is not None
    script = tmp_path / "never-shoots.sh"
    script.write_text(NEVER_SHOOTS)
    script.chmod(0o755)
    with own_temporary() as temporary:
        env = {BROWSER_ENV: str(script), "DSHKIT_REAL_CHROMIUM": real, "TMPDIR": str(temporary)}
        process = probing("probe_screenshot(timeout=300)", env)
        try:
            wait_until(
                lambda: any(temporary.glob("**/org.chromium.Chromium.*")),
                "the probe's browser never made its singleton socket",
            )
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        wait_until(lambda: not any(temporary.iterdir()), "the probe left files behind", 10)


@pytest.mark.process
def test_the_screenshot_probes_browser_dies_with_the_probe(tmp_path: Path) -> None:
    script = hanging(tmp_path)
    process = probing("probe_screenshot(timeout=300)", {BROWSER_ENV: str(script)})
    group = killed_while_running(process, script)
    assert left(lambda: running_in_group(group)) == []
    scratch = Path(Path(f"{script}.profile").read_text().strip()).parent
    assert scratch.name.startswith(f"dshkit-shot-{process.pid}-")
    wait_until(lambda: not scratch.exists(), f"{scratch} stayed", 10)


@pytest.mark.process
def test_the_subprocess_probes_command_dies_with_the_probe(tmp_path: Path) -> None:
    script = hanging(tmp_path)  # as the sandbox runner it is started through
    process = probing(f"probe_subprocess(timeout=300, inside=[{str(script)!r}])")
    group = killed_while_running(process, script)
    assert left(lambda: running_in_group(group)) == []
