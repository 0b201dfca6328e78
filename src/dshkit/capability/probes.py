"""The three channels, probed for real: subprocess, visual screenshot, external tool servers.

Each result is `{"channel", "ok", "reason"}` with the raw reason (`ok` is None for "nothing
to probe", e.g. no MCP server configured, or none its harness would start). Only the MCP
servers their harness would start are started; the others are listed as not started.

The screenshot probe carries the fixes of three pitfalls
(docs/design/capability.md#the-screenshot-probe-avoids-three-pitfalls): a fresh private profile
directory (a running browser would otherwise take the command over and answer with a message
instead of a file), software rendering (no GPU here), and polling for the file (the launcher
may return before the PNG is written).
"""

from __future__ import annotations

import os
import time

from ..lazy import lazy_names
from ..procs import start_watched

TYPE_CHECKING = False  # (the channel names are read on a prompt: the probes' imports wait)
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable
    from typing import Any

    from .mcp import Server

    BROWSERS: tuple[str, ...]  # chromium.NAMES
    BROWSER_ENV: str  # chromium.EXECUTABLE_ENV

SUBPROCESS = "subprocess"
SCREENSHOT = "screenshot"
TOOL_SERVERS = "toolServers"
CHANNELS = (SUBPROCESS, SCREENSHOT, TOOL_SERVERS)
SCREENSHOT_TIMEOUT_S = 20.0
SUBPROCESS_TIMEOUT_S = 5.0
SERVER_TIMEOUT_S = 5.0
_PNG = b"\x89PNG\r\n\x1a\n"
_PAGE = "<!doctype html><meta charset=utf-8><body style='background:#2a6'><h1>dshkit</h1>"


def channel(name: str, ok: bool | None, reason: str, **extra: Any) -> dict[str, Any]:
    return {"channel": name, "ok": ok, "reason": reason, **extra}


def probe_subprocess(
    timeout: float = SUBPROCESS_TIMEOUT_S, inside: list[str] | None = None
) -> dict[str, Any]:
    """Run a trivial command (after the `inside` prefix, which runs it in a harness's
    sandbox) and check what it printed."""
    import subprocess  # (here and below: a prompt that only reads facts imports none of them)

    try:
        watched = start_watched(
            [*(inside or ()), "sh", "-c", "echo dshkit-probe"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        return channel(SUBPROCESS, False, f"{type(exc).__name__}: {exc}")
    try:
        out, err = watched.process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        return channel(SUBPROCESS, False, f"{type(exc).__name__}: {exc}")
    finally:
        watched.end()  # (what the command left running in its group too)
    code = watched.process.returncode
    if code != 0 or out.strip() != b"dshkit-probe":
        lines = err.decode(errors="replace").strip().splitlines()
        last = lines[-1].strip() if lines else ""
        return channel(SUBPROCESS, False, f"exit {code}" + (f": {last}" if last else ""))
    return channel(SUBPROCESS, True, "sh -c echo: exit 0")


def find_browser() -> str | None:
    from .. import chromium

    return chromium.find()


# `BROWSERS` and `BROWSER_ENV` (chromium's), read when asked for: a prompt that only reads
# facts does not load `chromium` (and `shutil`, which it imports).
__getattr__, __dir__ = lazy_names(
    globals(), {"BROWSERS": "..chromium:NAMES", "BROWSER_ENV": "..chromium:EXECUTABLE_ENV"}
)


def probe_screenshot(
    timeout: float = SCREENSHOT_TIMEOUT_S, inside: list[str] | None = None
) -> dict[str, Any]:
    """Have headless Chromium write a PNG of a tiny page (started after the `inside` prefix,
    which runs it in a harness's sandbox), and wait for the file."""
    import subprocess
    import tempfile

    from .. import chromium

    browser = find_browser()
    if browser is None:
        return channel(SCREENSHOT, False, f"no browser found ({', '.join(chromium.NAMES)} on PATH)")
    started = time.monotonic()
    chromium.sweep_profiles()  # what killed probes left
    with tempfile.TemporaryDirectory(prefix=f"dshkit-shot-{os.getpid()}-") as scratch:
        page = os.path.join(scratch, "page.html")
        shot = os.path.join(scratch, "shot.png")
        with open(page, "w", encoding="utf-8") as file:
            file.write(_PAGE)
        argv = [
            *(inside or ()),
            browser,
            *chromium.FLAGS,
            f"--user-data-dir={os.path.join(scratch, 'profile')}",
            "--window-size=320,240",
            f"--screenshot={shot}",
            f"file://{page}",
        ]
        log = os.path.join(scratch, "browser.log")
        try:
            with open(log, "wb") as stderr:
                # Its own group, killed whole below, or with the scratch directory by its
                # watchdog if this process dies first.
                watched = start_watched(
                    argv,
                    remove=[scratch],
                    env=chromium.environment(scratch),  # (its temporary files in the scratch)
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                )
        except OSError as exc:
            return channel(SCREENSHOT, False, f"cannot start {browser}: {exc.strerror or exc}")
        proc = watched.process
        try:
            size = _wait_for_png(shot, proc, started + timeout)
            status = proc.poll()
        finally:
            watched.end()
        if size:
            return channel(SCREENSHOT, True, f"{os.path.basename(browser)}: PNG {size} B")
        seconds = time.monotonic() - started
        how = "still running" if status is None else f"exit status {status}"
        return channel(SCREENSHOT, False, f"no PNG after {seconds:.1f} s ({how}){_last_line(log)}")


def _wait_for_png(path: str, proc: subprocess.Popen[bytes], deadline: float) -> int:
    """The PNG's size once it is complete (a PNG header and the same size twice), else 0.

    The browser exiting is not the end: its screenshot may still be landing, so polling goes
    on a little after the exit
    (docs/design/capability.md#the-screenshot-probe-avoids-three-pitfalls)."""
    last = -1
    exited_at: float | None = None
    while time.monotonic() < deadline:
        try:
            size = os.path.getsize(path)
        except OSError:
            size = -1
        if size > len(_PNG) and size == last:
            with open(path, "rb") as file:
                if file.read(len(_PNG)) == _PNG:
                    return size
        last = size
        if proc.poll() is not None:
            exited_at = exited_at or time.monotonic()
            if time.monotonic() - exited_at > 2.0:
                return 0
        time.sleep(0.1)
    return 0


def _last_line(path: str) -> str:
    """The browser's last error line, as it wrote it."""
    with open(path, "rb") as file:
        lines = file.read()[-8000:].decode(errors="replace").splitlines()
    errors = [line.strip() for line in lines if line.strip()]
    return f": {errors[-1]}" if errors else ""


def probe_servers(
    servers: list[Server], errors: list[str], harness: str = "its harness"
) -> dict[str, Any]:
    """Every configured server its harness would start, in parallel, ✓ only when each
    answers; the others (`withheld`) are listed, never started: starting one runs a command
    nobody approved (`harness` names who did not)."""
    from concurrent.futures import ThreadPoolExecutor

    from .mcp import probe

    if not servers and not errors:
        return channel(TOOL_SERVERS, None, "no MCP server configured", servers=[], errors=[])
    started = [s for s in servers if not s.withheld]
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(started)))) as pool:
        results = [
            {**r, "started": True} for r in pool.map(lambda s: probe(s, SERVER_TIMEOUT_S), started)
        ]
    kept = [_withheld(s, harness) for s in servers if s.withheld]
    ok = None if not started and not errors else not errors and all(r["ok"] for r in results)
    reasons = [f"{r['name']} {'✓' if r['ok'] else '✗'} {r['reason']}" for r in results]
    reasons += [f"{r['name']} — {r['reason']}" for r in kept]
    return channel(
        TOOL_SERVERS, ok, "; ".join(reasons + errors), servers=results + kept, errors=errors
    )


def _withheld(server: Server, harness: str) -> dict[str, Any]:
    return {
        "name": server.name,
        "source": server.source,
        "transport": server.transport,
        "ok": None,
        "started": False,
        "withheld": server.withheld,
        "harness": harness,
        "reason": f"not started: {server.withheld} in {harness}",
    }


def probe_all(
    servers: list[Server],
    config_errors: list[str],
    harness: str = "its harness",
    inside: list[str] | None = None,
    inside_name: str = "",
) -> list[dict[str, Any]]:
    """The three channels, probed at the same time (only the servers `harness` would start).
    With `inside` (the argv prefix of a harness's sandbox runner, called `inside_name`), the
    subprocess and the screenshot run in the session's sandbox, and their results say so
    (`inside`); the MCP servers are started as the harness starts them, outside it."""
    from concurrent.futures import ThreadPoolExecutor

    where = {"inside": inside_name or " ".join(inside)} if inside else {"inside": None}
    jobs: list[Callable[[], dict[str, Any]]] = [
        lambda: probe_subprocess(inside=inside) | where,
        lambda: probe_screenshot(inside=inside) | where,
        lambda: probe_servers(servers, config_errors, harness),
    ]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        return list(pool.map(lambda job: job(), jobs))
