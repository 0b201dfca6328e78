"""The one embedded store: a SQLite database (WAL) in the state directory, schema migrated forward.

Every capability keeps its durable state here. Cross-process safety comes from SQLite
transactions; a database written by a newer dshkit is refused before anything is read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
]

SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(Exception):
    """The state database cannot be used as it is (newer schema, unreadable file)."""


class Store:
    """A connection to `<state_dir>/dshkit.db`, migrated to the current schema on open."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.state_dir / DB_NAME
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open state database {self.path}: {exc}") from exc
        self.db.row_factory = sqlite3.Row
        try:
            self._migrate()
        except BaseException:
            self.db.close()
            raise

    def _migrate(self) -> None:
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable SQLite database: {exc}") from exc
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, written by a newer dshkit; "
                f"this dshkit understands up to version {SCHEMA_VERSION}. "
                "Upgrade dshkit, or point --state-dir elsewhere."
            )
        for number in range(version, SCHEMA_VERSION):
            # One transaction per step: a crash leaves the database at a whole version.
            with self.transaction():
                for statement in _statements(MIGRATIONS[number]):
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version={number + 1}")

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

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our open transaction; split instead (no ';' in our DDL strings).
    return [part.strip() for part in script.split(";") if part.strip()]
