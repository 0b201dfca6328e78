"""The one embedded store: a SQLite database (WAL) in the state directory, schema migrated forward.

Every capability keeps its durable state here. Cross-process safety comes from SQLite
transactions; a database written by a newer dshkit is refused before anything is read. What
the store holds is people's words: the state directory is 0700 and the database 0600.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from . import storeview
from .errors import Busy, DshkitError, Invalid, Unavailable
from .paths import PRIVATE_FILE, private_dir
from .procs import alive

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Self

DB_NAME = storeview.DB_NAME
# The hooks' answer hints (`hooks.hint.HINT_DIR`), which a forget removes with the rows.
HINTS_DIR = "hints"
# The watermark's caches on the hot path, keyed by sessions (checksums of their transcripts'
# paths and ids, with their turn numbers): its room hints (`graft.marker.ROOM_DIR`, a folder)
# and what its fold said (`graft.fold.SAID_FILE`). A forget removes them with the hints.
SESSION_CACHES = ("graft-room", "graft-said")

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
    # 16: the optimizer's settings chosen for a project (a working directory, spelled by
    # `sessions.dir_key`), which every session working there starts from; and per session
    # when its endpoint refused the read-only tools (so they are not offered again).
    # optimizer_projects is keyed by directory, not by session: forgetting a session keeps
    # it (it holds no one's words, only choices like a tier).
    """
    CREATE TABLE optimizer_projects (
        dir         TEXT PRIMARY KEY,
        settings    TEXT NOT NULL
    );
    ALTER TABLE optimizer_sessions ADD COLUMN tools_refused_at INTEGER;
    """,
    # 17: a forced handoff that failed: how many times in a row, why the last one failed and
    # when, and whether the session's model was told (the retry waits longer each time).
    """
    ALTER TABLE graft_watch ADD COLUMN force_failures INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE graft_watch ADD COLUMN force_error TEXT;
    ALTER TABLE graft_watch ADD COLUMN force_error_at INTEGER;
    ALTER TABLE graft_watch ADD COLUMN force_told INTEGER NOT NULL DEFAULT 1;
    """,
    # 18: the delivery gate per session: its own rework switch (NULL: the config's), the open
    # turn (when it began), the deliverables it wrote (judged in the background, a failure
    # delivered at Stop or with the next prompt); and the background runs, one per file
    # content (a run whose `started` is old has died).
    """
    CREATE TABLE gate_sessions (
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        rework      INTEGER,
        turn_at     INTEGER,
        turn_open   INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (harness, session_id)
    );
    CREATE TABLE gate_writes (
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        path        TEXT NOT NULL,
        at          INTEGER NOT NULL,
        PRIMARY KEY (harness, session_id, path)
    );
    CREATE TABLE gate_runs (
        path        TEXT NOT NULL,
        sha256      TEXT NOT NULL,
        started     INTEGER NOT NULL,
        PRIMARY KEY (path, sha256)
    );
    """,
    # 19: memory — append-only records per workspace, bitemporal (valid from/to, recorded and
    # expired), each with its source session, seq and grade, and its quarantine; their text
    # indexed by trigrams (Chinese has no spaces) under the record's id; and per session the
    # revision last harvested.
    """
    CREATE TABLE memory_records (
        id                INTEGER PRIMARY KEY,
        kind              TEXT NOT NULL,
        subject           TEXT NOT NULL DEFAULT '',
        text              TEXT NOT NULL,
        detail            TEXT NOT NULL DEFAULT '{}',
        workspace         TEXT NOT NULL,
        remote            TEXT,
        valid_from        INTEGER NOT NULL,
        valid_to          INTEGER,
        recorded_at       INTEGER NOT NULL,
        expired_at        INTEGER,
        superseded_by     INTEGER,
        harness           TEXT,
        session_id        TEXT,
        seq               INTEGER,
        grade             TEXT NOT NULL,
        digest            TEXT NOT NULL,
        quarantined       INTEGER NOT NULL DEFAULT 0,
        quarantine_reason TEXT,
        state             TEXT NOT NULL DEFAULT ''
    );
    CREATE UNIQUE INDEX memory_records_source ON memory_records (harness, session_id, kind, digest);
    CREATE INDEX memory_records_workspace ON memory_records (workspace, kind, subject);
    CREATE VIRTUAL TABLE memory_fts USING fts5 (text, tokenize = 'trigram');
    CREATE TABLE memory_harvests (
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        revision    INTEGER NOT NULL,
        at          INTEGER NOT NULL,
        report      TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (harness, session_id)
    );
    """,
    # The turn of a session whose harness asks before every model step (`dshkit.turns`):
    # whether one is open since a person's prompt, and the heads of what dshkit injected.
    """
    CREATE TABLE prompt_turns (
        harness    TEXT NOT NULL,
        session_id TEXT NOT NULL,
        open       INTEGER NOT NULL DEFAULT 0,
        opened_at  INTEGER NOT NULL DEFAULT 0,
        heads      TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (harness, session_id)
    );
    """,
    # The profile entries a person removed, which no regeneration may bring back
    # (docs/design/profile.md#the-model-answers-with-a-delta), and the sessions whose words
    # each may quote: forgetting one of them takes the record.
    """
    CREATE TABLE profile_removals (
        id          INTEGER PRIMARY KEY,
        entry_id    TEXT NOT NULL,
        category    TEXT NOT NULL,
        claim       TEXT NOT NULL,
        removed_at  INTEGER NOT NULL
    );
    CREATE TABLE profile_removal_sessions (
        removal_id  INTEGER NOT NULL REFERENCES profile_removals (id) ON DELETE CASCADE,
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        PRIMARY KEY (removal_id, harness, session_id)
    );
    CREATE INDEX profile_removal_sessions_session
        ON profile_removal_sessions (harness, session_id);
    """,
    # Model calls are kept for a while ([llm] keep_calls, keep_days): which sessions' words the
    # calls deleted as too old carried, by purpose (no words; a profile removal is linked to
    # them, docs/design/llm.md#a-calls-prompt-and-reply-are-kept-for-a-while).
    """
    CREATE TABLE llm_pruned_sessions (
        purpose     TEXT NOT NULL,
        harness     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        PRIMARY KEY (purpose, harness, session_id)
    );
    CREATE INDEX llm_pruned_sessions_session ON llm_pruned_sessions (harness, session_id);
    """,
    # The poisoning scanner's last verdict on each memory record, as its grade reads it, and
    # what reached it (the scanner's files, the texts' checksum): a session's start reads it
    # instead of scanning again while neither has changed (docs/design/memory.md). Its
    # findings quote the record, so it goes with it.
    """
    CREATE TABLE memory_scans (
        record_id   INTEGER PRIMARY KEY REFERENCES memory_records (id) ON DELETE CASCADE,
        scanned_by  TEXT NOT NULL,
        findings    TEXT NOT NULL
    );
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
    SessionRows("gate_sessions"),
    SessionRows("gate_writes"),
    # Whole calls, prompt and reply, of every session they were made for; their links to the
    # other sessions go with them (ON DELETE CASCADE).
    SessionRows(
        "llm_calls",
        "id IN (SELECT call_id FROM llm_call_sessions "
        "WHERE harness = :harness AND session_id = :session_id)",
    ),
    SessionRows("llm_call_sessions"),
    SessionRows("llm_pruned_sessions"),
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
    # A person's exclusion of the session from the forced cut (`graft.marker.EXCLUDE_KEY`),
    # with their reason.
    SessionRows("meta", "key = 'graft.exclude:' || :harness || ':' || :session_id"),
    # memory: what was harvested from the session, its index entries first (they are found
    # through the records).
    SessionRows(
        "memory_fts",
        "rowid IN (SELECT id FROM memory_records "
        "WHERE harness = :harness AND session_id = :session_id)",
    ),
    SessionRows(
        "memory_scans",
        "record_id IN (SELECT id FROM memory_records "
        "WHERE harness = :harness AND session_id = :session_id)",
    ),
    SessionRows("memory_records"),
    SessionRows("memory_harvests"),
    SessionRows("prompt_turns"),
    # A person's removal of a profile entry quotes the words of the sessions it is linked to.
    SessionRows(
        "profile_removals",
        "id IN (SELECT removal_id FROM profile_removal_sessions "
        "WHERE harness = :harness AND session_id = :session_id)",
    ),
    SessionRows("profile_removal_sessions"),
)


class SessionWords:
    """A column whose values may hold sessions' words though no session keys its rows: what a
    model (or a person) wrote from many sessions' messages. Forgetting takes every string that
    quotes a forgotten session out of each value (`Store.forget_sessions`, inside its
    transaction): from a JSON value a quoting string in a list is removed, elsewhere it
    becomes "", and an object whose `essential` field is left empty ("" or []) goes with it; a
    plain value that quotes becomes "". Which strings quote is `words`' rule
    (docs/design/profile.md#forgetting-a-session-takes-its-words-out-of-the-profile)."""

    __slots__ = ("column", "essential", "json", "table", "where")

    def __init__(
        self,
        table: str,
        column: str,
        where: str = "1",
        *,
        json: bool = True,
        essential: tuple[str, ...] = (),
    ) -> None:
        self.table, self.column, self.where = table, column, where
        self.json, self.essential = json, essential

    def __repr__(self) -> str:
        return f"SessionWords({self.table!r}, {self.column!r}, {self.where!r})"


# Where sessions' words are kept apart from their rows: the profile's versions, history
# included (an entry's claim and evidence quote people; a source whose quote goes goes whole,
# its session id with it), the notes the model wrote with each,
# the last run's record (its warnings and dropped entries hold claims) and what was copied.
SESSION_WORDS: tuple[SessionWords, ...] = (
    SessionWords("profile_versions", "entries", essential=("claim", "evidence", "quote")),
    SessionWords("profile_versions", "notes", json=False),
    SessionWords(
        "meta",
        "value",
        "key IN ('profile.lastRun', 'profile.copiedSnapshot')",
        essential=("claim", "evidence", "quote"),
    ),
)
# Full-text indexes merged after forgetting, so that no old segment keeps a deleted row's terms.
FTS_TABLES = ("memory_fts",)

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
GRAFT_PERSON_DELIVERY = "graft-person"  # where a forced cut's work went, told the person
GRAFT_SCOPE_DELIVERY = "graft-scope"  # where to search (the workspace), once per session
MEMORY_DELIVERY = "memory"  # the workspace's memory at a session's start, the text's digest
GATE_REWORK_DELIVERY = "gate-rework"  # a failed deliverable's evidence, once per content


class StoreError(Unavailable):
    """The state database cannot be used as it is (newer schema, unreadable, damaged, full,
    read-only file)."""


class StoreDamaged(StoreError):
    """The state database's file is damaged: empty, truncated, not SQLite, or malformed inside.
    dshkit neither repairs nor replaces it; the message says how to recover."""


class StoreFull(StoreError):
    """The disk holding the state database is full: the change that did not fit was not made
    (a scan skips the file it was storing and goes on with the others)."""


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


# The largest integer SQLite keeps (a row id, a LIMIT): a larger one names no row.
SQLITE_INT_MAX = 2**63 - 1

# Told, once a wait for another process's hold on the store (a named lease, SQLite's write
# lock) has lasted WAIT_NOTICE_S, who holds it and how many seconds more this one waits
# before Busy. The command line sets it (a line on stderr); unset (the hooks, the service),
# waits stay silent and cost nothing more.
wait_notice: Callable[[str, float], None] | None = None
WAIT_NOTICE_S = 1.0


def _tell_wait(holder: str, left: float) -> None:
    notice = wait_notice
    if notice is not None:
        notice(holder, max(left, 0.0))


def recovery(path: Path, *, salvage: bool = True) -> str:
    """What a person can do about a broken database at `path` (dshkit does none of it
    itself); `salvage` adds the SQLite shell's .recover, for a file with something in it."""
    name = path.name
    salvaged = (
        f"salvage what is still readable with the SQLite shell (sqlite3 {name} .recover | "
        f"sqlite3 {name}.recovered, then mv {name}.recovered {name}); or "
        if salvage
        else ""
    )
    return (
        f"dshkit does not repair or replace it. To recover, in {path.parent}: restore {name} "
        f"from a backup if you have one; or {salvaged}move it aside (mv {name} {name}.broken) "
        "and dshkit starts a new, empty store. `dshkit doctor` checks the database."
    )


def write_problem(path: Path) -> str | None:
    """What keeps this process from writing the database at `path` and the files beside it
    (a read-only file system, directory or file), or None when none can be seen."""
    directory = path.parent
    try:
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            return f"the file system holding {directory} is mounted read-only"
    except OSError:
        pass
    if not os.access(directory, os.W_OK | os.X_OK):
        return f"its directory {directory} is not writable by you"
    for file in (path, _beside(path, "-wal"), _beside(path, "-shm")):
        if os.path.lexists(file) and not os.access(file, os.R_OK | os.W_OK):
            return f"{file} is not writable by you"
    return None


def _beside(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _reraise(exc: sqlite3.Error | OverflowError, path: Path) -> None:
    """Raise the error tree's name for `exc`, from it, if it has one (see `_translated`)."""
    error = _translated(exc, path)
    if error is not None:
        raise error from exc


def _translated(exc: sqlite3.Error | OverflowError, path: Path) -> DshkitError | None:
    """The error tree's name for what SQLite said about the database at `path`: its file
    locked, damaged, full, read-only or unreadable; None for what is a bug (bad SQL, a broken
    constraint, a closed connection), left as it is to be seen as one."""
    if isinstance(exc, OverflowError):  # binding a Python int SQLite cannot hold
        return Invalid(f"a number is larger than the state database can hold ({SQLITE_INT_MAX})")
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    name = getattr(exc, "sqlite_errorname", "")  # the extended code: SQLITE_IOERR_WRITE, …
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreBusy(f"{path} is locked by another process; try again in a moment")
    if primary in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return StoreDamaged(f"the state database {path} is damaged ({exc}). {recovery(path)}")
    if primary == sqlite3.SQLITE_FULL:
        return StoreFull(
            f"cannot write the state database {path}: the disk is full ({exc}). What was "
            "stored before is kept; the change that did not fit was not made. Free some space "
            "and try again."
        )
    if primary == sqlite3.SQLITE_IOERR:
        return StoreError(
            f"cannot read or write the state database {path}: {exc} ({name}); the disk may be "
            "full, over a file size limit, or failing. What was stored before is kept; the "
            "change that failed was not made."
        )
    if primary == sqlite3.SQLITE_READONLY:
        why = write_problem(path) or f"SQLite refuses to write it ({exc}, {name})"
        return StoreError(
            f"cannot write the state database {path}: {why}. "
            + _make_it(path, "writable (chmod u+w on the directory and its files)")
        )
    if primary in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH):
        why = write_problem(path) or name
        return StoreError(
            f"cannot open the state database {path} ({exc}): {why}. "
            + _make_it(path, "readable and writable (chmod u+rw)")
        )
    if primary in (sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_NOLFS):
        return StoreError(f"cannot use the state database {path}: {exc}")
    return None


class _Cursor(sqlite3.Cursor):
    """A cursor whose failures of the database file are the error tree's (see `_translated`):
    a damaged page can surface at any statement or any row, not only when the store opens."""

    connection: _Connection

    def execute(self, sql: str, parameters: Any = (), /) -> Self:
        try:
            return super().execute(sql, parameters)
        except (sqlite3.Error, OverflowError) as exc:
            _reraise(exc, self.connection.path)
            raise

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Self:
        try:
            return super().executemany(sql, parameters)
        except (sqlite3.Error, OverflowError) as exc:
            _reraise(exc, self.connection.path)
            raise

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.Error as exc:
            _reraise(exc, self.connection.path)
            raise

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as exc:
            _reraise(exc, self.connection.path)
            raise

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size)
        except sqlite3.Error as exc:
            _reraise(exc, self.connection.path)
            raise

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as exc:
            _reraise(exc, self.connection.path)
            raise


class _Connection(sqlite3.Connection):
    """The store's connection: every statement runs on a `_Cursor`."""

    path: Path

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        return self.cursor(_Cursor).execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> _Cursor:
        return self.cursor(_Cursor).executemany(sql, parameters)


def _connect(path: Path, busy_timeout: float) -> _Connection:
    try:
        db = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, factory=_Connection)
    except sqlite3.Error as exc:
        _reraise(exc, path)
        raise StoreError(f"cannot open state database {path}: {exc}") from exc
    db.path = path
    db.row_factory = sqlite3.Row
    return db


_HEADER = b"SQLite format 3\x00"


# The database files this process holds open (`storeview.HELD_FILES`): a store's is added
# as it opens, and no file held is opened again to check its header, which would drop the
# process's locks on it.
def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _make_it(path: Path, mode: str) -> str:
    """What to do about a file that cannot be used as it is: a read-only mount is no matter of
    permissions (chmod cannot help there), anything else is."""
    try:
        read_only = bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    if read_only:
        return (
            f"The file system holding {path.parent} is mounted read-only: remount it "
            "read-write, or point --state-dir at a writable directory."
        )
    return f"Make it {mode}, or point --state-dir elsewhere."


def _check_file(path: Path) -> None:
    """Refuse a database file that is there but cannot be a store: unreadable, empty, not
    SQLite, or shorter than its own header says (truncated). Only a missing file is a new
    store: an empty one is what is left of a store, and starting afresh in it would silently
    drop everything it held."""
    try:
        with open(path, "rb") as file:
            header = file.read(100)
            size = os.fstat(file.fileno()).st_size
    except IsADirectoryError:
        raise StoreError(f"{path} is a directory, not the state database") from None
    except OSError as exc:
        raise StoreError(
            f"cannot read the state database {path}: {exc.strerror}. "
            + _make_it(path, "readable (chmod u+rw)")
        ) from exc
    if size == 0:
        raise StoreDamaged(
            f"the state database {path} is empty (0 bytes): it is not a usable SQLite "
            "database, and whatever dshkit had stored (profile versions, custom text, "
            f"verdicts, runs) is not in it. {recovery(path, salvage=False)}"
        )
    if not header.startswith(_HEADER):
        raise StoreDamaged(
            f"{path} is not a usable SQLite database (it does not begin with SQLite's header). "
            f"{recovery(path)}"
        )
    if len(header) < 100:
        raise StoreDamaged(
            f"the state database {path} is truncated ({size} bytes). {recovery(path)}"
        )
    expected = _header_size(header)
    if expected and size < expected and not _journal_pending(path):
        raise StoreDamaged(
            f"the state database {path} is truncated: its header says {expected:,} bytes, the "
            f"file has {size:,}. {recovery(path)}"
        )


def _header_size(header: bytes) -> int | None:
    """The database's size in bytes as its header records it, when the header vouches for it
    (SQLite's "in-header database size" is valid when the change counter matches the
    version-valid-for number)."""
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid = header[24:28] == header[92:96]
    return page_size * pages if valid and pages else None


def _journal_pending(path: Path) -> bool:
    """Whether a WAL or rollback journal beside `path` may still hold pages of it (then the
    main file may rightly be shorter than its header says until they are written back)."""
    for suffix in ("-wal", "-journal"):
        try:
            if os.stat(_beside(path, suffix)).st_size > 0:
                return True
        except FileNotFoundError:
            continue
    return False


def _create(path: Path, busy_timeout: float) -> None:
    """Make a new store at `path`, whole: built under a temporary name (WAL mode set, every
    migration applied, closed) and then linked into place, so that the real name never names
    an empty or half-made database (which `_check_file` would rightly refuse). Of several
    processes creating it at once, the first link wins and the others use that store."""
    _remove_abandoned(path)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.new")
    os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    try:
        db = _connect(temp, busy_timeout)
        try:
            _migrate(db, temp)
        finally:
            db.close()  # the last connection: SQLite folds the WAL in and removes it
        try:
            os.link(temp, path)
        except FileExistsError:
            pass  # another process made it first: the store is theirs, and it is whole
        except OSError:
            # A file system without hard links: a rename, which replaces; checked first, so
            # only a race in this instant can replace a store made since (fresh, like ours).
            if not os.path.lexists(path):
                os.replace(temp, path)
    finally:
        for leftover in (temp, _beside(temp, "-wal"), _beside(temp, "-shm")):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)


def _remove_abandoned(path: Path) -> None:
    """Remove temporary stores left by a process killed while creating one."""
    prefix = f".{path.name}."
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            name = entry.name
            if not name.startswith(prefix) or ".new" not in name:
                continue
            pid = name[len(prefix) :].partition(".")[0]
            if pid.isascii() and pid.isdigit() and not alive(int(pid)):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)


def _migrate(db: _Connection, path: Path) -> None:
    """Set the connection's pragmas and bring the schema to SCHEMA_VERSION."""
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        # Deleted rows are overwritten, not left in free pages: forgetting means it.
        db.execute("PRAGMA secure_delete=ON")
        version = _schema_version(db, path)
        while version < SCHEMA_VERSION:
            # One transaction per step, the version read inside it: a crash leaves a whole
            # version, and two processes migrating the same store at once do each step once.
            with _transaction(db):
                version = _schema_version(db, path)
                if version >= SCHEMA_VERSION:
                    break
                for statement in _statements(MIGRATIONS[version]):
                    db.execute(statement)
                version += 1
                db.execute(f"PRAGMA user_version={version}")
    except sqlite3.DatabaseError as exc:  # what the cursor leaves as it is
        raise StoreError(f"{path} is not a usable SQLite database: {exc}") from exc


def _schema_version(db: _Connection, path: Path) -> int:
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} has schema version {version}, written by a newer dshkit; "
            f"this dshkit understands up to version {SCHEMA_VERSION}. "
            "Upgrade dshkit, or point --state-dir elsewhere."
        )
    return version


def _begin(db: _Connection) -> None:
    """BEGIN IMMEDIATE, waiting up to the busy timeout for another process's write; with a
    wait notice set, the wait is taken in two steps so that it is told after the first."""
    if wait_notice is None:
        db.execute("BEGIN IMMEDIATE")
        return
    timeout = int(db.execute("PRAGMA busy_timeout").fetchone()[0])  # milliseconds
    first = int(WAIT_NOTICE_S * 1000)
    if timeout <= first:
        db.execute("BEGIN IMMEDIATE")
        return
    db.execute(f"PRAGMA busy_timeout={first}")
    try:
        try:
            db.execute("BEGIN IMMEDIATE")
        except StoreBusy:  # nothing began: beginning again is safe
            _tell_wait(f"another process writing {db.path}", (timeout - first) / 1000)
            db.execute(f"PRAGMA busy_timeout={timeout - first}")
            db.execute("BEGIN IMMEDIATE")
    finally:
        db.execute(f"PRAGMA busy_timeout={timeout}")


@contextmanager
def _transaction(db: _Connection) -> Iterator[sqlite3.Connection]:
    _begin(db)
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        # SQLite may have rolled back already (a full disk, an I/O error): then there is
        # nothing to undo, and the error that stopped the work is the one to tell.
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error, DshkitError):
                db.execute("ROLLBACK")
        raise


class Store:
    """A connection to `<state_dir>/dshkit.db`, migrated to the current schema on open.

    `busy_timeout` bounds how long any statement waits for another process's lock: 30 s
    for commands, a short one on the hook path, where the agent is waiting. A database file
    that is there but empty, truncated or not SQLite is refused (StoreDamaged), never started
    afresh: only a missing one is a new store. Whatever SQLite says about the file later
    (damaged pages, a full disk, a read-only directory, a lock held too long) is raised as
    StoreError or StoreBusy, naming the file and what to do.
    """

    db: _Connection
    _held: tuple[int, int] | None = None

    def __init__(self, state_dir: Path, *, busy_timeout: float = 30.0) -> None:
        self.state_dir = Path(state_dir)
        self.path = self.state_dir / DB_NAME
        try:
            # Tightened directories are told to whoever opened the store (see `tightened`).
            self.tightened = private_dir(self.state_dir)
            if not os.path.lexists(self.path):
                _create(self.path, busy_timeout)
        except OSError as exc:
            raise StoreError(
                f"cannot create the state database {self.path}: {exc.strerror}"
                f"{'' if exc.filename is None else f' ({exc.filename})'}"
            ) from exc
        held = _identity(self.path)
        if held is None or held not in storeview.HELD_FILES:
            _check_file(self.path)
        self.db = _connect(self.path, busy_timeout)
        # SQLite answers "busy" at once, without waiting, where waiting could deadlock (two
        # processes migrating a store at once): such an open is tried again within the timeout.
        deadline = time.monotonic() + busy_timeout
        while True:
            try:
                _migrate(self.db, self.path)
                self._held = _identity(self.path)
                if self._held is not None:
                    storeview.HELD_FILES.append(self._held)
                return
            except StoreBusy:
                if time.monotonic() >= deadline:
                    self.db.close()
                    raise
                time.sleep(0.05)
            except BaseException:
                self.db.close()
                raise

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, rolled back on any exception."""
        return _transaction(self.db)

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

        Their words are first taken out of what no session keys (SESSION_WORDS). secure_delete
        zeroes what the rows took in the database file; the WAL, which still holds the pages
        as they were, is then checkpointed and truncated (waiting, within the busy timeout,
        for readers still using it)."""
        params = [{"harness": harness, "session_id": session_id} for harness, session_id in keys]
        if not params:
            return
        with self.transaction() as db:
            from .words import forget_words  # forgetting only: not on the hooks' path

            forget_words(db, [(p["harness"], p["session_id"]) for p in params], SESSION_WORDS)
            for rows in SESSION_ROWS:
                db.executemany(f"DELETE FROM {rows.table} WHERE {rows.where}", params)
            for table in FTS_TABLES:
                db.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
            if for_good:
                at = int(time.time() * 1000)
                db.executemany(
                    "INSERT OR REPLACE INTO forgotten_sessions (harness, session_id, at) "
                    "VALUES (:harness, :session_id, :at)",
                    [{**p, "at": at} for p in params],
                )
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        self.drop_hints()

    def drop_hints(self) -> None:
        """Remove every hook answer hint (`hooks.hint`: `<state dir>/hints/`): a hint holds
        the store rows and payload fields its answer was read from, so what a forget deletes
        must not stay there; and the watermark's caches keyed by sessions (`SESSION_CACHES`).
        They are caches: the next call of each takes the full path."""
        for name in (HINTS_DIR, *SESSION_CACHES):
            path = self.state_dir / name
            try:
                entries = [entry.path for entry in os.scandir(path)]
            except NotADirectoryError:
                entries = [str(path)]
            except OSError:
                continue  # none there
            for entry in entries:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry)

    # -- deliveries: what reached a session, recorded once the answer was written -----------

    def holds_session(self, key: tuple[str, str]) -> bool:
        """Whether the session `key` (harness, session id) is stored (a forget deletes it)."""
        row = self.db.execute(
            "SELECT 1 FROM sessions WHERE harness = ? AND session_id = ?", key
        ).fetchone()
        return row is not None

    def delivered(self, key: tuple[str, str], kind: str, what: str | None = None) -> bool:
        """Whether `what` of `kind` (any, when None) reached the session `key` (harness,
        session id)."""
        where, args = ("", ()) if what is None else (" AND what = ?", (what,))
        row = self.db.execute(
            "SELECT 1 FROM deliveries WHERE harness = ? AND session_id = ? AND kind = ?" + where,
            (*key, kind, *args),
        ).fetchone()
        return row is not None

    def last_delivered(self, key: tuple[str, str], kind: str) -> str | None:
        """What of `kind` reached the session `key` last (None: nothing yet)."""
        row = self.db.execute(
            "SELECT what FROM deliveries WHERE harness = ? AND session_id = ? AND kind = ? "
            "ORDER BY delivered_at DESC, rowid DESC LIMIT 1",
            (*key, kind),
        ).fetchone()
        return None if row is None else str(row[0])

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
        start = time.monotonic()
        deadline, told = start + wait, False
        while True:
            with self.transaction():
                holder = self.lease_holder(name)
                if holder is None:
                    self._reclaimed(name)  # a dead or lapsed holder's lease is taken over
                    held.renew()
                    break
            now = time.monotonic()
            if now >= deadline:
                raise LeaseBusy(name, holder, self.path)
            if not told and now - start >= WAIT_NOTICE_S:
                told = True
                _tell_wait(f"another dshkit process: {name}, pid {holder}", deadline - now)
            time.sleep(0.1)
        try:
            yield held
        finally:
            with self.transaction():
                if self.get_meta(held.key, "") == held.value:
                    self.set_meta(held.key, "")

    def stale_leases(self, prefix: str = "") -> list[tuple[str, int | None, str]]:
        """The leases (whose names start with `prefix`) left held by no live process (a holder
        that died, or stopped renewing): (name, pid, why). Read-only: what a reclaim would
        take over."""
        start = f"lease.{prefix}"
        rows = self.db.execute(
            "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ? AND value != ''",
            (len(start), start),
        ).fetchall()
        found = []
        for key, value in rows:
            name = key[len("lease.") :]
            if self.lease_holder(name) is None:
                found.append((name, *_stale_why(value)))
        return sorted(found)

    def reclaim_stale_leases(self, prefix: str = "") -> list[tuple[str, int | None, str]]:
        """Let go of every lease (named `prefix`…) no live process holds (`stale_leases`),
        each audited `lock-reclaimed`; a live holder's lease is left alone. What was
        reclaimed."""
        with self.transaction():
            stale = self.stale_leases(prefix)
            for name, _, _ in stale:
                self._reclaimed(name)
                self.set_meta(f"lease.{name}", "")
        return stale

    def _reclaimed(self, name: str) -> None:
        """Audit a lease about to be taken over from a holder that is gone (nothing when it
        was free): the only trace that a process died holding it (inside a transaction)."""
        value = self.get_meta(f"lease.{name}") or ""
        if value:
            pid, why = _stale_why(value)
            audit(self, "lock-reclaimed", lease=name, pid=pid, why=why, by=os.getpid())

    def lease_holder(self, name: str) -> int | None:
        """The pid of the live process holding lease `name`, or None."""
        pid, _, expiry = (self.get_meta(f"lease.{name}") or "").partition(":")
        if not pid.isdigit() or not expiry.isdigit() or int(expiry) < time.time():
            return None
        return int(pid) if alive(int(pid)) else None  # a zombie holds nothing

    def close(self) -> None:
        self.db.close()
        held, self._held = self._held, None
        if held is not None:
            storeview.HELD_FILES.remove(held)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stale_why(value: str) -> tuple[int | None, str]:
    """A lease value no live process holds: its pid and why it is stale."""
    pid, _, expiry = value.partition(":")
    if not pid.isdigit() or not expiry.isdigit():
        return None, "unreadable"
    if not alive(int(pid)):
        return int(pid), "holder dead"
    return int(pid), "not renewed in time"


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


def audit(
    store: Store,
    kind: str,
    *,
    harness: str | None = None,
    session_id: str | None = None,
    txn_id: int | None = None,
    **detail: object,
) -> None:
    """Append one record to the audit trail, `graft_audit` (`model-nudge`, `force-graft`,
    `command-blocked`, …): what the hooks and the handoffs did, written by graft and by the
    command guard alike (neither imports the other). Inside an open transaction the record
    commits or rolls back with it."""
    import orjson  # (a record is written after a hook's answer, never on the way to it)

    if not kind:
        raise ValueError("an audit record needs a kind")
    store.db.execute(
        "INSERT INTO graft_audit (at, kind, harness, session_id, txn_id, detail) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (int(time.time() * 1000), kind, harness, session_id, txn_id, orjson.dumps(detail).decode()),
    )


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our open transaction; split instead (no ';' in our DDL strings).
    return [part.strip() for part in script.split(";") if part.strip()]
