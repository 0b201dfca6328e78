"""The console's login link, where a running `dshkit serve` records its address for
`dshkit open` (and `dshkit doctor`): `<state dir>/serve.json`, 0600, gone when it exits, and
the redirect file a browser is opened on.

A login link carries a one-time code, never the token: the service mints one for each
`dshkit open` (asked with the token). The record holds the address and the serving process's
id, no secret. A record whose process is gone (a killed server) is not believed: another
user may own that port by now.

A browser is never started with a secret on its command line (every user of the machine
reads `/proc/<pid>/cmdline`): it is opened on a redirect file, 0600 in the 0700 state
directory, that sends it on to the link (docs/design/service.md#no-secret-in-a-command-line).
"""

from __future__ import annotations

import html
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from urllib.parse import quote

import orjson

from ..paths import PRIVATE_FILE, private_dir, replace_whole
from ..procs import alive_and_ours

RECORD_NAME = "serve.json"
LOGIN_PARAM = "login"  # the query parameter of the login link (read by `security.Guard`)
REDIRECTS = "open"  # under the state directory: the redirect files of `dshkit open`
REDIRECT_KEPT_S = 600.0  # older redirect files are removed by the next `dshkit open`


@dataclass(frozen=True)
class Served:
    """Where a running `dshkit serve` of a state directory answers."""

    url: str  # "http://127.0.0.1:8765/"
    port: int
    pid: int


def login_link(url: str, code: str) -> str:
    """The link that signs a browser in once: the service's URL with a login code."""
    return f"{url}?{LOGIN_PARAM}={quote(code, safe='')}"


def redirect_file(state_dir: Path, link: str) -> Path:
    """A page that sends a browser on to `link`, written 0600 in `<state dir>/open/` (0700),
    to open instead of the link itself; redirect files older than REDIRECT_KEPT_S go."""
    folder = Path(state_dir) / REDIRECTS
    private_dir(folder)
    for old in folder.glob("login-*.html"):
        with suppress(OSError):
            if time.time() - old.lstat().st_mtime > REDIRECT_KEPT_S:
                old.unlink()
    shown = html.escape(link, quote=True)
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0;url={shown}">'
        "<title>dshkit: signing in</title></head>\n"
        f'<body><p>Opening the dshkit console: <a href="{shown}">continue</a>.</p></body></html>\n'
    )
    path = folder / f"login-{secrets.token_hex(8)}.html"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, PRIVATE_FILE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(page)
    return path


def record(state_dir: Path, url: str, port: int) -> Served:
    """Record that this process serves `state_dir` at `url` (replacing any older record)."""
    served = Served(url, port, os.getpid())
    record = orjson.dumps({"url": url, "port": port, "pid": served.pid})
    replace_whole(Path(state_dir) / RECORD_NAME, record)  # the old or the new, never half
    return served


@contextmanager
def recording(state_dir: Path, url: str, port: int, stop: Callable[[], None]) -> Iterator[Served]:
    """The record, kept while the block runs and removed however it ends, SIGTERM included.

    SIGTERM calls `stop` (the server's own "shut down" flag) and returns: uvicorn installs
    its handlers only once it runs and re-raises the signal it caught after it has shut
    down, and the default action would end the process before any `finally`. The handler
    raises nothing: a signal lands between any two bytecodes, and an exception there (in
    `logging`'s lock while uvicorn configures it, say) leaves the interpreter's state half
    changed. So a service asked to stop, before it serves or while it does, stops cleanly
    and exits 0 (`make run` reports no error)."""
    served = record(state_dir, url, port)
    main = threading.current_thread() is threading.main_thread()

    def stopping(signum: int, frame: FrameType | None) -> None:
        stop()

    previous = signal.signal(signal.SIGTERM, stopping) if main else None
    try:
        yield served
    finally:
        forget(state_dir, served)
        if main:
            signal.signal(signal.SIGTERM, previous)


def forget(state_dir: Path, served: Served) -> None:
    """Remove the record, if it is still this server's (a later serve may have replaced it)."""
    if recorded(state_dir, alive_only=False) == served:
        (Path(state_dir) / RECORD_NAME).unlink(missing_ok=True)


def recorded(state_dir: Path, *, alive_only: bool = True) -> Served | None:
    """The running service of `state_dir`, or None (no record, a broken one, or, with
    `alive_only`, one whose process has ended)."""
    try:
        value = orjson.loads((Path(state_dir) / RECORD_NAME).read_bytes())
        served = Served(str(value["url"]), int(value["port"]), int(value["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if alive_only and not alive_and_ours(served.pid):  # another user's took the id: not ours
        return None
    return served
