"""Scans session roots incrementally into the store, and serves events back from the cache.

Every complete frame or line is decoded once in its lifetime: its plaintext is appended to a
cache file under `<state>/plain/`, and a session's events are rebuilt from that cache without
touching session directories (seed 001 §3.3, §3.5). Each session's cursors and summary are
committed in one SQLite transaction after its cache appends, and a cache is cut back to its
committed length before it grows again: a scan killed at any point, then run again, gives
the same result as one that was never interrupted.
"""

from __future__ import annotations

import gc
import hashlib
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .. import harnesses
from ..paths import default_roots, private_dir, private_opener
from ..store import SCAN_LEASE, Lease, Store
from .events import Event, accumulate, dedupe, merge_stats, new_stats
from .harness import Adapter, LogFile
from .reader import Cursor, Increment, Seen, parse_lines, read_increment, unreadable
from .zstdframes import DEFAULT_MAX_FRAME_OUTPUT, DEFAULT_MAX_WINDOW, FrameDecoder

ADAPTERS: dict[str, Adapter] = {h.name: h.adapter for h in harnesses.all_harnesses()}

SessionKey = tuple[str, str]  # (harness, session id)

_ROTOR_KEY = "scan.rotor"
# A long scan commits at least this often, so an interruption loses little work.
_COMMIT_EVERY_S = 0.5
_CURSOR_COLUMNS = (
    "path, harness, session_id, root, cache_name, generation, offset, size, dev, ino, "
    "mtime_ns, anchor, plain_len, state, stats, error, error_identity"
)


class Progress:
    """Receives scan progress; the CLI draws it, library callers may ignore it."""

    def start(self, total_bytes: int, files: int) -> None:
        """Called once, before reading, with the bytes that may need reading."""

    def advance(self, nbytes: int) -> None:
        """Called as files are read."""


@dataclass(frozen=True, slots=True)
class Source:
    """A sessions root and the harness whose layout to read it by."""

    harness: str
    root: Path


@dataclass(slots=True)
class ScanReport:
    files: int = 0
    sessions: int = 0
    events: int = 0
    human_messages: int = 0
    frames_decoded: int = 0
    bytes_read: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    elapsed_ms: int = 0
    changed_sessions: list[SessionKey] = field(default_factory=list)
    keys: list[SessionKey] = field(default_factory=list)  # every session found under the sources
    found: dict[Source, int] = field(default_factory=dict)  # log files discovered per source
    pending: bool = False  # the frame budget left complete frames for the next round

    def as_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "sessions": self.sessions,
            "events": self.events,
            "humanMessages": self.human_messages,
            "framesDecoded": self.frames_decoded,
            "bytesRead": self.bytes_read,
            "errors": self.errors,
            "elapsedMs": self.elapsed_ms,
        }


@dataclass(slots=True)
class _Batch:
    """Rows staged for the next transaction (their cache appends are already written)."""

    files: list[tuple[Any, ...]] = field(default_factory=list)
    sessions: list[tuple[Any, ...]] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)


class Scanner:
    """The session layer over one store: incremental scans and cached event reads."""

    def __init__(
        self,
        store: Store,
        *,
        frame_budget: int | None = None,
        max_window: int = DEFAULT_MAX_WINDOW,
        max_frame_output: int = DEFAULT_MAX_FRAME_OUTPUT,
    ) -> None:
        if frame_budget is not None and frame_budget < 1:
            raise ValueError(f"frame budget must be at least 1, got {frame_budget}")
        self.store = store
        self.frame_budget = frame_budget
        self.decoder = FrameDecoder(max_window, max_frame_output)
        self.cache_dir = store.state_dir / "plain"
        private_dir(self.cache_dir)
        self._lease: Lease | None = None

    # -- scanning ---------------------------------------------------------------------------

    def scan(
        self, sources: Sequence[Source], progress: Progress | None = None, wait: float = 30.0
    ) -> ScanReport:
        """Read what is new under `sources` into the store.

        One scan at a time per store: another process's live scan is waited for up to `wait`
        seconds (then LeaseBusy); a lease left by a dead one is taken over.
        """
        with self.store.lease(SCAN_LEASE, wait=wait) as lease:
            self._lease = lease
            try:
                with _bulk_load():
                    return self._scan(sources, progress)
            finally:
                self._lease = None

    def _scan(self, sources: Sequence[Source], progress: Progress | None) -> ScanReport:
        started = time.perf_counter()
        progress = progress or Progress()
        report = ScanReport()
        seen, known = self._load_seen()
        groups = _group(self._discover(sources, report.found))
        report.files = sum(len(logs) for logs in groups.values())

        # Stat everything first: the progress total, and which files need opening at all.
        work: dict[SessionKey, list[tuple[LogFile, os.stat_result]]] = {}
        pending_bytes = 0
        for key, logs in groups.items():
            for log in logs:
                try:
                    st = os.stat(log.path)
                except OSError as exc:
                    report.errors.append({"file": log.path, "error": unreadable(exc)})
                    continue
                last = seen.get(log.path)
                if last is not None and last.settled(st):
                    if last.error is not None:  # remembered, not decoded again until it changes
                        report.errors.append({"file": log.path, "error": last.error})
                    continue
                work.setdefault(key, []).append((log, st))
                pending_bytes += st.st_size - (last.offset if last else 0)
        progress.start(max(pending_bytes, 0), report.files)

        batch = _Batch()
        budget = self.frame_budget
        next_rotor: str | None = None
        last_rotor = self.store.get_meta(_ROTOR_KEY) or ""
        for key in _rotate(sorted(work), last_rotor):
            if budget is not None and budget <= 0:
                report.pending = True
                next_rotor = next_rotor or _key_text(key)
                continue
            where = "WHERE harness = ? AND session_id = ?"
            cursors = self._load_cursors(where, key) if key in known else {}
            increments: list[tuple[LogFile, Increment]] = []
            # A session whose files may repeat each other needs its union: keep what is read.
            generations = _repeats(key[0]) and len(groups[key]) > 1
            for log, st in work[key]:
                cursor = cursors.get(log.path) or _new_cursor(log)
                inc = read_increment(
                    log, cursor, ADAPTERS[log.harness], self.decoder, st, budget, keep=generations
                )
                if budget is not None:
                    budget -= inc.frames
                if inc.pending:
                    report.pending = True
                    next_rotor = next_rotor or _key_text(key)
                report.frames_decoded += inc.frames
                report.bytes_read += inc.bytes_read
                report.errors.extend({"file": log.path, "error": e} for e in inc.errors)
                report.warnings.extend(inc.warnings)
                progress.advance(inc.bytes_read)
                if inc.cursor != cursor:
                    increments.append((log, inc))
            if increments:
                self._stage_session(key, groups[key], increments, cursors, batch)
                if any(inc.delta["events"] or inc.reset for _, inc in increments):
                    report.changed_sessions.append(key)
                if time.perf_counter() - batch.started > _COMMIT_EVERY_S:
                    self._flush(batch)
        rotor = next_rotor or ""
        self._flush(batch, {_ROTOR_KEY: rotor} if rotor != last_rotor else None)

        report.keys = sorted(groups)
        self._totals(report, set(groups))
        report.elapsed_ms = round((time.perf_counter() - started) * 1000)
        return report

    def _discover(self, sources: Sequence[Source], found: dict[Source, int]) -> Iterable[LogFile]:
        seen: set[str] = set()
        for source in sources:
            found.setdefault(source, 0)
            for log in ADAPTERS[source.harness].discover(str(source.root)):
                if log.path not in seen:
                    seen.add(log.path)
                    found[source] += 1
                    yield log

    def _stage_session(
        self,
        key: SessionKey,
        logs: list[LogFile],
        increments: list[tuple[LogFile, Increment]],
        files: dict[str, Cursor],
        batch: _Batch,
    ) -> None:
        """Write the caches of one session's read files and stage its rows for commit.

        `files` holds every known cursor of the session; it is updated in place.
        """
        # Cache first; the transaction that makes it count comes after (see the module doc).
        for _, inc in increments:
            self._append_cache(inc)
            files[inc.cursor.path] = inc.cursor
            batch.files.append(_cursor_row(inc.cursor))
        ordered = sorted(files.values(), key=_file_order)
        summary = self._session_summary(key, ordered, increments)
        cwd = next((c.state["cwd"] for c in ordered if c.state.get("cwd")), "")
        batch.sessions.append(
            (
                *key,
                logs[0].project or cwd,
                cwd,
                summary["title"] or summary["firstPrompt"],
                len(ordered),
                summary["events"],
                summary["humanMessages"],
                summary["toolCalls"],
                summary["firstTime"],
                summary["lastTime"],
                orjson.dumps(summary).decode(),
            )
        )

    def _flush(self, batch: _Batch, meta: dict[str, str] | None = None) -> None:
        """Commit the staged rows in one transaction (their caches are already written)."""
        if not (batch.files or batch.sessions or meta):
            return
        with self.store.transaction() as db:
            db.executemany(
                f"INSERT OR REPLACE INTO log_files ({_CURSOR_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                batch.files,
            )
            db.executemany(
                "INSERT INTO sessions (harness, session_id, project, cwd, title, files, events, "
                "human_messages, tool_calls, first_time, last_time, stats) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (harness, session_id) DO UPDATE SET project = excluded.project, "
                "cwd = excluded.cwd, title = excluded.title, files = excluded.files, "
                "events = excluded.events, human_messages = excluded.human_messages, "
                "tool_calls = excluded.tool_calls, first_time = excluded.first_time, "
                "last_time = excluded.last_time, stats = excluded.stats, "
                "revision = revision + 1",
                batch.sessions,
            )
            for name, value in (meta or {}).items():
                self.store.set_meta(name, value)
            if self._lease is not None:
                self._lease.renew()
        batch.files.clear()
        batch.sessions.clear()
        batch.started = time.perf_counter()

    def _session_summary(
        self,
        key: SessionKey,
        files: list[Cursor],
        increments: list[tuple[LogFile, Increment]],
    ) -> dict[str, Any]:
        """The session's summary after this read, from deltas wherever that is exact.

        Files of other harnesses are separate streams (main and subagent transcripts): their
        summaries add. A DSH session's generations may repeat each other, so the union is
        rebuilt from the cache, unless every new event's seq is beyond all the others': then
        no new event can have a twin, and the deltas add to the previous summary.
        """
        if not _repeats(key[0]) or (len(files) == 1 and files[0].stats["monotonic"]):
            return _merged(c.stats for c in files)
        previous = self.store.db.execute(
            "SELECT stats FROM sessions WHERE harness = ? AND session_id = ?", key
        ).fetchone()
        if previous is not None and all(_beyond_the_rest(inc, files) for _, inc in increments):
            summary = {**new_stats(), **orjson.loads(previous[0])}
            return _merged([summary, *(inc.delta for _, inc in increments)])
        kept = {inc.cursor.path: inc.kept for _, inc in increments if inc.from_start}
        if all(kept.get(c.path) is not None for c in files):
            # Every file was just read whole (a first scan): the union is in memory.
            return accumulate(new_stats(), dedupe([e for c in files for e in kept[c.path] or ()]))
        return accumulate(new_stats(), self._union(files))

    def _totals(self, report: ScanReport, keys: set[SessionKey]) -> None:
        rows = self.store.db.execute(
            "SELECT harness, session_id, events, human_messages FROM sessions WHERE events > 0"
        )
        for harness, session_id, events, human in rows:
            if (harness, session_id) in keys:
                report.sessions += 1
                report.events += events
                report.human_messages += human

    # -- the plaintext cache ------------------------------------------------------------------

    def _cache_path(self, cursor: Cursor) -> Path:
        return self.cache_dir / cursor.cache_name

    def _append_cache(self, inc: Increment) -> None:
        committed = 0 if inc.reset else inc.cursor.plain_len - len(inc.plaintext)
        with open(self._cache_path(inc.cursor), "ab", opener=private_opener) as cache:
            if cache.tell() != committed:  # left over by an interrupted scan, or a reset
                cache.truncate(committed)
            cache.write(inc.plaintext)

    def _file_events(self, cursor: Cursor) -> list[Event] | None:
        """A file's events rebuilt from its cache; None when the cache is shorter than committed."""
        try:
            with open(self._cache_path(cursor), "rb") as cache:
                body = cache.read(cursor.plain_len)
        except FileNotFoundError:
            body = b""
        if len(body) < cursor.plain_len:
            return None
        adapter = ADAPTERS[cursor.harness]
        records, _, _ = parse_lines(body, strict=False)
        return adapter.normalize(records, {})

    def _union(self, files: list[Cursor]) -> list[Event]:
        events: list[Event] = []
        for cursor in files:
            loaded = self._file_events(cursor)
            if loaded is None:
                self._forget(cursor)
                continue
            events.extend(loaded)
        # Only generations can repeat each other; other harnesses' files are streams apart.
        if files and _repeats(files[0].harness) and (len(files) > 1 or not _monotonic(files)):
            return dedupe(events)
        return events

    def _forget(self, cursor: Cursor) -> None:
        """Drop a file whose cache was lost, so that the next scan reads it again from 0.

        Only the row as it was read: a scan in another process may have moved it on since.
        """
        self.store.db.execute(
            "DELETE FROM log_files WHERE path = ? AND offset = ? AND plain_len = ?",
            (cursor.path, cursor.offset, cursor.plain_len),
        )

    # -- reading back -----------------------------------------------------------------------

    def files(self, harness: str, session_id: str) -> list[Cursor]:
        """The log files of one session as last read, in reading order."""
        files = self._load_cursors("WHERE harness = ? AND session_id = ?", (harness, session_id))
        return sorted(files.values(), key=_file_order)

    def events(self, harness: str, session_id: str) -> list[Event]:
        """All events of one session from the cache (all its files, de-duplicated)."""
        with _bulk_load():
            return self._union(self.files(harness, session_id))

    def warm_start(self) -> dict[SessionKey, list[Event]]:
        """Every known session's events, from the cache alone: no session directory is read."""
        by_session = _by_session(self._load_cursors())
        with _bulk_load():
            return {
                key: self._union(sorted(files.values(), key=_file_order))
                for key, files in sorted(by_session.items())
            }

    def _load_seen(self) -> tuple[dict[str, Seen], set[SessionKey]]:
        """What the store last saw of each file, and which sessions it has files of."""
        rows = self.store.db.execute(
            "SELECT path, harness, session_id, offset, size, mtime_ns, dev, ino, error, "
            "error_identity FROM log_files"
        ).fetchall()
        return {row[0]: Seen(*row[3:]) for row in rows}, {(row[1], row[2]) for row in rows}

    def _load_cursors(self, where: str = "", params: Sequence[Any] = ()) -> dict[str, Cursor]:
        rows = self.store.db.execute(f"SELECT {_CURSOR_COLUMNS} FROM log_files {where}", params)
        cursors: dict[str, Cursor] = {}
        for row in rows:
            values = dict(row)
            values["state"] = orjson.loads(values["state"])
            values["stats"] = {**new_stats(), **orjson.loads(values["stats"])}
            values["anchor"] = bytes(values["anchor"])
            cursors[values["path"]] = Cursor(**values)
        return cursors


@contextmanager
def _bulk_load() -> Iterator[None]:
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


def default_sources(harness: str | None = None) -> list[Source]:
    """Each harness's default sessions root on this machine (or just `harness`'s)."""
    return [Source(h, root) for h, root in default_roots().items() if harness in (None, h)]


def _new_cursor(log: LogFile) -> Cursor:
    name = hashlib.sha1(log.path.encode()).hexdigest() + ".jsonl"
    return Cursor(
        path=log.path,
        harness=log.harness,
        session_id=log.session_id,
        root=str(log.root),
        cache_name=name,
        generation=log.generation,
    )


def _cursor_row(c: Cursor) -> tuple[Any, ...]:
    return (
        c.path,
        c.harness,
        c.session_id,
        c.root,
        c.cache_name,
        c.generation,
        c.offset,
        c.size,
        c.dev,
        c.ino,
        c.mtime_ns,
        c.anchor,
        c.plain_len,
        orjson.dumps(c.state).decode(),
        orjson.dumps(c.stats).decode(),
        c.error,
        c.error_identity,
    )


def _group(logs: Iterable[LogFile]) -> dict[SessionKey, list[LogFile]]:
    groups: dict[SessionKey, list[LogFile]] = {}
    for log in logs:
        groups.setdefault((log.harness, log.session_id), []).append(log)
    for files in groups.values():
        files.sort(key=lambda log: (log.generation, log.path))
    return groups


def _merged(summaries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    total = new_stats()
    for summary in summaries:
        merge_stats(total, summary)
    return total


def _beyond_the_rest(inc: Increment, files: list[Cursor]) -> bool:
    """Whether this read only appended events whose seqs exceed every other file's."""
    if not inc.delta["events"]:
        return not inc.reset
    first = inc.delta["firstSeq"]
    if inc.reset or first is None or not inc.cursor.stats["monotonic"]:
        return False
    others = [c.stats["maxSeq"] for c in files if c.path != inc.cursor.path]
    return all(seq is None or first > seq for seq in others)


def _by_session(cursors: dict[str, Cursor]) -> dict[SessionKey, dict[str, Cursor]]:
    index: dict[SessionKey, dict[str, Cursor]] = {}
    for cursor in cursors.values():
        index.setdefault((cursor.harness, cursor.session_id), {})[cursor.path] = cursor
    return index


def _file_order(cursor: Cursor) -> tuple[int, str]:
    return cursor.generation, cursor.path


def _monotonic(files: list[Cursor]) -> bool:
    return all(c.stats["monotonic"] for c in files)


def _repeats(harness: str) -> bool:
    """Whether a harness's log files of one session can hold the same events (generations)."""
    return harnesses.get(harness).generations_repeat


def _key_text(key: SessionKey) -> str:
    return f"{key[0]}\0{key[1]}"


def _rotate(keys: list[SessionKey], rotor: str | None) -> list[SessionKey]:
    """Sessions in order, starting where the last budget-limited round had to stop (§8.6)."""
    if not rotor:
        return keys
    texts = [_key_text(k) for k in keys]
    start = next((i for i, text in enumerate(texts) if text >= rotor), 0)
    return keys[start:] + keys[:start]
