"""The hooks' terms (`dshkit.hookio`): the call a face receives, its store, and the answer
it gives in dshkit's own words."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dshkit.errors import Invalid
from dshkit.hookio import JOIN, LIMIT, Answer, Call, room_after, state_path
from dshkit.hooks import run
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


def test_a_dry_call_lends_the_store_it_was_given_and_leaves_its_transaction_open(
    tmp_path: Path,
) -> None:
    with Store(tmp_path) as store:
        store.db.execute("BEGIN")  # the preview's, rolled back when it is done
        call = Call("SessionStart", {}, "claude", str(tmp_path), dry=True, store=store, step=False)
        with call.open_store() as lent:
            assert lent is store
            lent.set_meta("test.dry", "1")
        assert store.db.in_transaction and call.state == str(store.state_dir)
        assert call.state_dir == store.state_dir and call.is_step is False
        call.close()  # (nothing of its own to close)
        assert store.get_meta("test.dry") == "1"
        store.db.execute("ROLLBACK")
        assert store.get_meta("test.dry") is None


def test_a_relative_state_directory_is_refused() -> None:
    with pytest.raises(Invalid, match="absolute"):
        Call("PreToolUse", {}, "claude", "state").state  # noqa: B018
    with pytest.raises(Invalid):
        state_path("relative/dir")


def test_an_answer_in_dshkits_own_words() -> None:
    assert Answer("x", why="nothing to say").words() == {}
    assert Answer("x", "text").words() == {"additionalContext": "text"}
    assert Answer("x", decision=("block", "held")).words() == {
        "decision": "block",
        "reason": "held",
    }
    assert Answer("x", "t", decision=("ask", "sure?")).words() == {
        "additionalContext": "t",
        "permissionDecision": "ask",
        "permissionDecisionReason": "sure?",
    }
    assert [p.source for p in Answer("profile", "t").pieces] == ["profile"]
    with pytest.raises(ValueError, match="a decision is one of"):
        Answer("x", decision=("maybe", "?"))


def test_the_room_a_face_is_told_is_what_the_answer_has_left() -> None:
    assert room_after("SessionStart", []) == LIMIT
    assert room_after("SessionStart", [("a", "x" * 100)]) == LIMIT - 100 - len(JOIN)
    two = [("a", "x" * 100), ("b", "y" * 50)]
    assert room_after("SessionStart", two) == LIMIT - 150 - 2 * len(JOIN)
    # A context the cap drops takes no room; astral characters count twice, as harnesses do.
    dropped = [("a", "x" * 100), ("b", "z" * LIMIT)]
    assert room_after("SessionStart", dropped) == LIMIT - 100 - len(JOIN)
    assert room_after("SessionStart", [("a", "😀")]) == LIMIT - 2 - len(JOIN)
    assert room_after("SessionStart", [("a", "z" * (LIMIT - 1))]) == 0


def test_a_block_inside_another_leaves_the_outer_transaction_alone(tmp_path: Path) -> None:
    # A face reading `Call.is_step` (its own block) while it holds the store in a transaction.
    call = Call("UserPromptSubmit", {"session_id": "s"}, "claude", str(tmp_path))
    with call.open_store() as store, store.transaction():
        store.set_meta("test.outer", "1")
        with call.open_store() as inner:
            assert inner.get_meta("test.outer") == "1"
        assert store.db.in_transaction  # still the outer block's, not rolled back
    with call.open_store() as store:
        assert store.get_meta("test.outer") == "1"
    call.close()


@pytest.mark.parametrize("given", [None, "", "/abs/state", "~/state", "relative/state"])
def test_the_hook_entry_point_spells_the_state_directory_as_calls_do(
    given: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # hooks.run keeps its own copy, so that a call no handler wants does not load hookio.
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / ".dsh"))
    if given == "relative/state":
        with pytest.raises(Invalid):
            state_path(given)
        with pytest.raises(Invalid):
            run._state_dir(given)
    else:
        assert run._state_dir(given) == state_path(given)
