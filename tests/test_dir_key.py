"""One spelling of "the same directory" (`sessions.dir_key`, the real path): a symlinked `$PWD`
and its target are one directory for pending handoffs and for the capability cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dshkit.capability.facts import Facts
from dshkit.capability.service import cache_key, claim_probe, report
from dshkit.graft.lifecycle import begin, claim_pending, pending_for_cwd
from dshkit.store import Store

from .support.graft_driver import World, make_world, plan_for
from .support.graft_hooks import FIXED, context, hook


@pytest.fixture
def world(tmp_path: Path) -> World:
    made = make_world(tmp_path)
    made.state.mkdir(mode=0o700)
    (made.state / "config.toml").write_text(FIXED)
    return made


@pytest.fixture
def link(world: World) -> Path:
    """A symlink to the world's working directory, as a symlinked `$PWD` spells it."""
    path = world.cwd.parent / "link-to-work"
    path.symlink_to(world.cwd, target_is_directory=True)
    assert os.path.realpath(path) == str(world.cwd) != str(path)
    return path


def test_a_handoff_waiting_in_a_symlinked_directory_is_found_from_its_target(
    world: World, link: Path
) -> None:
    with Store(world.state) as store:
        first = begin(store, plan_for("s-via-link", str(link)), ignite=False)
        found = pending_for_cwd(store, "claude", str(world.cwd))
        assert found is not None and found.txn_id == first.id
        assert claim_pending(store, first.id, "claude", "s-next") is not None
        # …and the other way round, whatever the spelling of the symlink.
        second = begin(store, plan_for("s-in-target", str(world.cwd)), ignite=False)
        for spelling in (str(link), f"{link}/", f"{link}/sub/.."):
            waiting = pending_for_cwd(store, "claude", spelling)
            assert waiting is not None and waiting.txn_id == second.id, spelling
        assert pending_for_cwd(store, "claude", str(world.cwd.parent)) is None


def test_a_row_stored_under_a_symlink_spelling_is_found_from_the_target(
    world: World, link: Path
) -> None:
    # Rows written before dir_key kept the normpath of the cwd they were registered from.
    with Store(world.state) as store:
        txn = begin(store, plan_for("s-old", str(world.cwd)), ignite=False)
        with store.transaction() as db:
            db.execute("UPDATE graft_pending SET cwd = ? WHERE txn_id = ?", (str(link), txn.id))
        found = pending_for_cwd(store, "claude", f"{world.cwd}/")
        assert found is not None and found.txn_id == txn.id


@pytest.mark.parametrize("registered_in", ["link", "target"])
def test_session_start_in_either_spelling_picks_the_handoff_up(
    world: World, link: Path, registered_in: str
) -> None:
    source_cwd, started_cwd = (link, world.cwd) if registered_in == "link" else (world.cwd, link)
    with Store(world.state) as store:
        begin(store, plan_for("s-src", str(source_cwd)), ignite=False)
    started = {"session_id": "s-next", "cwd": str(started_cwd), "source": "startup"}
    first = context(hook(world, "SessionStart", started))
    assert "<!-- graft-identity:" in first and "s-src" in first
    assert context(hook(world, "SessionStart", {**started, "session_id": "s-third"})) == ""


def test_the_capability_cache_key_is_the_same_for_both_spellings(world: World, link: Path) -> None:
    facts = Facts("claude", "workspace-write", "on-request", "default")
    keys = {cache_key(facts, spelling) for spelling in (str(world.cwd), str(link), f"{link}/")}
    assert len(keys) == 1
    # A probe started for one spelling is the one the other spelling's report waits for.
    with Store(world.state) as store:
        assert claim_probe(store, cache_key(facts, str(link)))
        assert report(store, facts, str(world.cwd)).probing
        assert not claim_probe(store, cache_key(facts, str(world.cwd)))
