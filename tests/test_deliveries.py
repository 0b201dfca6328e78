"""One ledger of what reached a session once (`Store.delivered`, `Store.mark_delivered`): for
each kind, a delivery whose answer was never written is made at the next event, and one that
was written is never made again. Hooks run as the harnesses run them (`dshkit hook EVENT`)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from dshkit.capability import read_facts
from dshkit.capability.service import cache_key
from dshkit.graft import ledger, marker
from dshkit.store import (
    CAPABILITY_DELIVERY,
    GRAFT_NOTICE_DELIVERY,
    MIGRATIONS,
    PROFILE_DELIVERY,
    SCHEMA_VERSION,
    Store,
)

from .support.cli import adopt_environment
from .support.hooks import claude, context, dsh, hook, unanswered
from .support.profile import PROFILE, effective, store_version


def fire(home: Path, event: str, payload: dict[str, Any], *, written: bool, **env: str) -> Any:
    """One hook call; with `written` False the harness is gone before the answer is written
    (its end of stdout closed), so nothing may be recorded as delivered."""
    if written:
        return hook(home, event, payload, **env)[0]
    assert "answer not delivered" in unanswered(home, event, payload, **env)
    return None


def state(home: Path) -> Store:
    return Store(home / ".dsh" / "dshkit")


def test_the_ledger_by_itself(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        key, other = ("claude", "s1"), ("codex", "s1")
        assert not store.delivered(key, "k")
        store.mark_delivered(key, "k", "a")
        assert store.delivered(key, "k") and store.delivered(key, "k", "a")
        assert not store.delivered(key, "k", "b") and not store.delivered(other, "k")
        assert not store.delivered(key, "another kind")
        store.mark_delivered(key, "k", "b")  # kept beside "a"
        assert store.delivered(key, "k", "a") and store.delivered(key, "k", "b")
        store.mark_delivered(key, "k", "c", superseding=True)  # the latest only
        assert not store.delivered(key, "k", "a") and store.delivered(key, "k", "c")
        with pytest.raises(RuntimeError), store.transaction():  # inside a caller's transaction,
            store.mark_delivered(other, "k", "x")  # it rolls back with it
            raise RuntimeError
        assert not store.delivered(other, "k")
        store.mark_delivered(other, "k", "x")
        store.forget_sessions([key])
        assert not store.delivered(key, "k") and store.delivered(other, "k", "x")


@pytest.mark.parametrize("harness", ["claude", "dsh"])
def test_the_profile_is_injected_once_the_answer_was_written(tmp_path: Path, harness: str) -> None:
    with state(tmp_path) as store:
        store_version(store, PROFILE)
    text = effective(tmp_path)
    # Claude Code's context goes with SessionStart, DSH's with the first UserPromptSubmit.
    event, payload = (
        ("SessionStart", claude("p1", source="startup"))
        if harness == "claude"
        else ("UserPromptSubmit", dsh("p1", prompt="hi"))
    )
    assert fire(tmp_path, event, payload, written=False) is None
    with state(tmp_path) as store:
        assert not store.delivered((harness, "p1"), PROFILE_DELIVERY)
    assert context(fire(tmp_path, event, payload, written=True)) == text
    with state(tmp_path) as store:
        assert store.delivered((harness, "p1"), PROFILE_DELIVERY)
    assert fire(tmp_path, event, payload, written=True) == {}


def test_capability_facts_are_delivered_once_the_answer_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = claude("c1", source="startup", permission_mode="default", cwd=str(tmp_path))
    adopt_environment(monkeypatch, tmp_path)  # what the hook processes see: the keys agree
    with state(tmp_path) as store:
        # Fresh results for the session's key: the hooks start no probe.
        key = cache_key(read_facts(store, "claude", payload, []), str(tmp_path))
        store.db.execute(
            "INSERT INTO capability_probes (key, at, channels) VALUES (?, ?, '[]')",
            (key, int(time.time() * 1000)),
        )
    on = {"DSHKIT_CAPABILITY": "on"}
    assert fire(tmp_path, "SessionStart", payload, written=False, **on) is None
    with state(tmp_path) as store:
        assert not store.delivered(("claude", "c1"), CAPABILITY_DELIVERY)
    prompt = {**payload, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    facts = context(fire(tmp_path, "UserPromptSubmit", prompt, written=True, **on))
    assert facts and "default" in facts
    with state(tmp_path) as store:
        assert store.delivered(("claude", "c1"), CAPABILITY_DELIVERY, key)
    assert fire(tmp_path, "UserPromptSubmit", prompt, written=True, **on) == {}
    with state(tmp_path) as store:  # the key was the hooks' own: no probe was started
        probes = store.db.execute("SELECT key, started FROM capability_probes").fetchall()
        assert [tuple(row) for row in probes] == [(key, None)]


def test_a_graft_notice_is_shown_once_the_answer_was_written(tmp_path: Path) -> None:
    with state(tmp_path) as store:
        marker.mark(str(store.state_dir))  # as a handoff's begin does, before its ledger row
        assert ledger.queue_notice(store, "claude", "g1", 7, "交接 #7 已回滚，请继续工作。")
    prompt = claude("g1", hook_event_name="UserPromptSubmit", prompt="hi")
    assert fire(tmp_path, "UserPromptSubmit", prompt, written=False) is None
    with state(tmp_path) as store:
        assert ledger.owed_notices(store, "claude", "g1") is not None
        assert not store.delivered(("claude", "g1"), GRAFT_NOTICE_DELIVERY)
    assert context(fire(tmp_path, "UserPromptSubmit", prompt, written=True)) == (
        "交接 #7 已回滚，请继续工作。"
    )
    with state(tmp_path) as store:
        assert ledger.owed_notices(store, "claude", "g1") is None
        assert store.delivered(("claude", "g1"), GRAFT_NOTICE_DELIVERY, "7")
    assert fire(tmp_path, "UserPromptSubmit", prompt, written=True) == {}


def test_the_migration_carries_the_old_records_over(tmp_path: Path) -> None:
    # A store of schema 14 holding a delivery of each kind in its old place.
    assert SCHEMA_VERSION >= 15  # the migrations after 15 run on top of it
    db = sqlite3.connect(tmp_path / "dshkit.db", isolation_level=None)
    for script in MIGRATIONS[:14]:
        db.executescript(script)
    db.execute("PRAGMA user_version=14")
    db.execute("INSERT INTO hook_sessions VALUES ('claude', 'p', 1000)")
    db.execute("INSERT INTO capability_sessions VALUES ('claude', 'c', '{}', 'key#pending')")
    db.execute("INSERT INTO capability_sessions VALUES ('claude', 'n', '{}', NULL)")
    db.execute("INSERT INTO graft_notices VALUES ('dsh', 'g', 3, 'shown', 1, 2000)")
    db.execute("INSERT INTO graft_notices VALUES ('dsh', 'g', 4, 'owed', 1, NULL)")
    db.close()
    with Store(tmp_path) as store:
        rows = store.db.execute(
            "SELECT harness, session_id, kind, what, delivered_at FROM deliveries ORDER BY kind"
        ).fetchall()
        assert [tuple(row) for row in rows] == [
            ("claude", "c", CAPABILITY_DELIVERY, "key#pending", 0),
            ("dsh", "g", GRAFT_NOTICE_DELIVERY, "3", 2000),
            ("claude", "p", PROFILE_DELIVERY, "", 1000),
        ]
        owed = ledger.owed_notices(store, "dsh", "g")
        assert owed is not None and owed.txn_ids == (4,) and owed.text == "owed"
        assert store.delivered(("claude", "p"), PROFILE_DELIVERY)
