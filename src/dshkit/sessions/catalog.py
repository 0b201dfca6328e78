"""The read side of the session layer: what the store knows of each session, and its events.

Everything here reads the store and the plaintext cache the scanner wrote; no session
directory is touched and no scan lease is needed. Capabilities (signals, the profile, the
optimizer, graft) and every surface read sessions through a Catalog, never through SQL of
their own.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .. import harnesses
from ..store import Store
from .events import Event
from .reader import Cursor, parse_lines
from .summary import dedupe, new_stats

SessionKey = tuple[str, str]  # (harness, session id)

CURSOR_COLUMNS = (
    "path, harness, session_id, root, cache_name, generation, offset, size, dev, ino, "
    "mtime_ns, anchor, plain_len, state, stats, error, error_identity"
)


class SessionNotFound(LookupError):
    """No session, or more than one, matches what was asked for (the message says which)."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One session's summary row."""

    harness: str
    session_id: str
    project: str
    cwd: str
    title: str
    files: int
    events: int
    human_messages: int
    tool_calls: int
    first_time: int | None
    last_time: int | None
    revision: int

    @property
    def key(self) -> SessionKey:
        return self.harness, self.session_id

    def as_json(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "id": self.session_id,
            "project": self.project,
            "cwd": self.cwd,
            "title": self.title,
            "files": self.files,
            "events": self.events,
            "humanMessages": self.human_messages,
            "toolCalls": self.tool_calls,
            "firstTime": self.first_time,
            "lastTime": self.last_time,
        }


@dataclass(frozen=True, slots=True)
class HumanMessage:
    """What a person typed, as kept by the scan."""

    harness: str
    session_id: str
    seq: int | None
    time: int | None
    text: str


_INFO_COLUMNS = (
    "harness, session_id, project, cwd, title, files, events, human_messages, tool_calls, "
    "first_time, last_time, revision"
)


class Catalog:
    """Sessions as the store knows them, and their events rebuilt from the cache."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cache_dir = store.state_dir / "plain"

    # -- sessions ---------------------------------------------------------------------------

    def recent(self, harness: str | None = None, limit: int | None = 50) -> list[SessionInfo]:
        """Sessions with events, most recent first."""
        query = f"SELECT {_INFO_COLUMNS} FROM sessions WHERE events > 0"
        params: list[Any] = []
        if harness:
            query += " AND harness = ?"
            params.append(harness)
        query += " ORDER BY last_time DESC, session_id"
        if limit is not None:
            query += " LIMIT ?"
            params.append(limit)
        return [SessionInfo(*row) for row in self.store.db.execute(query, params)]

    def get(self, key: SessionKey) -> SessionInfo | None:
        row = self.store.db.execute(
            f"SELECT {_INFO_COLUMNS} FROM sessions WHERE harness = ? AND session_id = ?", key
        ).fetchone()
        return SessionInfo(*row) if row else None

    def find(self, session_id: str, harness: str | None = None) -> SessionInfo:
        """The one session whose id is `session_id` or starts with it; SessionNotFound says
        why when there is none or several."""
        pattern = session_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = (
            f"SELECT {_INFO_COLUMNS} FROM sessions "
            "WHERE (session_id = ? OR session_id LIKE ? ESCAPE '\\')"
        )
        params: list[Any] = [session_id, pattern]
        if harness:
            query += " AND harness = ?"
            params.append(harness)
        rows = [SessionInfo(*row) for row in self.store.db.execute(query, params)]
        exact = [r for r in rows if r.session_id == session_id]
        if len(exact) == 1 or len(rows) == 1:
            return (exact or rows)[0]
        if not rows:
            raise SessionNotFound(f"no session {session_id!r} in the store")
        names = ", ".join(f"{r.harness}:{r.session_id}" for r in rows[:5])
        raise SessionNotFound(
            f"{session_id!r} matches {len(rows)} sessions ({names}…); "
            "give more of the id, or the harness"
        )

    def revisions(self) -> dict[SessionKey, int]:
        """Each session's revision: it moves whenever the scan changes the session."""
        rows = self.store.db.execute("SELECT harness, session_id, revision FROM sessions")
        return {(h, s): r for h, s, r in rows}

    # -- events -----------------------------------------------------------------------------

    def files(self, key: SessionKey) -> list[Cursor]:
        """The log files of one session as last read, in reading order."""
        cursors = self.cursors("WHERE harness = ? AND session_id = ?", key)
        return sorted(cursors.values(), key=file_order)

    def events(self, key: SessionKey) -> list[Event]:
        """All events of one session from the cache (all its files, de-duplicated)."""
        with bulk_load():
            return self.union(self.files(key))

    def warm_start(self) -> dict[SessionKey, list[Event]]:
        """Every known session's events, from the cache alone: no session directory is read."""
        by_session: dict[SessionKey, list[Cursor]] = {}
        for cursor in self.cursors().values():
            by_session.setdefault((cursor.harness, cursor.session_id), []).append(cursor)
        with bulk_load():
            return {
                key: self.union(sorted(files, key=file_order))
                for key, files in sorted(by_session.items())
            }

    def human_messages(
        self, keys: Iterable[SessionKey] | None = None, newest: int | None = None
    ) -> list[HumanMessage]:
        """Human messages of the sessions `keys` (all when None), oldest first; with `newest`,
        only that many of the most recent. Read from what the scan kept, not from the cache."""
        wanted = None if keys is None else set(keys)
        rows = self.store.db.execute(
            "SELECT harness, session_id, seq, time, text FROM human_messages "
            "ORDER BY time DESC, rowid DESC"  # NULL times sort last
        )
        found: list[HumanMessage] = []
        for row in rows:
            if wanted is None or (row[0], row[1]) in wanted:
                found.append(HumanMessage(*row))
                if newest is not None and len(found) >= newest:
                    break
        found.reverse()
        return found

    # -- the plaintext cache ----------------------------------------------------------------

    def cache_path(self, cursor: Cursor) -> Path:
        return self.cache_dir / cursor.cache_name

    def file_events(self, cursor: Cursor) -> list[Event] | None:
        """A file's events rebuilt from its cache; None when the cache is shorter than committed."""
        try:
            with open(self.cache_path(cursor), "rb") as cache:
                body = cache.read(cursor.plain_len)
        except FileNotFoundError:
            body = b""
        if len(body) < cursor.plain_len:
            return None
        records, _, _ = parse_lines(body, strict=False)
        return harnesses.get(cursor.harness).adapter.normalize(records, {})

    def union(self, files: list[Cursor]) -> list[Event]:
        """The events of one session's files: concatenated, or de-duplicated where the
        harness's files can repeat each other (generations)."""
        events: list[Event] = []
        for cursor in files:
            loaded = self.file_events(cursor)
            if loaded is None:
                self._forget_lost_cache(cursor)
                continue
            events.extend(loaded)
        if files and repeats(files[0].harness) and (len(files) > 1 or not _monotonic(files)):
            return dedupe(events)
        return events

    def _forget_lost_cache(self, cursor: Cursor) -> None:
        """Drop a file whose cache was lost, so that the next scan reads it again from 0.

        Only the row as it was read: a scan in another process may have moved it on since.
        This is the read side's one write, and it only ever makes the next scan do more.
        """
        self.store.db.execute(
            "DELETE FROM log_files WHERE path = ? AND offset = ? AND plain_len = ?",
            (cursor.path, cursor.offset, cursor.plain_len),
        )

    def cursors(self, where: str = "", params: Sequence[Any] = ()) -> dict[str, Cursor]:
        rows = self.store.db.execute(f"SELECT {CURSOR_COLUMNS} FROM log_files {where}", params)
        cursors: dict[str, Cursor] = {}
        for row in rows:
            values = dict(row)
            values["state"] = orjson.loads(values["state"])
            values["stats"] = {**new_stats(), **orjson.loads(values["stats"])}
            values["anchor"] = bytes(values["anchor"])
            cursors[values["path"]] = Cursor(**values)
        return cursors


def repeats(harness: str) -> bool:
    """Whether a harness's log files of one session can hold the same events (generations)."""
    return harnesses.get(harness).generations_repeat


def file_order(cursor: Cursor) -> tuple[int, str]:
    return cursor.generation, cursor.path


def _monotonic(files: list[Cursor]) -> bool:
    return all(c.stats["monotonic"] for c in files)


@contextmanager
def bulk_load() -> Iterator[None]:
    """Pause the cyclic collector while building many JSON trees.

    Parsed events are acyclic, so reference counting frees them; without the pause, the
    collector re-walks the growing heap again and again and doubles the cost of a full load.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
