"""Headless Chromium as dshkit runs it: which binary, with which flags, and how it is ended.

One place for what running Chromium here taught (../shared/notes/headless-chromium.md): a
fresh profile per run, software rendering, Chromium's own sandbox (off only as root, where it
refuses to start with it), no background networking, no way out but loopback, and the whole
process group killed on every exit path (its users start it with `procs.start_watched`, so it
dies with them even when they are killed), and a profile directory named after the process
that made it, so that what a killed one left is removed at the next start (`sweep_profiles`).

A browser that opens pages nobody vetted (the delivery gate's) is confined further
(`CONFINED_FLAGS`, `CONFINED_PREFERENCES`): no connection leaves it at all, loopback included.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from . import procs

EXECUTABLE_ENV = "DSHKIT_CHROMIUM"  # another Chromium binary (tests, other distributions)
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_FLAGS = (
    "--headless",
    "--disable-gpu",
    "--enable-unsafe-swiftshader",  # WebGL through software rendering (no --use-gl: kills WebGL)
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
    # What Playwright's own launcher adds (the gate starts Chromium itself): fewer background
    # services, and a page sampled as if it were in front (no throttled timers or frames).
    "--disable-field-trial-config",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-component-extensions-with-background-pages",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,"
    "CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,SafeBrowsing",
    "--metrics-recording-only",
    "--no-default-browser-check",
    "--no-pings",
    "--no-service-autorun",
    "--password-store=basic",
    "--use-mock-keychain",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--disable-dev-shm-usage",
    # Even so Debian's build calls Google (component updates, network time, sign-in): the
    # browser gets no proxy and no name resolution but loopback. A deliverable is judged as
    # the local file it is; one that needs the internet to work fails here, visibly (its
    # errors name the hosts it could not reach).
    "--no-proxy-server",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
)
NO_SANDBOX = "--no-sandbox"
# Every connection, loopback and WebSockets included, is sent to a proxy whose name resolves
# to nothing: what gets past the gate's request interception (a worker's WebSocket, a
# preconnect, WebTransport) fails in the network stack. No DIRECT fallback: a fixed proxy
# that cannot be reached is an error, not a detour.
_CONFINED_PROXY = (
    "--proxy-server=socks5://dshkit-no-network.invalid:1",
    "--proxy-bypass-list=<-loopback>",  # loopback too (it is bypassed implicitly otherwise)
)
# WebRTC would still send UDP (STUN) past any proxy; this profile policy allows it none.
CONFINED_PREFERENCES = {"webrtc": {"ip_handling_policy": "disable_non_proxied_udp"}}


def launch_flags(euid: int) -> tuple[str, ...]:
    """The flags for a process of user `euid`: Chromium refuses to start sandboxed as root,
    so only root runs it without its sandbox."""
    return (*_FLAGS, NO_SANDBOX) if euid == 0 else _FLAGS


FLAGS = launch_flags(os.geteuid())
CONFINED_FLAGS = (*(f for f in FLAGS if f != "--no-proxy-server"), *_CONFINED_PROXY)


def find() -> str | None:
    """The Chromium to run: `$DSHKIT_CHROMIUM`, else the first of NAMES on PATH."""
    return os.environ.get(EXECUTABLE_ENV) or next(
        (path for name in NAMES if (path := shutil.which(name))), None
    )


# What a profile directory in the temporary directory is called: dshkit-<kind>-<pid>-<random>,
# <pid> the process that made it (the delivery gate's browser, the screenshot probe's).
PROFILE_KINDS = ("gate", "shot")


def new_profile(kind: str) -> Path:
    """A fresh private directory for one Chromium run of `kind` (one of PROFILE_KINDS), named
    after this process."""
    if kind not in PROFILE_KINDS:
        raise ValueError(f"not a profile kind: {kind!r}")
    return Path(tempfile.mkdtemp(prefix=f"dshkit-{kind}-{os.getpid()}-"))


# Chromium's singleton socket, in a directory of its own under TMPDIR: the longest path a
# socket may have (`sun_path`: 108 bytes, its NUL included), and what its directory adds to TMPDIR.
_SOCKET_PATH_MAX = 107
_SOCKET_TAIL = len("/org.chromium.Chromium.XXXXXX/SingletonSocket")


def environment(scratch: str | os.PathLike[str]) -> dict[str, str]:
    """The environment to start Chromium in, its temporary files in `scratch` (a run's own
    directory, removed with it): Chromium keeps its singleton socket in a directory of its own
    under TMPDIR, which a browser ended by a kill (as dshkit ends every one) never removes.
    Where the socket's path would not fit there, TMPDIR is left as it is: a browser that can
    make no socket does not start (docs/design/gate.md#every-child-dies-with-its-owner)."""
    if len(os.fsencode(scratch)) + _SOCKET_TAIL > _SOCKET_PATH_MAX:
        return dict(os.environ)
    return {**os.environ, "TMPDIR": os.fspath(scratch)}


def sweep_profiles(where: str | None = None) -> list[str]:
    """Remove the profile directories in `where` (the temporary directory) that this user's
    dshkit processes made and left behind dead: a process killed before its watchdog began,
    or with it. A directory whose process still runs is left alone (and so is one whose pid
    was reused since: it goes at a later sweep). What was removed, by path."""
    where = where or tempfile.gettempdir()
    removed: list[str] = []
    try:
        entries = list(os.scandir(where))
    except OSError:
        return removed
    for entry in entries:
        dshkit, kind, pid, rest = [*entry.name.split("-", 3), "", "", ""][:4]
        if dshkit != "dshkit" or kind not in PROFILE_KINDS or not pid.isdigit() or not rest:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not procs.alive(int(pid)):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed
