"""`dshkit` as a test runs it: a separate `python -m dshkit` process in one scrubbed
environment, or the click application in this process with the same environment."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from .paths import PYTHONPATH

COMMAND = [sys.executable, "-m", "dshkit"]
# What `dshkit install-hooks` writes into a harness's settings: the script beside this Python.
SCRIPT = str(Path(sys.executable).parent / "dshkit")
BARE_PATH = "/usr/bin:/bin"
# Claude Code's and Codex's homes are left to their defaults under HOME, not named: a named
# CLAUDE_CONFIG_DIR also moves Claude Code's user file (~/.claude.json) into it.
_HOMES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME")
# Where this machine's Chromium is: not one of dshkit's settings, so the caller's is kept.
_MACHINE = ("DSHKIT_CHROMIUM",)


def environment(home: Path, env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment a dshkit process runs with under `home`: HOME and DSH_HOME there (so
    ~/.claude and ~/.codex too), none of the caller's DSHKIT_* settings but the Chromium to
    use (capability facts off, as in the test process), `tests.support` importable (for
    DSHKIT_HOOK_HANDLERS); then `env`, where None takes a variable out."""
    made = {
        name: value
        for name, value in os.environ.items()
        if (not name.startswith("DSHKIT_") or name in _MACHINE) and name not in _HOMES
    }
    made.update(
        HOME=str(home),
        DSH_HOME=str(home / ".dsh"),
        PYTHONPATH=PYTHONPATH,
        DSHKIT_CAPABILITY="off",
    )
    for name, value in (env or {}).items():
        if value is None:
            made.pop(name, None)
        else:
            made[name] = value
    return made


def state_of(home: Path) -> Path:
    """The state directory a dshkit process uses under `home` when given none."""
    return home / ".dsh" / "dshkit"


def adopt_environment(
    monkeypatch: pytest.MonkeyPatch, home: Path, env: Mapping[str, str | None] | None = None
) -> None:
    """This process's environment made the one a dshkit process gets under `home` (until the
    test ends), so that what the test computes here agrees with what the hooks see."""
    wanted = environment(home, env)
    for name in set(os.environ) - set(wanted):
        monkeypatch.delenv(name)
    for name, value in wanted.items():
        monkeypatch.setenv(name, value)


def run_dshkit(
    *args: str,
    home: Path,
    env: Mapping[str, str | None] | None = None,
    input: str | bytes | None = None,
    cwd: Path | None = None,
    text: bool = True,
    timeout: float = 120,
    check: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """`python -m dshkit ARGS` under `home` (see `environment`), run to its end; it must exit 0
    unless `check` is false."""
    done = subprocess.run(
        [*COMMAND, *args],
        input=input,
        capture_output=True,
        text=text,
        env=environment(home, env),
        cwd=cwd,
        timeout=timeout,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def start_dshkit(
    *args: str, home: Path, env: Mapping[str, str | None] | None = None
) -> subprocess.Popen[str]:
    """`python -m dshkit ARGS` under `home` (see `environment`), started and not waited for:
    its stdout and stderr are pipes of text."""
    return subprocess.Popen(
        [*COMMAND, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(home, env),
    )


def run_at_home(home: Path, *args: str, check: bool = True, **env: str) -> Any:
    """`dshkit ARGS` as a person runs it in their home directory, with only the system's
    programs on PATH (none of this venv's)."""
    return run_dshkit(*args, home=home, env={"PATH": BARE_PATH, **env}, cwd=home, check=check)


def invoke(
    *args: str,
    home: Path,
    env: Mapping[str, str | None] | None = None,
    input: str | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """`dshkit ARGS` run in this process as `run_dshkit` runs it in another: the same entry
    point (`dshkit.cli.main`, which says every error of the core once) with stdin, stdout and
    stderr of its own and the same environment, for the call only; its exit code, stdout and
    stderr. It must exit 0 unless `check` is false. An exception the command line does not
    handle is raised, so it fails the test with its traceback."""
    from click.testing import CliRunner

    from dshkit.cli import main

    wanted = environment(home, env)
    overrides: dict[str, str | None] = {name: None for name in os.environ if name not in wanted}
    overrides.update(wanted)
    argv = sys.argv
    with CliRunner().isolation(input=input, env=overrides) as (stdout, stderr, _):
        sys.argv = ["dshkit", *args]
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        finally:
            sys.argv = argv
            sys.stdout.flush()
            sys.stderr.flush()
        out, err = stdout.getvalue().decode(), stderr.getvalue().decode("utf-8", "replace")
    done = subprocess.CompletedProcess(list(args), code, out, err)
    if check:
        assert done.returncode == 0, done.stderr
    return done
