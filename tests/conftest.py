"""Fixtures shared by every test (helpers live in tests/support)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dshkit.sessions import Scanner
from dshkit.store import Store

from .support.graft_driver import World, make_world

# Hook tests compare whole answers; capability facts (which start detached browser probes)
# are off unless a test turns them on (tests/hooks/test_capability.py).
os.environ.setdefault("DSHKIT_CAPABILITY", "off")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "state") as opened:
        yield opened


@pytest.fixture(name="world")
def graft_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """Where graft's handoffs happen: the fake Claude Code CLI and its sessions root, in the
    environment (the state directory is `store`'s)."""
    made = make_world(tmp_path)
    for name, value in made.env().items():
        monkeypatch.setenv(name, value)
    return made


@pytest.fixture
def scanner(store: Store) -> Scanner:
    return Scanner(store)
