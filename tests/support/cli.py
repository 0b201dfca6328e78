"""`dshkit` as a test runs it: in this process by default (the click application, or the hook
runtime for `dshkit hook`), with the environment, directory and stdin a process would get; or,
where the process is the point, a separate `python -m dshkit` process in the same scrubbed
environment."""

from __future__ import annotations

import io
import locale
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

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
    process: bool = False,
) -> subprocess.CompletedProcess[Any]:
    """`dshkit ARGS` under `home` (see `environment`) in directory `cwd`, run to its end: in
    this process (see `invoke`), or with `process` as `python -m dshkit ARGS` in a process of
    its own, cut at `timeout` seconds (a test that needs one is marked `process`). Its exit
    code, stdout and stderr, as text or (`text` false) bytes; it must exit 0 unless `check` is
    false."""
    if not process:
        code, out, err = _here(args, home, env, input, cwd)
        done: subprocess.CompletedProcess[Any] = subprocess.CompletedProcess(
            [*COMMAND, *args], code, _text(out) if text else out, _text(err) if text else err
        )
    else:
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


def _text(data: bytes) -> str:
    """What a text-mode pipe reads from `data`: decoded as the locale says, newlines made
    "\\n" (as `subprocess.run(text=True)` does)."""
    decoded = data.decode(locale.getpreferredencoding(False))
    return decoded.replace("\r\n", "\n").replace("\r", "\n")


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
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """`dshkit ARGS` run in this process as `run_dshkit` runs it in another: the same entry
    points (`dshkit.cli.main`, which says every error of the core once; for `dshkit hook`, the
    hook runtime `hooks.run.call`) with stdin, stdout and stderr of its own and the same
    environment and directory, for the call only; its exit code, stdout and stderr (stderr's
    bytes that are not UTF-8 replaced). It must exit 0 unless `check` is false. An exception
    the command line does not handle is raised, so it fails the test with its traceback."""
    code, out, err = _here(args, home, env, input, cwd)
    done = subprocess.CompletedProcess(
        list(args), code, out.decode(), err.decode("utf-8", "replace")
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _here(
    args: tuple[str, ...],
    home: Path,
    env: Mapping[str, str | None] | None,
    input: str | bytes | None,
    cwd: Path | None,
) -> tuple[int, bytes, bytes]:
    """`dshkit ARGS` in this process: its exit code, stdout and stderr. What a command may
    change of the process (signal handlers, logging, the store's wait notice, the umask, the
    directory, `sys.argv`) is put back after it, as a process of its own would leave this one."""
    wanted = environment(home, env)
    data = input.encode() if isinstance(input, str) else input or b""
    with _kept():
        if args[:1] == ("hook",) and args[1:2] not in (("-h",), ("--help",)):  # as cli.main
            return hook_here(list(args[1:]), wanted, data, cwd)
        return _command(list(args), wanted, data, cwd)


def hook_here(
    argv: list[str],
    env: dict[str, str],
    data: bytes,
    cwd: Path | None = None,
    gone: bool = False,
) -> tuple[int, bytes, bytes]:
    """`dshkit hook ARGV` through the hook runtime (`hooks.run.call`) in this process, in the
    environment `env` (see `environment`): its payload `data` on a pipe as a harness sends it
    (written and closed; by a thread when the pipe cannot hold it all at once); its exit
    code, stdout and stderr. `gone`: the harness went away before the answer came (stdout a
    pipe whose reader is closed: writing to it fails as it does for a process)."""
    from dshkit.hooks.run import call

    reader, writer = os.pipe()
    feeder: threading.Thread | None = None
    if len(data) < PIPE_HOLDS:
        os.write(writer, data)
        os.close(writer)
    else:
        feeder = threading.Thread(target=_feed, args=(writer, data), daemon=True)
        feeder.start()
    answer, said = io.BytesIO(), io.BytesIO()
    with ExitStack() as opened:
        stdout: IO[bytes] = answer
        if gone:
            closed, broken = os.pipe()
            os.close(closed)
            stdout = opened.enter_context(open(broken, "wb", buffering=0))
        try:
            with open(reader, "rb", buffering=0) as stdin:
                code = call(argv, stdin, stdout, said, env, None if cwd is None else str(cwd))
        finally:
            if feeder is not None:
                feeder.join(10)
    return code, answer.getvalue(), said.getvalue()


PIPE_HOLDS = 1 << 16  # what a Linux pipe holds before a writer waits for its reader


def _feed(writer: int, data: bytes) -> None:
    """`data` written to the pipe `writer`, then closed (what the reader did not take is
    dropped: a reader that stopped early is a writer's broken pipe)."""
    try:
        with open(writer, "wb") as pipe:
            pipe.write(data)
    except BrokenPipeError:
        pass


def _command(
    args: list[str], env: dict[str, str], data: bytes, cwd: Path | None
) -> tuple[int, bytes, bytes]:
    """`dshkit ARGS` through `dshkit.cli.main` with click's test isolation: its own stdin,
    stdout and stderr, and `env` (every other variable of this process out) for the call."""
    from click.testing import CliRunner

    from dshkit.cli import main

    overrides: dict[str, str | None] = {name: None for name in os.environ if name not in env}
    overrides.update(env)
    with CliRunner().isolation(input=data, env=overrides) as (stdout, stderr, _):
        # A process's stdin as the command reads it: `sys.stdin.buffer` named "<stdin>".
        sys.stdin = io.TextIOWrapper(_Stdin(data), encoding=sys.stdin.encoding)
        sys.argv = ["dshkit", *args]
        if cwd is not None:
            os.chdir(cwd)
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        return code, stdout.getvalue(), stderr.getvalue()


class _Stdin(io.BytesIO):
    """Bytes on stdin, named as a process's stdin is."""

    name = "<stdin>"


_SIGNALS = (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE)


@contextmanager
def _kept() -> Iterator[None]:
    """The process state a command may change, as it was before, once the command ends: the
    handlers of the signals it may catch and the interval timer, the loggers' handlers and
    levels, the store's wait notice (the command line sets it), the umask, the directory and
    `sys.argv`."""
    from dshkit import store

    handlers = {number: signal.getsignal(number) for number in _SIGNALS}
    known = set(logging.Logger.manager.loggerDict)
    loggers = [logging.root, *logging.Logger.manager.loggerDict.values()]
    logged = [
        (logger, logger.handlers[:], logger.level, logger.disabled, logger.propagate)
        for logger in loggers
        if isinstance(logger, logging.Logger)
    ]
    notice, here, argv = store.wait_notice, os.getcwd(), sys.argv
    mask = os.umask(0o077)
    os.umask(mask)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for number, handler in handlers.items():
            signal.signal(number, handler)
        for logger, kept, level, disabled, propagate in logged:
            logger.handlers[:] = kept
            logger.level, logger.disabled, logger.propagate = level, disabled, propagate
        for name in set(logging.Logger.manager.loggerDict) - known:
            made = logging.Logger.manager.loggerDict[name]
            if isinstance(made, logging.Logger):  # a logger the command made: silent again
                made.handlers.clear()
        store.wait_notice = notice
        os.umask(mask)
        os.chdir(here)
        sys.argv = argv
