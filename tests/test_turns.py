"""A session's turn in the store: what opens and closes it, what dshkit's own text says, and
when an open turn is taken as lost."""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dshkit import storeview, turns
from dshkit.hooks.run import call
from dshkit.store import Store

from .support.cli import environment

KEY = ("dsh", "d-1")
PROFILE = "## 关于这位用户（dshkit 根据他以往的会话整理）\n\n以下是协作习惯"


def test_a_prompt_opens_a_turn_and_a_stop_let_through_closes_it(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        assert not turns.is_step(store, KEY, "fix the bug")  # nothing known: a prompt
        turns.record(store, KEY, "UserPromptSubmit", step=False, blocked=False, context="")
        assert turns.is_step(store, KEY, "另一个钩子给的上下文")
        turns.record(store, KEY, "Stop", step=False, blocked=True, context="")
        assert turns.is_step(store, KEY, "另一个钩子给的上下文")  # sent on: still open
        turns.record(store, KEY, "Stop", step=False, blocked=False, context="")
        assert not turns.is_step(store, KEY, "next request")
        assert not turns.is_step(store, ("dsh", "d-2"), "next request")


def test_dshkits_own_text_is_a_step_and_a_held_prompt_opens_nothing(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        turns.record(store, KEY, "UserPromptSubmit", step=False, blocked=True, context="")
        assert not turns.is_step(store, KEY, "the person's next words")
        turns.record(store, KEY, "UserPromptSubmit", step=False, blocked=False, context=PROFILE)
        turns.record(store, KEY, "Stop", step=False, blocked=False, context="")
        assert turns.is_step(store, KEY, f"{PROFILE}……\n\n其他上下文")
        assert not turns.is_step(store, KEY, "next request")


def test_a_start_that_opens_nothing_and_says_nothing_leaves_no_row(tmp_path: Path) -> None:
    # DSH's start (its context comes with the first prompt) is recorded by the step after
    # its answer, which may end after that prompt: a row saying what no row says would make
    # the prompt's store differ by that race (a template holds to its rows).
    turn = "SELECT open, opened_at, heads FROM prompt_turns WHERE session_id = ?"
    with Store(tmp_path) as store:
        turns.record(
            store, KEY, "SessionStart", step=False, blocked=False, context="", source="startup"
        )
        assert store.db.execute(turn, (KEY[1],)).fetchall() == []
        assert not turns.is_step(store, KEY, "fix the bug")
        turns.record(
            store, KEY, "SessionStart", step=False, blocked=False, context=PROFILE, source="startup"
        )
        assert [row[2] for row in store.db.execute(turn, (KEY[1],))] == [turns.head(PROFILE)]
        assert turns.is_step(store, KEY, PROFILE)


def test_an_open_turn_is_lost_after_a_long_time(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        turns.record(
            store, KEY, "UserPromptSubmit", step=False, blocked=False, context="", now_ms=1_000
        )
        assert turns.is_step(store, KEY, "x", now_ms=1_000 + turns.STALE_MS - 1)
        assert not turns.is_step(store, KEY, "x", now_ms=1_000 + turns.STALE_MS)


def test_heads_are_few_short_and_distinct() -> None:
    assert turns.head("  短  ") == ""  # too short to say anything
    assert turns.head("长" * 100) == "长" * turns.HEAD_CHARS
    assert not turns.changes("PostToolUse", step=False, blocked=False, context="")
    assert turns.changes("PostToolUse", step=False, blocked=False, context=PROFILE)
    assert not turns.changes("UserPromptSubmit", step=True, blocked=False, context="")


def test_only_the_latest_heads_are_kept(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        for n in range(turns.KEPT_HEADS + 2):
            context = f"第 {n:02d} 段注入的上下文，足够长"
            turns.record(store, KEY, "PostToolUse", step=False, blocked=False, context=context)
        assert not turns.is_step(store, KEY, "第 00 段注入的上下文，足够长")
        assert turns.is_step(store, KEY, f"第 {turns.KEPT_HEADS + 1:02d} 段注入的上下文，足够长")


def test_a_turn_ended_without_the_store_is_ended_as_the_store_ends_it(tmp_path: Path) -> None:
    # `end` is the UPDATE `record` makes at a Stop let through, on a connection of its own.
    assert turns.end(str(tmp_path / "none"), KEY[1])  # no store: no turn is open
    with Store(tmp_path) as store:
        turns.record(store, KEY, "UserPromptSubmit", step=False, blocked=False, context="")
        turns.record(
            store, ("dsh", "d-2"), "UserPromptSubmit", step=False, blocked=False, context=""
        )
    assert turns.end(str(tmp_path), KEY[1])
    assert turns.end(str(tmp_path), "c-1")  # (a session with no turn kept: nothing to do)
    with Store(tmp_path) as store:
        assert not turns.is_step(store, KEY, "next request")
        assert turns.is_step(store, ("dsh", "d-2"), "另一个钩子给的上下文")  # another's: open


def test_a_turn_the_store_must_end_is_left_to_it(tmp_path: Path) -> None:
    import sqlite3

    from dshkit.store import SCHEMA_VERSION

    assert turns.SCHEMA_VERSION == SCHEMA_VERSION  # the schema `end` writes is the store's
    with Store(tmp_path) as store:
        turns.record(store, KEY, "UserPromptSubmit", step=False, blocked=False, context="")
    # Another process writing (a transaction held): not within its wait.
    holder = sqlite3.connect(tmp_path / "dshkit.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert not turns.end(str(tmp_path), KEY[1], busy_timeout_s=0.05)
    finally:
        holder.execute("ROLLBACK")
    # A schema this module does not know (a newer dshkit's): the store refuses it, so does
    # `end`, writing nothing.
    holder.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    holder.close()
    assert not turns.end(str(tmp_path), KEY[1])
    check = sqlite3.connect(tmp_path / "dshkit.db")
    assert check.execute("SELECT open FROM prompt_turns").fetchall() == [(1,)]
    check.close()


def test_a_turn_opened_without_the_store_is_opened_as_the_store_opens_it(tmp_path: Path) -> None:
    # `begin` is what `record` writes for a person's prompt let through that carried no
    # context, on a connection of its own; where that cannot be made, it is the store's.
    import sqlite3

    assert not turns.begin(str(tmp_path / "none"), KEY)  # no store: made by none here
    assert not (tmp_path / "none").exists()
    with Store(tmp_path) as store:
        turns.record(store, KEY, "UserPromptSubmit", step=True, blocked=False, context=PROFILE)
        turns.record(store, KEY, "Stop", step=False, blocked=False, context="")
        assert not turns.is_step(store, KEY, "fix the bug")
    assert turns.begin(str(tmp_path), KEY, now_ms=1_800_000_000_000)
    assert turns.begin(str(tmp_path), ("dsh", "d-2"), now_ms=1_800_000_000_000)  # (no row yet)
    with Store(tmp_path) as store:
        rows = store.db.execute(
            "SELECT session_id, open, opened_at, heads FROM prompt_turns ORDER BY session_id"
        ).fetchall()
    assert [tuple(row) for row in rows] == [
        ("d-1", 1, 1_800_000_000_000, turns.head(PROFILE)),  # (what dshkit said: kept)
        ("d-2", 1, 1_800_000_000_000, ""),
    ]
    holder = sqlite3.connect(tmp_path / "dshkit.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing: not within its wait
    try:
        assert not turns.begin(str(tmp_path), KEY, busy_timeout_s=0.05)
    finally:
        holder.execute("ROLLBACK")
    holder.execute(f"PRAGMA user_version={turns.SCHEMA_VERSION + 1}")  # a newer dshkit's
    holder.close()
    assert not turns.begin(str(tmp_path), ("dsh", "d-3"))


def test_a_turns_end_writes_only_where_a_turn_is_open_on_the_calls_one_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Stop no handler answers now: the gate's look and the look for an open turn share one
    # read-only connection (`storeview.Shared`); only a session with a turn open (DSH's)
    # opens one that writes, and its turn is ended before the answer.
    state = tmp_path / ".dsh" / "dshkit"
    with Store(state) as store:
        turns.record(store, KEY, "UserPromptSubmit", step=False, blocked=False, context="")
    core, opened = storeview.sqlite_core(), []

    class Counted:
        def connect(self, name: str, **kwargs: Any) -> Any:
            opened.append(name.rpartition("mode=")[2])
            return core.connect(name, **kwargs)

    monkeypatch.setattr(storeview, "sqlite_core", Counted)
    monkeypatch.setattr(os, "environ", {**environment(tmp_path)})
    for session, modes in (("c-1", ["ro"]), (KEY[1], ["ro", "rw"])):
        payload = {"session_id": session, "cwd": str(tmp_path), "hook_event_name": "Stop"}
        opened.clear()
        steps: list[Callable[[], None]] = []
        with tempfile.TemporaryFile() as stdin:  # (read through its descriptor, as a pipe is)
            stdin.write(json.dumps(payload).encode())
            stdin.seek(0)
            out = io.BytesIO()
            assert call(["Stop"], stdin, out, io.BytesIO(), os.environ, deferred=steps) == 0
        assert out.getvalue() == b"" and steps  # (the refresh and the harvest: after it)
        assert opened == modes, session
    with Store(state) as store:
        assert not turns.is_step(store, KEY, "next request")  # ended
