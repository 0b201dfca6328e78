"""Fixtures shared by every test (helpers live in tests/support)."""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from dshkit.install import launcher
from dshkit.sessions import Scanner
from dshkit.store import Store

from .support import processes
from .support.graft_driver import World, make_world
from .support.paths import clear_stray_repository

# Hook tests compare whole answers; capability facts (which start detached browser probes)
# are off unless a test turns them on (tests/capability/test_hook.py).
os.environ.setdefault("DSHKIT_CAPABILITY", "off")


def pytest_configure(config: pytest.Config) -> None:
    processes.install()
    clear_stray_repository()
    # The hook launcher's probe runs this interpreter twice, once per process (`replayed` keeps
    # its answer): run here, an install in a test's own process starts none.
    launcher.replayed(sys.executable)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`process` on every test that starts a process by what it is (`real`, `browser`) or by
    a fixture it asks for (see tests/support/processes.py)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & processes.PROCESS_FIXTURES or any(
            item.get_closest_marker(name) for name in processes.ALWAYS
        ):
            item.add_marker(pytest.mark.process)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    with processes.watched(real=item.get_closest_marker("real") is not None):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A test that started processes without the markers they need (`process`; `real` for
    the real CLIs, `browser` for Chromium) fails at its teardown, naming them."""
    report = yield
    if call.when == "teardown" and report.passed:
        said = processes.unmarked(lambda name: item.get_closest_marker(name) is not None)
        if said is not None:
            report.outcome = "failed"
            report.longrepr = f"{item.nodeid}: {said}"
    return report


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
