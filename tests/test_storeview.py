"""Read-only looks at the store for the hot path (`dshkit.storeview`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dshkit.store import Store
from dshkit.storeview import query_rows


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
