"""One headless Debian Chromium per gate process: started in its own process group with a fresh
profile directory, reached over CDP, and always killed (the whole group) with its profile gone,
and with it what the browser and the Playwright driver keep while they run (their temporary
files and artifacts are in the profile, not in the shared temporary directory).

Playwright cannot download a browser here, and its own launcher hides the browser's process
id, so the gate starts `/usr/bin/chromium` itself (the flags of
../shared/notes/headless-chromium.md) and Playwright connects to it: whatever way the gate
ends — an answer, an exception, the hook's alarm, SIGTERM where the process turns it into an
exception — `close` kills the group and removes the profile. Where the process ends without
running any of that (SIGKILL, a crash), the browser's watchdog does the same
(docs/design/gate.md#every-child-dies-with-its-owner); a profile left even so (the process
killed before the watchdog began) is removed by the next start.

The browser is confined by default (`chromium.CONFINED_FLAGS` and `CONFINED_PREFERENCES` in
its profile): the pages it opens reach no network, loopback included. The judge's request
interception decides which files a page may load; this is the layer below it, for what
interception does not see.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from types import TracebackType

from .. import chromium, procs
from ..errors import Unavailable

START_TIMEOUT_S = 15.0


class BrowserError(Unavailable):
    """Chromium could not be started (missing, crashed, or silent past the start timeout)."""


class Browser:
    """A Chromium started at construction; use as a context manager (`close` is idempotent).

    `loopback=True` lifts the network confinement for a browser that drives dshkit's own
    local service (the console's tests): never for a page dshkit did not write."""

    def __init__(self, *, loopback: bool = False) -> None:
        self.loopback = loopback
        chromium.sweep_profiles()  # what killed runs left
        self.profile = chromium.new_profile("gate")
        # The Playwright driver connected to it keeps its artifacts in the profile too: left
        # in the temporary directory, it removes them only when it sees the browser go.
        self.artifacts = self.profile / "artifacts"
        self.process: subprocess.Popen[bytes] | None = None
        self._watched: procs.Watched | None = None
        self.endpoint = ""
        self.binary = ""
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        binary = chromium.find()
        if binary is None or not os.access(binary, os.X_OK):
            raise BrowserError(
                f"no executable Chromium ({binary or ', '.join(chromium.NAMES)}); run "
                f"scripts/install-browser.sh (or point {chromium.EXECUTABLE_ENV} at one)"
            )
        self.binary = binary
        self.artifacts.mkdir()
        if not self.loopback:
            preferences = self.profile / "Default" / "Preferences"
            preferences.parent.mkdir()
            preferences.write_text(json.dumps(chromium.CONFINED_PREFERENCES))
        # Its own process group, killed whole in `close`, or by its watchdog (which then
        # removes the profile) if this process dies first.
        self._watched = procs.start_watched(
            [
                binary,
                *(chromium.FLAGS if self.loopback else chromium.CONFINED_FLAGS),
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            remove=[str(self.profile)],
            env=chromium.environment(self.profile),  # (its temporary files in the profile)
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.process = self._watched.process

    async def ready(self) -> str:
        """The CDP endpoint once Chromium has opened its DevTools port (BrowserError if it
        exits or stays silent past START_TIMEOUT_S)."""
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.endpoint:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise BrowserError(f"{self.binary} exited with {code} on start")
            try:
                self.endpoint = f"http://127.0.0.1:{port_file.read_text().split()[0]}"
            except (OSError, IndexError):
                if time.monotonic() > deadline:
                    raise BrowserError(
                        f"{self.binary} did not open its DevTools port in {START_TIMEOUT_S:g} s"
                    ) from None
                await asyncio.sleep(0.02)
        return self.endpoint

    def close(self) -> None:
        """Kill the browser's whole process group and remove the profile directory."""
        watched, self._watched, self.process = self._watched, None, None
        if watched is not None:
            # SIGKILL at once: the profile is thrown away, and some children ignore SIGTERM.
            watched.end()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
