"""Read-only looks at the store for the hot path, without loading it: `store` loads
`sqlite3` (with `datetime`), `pathlib` and its migrations, about 20 ms of a hook's time; a
look here loads the `_sqlite3` C module alone.

A look never creates or changes the store: the database is opened `mode=ro`, and a missing
one is FileNotFoundError (the caller takes its full path, which opens the store for real).
`connect` opens the C module's connections: the looks', and `turns.end`'s, the one write made
without the store."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from typing import Any

DB_NAME = "dshkit.db"  # the store's file in its state directory (`store.DB_NAME`)
# A consumer's cursor over a live log (`sessions.tail`), by (consumer, path): what the tail
# reader reads and writes, and what the hot path's looks read back.
TAIL_CURSOR = "SELECT cursor FROM transcript_tails WHERE consumer = ? AND path = ?"


def query_rows(state: str, sql: str, params: list[Any]) -> list[Any]:
    """The rows of `sql` in the store, read-only (never creating or changing it)."""
    return queries_rows(state, [(sql, params)])[0]


def queries_rows(state: str, queries: list[tuple[str, list[Any]]]) -> list[list[Any]]:
    """The rows of each query in the store, read-only, in one read transaction (one state of
    the store for all of them); on the connection `Shared` holds for `state`, if any."""
    if not queries:
        return []
    db = os.path.join(state, DB_NAME)
    held = _holder(state)
    if held is None:
        if not os.path.exists(db):
            raise FileNotFoundError(db)
        connection = connect(db, "ro", 1.0)
        try:
            return _read(connection, queries)
        finally:
            connection.close()
    kept = held.connection is not None
    try:
        return _held_read(held, db, queries)
    except sqlite_core().DatabaseError:
        if not kept:
            raise
        # A connection kept from an earlier look failed, however it came to: the look once
        # more on a new one (what fails there is the store's to say).
        return _held_read(held, db, queries)


def _held_read(held: Shared, db: str, queries: list[tuple[str, list[Any]]]) -> list[list[Any]]:
    """The look on `held`'s connection; which is closed where it failed (not held: a store
    opening the file checks it then, `store._check_file`)."""
    try:
        return _read(held.open(db), queries)
    except BaseException:
        held.close()
        raise


def _read(connection: Any, queries: list[tuple[str, list[Any]]]) -> list[list[Any]]:
    try:
        connection.execute("BEGIN")
        return [list(connection.execute(sql, params).fetchall()) for sql, params in queries]
    finally:
        if connection.in_transaction:
            connection.execute("ROLLBACK")  # (a read: ends it, so the next sees what is new)


def connect(db: str, mode: str, timeout: float) -> Any:
    """A connection of the `_sqlite3` C module to the database file `db`, in autocommit,
    opened `mode` ("ro"; "rw", which never creates it: `turns.end` and `turns.begin`, the
    writes made without the store), waiting up to `timeout` seconds for another process's
    lock."""
    uri = "file:" + db.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return sqlite_core().connect(
        f"{uri}?mode={mode}", uri=True, timeout=timeout, isolation_level=None
    )


# The database files this process holds open, by (device, inode), once per connection kept
# open on one (a `Store`'s, a `Shared` look's). Closing any descriptor of a file drops every
# POSIX lock this process holds on it, SQLite's included (its locks belong to the process, not
# to a connection): a connection kept open then reads an old snapshot, never seeing another
# process's commits, and another process may remove the WAL under it. So a file held here is
# not opened again to check its header (`store._check_file`). (A list: append, remove and `in`
# are each atomic under the GIL, so threads need no lock.)
HELD_FILES: list[tuple[int, int]] = []

_held: list[Shared] = []  # the `Shared` looks held, the innermost last


def _holder(state: str) -> Shared | None:
    """The outermost `Shared` held for `state`: a look inside another uses its connection."""
    for held in _held:
        if held.state == state:
            return held
    return None


class Shared:
    """While held (`with Shared(state):`), the looks at `state`'s store share one read-only
    connection, each in a read transaction of its own, instead of one connection each (~0.4
    ms of a hook's time a connection, measured): a call's lean answer looks at its hint's rows
    and then its live checks look at theirs; a resident worker keeps one for its life
    (`hooks.resident`), and a `Shared` inside another uses the outer one's connection. A
    database file replaced since the connection opened (another inode) is opened anew.
    Closed when let go."""

    __slots__ = ("connection", "file", "state")

    def __init__(self, state: str) -> None:
        self.state = state
        self.connection: Any = None
        self.file: tuple[int, int] | None = None  # (device, inode) of what it opened

    def open(self, db: str) -> Any:
        """The connection to `db`, kept open, or opened (FileNotFoundError: no store)."""
        found = os.stat(db)  # (before connecting: a file replaced meanwhile is opened again)
        file = (found.st_dev, found.st_ino)
        if self.connection is not None and file != self.file:
            self.close()
        if self.connection is None:
            self.connection = connect(db, "ro", 1.0)
            self.file = file
            HELD_FILES.append(file)
        return self.connection

    def close(self) -> None:
        """Close the connection kept, if any (the next look opens one again)."""
        _let_go(self.file, self.connection)
        self.connection = self.file = None

    def __enter__(self) -> Shared:
        _held.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _held.remove(self)
        self.close()


class Snapshot:
    """The store as it was when taken: a read-only connection whose read transaction stays
    open until it is closed, so that every look through it (`rows`) sees the store as it was
    then, no commit made since included (a call's own: `hooks.lean.Observation` keys a
    template to what its handlers read as they found it, before their own writes).
    FileNotFoundError: no store. Its file is held (`HELD_FILES`) while it is open: a store
    opened meanwhile must not drop its lock, which keeps its snapshot's pages in the WAL."""

    __slots__ = ("connection", "file")

    def __init__(self, state: str) -> None:
        db = os.path.join(state, DB_NAME)
        found = os.stat(db)
        self.file: tuple[int, int] | None = (found.st_dev, found.st_ino)
        HELD_FILES.append(self.file)
        self.connection: Any = None
        try:
            self.connection = connect(db, "ro", 1.0)
            self.connection.execute("BEGIN")
            self.connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # (pins it)
        except BaseException:
            self.close()
            raise

    def rows(self, queries: list[tuple[str, list[Any]]]) -> list[list[Any]]:
        """The rows of each query, as the store was when the snapshot was taken."""
        return [list(self.connection.execute(sql, params).fetchall()) for sql, params in queries]

    def close(self) -> None:
        """End the read transaction and close the connection (again: nothing)."""
        _let_go(self.file, self.connection)
        self.connection = self.file = None


def _let_go(file: tuple[int, int] | None, connection: Any) -> None:
    """A kept connection closed (if any), its file no longer held by it (`HELD_FILES`)."""
    if file is not None:
        HELD_FILES.remove(file)
    if connection is not None:
        connection.close()


def sqlite_core() -> Any:
    """The `_sqlite3` C module alone (`sqlite3` itself imports datetime and more). Loaded by a
    process that has not loaded `functools` yet (a hook's, on the lean path), it is loaded
    without it: all it takes from there is `lru_cache`, for each connection's statement cache,
    and `functools` pulls in `collections` (together about 3 ms of a hook's ~13 ms floor,
    measured). It gets a cache that keeps nothing instead (every statement is compiled anew:
    microseconds, for the few a hint reads), lent for the import only; `functools` itself is
    loaded as ever by whoever asks for it later. Should the module want more of it (another
    interpreter), it is loaded the ordinary way."""
    import sys

    if "_sqlite3" in sys.modules or "functools" in sys.modules:
        import _sqlite3

        return _sqlite3
    lent = type(sys)("functools")
    lent.lru_cache = _no_cache  # type: ignore[attr-defined]
    sys.modules["functools"] = lent
    try:
        import _sqlite3
    except Exception:
        sys.modules.pop("_sqlite3", None)
        del sys.modules["functools"]
        import _sqlite3
    finally:
        if sys.modules.get("functools") is lent:
            del sys.modules["functools"]
    return _sqlite3


def _no_cache(maxsize: Any = 128, typed: bool = False) -> Any:
    """`functools.lru_cache` as `sqlite_core` lends it: a cache that keeps nothing."""
    return lambda function: function
