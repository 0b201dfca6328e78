"""A delivery SessionStart could not make (the store locked by another process) is made once,
at the next event that carries context: the session's next prompt. Real processes: a locker
holding `BEGIN EXCLUSIVE` on the database, and `dshkit hook` as the harnesses run it."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from dshkit.capability import read_facts, report
from dshkit.capability.service import cache_key
from dshkit.store import CAPABILITY_DELIVERY, PROFILE_DELIVERY, Store

from ..support.hooks import LOCKER, claude, codex, context, dsh, hook
from ..support.profile import PROFILE, effective, store_version


@contextmanager
def locked(state: Path) -> Iterator[None]:
    """Another process holds the database exclusively (readers shut out too) for the block."""
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(state / "dshkit.db"), "exclusive"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert locker.stdout is not None and locker.stdout.readline() == b"locked\n"
        yield
    finally:
        locker.communicate(b"", timeout=30)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state with a profile, and fresh capability results for the sessions below (so the
    hooks start no probe)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / ".dsh"))
    with Store(tmp_path / ".dsh" / "dshkit") as store:
        store_version(store, PROFILE)
        for harness, payload in (("claude", start("claude")), ("codex", start("codex"))):
            key = cache_key(read_facts(store, harness, payload, []), str(tmp_path / "p"))
            store.db.execute(
                "INSERT OR REPLACE INTO capability_probes (key, at, channels) VALUES (?, ?, '[]')",
                (key, int(time.time() * 1000)),
            )
    (tmp_path / "p").mkdir()
    return tmp_path


def start(harness: str, **extra: Any) -> dict[str, Any]:
    if harness == "claude":
        return {**claude("c1", source="startup", permission_mode="default"), **extra}
    return {**codex("x1"), **extra}


def prompt(harness: str, home: Path, words: str) -> dict[str, Any]:
    payload = start(harness, cwd=str(home / "p"))
    payload.pop("source", None)
    return {**payload, "hook_event_name": "UserPromptSubmit", "prompt": words}


def capability_text(home: Path, harness: str) -> str:
    with Store(home / ".dsh" / "dshkit") as store:
        facts = read_facts(store, harness, start(harness), [])
        return report(store, facts, str(home / "p")).text


@pytest.mark.parametrize("harness", ["claude", "codex"])
@pytest.mark.process
def test_a_start_that_found_the_store_locked_is_made_good_by_the_next_prompt(
    home: Path, harness: str
) -> None:
    state = home / ".dsh" / "dshkit"
    on = {"DSHKIT_CAPABILITY": "on"}
    with locked(state):
        out, log = hook(home, "SessionStart", start(harness, cwd=str(home / "p")), **on)
    assert out == {}  # nothing could be read: no profile, no facts
    assert "handler dshkit.profile.hook:on_session_start failed" in log and "locked" in log
    key = (harness, "c1" if harness == "claude" else "x1")
    with Store(state) as store:
        assert not store.delivered(key, PROFILE_DELIVERY)
    # The lock is gone: the session's first prompt carries what the start owed, once.
    first, _ = hook(home, "UserPromptSubmit", prompt(harness, home, "fix the build"), **on)
    assert context(first) == effective(home) + "\n\n" + capability_text(home, harness)
    with Store(state) as store:
        assert store.delivered(key, PROFILE_DELIVERY) and store.delivered(key, CAPABILITY_DELIVERY)
    again, _ = hook(home, "UserPromptSubmit", prompt(harness, home, "and the tests"), **on)
    assert again == {}
    # Nothing owed any more: a resumed start delivers nothing either.
    assert hook(home, "SessionStart", start(harness, cwd=str(home / "p"), source="resume"))[0] == {}


def test_a_delivered_start_is_not_repeated_by_the_next_prompt(home: Path) -> None:
    started, _ = hook(home, "SessionStart", start("claude", cwd=str(home / "p")))
    assert context(started) == effective(home)
    assert hook(home, "UserPromptSubmit", prompt("claude", home, "hi"))[0] == {}


@pytest.mark.process
def test_dsh_takes_it_with_the_next_prompt_after_a_locked_first_one(home: Path) -> None:
    # DSH's bridge carries context with UserPromptSubmit (before every model step).
    state = home / ".dsh" / "dshkit"
    with locked(state):
        out, log = hook(home, "UserPromptSubmit", dsh("d1", prompt="fix it"))
    assert out == {} and "handler dshkit.profile.hook:on_prompt failed" in log
    first, _ = hook(home, "UserPromptSubmit", dsh("d1", prompt="fix it"))
    assert context(first) == effective(home)
    assert hook(home, "UserPromptSubmit", dsh("d1", prompt=effective(home)))[0] == {}
