"""Which tests start processes, and the watch that keeps their markers honest.

`pytest -m "not process"` is the quickest loop and `-m "not real and not browser"` the one a
clone without the real CLIs or Chromium can run, so a test says what it starts:

- `process`: any process at all (a `dshkit`, a harness's CLI or its fake, a helper script,
  git). Given by `@pytest.mark.process` (or a module's `pytestmark`) where the process is the
  point, by conftest to every `real` and `browser` test, and to every test asking for a
  fixture of `PROCESS_FIXTURES`.
- `real`: a program under `.cache/harnesses` (the real Claude Code, Codex, DSH CLIs).
- `browser`: Chromium (directly, or through Playwright's driver).

While a test runs (setup, call and teardown), every way this process can start another is
watched (fork, exec, posix_spawn, `os.system`, in any thread); a test that started one without
the markers it needs fails, naming the programs.
"""

from __future__ import annotations

import _posixsubprocess
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

# Fixtures that start a process for the test: a test asking for one is marked `process`.
PROCESS_FIXTURES: frozenset[str] = frozenset()
# Markers whose tests always start a process (the real CLIs, Chromium).
ALWAYS = ("real", "browser")
# What a started program's path says it needs, besides `process`.
_REAL = os.sep + os.path.join(".cache", "harnesses") + os.sep
_BROWSERS = ("chromium", "chromium-browser", "chrome", "headless_shell", "chrome-headless-shell")
_PLAYWRIGHT = os.sep + os.path.join("playwright", "driver") + os.sep

_started: list[str] = []
_lock = threading.Lock()
_watching = False
# Whether the test running is marked `real` (`real.binary` refuses the CLIs to any other).
running_real = False


def _noted(what: Callable[..., T], name: Callable[..., str]) -> Callable[..., T]:
    """`what`, noting each call (by `name(*args)`) while a test is watched."""

    def watched(*args: Any, **kwargs: Any) -> T:
        if _watching:
            with _lock:
                _started.append(name(*args))
        return what(*args, **kwargs)

    return watched


def _program(args: Any) -> str:
    """The program of an argv (bytes or text), or what stands for it."""
    try:
        first = args[0]
    except (IndexError, TypeError):
        return "?"
    return os.fsdecode(first) if isinstance(first, bytes | str) else repr(first)


def install() -> None:
    """Watch every way of starting a process (once per test session)."""
    if getattr(install, "done", False):
        return
    install.done = True  # type: ignore[attr-defined]
    fork_exec = _noted(_posixsubprocess.fork_exec, lambda args, *rest: _program(args))
    _posixsubprocess.fork_exec = fork_exec  # multiprocessing's spawn
    subprocess._fork_exec = fork_exec  # type: ignore[attr-defined]  # subprocess's own name
    os.fork = _noted(os.fork, lambda: "fork()")
    os.forkpty = _noted(os.forkpty, lambda: "forkpty()")
    os.posix_spawn = _noted(os.posix_spawn, lambda path, *rest: os.fsdecode(path))
    os.posix_spawnp = _noted(os.posix_spawnp, lambda path, *rest: os.fsdecode(path))
    os.system = _noted(os.system, lambda command: f"sh -c {command!r}")


@contextmanager
def watched(real: bool) -> Iterator[None]:
    """`started()` says the programs started (in any thread) while the block runs; `real`:
    whether the test is marked so."""
    global _watching, running_real
    with _lock:
        _started.clear()
    _watching, running_real = True, real
    try:
        yield
    finally:
        _watching, running_real = False, False
        with _lock:
            _started.clear()


def started() -> list[str]:
    """The programs started since `watched()` began."""
    with _lock:
        return list(_started)


def needed(programs: list[str]) -> dict[str, list[str]]:
    """The markers that starting `programs` needs, each with the programs that need it."""
    found: dict[str, list[str]] = {}
    for program in dict.fromkeys(programs):
        found.setdefault("process", []).append(program)
        if _REAL in program:
            found.setdefault("real", []).append(program)
        if os.path.basename(program) in _BROWSERS or _PLAYWRIGHT in program:
            found.setdefault("browser", []).append(program)
    return found


def unmarked(marked: Callable[[str], bool]) -> str | None:
    """What the test running started without the markers it needs (`marked(name)`: whether
    it has the marker `name`), said for its failure; None when nothing is missing."""
    missing = {name: programs for name, programs in needed(started()).items() if not marked(name)}
    if not missing:
        return None
    said = "; ".join(f"`{name}` for {', '.join(progs[:4])}" for name, progs in missing.items())
    return (
        f"it started processes without the markers they need ({said}): mark it "
        "(@pytest.mark.NAME), or run what it runs in this process (tests/support/cli.py "
        "run_dshkit, tests/support/web.py Running)"
    )
