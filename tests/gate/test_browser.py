"""The gate's Chromium dies with whatever runs it, however that ends: `dshkit gate` given SIGTERM
(it closes the browser itself) or SIGKILL (the browser's watchdog does), and `dshkit serve`
killed either way during a gate job; no Chromium of the run and no profile directory stays.
A profile a killed run left anyway is removed at the next start.

A run's Chromium is told from every other by its profile directory, which names the process
that started it (`--user-data-dir=<tmp>/dshkit-gate-<pid>-…` is on every Chromium process's
command line)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path

import httpx
import pytest

from dshkit.gate.browser import Browser

from ..support.cli import COMMAND, environment, state_of
from ..support.paths import PAGES, own_temporary
from ..support.procs import left, running_with, wait_until

# A page never good (its canvas stays blank), judged for a budget far longer than any test:
# the gate is still sampling it when it is killed.
NEVER_SETTLES = PAGES / "blank-canvas.html"
LONG_BUDGET_S = 300


def profiles(owner: int) -> list[Path]:
    """The profile directories of the browsers process `owner` started."""
    return sorted(Path(tempfile.gettempdir()).glob(f"dshkit-gate-{owner}-*"))


def chromium_of(owner: int) -> list[int]:
    """The Chromium processes (browser, zygotes, renderers…) process `owner` started."""
    return running_with(f"--user-data-dir={tempfile.gettempdir()}/dshkit-gate-{owner}-")


def nothing_left_of(owner: int) -> None:
    """No Chromium of `owner`'s runs, and none of their profile directories, once the kill
    had time to land."""
    assert left(lambda: chromium_of(owner)) == []
    wait_until(lambda: not profiles(owner), f"a profile directory stayed: {profiles(owner)}", 10)


def judging(owner: int) -> None:
    """Until `owner` has a browser running with a page in it."""
    renderer = "--type=renderer"
    wait_until(
        lambda: any(renderer in _cmdline(pid) for pid in chromium_of(owner)),
        f"process {owner} never started its browser",
    )


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.browser
def test_a_start_removes_what_killed_runs_left() -> None:
    ended = subprocess.Popen(["true"])
    ended.wait()
    stale = Path(tempfile.mkdtemp(prefix=f"dshkit-gate-{ended.pid}-"))
    (stale / "Default").mkdir()
    try:
        with Browser() as browser:
            assert not stale.exists()
            assert browser.profile.name.startswith(f"dshkit-gate-{os.getpid()}-")
            assert browser.profile.is_dir()
        assert not browser.profile.exists()
    finally:
        if stale.exists():
            stale.rmdir()


@pytest.mark.browser
def test_a_judged_page_leaves_nothing_in_the_temporary_directory(tmp_path: Path) -> None:
    # Chromium's singleton socket and the Playwright driver's artifacts directory were left in
    # TMPDIR by every run (the browser is killed, and the driver removes its directory only
    # when it sees the browser go); both belong inside the profile, removed with it.
    with own_temporary() as temporary:
        judged = subprocess.run(
            [*COMMAND, "gate", str(PAGES / "chart-2d.html"), "--json",
             "--state-dir", str(tmp_path / "state")],
            env=environment(tmp_path, {"TMPDIR": str(temporary)}), cwd=tmp_path,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert '"verdict": "ok"' in judged.stdout, judged.stdout + judged.stderr
        assert sorted(os.listdir(temporary)) == []


@pytest.mark.browser
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_gate_command_leaves_no_browser(tmp_path: Path, signum: int) -> None:
    gate = subprocess.Popen(
        [*COMMAND, "gate", str(NEVER_SETTLES), "--budget", str(LONG_BUDGET_S),
         "--state-dir", str(tmp_path / "state")],
        env=environment(tmp_path), cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        judging(gate.pid)
        gate.send_signal(signum)
        # SIGTERM ends it as Ctrl-C would (128 + 15): it closed the browser on its way out.
        assert gate.wait(60) == (128 + signum if signum == signal.SIGTERM else -signum)
    finally:
        gate.kill()
        gate.wait()
    nothing_left_of(gate.pid)


@pytest.mark.browser
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_service_leaves_no_browser_of_its_gate_job(tmp_path: Path, signum: int) -> None:
    serve = subprocess.Popen(
        [*COMMAND, "serve", "--root", str(tmp_path), "--port", "0"],
        env=environment(tmp_path),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stderr is not None
        found = re.search(r"serving (http://127\.0\.0\.1:\d+)/", serve.stderr.readline())
        assert found, "serve printed no address"
        token = (state_of(tmp_path) / "token").read_text().strip()
        started = httpx.post(
            f"{found.group(1)}/api/gate/run",
            json={"path": str(NEVER_SETTLES), "budget": LONG_BUDGET_S},
            headers={"x-dshkit-token": token},
            timeout=30,
        )
        assert started.status_code == 202, started.text
        judging(serve.pid)
        serve.send_signal(signum)
        serve.communicate(timeout=60)
    finally:
        serve.kill()
        serve.communicate()
    nothing_left_of(serve.pid)
