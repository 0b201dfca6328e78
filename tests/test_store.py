"""The state store: WAL, versioned schema, refusal of newer databases."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dshkit import store as store_module
from dshkit.errors import Invalid
from dshkit.store import SCHEMA_VERSION, LeaseBusy, Store, StoreBusy, StoreError


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


@pytest.mark.process
def test_a_lease_is_one_process_at_a_time_and_a_dead_holders_is_taken_over(
    tmp_path: Path,
) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from dshkit.store import Store
        with Store({str(tmp_path)!r}) as store, store.lease("work"):
            print("held", flush=True)
            sys.stdin.read()
        """
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    with Store(tmp_path) as store:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        assert store.lease_holder("work") == holder.pid
        assert store.lease_holder("other") is None  # leases are by name
        busy = rf"\({holder.pid}\) is running work"
        with pytest.raises(LeaseBusy, match=busy), store.lease("work", wait=0.2):
            pass
        holder.kill()  # dies holding it: no release, the row still names it
        holder.wait()
        held_by = store.get_meta("lease.work", "")
        assert held_by is not None and held_by.startswith(f"{holder.pid}:")
        with store.lease("work", wait=0) as lease:
            assert store.lease_holder("work") == os.getpid()
            lease.renew()
        assert store.lease_holder("work") is None  # released on exit


@pytest.mark.process
def test_fresh_store_opened_by_many_processes_at_once_migrates_once(tmp_path: Path) -> None:
    # Two scans starting on a fresh --state-dir used to fail 5 times in 30 (issue 8 item 9).
    script = "import sys\nfrom dshkit.store import Store\nStore(sys.argv[1]).close()\n"
    for attempt in range(30):
        state = tmp_path / f"s{attempt}"
        children = [
            subprocess.Popen([sys.executable, "-c", script, str(state)], stderr=subprocess.PIPE)
            for _ in range(3)
        ]
        errors = [child.communicate()[1].decode() for child in children]
        assert [child.returncode for child in children] == [0, 0, 0], errors
        with Store(state) as store:
            assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_locked_database_is_reported_as_busy_not_as_unusable(tmp_path: Path) -> None:
    Store(tmp_path).close()
    locker = sqlite3.connect(tmp_path / "dshkit.db", isolation_level=None)
    locker.execute("PRAGMA user_version = 0")  # looks unmigrated: opening must write
    locker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreBusy, match="locked by another process"):
            Store(tmp_path, busy_timeout=0.1)
    finally:
        locker.execute("ROLLBACK")
        locker.close()


def test_a_wait_for_another_holder_is_told_once_and_ends_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    told: list[tuple[str, float]] = []
    monkeypatch.setattr(
        store_module, "wait_notice", lambda holder, left: told.append((holder, left))
    )
    with Store(tmp_path, busy_timeout=1.5) as store:
        # A lease held by a live process (this one, as another dshkit process would write it).
        store.set_meta("lease.work", f"{os.getpid()}:{time.time() + 60:.0f}")
        with pytest.raises(LeaseBusy), store.lease("work", wait=1.6):
            pass
        assert [holder for holder, _ in told] == [
            f"another dshkit process: work, pid {os.getpid()}"
        ]
        assert 0 < told[0][1] <= 0.7  # what is left of the wait once it is told
        told.clear()
        locker = sqlite3.connect(tmp_path / "dshkit.db", isolation_level=None)
        locker.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreBusy, match="locked by another process"), store.transaction():
                pass
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        assert [holder for holder, _ in told] == [f"another process writing {store.path}"]
        assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] == 1500  # as it was
        with store.transaction():  # free again: no wait, nothing told
            pass
        assert len(told) == 1


def test_state_is_private_and_an_open_one_is_tightened(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with Store(state):
        pass
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "dshkit.db").stat().st_mode) == 0o600
    os.chmod(state, 0o755)
    (state / "plain").mkdir(mode=0o755)
    os.chmod(state / "plain", 0o755)
    words = state / "plain" / "x.jsonl"
    words.write_text("my password is hunter2")
    os.chmod(words, 0o644)
    with Store(state) as store:
        assert store.tightened and "755" in store.tightened[0]
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "plain").stat().st_mode) == 0o700
    assert stat.S_IMODE(words.stat().st_mode) == 0o600
    with Store(state) as store:
        assert store.tightened == []  # once is enough


def test_a_bug_in_sql_stays_a_bug_the_files_trouble_is_the_stores(tmp_path: Path) -> None:
    # The store names what is wrong with its file (StoreError); a mistake in a statement is a
    # bug, left as SQLite raised it so that it is seen as one.
    with Store(tmp_path) as store:
        with pytest.raises(sqlite3.OperationalError, match="no such table"):
            store.db.execute("SELECT * FROM no_such_table")
        with pytest.raises(sqlite3.IntegrityError):
            store.db.execute("INSERT INTO meta (key, value) VALUES ('k', NULL)")
        with pytest.raises(Invalid, match="larger than the state database can hold"):
            store.db.execute("SELECT * FROM meta LIMIT ?", (1 << 64,))
        rows = store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        assert "meta" in {row["name"] for row in rows}  # rows as before, by column name


_COMMIT = """
import sys
from dshkit.store import Store
with Store(sys.argv[1]) as store:
    store.set_meta("seen", sys.argv[2])
"""


@pytest.mark.process
def test_a_store_opened_again_in_the_same_process_leaves_the_first_one_seeing_commits(
    tmp_path: Path,
) -> None:
    # Closing any descriptor of the database file drops the process's POSIX locks on it, after
    # which a connection already open went on reading an old snapshot: a second store opened
    # (and closed) beside a long-lived one must not open the file by hand.
    def commit(value: str) -> None:
        subprocess.run([sys.executable, "-c", _COMMIT, str(tmp_path), value], check=True)

    with Store(tmp_path) as watcher:
        commit("1")
        assert watcher.get_meta("seen") == "1"
        for value in ("2", "3", "4"):
            with Store(tmp_path) as other:  # a request handler's store, beside the stream's
                other.get_meta("seen")
            commit(value)
            commit(value)  # the first commit after a lost lock could still be seen; not later
            assert watcher.get_meta("seen") == value
