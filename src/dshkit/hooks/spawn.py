"""A step the hook path starts detached: what it reads left in owner-only files of the hints
directory (argv is world-readable), then `python -m MODULE ARG…` in a session of its own with
its standard streams on /dev/null (a harness waiting on our stdout or killing our group must
not wait for it, nor kill it). Started with `posix_spawn`: no `subprocess` on the hot path."""

from __future__ import annotations

import os
import sys

HINT_DIR = "hints"  # (hint.HINT_DIR: where the steps' files wait)
SAID = ".said"  # beside a step's payload file: the answer the foreground wrote


def leave(state: str, tag: str, data: bytes, beside: dict[str, bytes | None] | None = None) -> str:
    """Write `data` to a new owner-only file of the state directory `state`'s hints directory
    (named `payload.<tag>.<pid>.<random>`), and each of `beside` to that name plus its suffix;
    the file's name. The step removes them."""
    folder = os.path.join(state, HINT_DIR)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    name = os.path.join(folder, f"payload.{tag}.{os.getpid()}.{os.urandom(4).hex()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for path, each in ((name, data), *((name + k, v) for k, v in (beside or {}).items())):
        if each is None:
            continue
        descriptor = os.open(path, flags, 0o600)
        try:
            os.write(descriptor, each)  # (a regular file: written whole)
        finally:
            os.close(descriptor)
    return name


def taken(name: str) -> tuple[bytes, bytes | None]:
    """What a step finds at `name` (`leave`'s file): the data, and the answer the foreground
    wrote beside it (`SAID`), None where it wrote none."""
    with open(name, "rb") as handle:
        data = handle.read()
    try:
        with open(name + SAID, "rb") as handle:
            return data, handle.read()
    except FileNotFoundError:
        return data, None


def remove(name: str) -> None:
    """Remove `leave`'s file at `name` and what lies beside it (what is gone already, or
    cannot be removed, is passed over)."""
    for path in (name + SAID, name):
        try:
            os.unlink(path)
        except OSError:
            continue


def start(module: str, *args: str) -> None:
    """`python -m MODULE ARGS…`, detached (see the module docstring)."""
    null = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
    ]
    argv = [sys.executable, "-m", module, *args]
    os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions, setsid=True)
