"""What every harness adapter provides: discovery of its log files and line-to-event mapping.

Discovery stays inside its root: no symbolic link below a root is followed, to a file or to
a directory (the root itself may be one). A link to a file inside the root is not followed
either: the file it names is found under its own name when it is a log, and reading it
again through the link would count its bytes twice; telling "inside" from "outside" would
mean resolving the link, whose answer can change before the open. `open_log` holds to the
same rule when the file is opened, however the path changed since it was found. A link to a
folder where discovery looks for folders is not skipped silently: `discover` names it in
`links` (the scan lists it among its problems).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, BinaryIO, ClassVar, Protocol, runtime_checkable

import orjson

from ..errors import Invalid
from .events import Event
from .mapping import remember as remember
from .mapping import turn_step as turn_step


class LogFormatError(Invalid, ValueError):
    """A log's content cannot be read as this harness's format (e.g. an unsupported version)."""


@dataclass(frozen=True, slots=True)
class LogFile:
    """One log file of one session; several files (generations, subagents) may share a session."""

    path: str  # strings, not Paths: discovery runs on every scan and must stay cheap
    harness: str
    session_id: str
    project: str
    root: str
    generation: int = 0
    compressed: bool = False


class Adapter(Protocol):
    """A harness's log format. Normalization must give the same events whether the records come
    all at once or split across calls, with `state` carried between them."""

    name: ClassVar[str]
    # Whether an unparseable complete line makes the whole file unreadable (DSH's own rule)
    # or is skipped and reported (append-only transcripts of other harnesses).
    strict_lines: ClassVar[bool]

    def discover(self, root: str, links: list[str] | None = None) -> Iterator[LogFile]:
        """The log files under `root`; each link to a folder passed by is added to `links`."""
        ...

    def log_file(self, path: str) -> LogFile | None:
        """The log file at `path` as `discover` would name it (from the path alone, as a hook's
        `transcript_path` gives it); None when the path is not one of this harness's logs."""
        ...

    def normalize(self, records: list[Any], state: dict[str, Any]) -> list[Event]: ...


@runtime_checkable
class SideFiles(Protocol):
    """An adapter whose sessions keep side transcripts beside their own log (Claude Code's
    subagents): files of the session that number their events apart, so they are not part of
    its conversation. Adapters without such files do not implement it."""

    def side_file(self, path: str) -> bool:
        """Whether the session log file at `path` is a side transcript."""
        ...


def list_dirs(path: str, links: list[str] | None = None) -> list[os.DirEntry[str]]:
    """Subdirectories of `path` (not links to directories: those are added to `links`),
    sorted by name; none when it is missing or unreadable."""
    found: list[os.DirEntry[str]] = []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    found.append(entry)
                elif links is not None and entry.is_symlink() and _leads_to_dir(entry.path):
                    links.append(entry.path)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []
    return sorted(found, key=lambda e: e.name)


def _leads_to_dir(link: str) -> bool:
    """Whether the link at `link` leads to a directory (its target only stat'ed, never read)."""
    try:
        return stat.S_ISDIR(os.stat(link).st_mode)
    except OSError:  # dangling, or not ours to look at: no folder skipped that we know of
        return False


def list_files(path: str) -> list[os.DirEntry[str]]:
    """Regular files in `path` (not links to files), sorted by name; none when it is missing
    or unreadable."""
    try:
        with os.scandir(path) as entries:
            return sorted(
                (e for e in entries if e.is_file(follow_symlinks=False)), key=lambda e: e.name
            )
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []


def real_dir(path: str, links: list[str] | None = None) -> bool:
    """Whether `path` is a directory itself, not a link to one (added to `links`), nor
    missing."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            return True
    except OSError:
        return False
    if links is not None and os.path.islink(path) and _leads_to_dir(path):
        links.append(path)
    return False


# Read-only, the last component never followed, close-on-exec, and a FIFO put in a log's
# place answers at once instead of blocking until something writes to it.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def open_log(log: LogFile) -> BinaryIO:
    """The log file `log` opened `rb`, never through a symbolic link: a link in its place is
    refused by the open itself (O_NOFOLLOW), and what was opened must be a regular file that
    lies inside the log's root, as the root's real path has it (a directory on the way swapped
    for a link after discovery is caught here). OSError saying why otherwise."""
    try:
        fd = os.open(log.path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(log.path):
            raise OSError(exc.errno, _IS_LINK, log.path) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file", log.path)
        if not _inside(log, st):
            raise OSError(errno.EXDEV, _OUTSIDE, log.path)
        return os.fdopen(fd, "rb")  # read-only, always: session logs are not ours
    except BaseException:
        os.close(fd)
        raise


_IS_LINK = "it is a symbolic link, and dshkit follows no links in session directories"
_OUTSIDE = "a symbolic link on its way leads out of its sessions root, and dshkit follows none"


def _inside(log: LogFile, opened: os.stat_result) -> bool:
    """Whether the open file is the one at `log.path` resolved, and that lies in the root.

    A file found at a real path inside the root is inside it, however it was reached; the
    identity check ties the open file to that path (a swap after the open changes neither)."""
    root = os.path.realpath(log.root)
    real = os.path.realpath(log.path)
    if os.path.commonpath([root, real]) != root or real == root:
        return False
    try:
        there = os.stat(real)
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (opened.st_dev, opened.st_ino)


def iso_ms(value: Any) -> int | None:
    """Epoch milliseconds of an ISO-8601 timestamp (`2026-11-30T04:13:07.724Z`)."""
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value).timestamp() * 1000)
    except ValueError:
        return None


def emit(
    out: list[Event], state: dict[str, Any], kind: str, line: dict[str, Any], data: Any
) -> None:
    """Append a mapped event; `seq` counts this file's events, `time` is the line's timestamp."""
    seq = state.get("seq", 0)
    state["seq"] = seq + 1
    out.append({"type": kind, "seq": seq, "time": iso_ms(line.get("timestamp")), "data": data})


def mapped(
    records: list[Any],
    state: dict[str, Any],
    mapping: Callable[[Any, dict[str, Any], Callable[[Any], str]], list[tuple[str, Any]]],
) -> list[Event]:
    """The events a line-to-event mapping (`sessions.rollout`, `sessions.chats`: the hot path
    folds with it too) gives for `records`, emitted in order, a value it writes as JSON text
    written by orjson."""
    out: list[Event] = []
    for record in records:
        for kind, data in mapping(record, state, _json_text):
            emit(out, state, kind, record, data)
    return out


def _json_text(value: Any) -> str:
    return orjson.dumps(value).decode()
