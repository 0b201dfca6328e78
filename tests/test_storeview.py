"""Read-only looks at the store for the hot path (`dshkit.storeview`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dshkit.store import Store
from dshkit.storeview import query_rows

from .support.elsewhere import commit_meta


@pytest.mark.process
def test_the_store_is_read_without_functools_and_sqlite3_still_works_after() -> None:
    # In a fresh interpreter (a hook's): the C module loaded without `functools`, its
    # connections work (statements compiled anew each time), and whoever loads `sqlite3` or
    # `functools` later gets the real ones.
    script = """
import sys
from dshkit import storeview
core = storeview.sqlite_core()
print("functools" in sys.modules, "collections" in sys.modules)
db = core.connect(":memory:", isolation_level=None)
db.execute("CREATE TABLE t (a)")
for n in range(3):
    db.execute("INSERT INTO t VALUES (?)", (n,))
print(db.execute("SELECT sum(a) FROM t").fetchall(), db.execute("SELECT sum(a) FROM t").fetchall())
import functools, sqlite3
print(hasattr(functools, "reduce"), sqlite3.connect(":memory:").execute("SELECT 2").fetchall())
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == ["False False", "[(3,)] [(3,)]", "True [(2,)]"]


def test_a_look_reads_the_store_and_never_creates_or_changes_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        query_rows(str(tmp_path), "SELECT 1", [])
    assert list(tmp_path.iterdir()) == []  # nothing made where there was no store
    with Store(tmp_path) as store, store.transaction():
        store.set_meta("k", "v")
    assert query_rows(str(tmp_path), "SELECT value FROM meta WHERE key = ?", ["k"]) == [("v",)]
    with pytest.raises(Exception, match="readonly"):
        query_rows(str(tmp_path), "DELETE FROM meta", [])
    assert query_rows(str(tmp_path), "SELECT count(*) FROM meta WHERE key = 'k'", []) == [(1,)]


def test_looks_while_shared_use_one_connection_and_each_sees_what_is_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dshkit import storeview

    state = tmp_path / "state"
    with Store(state) as store:
        store.set_meta("k", "1")
    core, opened = storeview.sqlite_core(), []

    class Counted:
        def connect(self, *args: Any, **kwargs: Any) -> Any:
            connection = core.connect(*args, **kwargs)
            opened.append(connection)
            return connection

    monkeypatch.setattr(storeview, "sqlite_core", Counted)
    asked = "SELECT value FROM meta WHERE key = 'k'"
    other = tmp_path / "other"
    with Store(other):
        pass
    with storeview.Shared(str(state)) as shared:
        assert query_rows(str(state), asked, []) == [("1",)]
        with Store(state) as store:  # a commit between two looks: the second sees it
            store.set_meta("k", "2")
        assert query_rows(str(state), asked, []) == [("2",)]
        assert query_rows(str(other), asked, []) == []  # (another store: its own connection)
        assert len(opened) == 2 and shared.connection is opened[0]
    assert shared.connection is None
    with pytest.raises(Exception, match="closed"):
        opened[0].execute("SELECT 1")
    assert query_rows(str(state), asked, []) == [("2",)] and len(opened) == 3  # (not shared)


def held() -> list[tuple[int, int]]:
    """The database files this process holds open (`storeview.HELD_FILES`), as they are now."""
    from dshkit import storeview

    return list(storeview.HELD_FILES)


@pytest.mark.process
def test_a_kept_look_sees_other_processes_commits_after_a_store_opened_here(
    tmp_path: Path,
) -> None:
    # A store opened in this process while a look keeps its connection (a resident worker's
    # full path): checking the file's header by opening it would drop this process's locks
    # on it, and the last writer elsewhere would then remove the WAL the kept connection
    # reads through (it read an old snapshot from then on).
    from dshkit import storeview

    with Store(tmp_path) as store:
        store.set_meta("k", "0")
    asked = "SELECT value FROM meta WHERE key = 'k'"
    before = held()  # (stores other tests left open in this process)
    with storeview.Shared(str(tmp_path)) as shared:
        assert query_rows(str(tmp_path), asked, []) == [("0",)]
        kept = shared.connection
        for value in ("1", "2"):
            with Store(tmp_path):
                pass
            commit_meta(tmp_path, "k", value)
            assert query_rows(str(tmp_path), asked, []) == [(value,)]
        assert shared.connection is kept  # (one connection all along: none failed)
    assert held() == before


def test_a_look_inside_another_uses_the_outer_connection_and_leaves_it_open(
    tmp_path: Path,
) -> None:
    from dshkit import storeview

    with Store(tmp_path) as store:
        store.set_meta("k", "1")
    asked = "SELECT value FROM meta WHERE key = 'k'"
    before = held()
    with storeview.Shared(str(tmp_path)) as outer:
        with storeview.Shared(str(tmp_path)) as inner:
            assert query_rows(str(tmp_path), asked, []) == [("1",)]
            assert inner.connection is None and outer.connection is not None
        kept = outer.connection
        assert query_rows(str(tmp_path), asked, []) == [("1",)]
        assert outer.connection is kept
        assert held() == [*before, outer.file]
    assert outer.connection is None and held() == before


def test_a_kept_look_opens_a_replaced_database_anew_and_replaces_a_failed_connection(
    tmp_path: Path,
) -> None:
    from dshkit import storeview

    state, other = tmp_path / "state", tmp_path / "other"
    for folder, value in ((state, "old"), (other, "new")):
        with Store(folder) as store:
            store.set_meta("k", value)
    asked = "SELECT value FROM meta WHERE key = 'k'"
    before = held()
    with storeview.Shared(str(state)) as shared:
        assert query_rows(str(state), asked, []) == [("old",)]
        first = shared.connection
        # The store replaced by another file (restored from elsewhere): its rows, not the
        # kept connection's old file's.
        os.replace(other / "dshkit.db", state / "dshkit.db")
        assert query_rows(str(state), asked, []) == [("new",)]
        assert shared.connection is not first
        # A kept connection that fails (here: closed under it) is replaced, once.
        shared.connection.close()
        assert query_rows(str(state), asked, []) == [("new",)]
        assert held() == [*before, shared.file]
        with pytest.raises(Exception, match="no such table"):  # (failing on a new one too: said)
            query_rows(str(state), "SELECT * FROM nowhere", [])
        assert shared.connection is None and held() == before


@pytest.mark.process
def test_a_snapshot_sees_the_store_as_it_was_taken_whatever_is_committed_since(
    tmp_path: Path,
) -> None:
    # What a call's handlers found, not what they (or another process) wrote since: a
    # template's key (`hooks.lean.Observation`). A store opened here meanwhile must not drop
    # its lock (the last writer elsewhere would then remove the WAL under it).
    from dshkit import storeview

    with Store(tmp_path) as store:
        store.set_meta("k", "0")
    asked: list[tuple[str, list[Any]]] = [("SELECT value FROM meta WHERE key = 'k'", [])]
    before = held()
    snapshot = storeview.Snapshot(str(tmp_path))
    try:
        with Store(tmp_path) as store:
            store.set_meta("k", "1")  # (this process's own write)
        commit_meta(tmp_path, "k", "2")  # (another's, the last to close the store)
        assert snapshot.rows(asked) == [[("0",)]]  # (its first look at that page)
        commit_meta(tmp_path, "k", "3")
        assert snapshot.rows(asked) == [[("0",)]]
        assert query_rows(str(tmp_path), asked[0][0], []) == [("3",)]  # (a look: what is now)
    finally:
        snapshot.close()
    snapshot.close()  # (again: nothing)
    assert held() == before
    with pytest.raises(FileNotFoundError):
        storeview.Snapshot(str(tmp_path / "none"))
    assert held() == before
