"""The state store: WAL, versioned schema, refusal of newer databases."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dshkit.store import SCHEMA_VERSION, Store, StoreError


def test_fresh_store_is_wal_and_at_the_current_version(tmp_path: Path) -> None:
    with Store(tmp_path / "state") as store:
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        store.set_meta("k", "v")
    with Store(tmp_path / "state") as store:  # reopening migrates nothing and keeps data
        assert store.get_meta("k") == "v"


def test_newer_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.set_meta("keep", "me")
        store.db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    before = (tmp_path / "dshkit.db").read_bytes()
    with pytest.raises(StoreError, match=rf"schema version {SCHEMA_VERSION + 1}.*newer dshkit"):
        Store(tmp_path)
    assert (tmp_path / "dshkit.db").read_bytes() == before


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dshkit.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable SQLite database"):
        Store(tmp_path)


def test_transaction_rolls_back_on_error(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        with pytest.raises(RuntimeError), store.transaction():
            store.set_meta("half", "written")
            raise RuntimeError
        assert store.get_meta("half") is None
        other = sqlite3.connect(tmp_path / "dshkit.db")
        assert other.execute("SELECT count(*) FROM meta").fetchone()[0] == 0
