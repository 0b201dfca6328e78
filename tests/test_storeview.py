"""Read-only looks at the store for the hot path (`dshkit.storeview`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
