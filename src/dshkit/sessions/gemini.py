"""Gemini CLI sessions: `<root>/<project slug>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`.

Found by their names; each line mapped to events by `sessions.chats` (which says how the CLI
writes them), which the hot path uses too. The session id is the CLI's own, the one its
hooks' payloads carry, read from the first line (the file's name holds only 8 characters of
it; a file whose first line cannot be read goes by its name without `.jsonl`); the project is
the slug directory (`.project_root` in it names the folder).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any, ClassVar

import orjson

from .chats import events
from .events import Event
from .harness import LogFile, list_dirs, list_files, mapped

_SESSION = re.compile(r"^(session-.+)\.jsonl$")


class GeminiAdapter:
    name: ClassVar[str] = "gemini"
    strict_lines: ClassVar[bool] = False

    def discover(self, root: str, links: list[str] | None = None) -> Iterator[LogFile]:
        for project in list_dirs(root, links):
            for entry in list_files(f"{project.path}/chats"):
                match = _SESSION.match(entry.name)
                if match:
                    session = _session_id(entry.path, match.group(1))
                    yield LogFile(entry.path, self.name, session, project.name, root)

    def log_file(self, path: str) -> LogFile | None:
        parts = path.rstrip("/").split("/")
        match = _SESSION.match(parts[-1])
        if match is None or len(parts) < 4 or parts[-2] != "chats":
            return None
        session = _session_id(path, match.group(1))
        return LogFile(path, self.name, session, parts[-3], "/".join(parts[:-3]) or "/")

    def normalize(self, records: list[Any], state: dict[str, Any]) -> list[Event]:
        return mapped(records, state, events)


_HEAD = 4096  # the first line, metadata only, is far shorter
_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def _session_id(path: str, fallback: str) -> str:
    """The `sessionId` of the log's first line (read-only, never through a link), else
    `fallback`."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return fallback
    try:
        head = os.read(fd, _HEAD)
    except OSError:
        return fallback
    finally:
        os.close(fd)
    line, newline, _ = head.partition(b"\n")
    try:
        first = orjson.loads(line) if newline else None
    except orjson.JSONDecodeError:
        return fallback
    found = first.get("sessionId") if isinstance(first, dict) else None
    return found if isinstance(found, str) and found else fallback
