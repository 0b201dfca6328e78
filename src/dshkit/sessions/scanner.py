"""Scans session roots incrementally into the store (the session layer's write side).

Every complete frame or line is decoded once in its lifetime: its plaintext is appended to a
cache file under `<state>/plain/` as the log is read, and a session's events are rebuilt from
that cache without touching session directories
(docs/design/sessions.md#one-decision-per-file-per-scan,
docs/design/sessions.md#the-plaintext-cache-survives-restarts). Cursors and summaries are
committed in SQLite transactions after their cache appends, and a cache is cut back to its
committed length before it grows again: a scan killed at any point, then run again, gives the
same result as one that was never interrupted. A file that cannot be stored (the disk full,
the cache not writable) is skipped and told, its cache cut back, and the others are stored
(docs/design/sessions.md#a-file-that-cannot-be-stored-costs-only-itself).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

import orjson

from .. import harnesses
from ..paths import default_roots, private_dir, private_opener
from ..store import SCAN_LEASE, Lease, Store, StoreError, StoreFull
from .catalog import CURSOR_COLUMNS, Catalog, SessionKey, bulk_load, file_order, repeats
from .events import SUBAGENT, Event
from .harness import Adapter, LogFile
from .reader import Cursor, Increment, Seen, SinkError, parse_lines, read_increment, unreadable
from .summary import HumanRow, accumulate, dedupe, human_rows, merge_stats, new_stats
from .wire import ScanProblem, ScanReportJson
from .zstdframes import DEFAULT_MAX_FRAME_OUTPUT, DEFAULT_MAX_WINDOW, FrameDecoder

ADAPTERS: dict[str, Adapter] = {h.name: h.adapter for h in harnesses.all_harnesses()}

_ROTOR_KEY = "scan.rotor"
# A long scan commits at least this often, so an interruption loses little work.
_COMMIT_EVERY_S = 0.5
_LINK = (
    "a symbolic link to a folder, not followed: dshkit follows no link inside a sessions root "
    "(to read the folder it leads to, scan that folder as a root of its own)"
)
# Set once every known session's human messages are in the human_messages table (stores
# scanned before it existed fill it once, from the cache).
_HUMANS_KEY = "scan.humansComplete"
# Set once the files scanned before a sub-agent's session was told apart were checked: the
# sessions whose head says they are a sub-agent's are read again
# (docs/design/sessions.md#a-sub-agents-prompt-is-not-the-persons).
_SUBAGENTS_KEY = "scan.subagentsChecked"
_HEAD_BYTES = 1 << 20  # a log's first line, as its cache keeps it, is looked for this far
# A file read again from 0, as if never read (its cache is cut back when the read starts).
_REREAD_FILES = (
    "UPDATE log_files SET offset = 0, size = 0, dev = 0, ino = 0, mtime_ns = 0, anchor = x'', "
    "plain_len = 0, state = '{}', stats = '{}', error = NULL, error_identity = NULL "
    "WHERE harness = ? AND session_id = ?"
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
    errors: list[ScanProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    elapsed_ms: int = 0
    changed_sessions: list[SessionKey] = field(default_factory=list)
    keys: list[SessionKey] = field(default_factory=list)  # every session found under the sources
    found: dict[Source, int] = field(default_factory=dict)  # log files discovered per source
    forgotten: list[SessionKey] = field(default_factory=list)  # sessions whose logs are gone
    pending: bool = False  # the frame budget left complete frames for the next round

    def as_json(self) -> ScanReportJson:
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
class _Humans:
    """How one session's rows in human_messages change with this read."""

    replace: bool = False  # drop every row of the session first (its union was rebuilt)
    drop_paths: list[str] = field(default_factory=list)  # files read again from 0
    rows: list[tuple[str, list[HumanRow]]] = field(default_factory=list)  # (path, rows) to add


@dataclass(slots=True)
class _Staged:
    """One session's reads in a batch (their caches written), with the cursors stored before
    them: what committing them file by file needs."""

    key: SessionKey
    logs: list[LogFile]
    cursors: dict[str, Cursor]
    reads: list[tuple[Increment, _Cache]]


@dataclass(slots=True)
class _Batch:
    """Rows staged for the next transaction (their cache appends are already written)."""

    files: list[tuple[Any, ...]] = field(default_factory=list)
    sessions: list[tuple[Any, ...]] = field(default_factory=list)
    humans: list[tuple[SessionKey, _Humans]] = field(default_factory=list)
    staged: list[_Staged] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)


@dataclass(slots=True)
class _Tally:
    """How many files' reads a scan stored, and why those it could not store were not."""

    stored: int = 0
    unstored: list[StoreError] = field(default_factory=list)

    def skip(self, report: ScanReport, path: str, why: StoreError) -> None:
        self.unstored.append(why)
        report.errors.append({"file": path, "error": f"not stored: {why}"})


class Scanner:
    """The write side of the session layer: incremental scans of session roots into the store.

    What was scanned is read back through `catalog` (a `Catalog` on the same store).
    """

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
        self.catalog = Catalog(store)
        self.frame_budget = frame_budget
        self.decoder = FrameDecoder(max_window, max_frame_output)
        private_dir(self.catalog.cache_dir)
        self._lease: Lease | None = None

    # -- scanning ---------------------------------------------------------------------------

    def scan(
        self, sources: Sequence[Source], progress: Progress | None = None, wait: float = 30.0
    ) -> ScanReport:
        """Read what is new under `sources` into the store.

        One scan at a time per store: another process's live scan is waited for up to `wait`
        seconds (then LeaseBusy); a lease left by a dead one is taken over. Sessions whose
        log files are all gone from a scanned root are forgotten (rows and cache).
        """
        with self.store.lease(SCAN_LEASE, wait=wait) as lease:
            self._lease = lease
            try:
                with bulk_load():
                    return self._scan(sources, progress)
            finally:
                self._lease = None

    def forget(self, key: SessionKey, wait: float = 30.0) -> bool:
        """Forget one session for good: its rows and cached text go, and later scans skip its
        logs. False when the store did not know it."""
        with self.store.lease(SCAN_LEASE, wait=wait):
            caches = self._cache_names([key])
            known = self.catalog.get(key) is not None
            self.store.forget_sessions([key], for_good=True)
            self._remove_caches(caches)
        return known

    def _scan(self, sources: Sequence[Source], progress: Progress | None) -> ScanReport:
        started = time.perf_counter()
        progress = progress or Progress()
        report = ScanReport()
        self._complete_humans()
        self._reread_subagents()
        seen, known = self._load_seen()
        forgotten = self._forgotten()
        links: list[str] = []
        groups = _group(self._discover(sources, report.found, forgotten, links))
        report.files = sum(len(logs) for logs in groups.values())
        # Not followed, and not skipped silently either (several layouts may pass one by).
        report.errors.extend({"file": link, "error": _LINK} for link in dict.fromkeys(links))
        self._forget_vanished(sources, groups, report)

        # Stat everything first: the progress total, and which files need opening at all.
        # The path's own stat: a log swapped for a link since discovery is not followed.
        work: dict[SessionKey, list[tuple[LogFile, os.stat_result]]] = {}
        pending_bytes = 0
        for key, logs in groups.items():
            for log in logs:
                try:
                    st = os.lstat(log.path)
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

        budget = self.frame_budget
        batch = _Batch()
        tally = _Tally()
        next_rotor: str | None = None
        last_rotor = self.store.get_meta(_ROTOR_KEY) or ""
        for key in _rotate(sorted(work), last_rotor):
            if budget is not None and budget <= 0:
                report.pending = True
                next_rotor = next_rotor or _key_text(key)
                continue
            where = "WHERE harness = ? AND session_id = ?"
            cursors = self.catalog.cursors(where, key) if key in known else {}
            reads: list[tuple[Increment, _Cache]] = []
            # A session whose files may repeat each other needs its union: keep what is read.
            generations = repeats(key[0]) and len(groups[key]) > 1
            for log, st in work[key]:
                cursor = cursors.get(log.path) or _new_cursor(log)
                # Cache first; the transaction that makes it count comes after (module doc).
                cache = _Cache(self.catalog.cache_path(cursor), cursor.plain_len)
                try:
                    with cache:
                        inc = read_increment(
                            log,
                            cursor,
                            ADAPTERS[log.harness],
                            self.decoder,
                            st,
                            budget,
                            keep=generations,
                            sink=cache,
                        )
                        if inc.cursor != cursor:
                            cache.settle(inc.cursor.plain_len)
                except (SinkError, OSError) as exc:  # the cache's own failure, not the log's
                    cache.abandon()
                    tally.skip(report, log.path, _cache_error(exc, cache))
                    continue
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
                    reads.append((inc, cache))
            if reads:
                self._stage_session(key, groups[key], reads, cursors, batch)
                if time.perf_counter() - batch.started > _COMMIT_EVERY_S:
                    self._commit(batch, tally, report)
        rotor = next_rotor or ""
        self._commit(batch, tally, report, {_ROTOR_KEY: rotor} if rotor != last_rotor else None)
        if tally.unstored and not tally.stored:  # nothing fits: the store is what is unavailable
            raise tally.unstored[0]

        report.keys = sorted(groups)
        self._totals(report, set(groups))
        report.elapsed_ms = round((time.perf_counter() - started) * 1000)
        return report

    def _discover(
        self,
        sources: Sequence[Source],
        found: dict[Source, int],
        forgotten: set[SessionKey],
        links: list[str],
    ) -> Iterable[LogFile]:
        """The log files under `sources`; the links to folders passed by go to `links`."""
        seen: set[str] = set()
        for source in sources:
            found.setdefault(source, 0)
            for log in ADAPTERS[source.harness].discover(str(source.root), links):
                if log.path not in seen and (log.harness, log.session_id) not in forgotten:
                    seen.add(log.path)
                    found[source] += 1
                    yield log

    def _forgotten(self) -> set[SessionKey]:
        rows = self.store.db.execute("SELECT harness, session_id FROM forgotten_sessions")
        return {(h, s) for h, s in rows}

    # -- forgetting what is gone ------------------------------------------------------------

    def _forget_vanished(
        self,
        sources: Sequence[Source],
        groups: dict[SessionKey, list[LogFile]],
        report: ScanReport,
    ) -> None:
        """Forget the sessions of scanned roots none of whose log files exist any more.

        A session that keeps some file keeps what was read of the others (an old generation
        deleted beside its successor is still the session's history). A root that is missing
        as a whole (an unmounted disk) forgets nothing.
        """
        roots = {(s.harness, str(s.root)) for s in sources if os.path.isdir(s.root)}
        discovered = {log.path for logs in groups.values() for log in logs}
        gone: dict[SessionKey, list[str]] = {}
        for path, harness, session_id, root in self.store.db.execute(
            "SELECT path, harness, session_id, root FROM log_files"
        ):
            if (harness, root) in roots and path not in discovered and not os.path.lexists(path):
                gone.setdefault((harness, session_id), []).append(path)
        if not gone:
            return
        report.forgotten = sorted(key for key in gone if key not in groups)
        if not report.forgotten:
            return
        caches = self._cache_names(report.forgotten)
        self.store.forget_sessions(report.forgotten)  # one transaction
        self._remove_caches(caches)

    def _cache_names(self, keys: list[SessionKey]) -> list[str]:
        names: list[str] = []
        for key in keys:
            names += [c.cache_name for c in self.catalog.files(key)]
        return names

    def _remove_caches(self, names: list[str]) -> None:
        """Delete cached plaintext after the commit that stopped it counting."""
        for name in names:
            (self.catalog.cache_dir / name).unlink(missing_ok=True)

    def _complete_humans(self) -> None:
        """Fill human_messages from the cache once, for sessions scanned before it existed."""
        if self.store.get_meta(_HUMANS_KEY):
            return
        batch = _Batch()
        keys = self.store.db.execute(
            "SELECT harness, session_id FROM sessions WHERE human_messages > 0"
        ).fetchall()
        for key in keys:
            rows = human_rows(self.catalog.events(tuple(key)))
            batch.humans.append((tuple(key), _Humans(replace=True, rows=[("", rows)])))
        self._flush(batch, {_HUMANS_KEY: "1"})

    def _reread_subagents(self) -> None:
        """Once per store: the sessions an older dshkit read as a person's whose head says
        they are a sub-agent's lose what was derived from their prompts (their human
        messages, signals and counts, in one transaction) and their files are read again
        from 0 by this scan, as the adapters now read them."""
        if self.store.get_meta(_SUBAGENTS_KEY):
            return
        keys = sorted(
            {
                (cursor.harness, cursor.session_id)
                for cursor in self.catalog.cursors().values()
                if SUBAGENT not in cursor.state and self._subagent_head(cursor)
            }
        )
        with self.store.transaction() as db:
            db.executemany(_REREAD_FILES, keys)
            db.executemany("DELETE FROM human_messages WHERE harness = ? AND session_id = ?", keys)
            db.executemany("DELETE FROM session_signals WHERE harness = ? AND session_id = ?", keys)
            db.executemany(
                "UPDATE sessions SET human_messages = 0, stats = '{}', revision = revision + 1 "
                "WHERE harness = ? AND session_id = ?",
                keys,
            )
            self.store.set_meta(_SUBAGENTS_KEY, "1")

    def _subagent_head(self, cursor: Cursor) -> bool:
        """Whether the file's first line, as its cache keeps it, says the session is a
        sub-agent's (its adapter's state after reading that line alone)."""
        try:
            with open(self.catalog.cache_path(cursor), "rb") as cache:
                head = cache.readline(min(cursor.plain_len, _HEAD_BYTES))
        except OSError:
            return False
        state: dict[str, Any] = {}
        try:
            ADAPTERS[cursor.harness].normalize(parse_lines(head, strict=False)[0], state)
        except (ValueError, TypeError, KeyError, AttributeError):  # read as it was: not ours
            return False
        return bool(state.get(SUBAGENT))

    # -- staging and committing -------------------------------------------------------------

    def _stage_session(
        self,
        key: SessionKey,
        logs: list[LogFile],
        reads: list[tuple[Increment, _Cache]],
        files: dict[str, Cursor],
        batch: _Batch,
    ) -> None:
        """Stage the rows of one session's read files (their caches are written) for commit.

        `files` holds every known cursor of the session; it is updated in place.
        """
        batch.staged.append(_Staged(key, logs, dict(files), reads))
        for inc, _ in reads:
            files[inc.cursor.path] = inc.cursor
            batch.files.append(_cursor_row(inc.cursor))
        ordered = sorted(files.values(), key=file_order)
        summary, humans = self._session_summary(key, ordered, [inc for inc, _ in reads])
        batch.sessions.append(_session_row(key, ordered, summary, logs[0].project))
        batch.humans.append((key, humans))
        for inc, _ in reads:  # not held until the commit (committing file by file reads the cache)
            inc.kept = None

    def _commit(
        self,
        batch: _Batch,
        tally: _Tally,
        report: ScanReport,
        meta: dict[str, str] | None = None,
    ) -> None:
        """Commit the staged rows in one transaction; when they do not fit, commit them file by
        file, so that only a file that does not fit is skipped (told in `report`, its cache cut
        back) (docs/design/sessions.md#a-file-that-cannot-be-stored-costs-only-itself)."""
        staged, batch.staged = batch.staged, []
        try:
            self._flush(batch, meta)
        except StoreFull:
            batch.files.clear()
            batch.sessions.clear()
            batch.humans.clear()
            for session in staged:
                self._commit_files(session, tally, report)
            if meta:
                try:
                    self._flush(batch, meta)
                except StoreFull as exc:
                    report.warnings.append(f"where the next round starts was not saved: {exc}")
        else:
            for session in staged:
                tally.stored += len(session.reads)
                if any(inc.delta["events"] or inc.reset for inc, _ in session.reads):
                    report.changed_sessions.append(session.key)
        batch.started = time.perf_counter()

    def _commit_files(self, staged: _Staged, tally: _Tally, report: ScanReport) -> None:
        """Commit one session's reads a file at a time, each with the session's summary as it
        stands then; a file that does not fit is skipped and its cache cut back."""
        files = dict(staged.cursors)
        kept: dict[str, list[Event]] = {}  # the files read whole, and stored
        changed = False
        for inc, cache in staged.reads:
            path = inc.cursor.path
            if inc.from_start and inc.kept is not None:
                kept[path] = inc.kept
            ordered = sorted({**files, path: inc.cursor}.values(), key=file_order)
            summary, humans = self._session_summary(staged.key, ordered, [inc], kept)
            one = _Batch(
                files=[_cursor_row(inc.cursor)],
                sessions=[_session_row(staged.key, ordered, summary, staged.logs[0].project)],
                humans=[(staged.key, humans)],
            )
            try:
                self._flush(one)
            except StoreFull as exc:
                kept.pop(path, None)
                cache.abandon()
                tally.skip(report, path, exc)
                continue
            files[path] = inc.cursor
            tally.stored += 1
            changed = changed or bool(inc.delta["events"] or inc.reset)
        if changed:
            report.changed_sessions.append(staged.key)

    def _flush(self, batch: _Batch, meta: dict[str, str] | None = None) -> None:
        """Commit the staged rows in one transaction (their caches are already written)."""
        staged = (batch.files, batch.sessions, batch.humans)
        if not (any(staged) or meta):
            return
        with self.store.transaction() as db:
            db.executemany(
                f"INSERT OR REPLACE INTO log_files ({CURSOR_COLUMNS}) "
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
            for key, humans in batch.humans:
                if humans.replace:
                    db.execute(
                        "DELETE FROM human_messages WHERE harness = ? AND session_id = ?", key
                    )
                db.executemany(
                    "DELETE FROM human_messages WHERE harness = ? AND session_id = ? AND path = ?",
                    [(*key, path) for path in humans.drop_paths],
                )
                db.executemany(
                    "INSERT INTO human_messages (harness, session_id, path, seq, time, text) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    ((*key, path, *row) for path, rows in humans.rows for row in rows),
                )
            for name, value in (meta or {}).items():
                self.store.set_meta(name, value)
            if self._lease is not None:
                self._lease.renew()
        batch.files.clear()
        batch.sessions.clear()
        batch.humans.clear()

    def _session_summary(
        self,
        key: SessionKey,
        files: list[Cursor],
        increments: list[Increment],
        kept: dict[str, list[Event]] | None = None,
    ) -> tuple[dict[str, Any], _Humans]:
        """The session's summary after these reads, from deltas wherever that is exact, and how
        its human messages change.

        Files of most harnesses are separate streams (main and subagent transcripts): their
        summaries add. Generations (DSH) may repeat each other, so the union is rebuilt from
        the cache (in memory when every file was just read whole: the events `kept` of them,
        by default those of `increments`), unless every new event's seq is beyond all the
        others': then no new event can have a twin, and the deltas add to the previous summary.
        """
        if not repeats(key[0]) or (len(files) == 1 and files[0].stats["monotonic"]):
            return _merged(c.stats for c in files), _added(increments)
        previous = self.store.db.execute(
            "SELECT stats FROM sessions WHERE harness = ? AND session_id = ?", key
        ).fetchone()
        if previous is not None and all(_beyond_the_rest(inc, files) for inc in increments):
            summary = {**new_stats(), **orjson.loads(previous[0])}
            return _merged([summary, *(inc.delta for inc in increments)]), _added(increments)
        if kept is None:
            kept = {
                i.cursor.path: i.kept for i in increments if i.from_start and i.kept is not None
            }
        if all(c.path in kept for c in files):
            # Every file was just read whole (a first scan): the union is in memory.
            events = dedupe([e for c in files for e in kept[c.path]])
        else:
            events = self.catalog.union(files)
        rows: list[HumanRow] = []
        summary = accumulate(new_stats(), events, rows)
        return summary, _Humans(replace=True, rows=[("", rows)])

    def _totals(self, report: ScanReport, keys: set[SessionKey]) -> None:
        rows = self.store.db.execute(
            "SELECT harness, session_id, events, human_messages FROM sessions WHERE events > 0"
        )
        for harness, session_id, events, human in rows:
            if (harness, session_id) in keys:
                report.sessions += 1
                report.events += events
                report.human_messages += human

    def _load_seen(self) -> tuple[dict[str, Seen], set[SessionKey]]:
        """What the store last saw of each file, and which sessions it has files of."""
        rows = self.store.db.execute(
            "SELECT path, harness, session_id, offset, size, mtime_ns, dev, ino, error, "
            "error_identity FROM log_files"
        ).fetchall()
        return {row[0]: Seen(*row[3:]) for row in rows}, {(row[1], row[2]) for row in rows}


class _Cache:
    """One log file's plaintext cache, appended to while the file is read (a `PlainSink`);
    `committed` bytes of it are counted by the cursor stored.

    Opened at the first write, or when the read settles: either way cut back first to where
    the read's plaintext starts, so that bytes left by an interrupted scan never count. A read
    that cannot be stored is abandoned: the cache is cut back to its committed length.
    """

    def __init__(self, path: Path, committed: int) -> None:
        self.path = path
        self.committed = committed
        self.intact = committed  # bytes at the start this read has left as they were
        self.file: BinaryIO | None = None
        self.size = 0

    def start(self, at: int) -> None:
        if self.file is None:
            self.file = open(self.path, "ab", opener=private_opener)  # noqa: SIM115 (__exit__)
            self.size = self.file.tell()
        if self.size != at:  # left over by an interrupted scan, or the file is read again
            self.file.truncate(at)
            self.size = at
        self.intact = min(self.intact, at)

    def write(self, chunk: bytes | memoryview) -> None:
        assert self.file is not None, "start() comes first"
        self.size += self.file.write(chunk)

    def settle(self, length: int) -> None:
        """The read is over: the cache holds exactly the `length` bytes its cursor counts."""
        self.start(length)

    def abandon(self) -> None:
        """This read is not stored: cut the cache back to its committed length (or below,
        where the read started the file over: the committed bytes are gone, and the read side
        drops a cursor whose cache is short, so the next scan reads the file from 0). The
        next scan cuts it back anyway before it grows, should this fail too."""
        if self.file is not None:
            with contextlib.suppress(OSError):  # what it still buffered is being dropped
                self.file.close()
            self.file = None
        keep = min(self.committed, self.intact)
        with contextlib.suppress(OSError):
            if not keep:
                self.path.unlink(missing_ok=True)
            elif self.path.stat().st_size > keep:
                os.truncate(self.path, keep)

    def __enter__(self) -> _Cache:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.file is not None:
            file, self.file = self.file, None
            file.close()


def _cache_error(exc: SinkError | OSError, cache: _Cache) -> StoreError:
    """Why a file's read was not stored, its cache being what failed."""
    error = exc.error if isinstance(exc, SinkError) else exc
    return StoreError(
        f"cannot write the plaintext cache {cache.path.parent} ({error.strerror or error}); "
        "the disk may be full. What was stored before is kept; the next scan tries again."
    )


def _added(increments: list[Increment]) -> _Humans:
    """Human messages appended by these reads; a file read again from 0 replaces its own."""
    humans = _Humans()
    for inc in increments:
        if inc.reset:
            humans.drop_paths.append(inc.cursor.path)
        humans.rows.append((inc.cursor.path, inc.humans))
    return humans


def _session_row(
    key: SessionKey, files: list[Cursor], summary: dict[str, Any], project: str
) -> tuple[Any, ...]:
    cwd = next((c.state["cwd"] for c in files if c.state.get("cwd")), "")
    return (
        *key,
        project or cwd,
        cwd,
        summary["title"] or summary["firstPrompt"],
        len(files),
        summary["events"],
        summary["humanMessages"],
        summary["toolCalls"],
        summary["firstTime"],
        summary["lastTime"],
        orjson.dumps(summary).decode(),
    )


def default_sources(harness: str | None = None) -> list[Source]:
    """Each harness's default sessions root on this machine (or just `harness`'s)."""
    return [Source(h, root) for h, root in default_roots().items() if harness in (None, h)]


def single_harness(sources: Sequence[Source]) -> str | None:
    """The harness the sources are all read by, or None when they mix harnesses (or none)."""
    names = {source.harness for source in sources}
    return names.pop() if len(names) == 1 else None


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


def _key_text(key: SessionKey) -> str:
    return f"{key[0]}\0{key[1]}"


def _rotate(keys: list[SessionKey], rotor: str | None) -> list[SessionKey]:
    """Sessions in order, starting where the last budget-limited round had to stop
    (docs/design/sessions.md#a-frame-budget-resumes-where-it-stopped)."""
    if not rotor:
        return keys
    texts = [_key_text(k) for k in keys]
    start = next((i for i, text in enumerate(texts) if text >= rotor), 0)
    return keys[start:] + keys[:start]
