"""What every harness adapter provides: discovery of its log files and line-to-event mapping."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..errors import Invalid
from .events import Event


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

    def discover(self, root: str) -> Iterator[LogFile]: ...

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


def list_dirs(path: str) -> list[os.DirEntry[str]]:
    """Subdirectories of `path`, sorted by name; none when it is missing or unreadable."""
    try:
        with os.scandir(path) as entries:
            return sorted(
                (e for e in entries if e.is_dir(follow_symlinks=False)), key=lambda e: e.name
            )
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []


def list_files(path: str) -> list[os.DirEntry[str]]:
    """Regular files in `path`, sorted by name; none when it is missing or unreadable."""
    try:
        with os.scandir(path) as entries:
            return sorted((e for e in entries if e.is_file()), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []


def iso_ms(value: Any) -> int | None:
    """Epoch milliseconds of an ISO-8601 timestamp (`2026-11-30T04:13:07.724Z`)."""
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value).timestamp() * 1000)
    except ValueError:
        return None


def remember(state: dict[str, Any], key: str, value: str, keep: int = 64) -> bool:
    """Record `value` in a bounded recent-ids list in `state`; False when it was already there."""
    recent: list[str] = state.setdefault(key, [])
    if value in recent:
        return False
    recent.append(value)
    del recent[:-keep]
    return True


def turn_step(state: dict[str, Any]) -> dict[str, int]:
    """The `{turn, step}` a mapped event belongs to, as tracked in the adapter's state."""
    return {"turn": state.get("turn", 0), "step": state.get("step", 0)}


def emit(
    out: list[Event], state: dict[str, Any], kind: str, line: dict[str, Any], data: Any
) -> None:
    """Append a mapped event; `seq` counts this file's events, `time` is the line's timestamp."""
    seq = state.get("seq", 0)
    state["seq"] = seq + 1
    out.append({"type": kind, "seq": seq, "time": iso_ms(line.get("timestamp")), "data": data})
