"""The one embedded store: a SQLite database (WAL) in the state directory, schema migrated forward.

Every capability keeps its durable state here. Cross-process safety comes from SQLite
transactions; a database written by a newer dshkit is refused before anything is read. What
the store holds is people's words: the state directory is 0700 and the database 0600.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import Busy, Unavailable
from .paths import PRIVATE_FILE, private_dir
from .procs import alive

DB_NAME = "dshkit.db"

# Numbered, forward-only. Append a new entry to grow the schema; never edit a shipped one.
MIGRATIONS: list[str] = [
    # 1: the session layer — one cursor row per log file, one summary row per session.
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE log_files (
        path        TEXT PRIMARY KEY,
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        root        TEXT NOT NULL,
        generation  INTEGER NOT NULL DEFAULT 0,
        offset      INTEGER NOT NULL DEFAULT 0,
        size        INTEGER NOT NULL DEFAULT 0,
        dev         INTEGER NOT NULL DEFAULT 0,
        ino         INTEGER NOT NULL DEFAULT 0,
        mtime_ns    INTEGER NOT NULL DEFAULT 0,
        anchor      BLOB NOT NULL DEFAULT x'',
        cache_name  TEXT NOT NULL,
        plain_len   INTEGER NOT NULL DEFAULT 0,
        state       TEXT NOT NULL DEFAULT '{}',
        stats       TEXT NOT NULL DEFAULT '{}',
        error       TEXT,
        error_identity TEXT
    );
    CREATE INDEX log_files_session ON log_files (harness, session_id);
    CREATE TABLE sessions (
        harness         TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        project         TEXT NOT NULL DEFAULT '',
        cwd             TEXT NOT NULL DEFAULT '',
        title           TEXT NOT NULL DEFAULT '',
        files           INTEGER NOT NULL DEFAULT 0,
        events          INTEGER NOT NULL DEFAULT 0,
        human_messages  INTEGER NOT NULL DEFAULT 0,
        tool_calls      INTEGER NOT NULL DEFAULT 0,
        first_time      INTEGER,
        last_time       INTEGER,
        stats           TEXT NOT NULL DEFAULT '{}',
        revision        INTEGER NOT NULL DEFAULT 1,  -- bumped whenever the session changes
        PRIMARY KEY (harness, session_id)
    );
    """,
    # 2: prompt-adapt's friction signals, per session, with the knobs and revision they are of.
    """
    CREATE TABLE session_signals (
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        config      TEXT NOT NULL,
        revision    INTEGER NOT NULL,
        result      TEXT NOT NULL,
        PRIMARY KEY (harness, session_id)
    );
    """,
    # 3: every LLM call, whatever its outcome (prompt and reply kept; never the API key).
    """
    CREATE TABLE llm_calls (
        id            INTEGER PRIMARY KEY,
        at            INTEGER NOT NULL,
        purpose       TEXT NOT NULL,
        base_url      TEXT NOT NULL,
        model         TEXT,
        outcome       TEXT NOT NULL,
        error         TEXT,
        finish_reason TEXT,
        elapsed_ms    INTEGER NOT NULL,
        usage         TEXT,
        prompt        TEXT NOT NULL,
        response      TEXT NOT NULL
    );
    """,
    # 4: the user profile: each generated version, its diff, and how its answer was read.
    """
    CREATE TABLE profile_versions (
        version           INTEGER PRIMARY KEY,
        at                INTEGER NOT NULL,
        entries           TEXT NOT NULL,
        diff              TEXT NOT NULL,
        spurious_rate     REAL NOT NULL,
        partial           INTEGER NOT NULL,
        rescue            TEXT,
        material_messages INTEGER NOT NULL,
        reason            TEXT NOT NULL,
        notes             TEXT NOT NULL DEFAULT ''
    );
    """,
    # 5: sessions the profile was injected into (once per session; the first claim wins).
    """
    CREATE TABLE hook_sessions (
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        injected_at INTEGER NOT NULL,
        PRIMARY KEY (harness, session_id)
    );
    """,
    # 6: the sessions read side — what people asked to forget, human messages kept as they are
    # scanned (the profile's material without re-reading every cache), and the cursors of
    # live-transcript tails (read apart from the scan, without its lease).
    """
    CREATE TABLE forgotten_sessions (
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        at          INTEGER NOT NULL,
        PRIMARY KEY (harness, session_id)
    );
    CREATE TABLE human_messages (
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        path        TEXT NOT NULL,
        seq         INTEGER,
        time        INTEGER,
        text        TEXT NOT NULL
    );
    CREATE INDEX human_messages_session ON human_messages (harness, session_id);
    CREATE INDEX human_messages_time ON human_messages (time);
    CREATE TABLE transcript_tails (
        path        TEXT PRIMARY KEY,
        cursor      TEXT NOT NULL
    );
    """,
    # 7: the tool calls a model answered with (OpenAI's assistant `tool_calls`, as JSON).
    """
    ALTER TABLE llm_calls ADD COLUMN tool_calls TEXT;
    """,
    # 8: the prompt optimizer — every run with what it stood on and how it was judged, and the
    # settings a session chose apart from the config's defaults.
    """
    CREATE TABLE optimizer_runs (
        id          INTEGER PRIMARY KEY,
        at          INTEGER NOT NULL,
        harness     TEXT,
        session_id  TEXT,
        cwd         TEXT,
        tier        TEXT NOT NULL,
        form        TEXT NOT NULL,
        raw         TEXT NOT NULL,
        output      TEXT NOT NULL,
        fallback    TEXT,
        model       TEXT,
        record      TEXT NOT NULL,
        outcome     TEXT,
        outcome_at  INTEGER
    );
    CREATE INDEX optimizer_runs_at ON optimizer_runs (at);
    CREATE TABLE optimizer_sessions (
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        settings    TEXT NOT NULL,
        PRIMARY KEY (harness, session_id)
    );
    """,
    # 9: capability facts — channel probes cached per mode key (`started` while one runs),
    # and per session the modes its log reported and what the hooks last delivered.
    """
    CREATE TABLE capability_probes (
        key         TEXT PRIMARY KEY,
        at          INTEGER,
        channels    TEXT,
        started     INTEGER
    );
    CREATE TABLE capability_sessions (
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        modes       TEXT NOT NULL DEFAULT '{}',
        delivered   TEXT,
        PRIMARY KEY (harness, session_id)
    );
    """,
    # 10: the delivery gate — every verdict with its evidence, and the file versions whose
    # failure was fed back to the agent (once per path and content hash).
    """
    CREATE TABLE gate_verdicts (
        id          INTEGER PRIMARY KEY,
        at          INTEGER NOT NULL,
        path        TEXT NOT NULL,
        sha256      TEXT NOT NULL,
        verdict     TEXT NOT NULL,
        recovered   INTEGER NOT NULL,
        elapsed_ms  INTEGER NOT NULL,
        screenshot  TEXT,
        evidence    TEXT NOT NULL
    );
    CREATE INDEX gate_verdicts_at ON gate_verdicts (at);
    CREATE TABLE gate_rework (
        path        TEXT NOT NULL,
        sha256      TEXT NOT NULL,
        at          INTEGER NOT NULL,
        verdict_id  INTEGER,
        PRIMARY KEY (path, sha256)
    );
    """,
    # 11: a tail cursor per reader of a transcript (capability facts, graft's watermark, …):
    # one reader's read must not consume another's events. The old cursors were only caches.
    """
    DROP TABLE transcript_tails;
    CREATE TABLE transcript_tails (
        consumer    TEXT NOT NULL,
        path        TEXT NOT NULL,
        cursor      TEXT NOT NULL,
        PRIMARY KEY (consumer, path)
    );
    """,
    # 12: graft's handoff lifecycle — one row per handoff with its durable state, the ledger of
    # sources being transferred or retired (what the source's hooks enforce), handoffs waiting
    # for the next SessionStart in their directory, notices owed to a session (shown once), and
    # the append-only audit of every decision and step.
    """
    CREATE TABLE graft_txns (
        id              INTEGER PRIMARY KEY,
        harness         TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        cwd             TEXT NOT NULL,
        target_harness  TEXT NOT NULL,
        target_id       TEXT,
        state           TEXT NOT NULL,
        plan            TEXT NOT NULL,
        boundary_seq    INTEGER NOT NULL,
        generation      INTEGER NOT NULL,
        attempts        INTEGER NOT NULL DEFAULT 0,
        child           TEXT,
        prior           TEXT,
        last_error      TEXT,
        created_at      INTEGER NOT NULL,
        updated_at      INTEGER NOT NULL
    );
    CREATE INDEX graft_txns_source ON graft_txns (harness, session_id);
    CREATE INDEX graft_txns_state ON graft_txns (state);
    CREATE TABLE graft_ledger (
        harness         TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        txn_id          INTEGER NOT NULL REFERENCES graft_txns (id),
        kind            TEXT NOT NULL,
        target_harness  TEXT NOT NULL,
        target_id       TEXT,
        at              INTEGER NOT NULL,
        PRIMARY KEY (harness, session_id)
    );
    CREATE TABLE graft_pending (
        txn_id          INTEGER PRIMARY KEY REFERENCES graft_txns (id),
        harness         TEXT NOT NULL,
        cwd             TEXT NOT NULL,
        at              INTEGER NOT NULL
    );
    CREATE INDEX graft_pending_cwd ON graft_pending (harness, cwd);
    CREATE TABLE graft_notices (
        harness         TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        txn_id          INTEGER NOT NULL,
        text            TEXT NOT NULL,
        at              INTEGER NOT NULL,
        shown_at        INTEGER,
        PRIMARY KEY (harness, session_id, txn_id)
    );
    CREATE TABLE graft_audit (
        id              INTEGER PRIMARY KEY,
        at              INTEGER NOT NULL,
        kind            TEXT NOT NULL,
        harness         TEXT,
        session_id      TEXT,
        txn_id          INTEGER,
        detail          TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX graft_audit_session ON graft_audit (session_id, id);
    """,
    # 13: graft's watch over each live session: the digest of its transcript folded so far
    # (what the watermark decides on), the decisions' state, and when a forced handoff was
    # last started for it (so a burst of tool calls above the cut starts one, not many).
    """
    CREATE TABLE graft_watch (
        harness         TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        digest          TEXT NOT NULL,
        state           TEXT NOT NULL,
        forced_at       INTEGER,
        updated_at      INTEGER NOT NULL,
        PRIMARY KEY (harness, session_id)
    );
    """,
    # 14: the sessions each LLM call was made for: its prompt holds their words (a profile's
    # holds many sessions' messages), so forgetting one of them takes the whole call.
    """
    CREATE TABLE llm_call_sessions (
        call_id     INTEGER NOT NULL REFERENCES llm_calls (id) ON DELETE CASCADE,
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        PRIMARY KEY (call_id, harness, session_id)
    );
    CREATE INDEX llm_call_sessions_session ON llm_call_sessions (harness, session_id);
    """,
    # 15: one ledger of what reached a session once (recorded after the answer was written):
    # the profile injection (was hook_sessions), the capability facts' last delivery (was
    # capability_sessions.delivered, whose time was not kept: 0) and graft's notices (was
    # graft_notices.shown_at).
    """
    CREATE TABLE deliveries (
        harness         TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        kind            TEXT NOT NULL,
        what            TEXT NOT NULL,
        delivered_at    INTEGER NOT NULL,
        PRIMARY KEY (harness, session_id, kind, what)
    );
    INSERT INTO deliveries (harness, session_id, kind, what, delivered_at)
        SELECT harness, session_id, 'profile', '', injected_at FROM hook_sessions;
    INSERT INTO deliveries (harness, session_id, kind, what, delivered_at)
        SELECT harness, session_id, 'capability', delivered, 0 FROM capability_sessions
        WHERE delivered IS NOT NULL;
    INSERT INTO deliveries (harness, session_id, kind, what, delivered_at)
        SELECT harness, session_id, 'graft-notice', CAST(txn_id AS TEXT), shown_at
        FROM graft_notices WHERE shown_at IS NOT NULL;
    DROP TABLE hook_sessions;
    ALTER TABLE capability_sessions DROP COLUMN delivered;
    ALTER TABLE graft_notices DROP COLUMN shown_at;
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)


class SessionRows:
    """Which rows of `table` are a session's: those matching `where`, a condition on the named
    parameters :harness and :session_id (by default the table's own two columns of them)."""

    # A plain class: the store is on the hooks' hot path, which does not import dataclasses.
    __slots__ = ("table", "where")

    def __init__(
        self, table: str, where: str = "harness = :harness AND session_id = :session_id"
    ) -> None:
        self.table = table
        self.where = where

    def __repr__(self) -> str:
        return f"SessionRows({self.table!r}, {self.where!r})"


_BY_SOURCE = (
    "txn_id IN (SELECT id FROM graft_txns WHERE harness = :harness AND session_id = :session_id)"
)
_OWN_OR_SOURCE = f"(harness = :harness AND session_id = :session_id) OR {_BY_SOURCE}"

# Every table that holds rows of a session, and how they are found: what forgetting a session
# deletes (`Store.forget_sessions`), in this order (rows that refer to others go first: the
# foreign keys, and predicates that read the tables deleted after them). A new session-keyed
# table is declared here with its migration; tests/test_forget.py derives them from the schema
# and fails on one missing.
SESSION_ROWS: tuple[SessionRows, ...] = (
    SessionRows("log_files"),
    SessionRows("sessions"),
    SessionRows("session_signals"),
    SessionRows("human_messages"),
    SessionRows("deliveries"),
    # A live transcript's tail cursor names its session inside the cursor.
    SessionRows(
        "transcript_tails",
        "json_extract(cursor, '$.harness') = :harness "
        "AND json_extract(cursor, '$.session_id') = :session_id",
    ),
    SessionRows("optimizer_runs"),
    SessionRows("optimizer_sessions"),
    SessionRows("capability_sessions"),
    # Whole calls, prompt and reply, of every session they were made for; their links to the
    # other sessions go with them (ON DELETE CASCADE).
    SessionRows(
        "llm_calls",
        "id IN (SELECT call_id FROM llm_call_sessions "
        "WHERE harness = :harness AND session_id = :session_id)",
    ),
    SessionRows("llm_call_sessions"),
    # graft: a session's handoffs as source go (their plan holds its card and first message)
    # with everything of theirs, then whatever else is about the session. A handoff that names
    # the session only as its target stays: it holds the source's words, and deleting it would
    # un-retire the source.
    SessionRows("graft_pending", _BY_SOURCE),
    SessionRows("graft_ledger", _OWN_OR_SOURCE),
    SessionRows("graft_notices", _OWN_OR_SOURCE),
    SessionRows("graft_audit", _OWN_OR_SOURCE),
    SessionRows("graft_watch"),
    SessionRows("graft_txns"),
)

# Session-keyed tables that forgetting keeps, and why.
SESSION_ROWS_KEPT: dict[str, str] = {
    "forgotten_sessions": "the ids people asked to forget: what keeps later scans from reading "
    "their logs again (no words)",
}


# Named leases (see `Store.lease`): one process at a time per store for each.
SCAN_LEASE = "scan"
PROFILE_LEASE = "profile"

# Kinds of delivery (see `Store.delivered`); migration 15 carries the older records over.
PROFILE_DELIVERY = "profile"  # the effective profile text, once per session
CAPABILITY_DELIVERY = "capability"  # the capability facts, again when they change
GRAFT_NOTICE_DELIVERY = "graft-notice"  # a handoff's notice owed to a session, by txn id


class StoreError(Unavailable):
    """The state database cannot be used as it is (newer schema, unreadable file)."""


class StoreBusy(StoreError, Busy):
    """Another process holds the database locked for longer than this caller may wait."""


class LeaseBusy(Busy):
    """Another live process holds the named lease."""

    def __init__(self, name: str, pid: int, path: Path) -> None:
        super().__init__(
            f"another dshkit process ({pid}) is running {name} on {path}; try again when it is done"
        )
        self.name = name
        self.pid = pid


class Store:
    """A connection to `<state_dir>/dshkit.db`, migrated to the current schema on open.

    `busy_timeout` bounds how long any statement waits for another process's lock: 30 s
    for commands, a short one on the hook path, where the agent is waiting.
    """

    def __init__(self, state_dir: Path, *, busy_timeout: float = 30.0) -> None:
        self.state_dir = Path(state_dir)
        # Tightened directories are told to whoever opened the store (see `tightened`).
        self.tightened = private_dir(self.state_dir)
        self.path = self.state_dir / DB_NAME
        if not self.path.exists():
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE))
        try:
            self.db = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open state database {self.path}: {exc}") from exc
        self.db.row_factory = sqlite3.Row
        # SQLite answers "busy" at once, without waiting, where waiting could deadlock (two
        # processes creating a fresh store): such an open is tried again within the timeout.
        deadline = time.monotonic() + busy_timeout
        while True:
            try:
                self._migrate()
                return
            except StoreBusy:
                if time.monotonic() >= deadline:
                    self.db.close()
                    raise
                time.sleep(0.05)
            except BaseException:
                self.db.close()
                raise

    def _migrate(self) -> None:
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            # Deleted rows are overwritten, not left in free pages: forgetting means it.
            self.db.execute("PRAGMA secure_delete=ON")
            version = self._schema_version()
            while version < SCHEMA_VERSION:
                # One transaction per step, the version read inside it: a crash leaves a whole
                # version, and two processes migrating a fresh store at once do each step once.
                with self.transaction():
                    version = self._schema_version()
                    if version >= SCHEMA_VERSION:
                        break
                    for statement in _statements(MIGRATIONS[version]):
                        self.db.execute(statement)
                    version += 1
                    self.db.execute(f"PRAGMA user_version={version}")
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise StoreBusy(
                    f"{self.path} is locked by another process; try again in a moment"
                ) from exc
            raise StoreError(f"{self.path} is not a usable SQLite database: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable SQLite database: {exc}") from exc

    def _schema_version(self) -> int:
        version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, written by a newer dshkit; "
                f"this dshkit understands up to version {SCHEMA_VERSION}. "
                "Upgrade dshkit, or point --state-dir elsewhere."
            )
        return version

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, rolled back on any exception."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # -- forgetting ------------------------------------------------------------------------

    def forget_sessions(self, keys: Iterable[tuple[str, str]], *, for_good: bool = False) -> None:
        """Delete every row of the sessions `keys` (harness, session id), in each table of
        SESSION_ROWS, in one transaction; `for_good` also records them as forgotten, so that
        later scans skip their logs.

        secure_delete zeroes what the rows took in the database file; the WAL, which still
        holds the pages as they were, is then checkpointed and truncated (waiting, within the
        busy timeout, for readers still using it)."""
        params = [{"harness": harness, "session_id": session_id} for harness, session_id in keys]
        if not params:
            return
        with self.transaction() as db:
            for rows in SESSION_ROWS:
                db.executemany(f"DELETE FROM {rows.table} WHERE {rows.where}", params)
            if for_good:
                at = int(time.time() * 1000)
                db.executemany(
                    "INSERT OR REPLACE INTO forgotten_sessions (harness, session_id, at) "
                    "VALUES (:harness, :session_id, :at)",
                    [{**p, "at": at} for p in params],
                )
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    # -- deliveries: what reached a session, recorded once the answer was written -----------

    def delivered(self, key: tuple[str, str], kind: str, what: str | None = None) -> bool:
        """Whether `what` of `kind` (any, when None) reached the session `key` (harness,
        session id)."""
        where, args = ("", ()) if what is None else (" AND what = ?", (what,))
        row = self.db.execute(
            "SELECT 1 FROM deliveries WHERE harness = ? AND session_id = ? AND kind = ?" + where,
            (*key, kind, *args),
        ).fetchone()
        return row is not None

    def mark_delivered(
        self, key: tuple[str, str], kind: str, what: str = "", *, superseding: bool = False
    ) -> None:
        """Record that `what` of `kind` reached the session `key`: call it only once the
        answer carrying it was written to the harness (a hook's commit), so that a delivery
        that never happened is made at the next event. `superseding` replaces the session's
        earlier deliveries of `kind`: `delivered` then knows the latest only (what is
        delivered again when it changes, even back to an earlier value)."""
        with self._atomic() as db:
            if superseding:
                db.execute(
                    "DELETE FROM deliveries WHERE harness = ? AND session_id = ? AND kind = ? "
                    "AND what != ?",
                    (*key, kind, what),
                )
            db.execute(
                "INSERT INTO deliveries (harness, session_id, kind, what, delivered_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (harness, session_id, kind, what) "
                "DO UPDATE SET delivered_at = excluded.delivered_at",
                (*key, kind, what, int(time.time() * 1000)),
            )

    @contextmanager
    def _atomic(self) -> Iterator[sqlite3.Connection]:
        """The caller's open transaction, or one of its own."""
        if self.db.in_transaction:
            yield self.db
        else:
            with self.transaction() as db:
                yield db

    # -- leases: one process at a time for a named piece of work ------------------------------

    @contextmanager
    def lease(self, name: str, *, wait: float = 30.0, ttl: float = 120.0) -> Iterator[Lease]:
        """Hold the lease `name` for the block: one live process at a time per store.

        A live holder is waited for up to `wait` seconds (then LeaseBusy); a lease left by a
        dead process, or not renewed within `ttl` seconds, is taken over.
        """
        held = Lease(self, name, ttl)
        deadline = time.monotonic() + wait
        while True:
            with self.transaction():
                holder = self.lease_holder(name)
                if holder is None:
                    held.renew()
                    break
            if time.monotonic() >= deadline:
                raise LeaseBusy(name, holder, self.path)
            time.sleep(0.1)
        try:
            yield held
        finally:
            with self.transaction():
                if self.get_meta(held.key, "") == held.value:
                    self.set_meta(held.key, "")

    def lease_holder(self, name: str) -> int | None:
        """The pid of the live process holding lease `name`, or None."""
        pid, _, expiry = (self.get_meta(f"lease.{name}") or "").partition(":")
        if not pid.isdigit() or not expiry.isdigit() or int(expiry) < time.time():
            return None
        return int(pid) if alive(int(pid)) else None  # a zombie holds nothing

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Lease:
    """A held lease; long work renews it (inside its own transactions) to keep it."""

    def __init__(self, store: Store, name: str, ttl: float) -> None:
        self.store = store
        self.key = f"lease.{name}"
        self.ttl = ttl
        self.value = ""

    def renew(self) -> None:
        """Extend the lease; call inside a transaction, or alone (autocommit)."""
        self.value = f"{os.getpid()}:{time.time() + self.ttl:.0f}"
        self.store.set_meta(self.key, self.value)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our open transaction; split instead (no ';' in our DDL strings).
    return [part.strip() for part in script.split(";") if part.strip()]
