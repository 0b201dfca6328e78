"""The read side of the session layer: what the store knows of each session, and its events.

Everything here reads the store and the plaintext cache the scanner wrote; no session
directory is touched and no scan lease is needed. Capabilities (signals, the profile, the
optimizer, graft) and every surface read sessions through a Catalog, never through SQL of
their own.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from hashlib import blake2b
from pathlib import Path
from typing import Any

import orjson

from .. import harnesses
from ..errors import MAX_ID, Ambiguous, Invalid, NotFound
from ..paths import dir_key as dir_key  # (kept in `paths`: the hooks spell cwds without this)
from ..store import Store
from .events import Event
from .harness import SideFiles
from .reader import Cursor, parse_lines
from .summary import dedupe, new_stats
from .wire import SessionInfoJson

SessionKey = tuple[str, str]  # (harness, session id)

# Cached plaintext parsed at a time when events are streamed. Parsed, a chunk takes several
# times its size; at 256 KiB that stays a few MiB and costs no more time than larger chunks
# (a 64 MiB DSH session: 2.9 MiB traced peak, 7.4 MiB at 1 MiB chunks).
STREAM_CHUNK = 1 << 18

CURSOR_COLUMNS = (
    "path, harness, session_id, root, cache_name, generation, offset, size, dev, ino, "
    "mtime_ns, anchor, plain_len, state, stats, error, error_identity"
)


# Sessions last active this close to the newest one in a directory compete for "the caller".
CALLER_WINDOW_MS = 10 * 60_000


class SessionNotFound(NotFound):
    """No session matches what was asked for (the message says what was asked)."""


class SessionAmbiguous(Ambiguous):
    """More than one session matches what was asked for (the message names some)."""


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

    def as_json(self) -> SessionInfoJson:
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
        """The one session whose id is `session_id` or starts with it (of `harness` when
        given): SessionNotFound when there is none, SessionAmbiguous when there are several
        and none is an exact match."""
        session_id = session_id.strip() if isinstance(session_id, str) else ""
        if not session_id:
            raise SessionNotFound("no session id given", field="session")
        if len(session_id) > MAX_ID:  # names nothing: refused, never looked up nor echoed
            raise Invalid(
                f"session: {len(session_id):,} characters; an id is at most {MAX_ID:,}",
                field="session",
            )
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
            raise SessionNotFound(f"no session {session_id!r} in the store", field="session")
        names = ", ".join(f"{r.harness}:{r.session_id}" for r in rows[:5])
        raise SessionAmbiguous(
            f"{session_id!r} matches {len(rows)} sessions ({names}…); "
            "give more of the id, or the harness",
            field="session",
        )

    def caller(self, cwd: str | os.PathLike[str], harness: str | None = None) -> SessionInfo:
        """The session a call that names no session comes from: the one most recently active
        in `cwd` (of `harness` when known). SessionNotFound when none worked there;
        SessionAmbiguous when another was active there within CALLER_WINDOW_MS of it (then
        the caller must name itself)."""
        here = dir_key(cwd)
        found = [
            info
            for info in self.recent(harness, limit=None)
            if info.cwd and dir_key(info.cwd) == here
        ]
        if not found:
            raise SessionNotFound(
                f"no session of {harness or 'any harness'} has worked in {cwd}", field="session"
            )
        newest = found[0]
        rivals = [
            info
            for info in found[1:]
            if newest.last_time is not None
            and info.last_time is not None
            and newest.last_time - info.last_time < CALLER_WINDOW_MS
        ]
        if rivals:
            names = ", ".join(f"{i.harness}:{i.session_id}" for i in [newest, *rivals])
            raise SessionAmbiguous(
                f"several sessions are active in {cwd} ({names}): name one", field="session"
            )
        return newest

    def resolve(
        self,
        session_id: str | None = None,
        harness: str | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
    ) -> SessionInfo | None:
        """The session a request means: the one `session_id` names (an id or a unique
        prefix), else, given `cwd`, the caller working there; None when neither is given.
        Never a guess: a name that matches none or several raises, as `find` and `caller`."""
        if session_id is not None and session_id.strip():
            return self.find(session_id, harness)
        if cwd is not None:
            return self.caller(cwd, harness)
        return None

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

    def conversation(self, key: SessionKey) -> list[Event]:
        """The session's own conversation, in which each seq names one event: its own log (all
        generations, de-duplicated as `events` does) without side transcripts (subagents),
        which number their events apart.

        Where generations disagree on what a seq holds, the newest generation's event stands
        (a later generation is the migrated, authoritative copy) at the place of the first.
        """
        adapter = harnesses.get(key[0]).adapter
        files = self.files(key)
        if isinstance(adapter, SideFiles):
            files = [cursor for cursor in files if not adapter.side_file(cursor.path)]
        with bulk_load():
            events = self.union(files)
        by_seq: dict[object, Event] = {}
        for event in events:
            seq = event.get("seq")
            # An event without a seq cannot be cited; it keeps its place under its own key.
            by_seq[seq if isinstance(seq, int) else ("unnumbered", id(event))] = event
        return list(by_seq.values())

    def iter_events(self, key: SessionKey, chunk_bytes: int = STREAM_CHUNK) -> Iterator[Event]:
        """The events `events(key)` returns, in the same order, handed out one at a time and
        read `chunk_bytes` of cache at a time: only one chunk's events are ever held here.

        Twins drop as `union` drops them (`summary.dedupe`: same key and same content), but
        contents are compared by a 128-bit digest, since the events themselves are gone by the
        time a twin comes: the result differs only if two contents collide, beyond any real
        chance. The cost, for sessions whose files can repeat each other only: a key and a
        digest kept per event passed (about 100 bytes).
        """
        files = self.files(key)
        twins = _Twins() if _may_repeat(files) else None
        for cursor in files:
            for event in self.iter_file_events(cursor, chunk_bytes):
                if twins is None or twins.first(event):
                    yield event

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
        events: list[Event] = harnesses.get(cursor.harness).adapter.normalize(records, {})
        return events

    def iter_file_events(self, cursor: Cursor, chunk_bytes: int = STREAM_CHUNK) -> Iterator[Event]:
        """A file's events as `file_events` rebuilds them, parsed `chunk_bytes` of cache at a
        time (a longer line whole).

        A cache shorter than committed yields nothing and is forgotten, as `union` does; one
        found short part way (a scan started the file over meanwhile, so the session's
        revision moves) stops there and is forgotten too.
        """
        if chunk_bytes < 1:
            raise ValueError(f"chunk_bytes must be at least 1, got {chunk_bytes}")
        normalize = harnesses.get(cursor.harness).adapter.normalize
        state: dict[str, Any] = {}
        for body in self._committed_lines(cursor, chunk_bytes):
            events = normalize(parse_lines(body, strict=False)[0], state)
            del body  # only this chunk's events stay while they are handed out
            yield from events
            del events

    def _committed_lines(self, cursor: Cursor, chunk_bytes: int) -> Iterator[bytes]:
        """The committed part of a file's cache in runs of whole lines; an unfinished last
        line is left out, as `parse_lines` leaves it out."""
        left = cursor.plain_len
        pending = bytearray()  # the start of a line that goes on in the next read
        try:
            with open(self.cache_path(cursor), "rb") as cache:
                short = os.fstat(cache.fileno()).st_size < left
                while left and not short:
                    chunk = cache.read(min(chunk_bytes, left))
                    if not chunk:
                        break
                    left -= len(chunk)
                    cut = chunk.rfind(b"\n") + 1
                    if not cut:
                        pending += chunk
                        continue
                    body = bytes(pending) + chunk[:cut] if pending else chunk[:cut]
                    pending = bytearray(chunk[cut:])
                    del chunk
                    yield body
                    del body
        except FileNotFoundError:
            pass
        if left:  # the cache is shorter than committed
            self._forget_lost_cache(cursor)

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
        return dedupe(events) if _may_repeat(files) else events

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


def _may_repeat(files: list[Cursor]) -> bool:
    """Whether one session's files can hold twins: several generations, or one file whose
    seqs do not strictly increase."""
    if not files or not repeats(files[0].harness):
        return False
    return len(files) > 1 or not all(c.stats["monotonic"] for c in files)


class _Twins:
    """`summary.dedupe` one event at a time: per key (`seq`, else `type@time`), the digests of
    the distinct contents already passed."""

    def __init__(self) -> None:
        self._seen: dict[object, bytes | list[bytes]] = {}

    def first(self, event: Event) -> bool:
        """Whether `event` is not a twin of one passed before (it is remembered if not)."""
        seq = event.get("seq")
        key: object = seq if seq is not None else f"{event.get('type')}@{event.get('time')}"
        content = orjson.dumps([event.get("type"), event.get("data")], option=orjson.OPT_SORT_KEYS)
        digest = blake2b(content, digest_size=16).digest()
        known = self._seen.get(key)
        if known is None:
            self._seen[key] = digest  # the common case: one content per key, no list
        elif isinstance(known, bytes):
            if known == digest:
                return False
            self._seen[key] = [known, digest]
        elif digest in known:
            return False
        else:
            known.append(digest)
        return True


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
