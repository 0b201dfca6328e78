"""The hooks' terms (`dshkit.hookio`): the call a face receives, its store, and the answer
it gives in dshkit's own words."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dshkit.hookio import Call
from dshkit.store import Store


def test_a_call_opens_its_store_once_and_an_interrupted_block_leaves_nothing_open(
    tmp_path: Path,
) -> None:
    # One connection for every handler of a call (the last one of a process to close a WAL
    # database checkpoints it and removes its WAL, which the next open makes again).
    hook = Call("UserPromptSubmit", {"session_id": "s"}, "claude", str(tmp_path))
    with hook.open_store() as first:
        first.set_meta("test.first", "1")
    with hook.open_store() as second:
        assert second is first and second.get_meta("test.first") == "1"
    # A block interrupted inside a transaction (a handler out of time): rolled back, and
    # the next block starts clean on the same connection.
    with pytest.raises(KeyboardInterrupt), hook.open_store() as store:
        store.db.execute("BEGIN IMMEDIATE")
        store.db.execute("INSERT INTO meta (key, value) VALUES ('test.lost', '1')")
        raise KeyboardInterrupt
    with hook.open_store() as store:
        assert not store.db.in_transaction and store.get_meta("test.lost") is None
        with store.transaction():
            store.set_meta("test.kept", "1")
    hook.close()
    with Store(tmp_path) as other:  # written, and the call's connection is gone
        assert other.get_meta("test.kept") == "1"
    with pytest.raises(sqlite3.ProgrammingError):
        first.db.execute("SELECT 1")
    hook.close()  # (twice: nothing left to close)
