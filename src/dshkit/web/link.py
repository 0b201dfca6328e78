"""The console's login link, and where a running `dshkit serve` records its address for
`dshkit open` (and `dshkit doctor`): `<state dir>/serve.json`, 0600, gone when it exits.

The record holds the address and the serving process's id, never the token: the link is put
together from the token file when it is needed. A record whose process is gone (a killed
server) is not believed: another user may own that port by now, and the link carries the
token.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from urllib.parse import quote

import orjson

from ..paths import PRIVATE_FILE

RECORD_NAME = "serve.json"
LOGIN_PARAM = "token"  # the query parameter of the login link (read by `security.Guard`)


@dataclass(frozen=True)
class Served:
    """Where a running `dshkit serve` of a state directory answers."""

    url: str  # "http://127.0.0.1:8765/"
    port: int
    pid: int


def login_link(url: str, token: str) -> str:
    """The link that signs a browser in: the service's URL with the token as a query."""
    return f"{url}?{LOGIN_PARAM}={quote(token, safe='')}"


def record(state_dir: Path, url: str, port: int) -> Served:
    """Record that this process serves `state_dir` at `url` (replacing any older record)."""
    served = Served(url, port, os.getpid())
    path = Path(state_dir) / RECORD_NAME
    partial = path.with_name(f".{RECORD_NAME}.{served.pid}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(orjson.dumps({"url": url, "port": port, "pid": served.pid}))
    os.replace(partial, path)  # readers see the old record or the new one, never half
    return served


@contextmanager
def recording(state_dir: Path, url: str, port: int) -> Iterator[Served]:
    """The record, kept while the block runs and removed however it ends, SIGTERM included:
    uvicorn re-raises the signal it caught once it has shut down, and the default action
    would end the process before any `finally`, so here SIGTERM exits like SIGINT does."""
    served = record(state_dir, url, port)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit) if main else None
    try:
        yield served
    finally:
        forget(state_dir, served)
        if main:
            signal.signal(signal.SIGTERM, previous)


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


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
    if alive_only and not _alive(served.pid):
        return None
    return served


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process took the id: not our server
        return False
    return True
