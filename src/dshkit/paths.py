"""Where dshkit keeps its state; each harness's own places are in the harness registry."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

from . import harnesses


def dsh_home() -> Path:
    """`$DSH_HOME`, defaulting to `~/.dsh` (the DSH harness's own home); Invalid when it is
    relative."""
    return Path(harnesses.dsh_home())


def state_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """dshkit's state directory: `override`, else `$DSH_HOME/dshkit`. Either must be absolute
    (once `~` is expanded): a relative one is refused (Invalid, its field `state_dir` or the
    variable's name), never taken from the directory dshkit happens to run in."""
    if not override:
        return dsh_home() / "dshkit"
    given = os.fspath(override)
    path = os.path.expanduser(given)
    return Path(harnesses.absolute(path, given, "the state directory", "state_dir"))


def dir_key(path: str | os.PathLike[str]) -> str:
    """The one spelling of a directory that every "same directory" comparison uses: its real
    path (symlinks resolved), so a symlinked `$PWD` and its target are one directory."""
    return os.path.realpath(os.fspath(path))


PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dir(path: Path) -> list[str]:
    """Make `path` (and missing parents) a directory only its owner can enter.

    An existing directory open to others is tightened, with what was in it: the state
    directory holds people's words. Returns a note per path tightened (to tell the person).
    """
    notes: list[str] = []
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        os.chmod(path, PRIVATE_DIR)
        notes.append(f"{path}: was {mode:o}, now {PRIVATE_DIR:o}")
        for entry in path.rglob("*"):
            if entry.is_symlink():
                continue
            want = PRIVATE_DIR if entry.is_dir() else PRIVATE_FILE
            if entry.stat().st_mode & 0o077:
                os.chmod(entry, entry.stat().st_mode & 0o700 | (want & 0o700))
    return notes


def private_opener(path: str, flags: int) -> int:
    """An `open(..., opener=private_opener)` that creates files readable by the owner only."""
    return os.open(path, flags, PRIVATE_FILE)


def replace_whole(path: str | os.PathLike[str], data: bytes, mode: int = PRIVATE_FILE) -> None:
    """Replace the file `path` with `data` whole: a reader sees the old content or the new,
    never half. Written first to a new temporary file beside it, created with `mode` and set
    to exactly that whatever the umask (never wider, even for a moment: it may hold secrets),
    never through a symbolic link, then renamed over `path` (a link there is replaced, not
    followed). An OSError leaves no temporary behind. (Strings, not pathlib: the hooks'
    hints are written with it.)"""
    target = os.fspath(path)
    head, name = os.path.split(target)
    temporary = os.path.join(head, f".{name}.{os.getpid()}.{os.urandom(4).hex()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(temporary, flags, mode)
    try:
        try:
            os.fchmod(descriptor, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
        finally:
            os.close(descriptor)
        os.replace(temporary, target)
    except BaseException:
        with suppress(OSError):  # (renamed already, or the directory is gone)
            os.unlink(temporary)
        raise


def default_roots() -> dict[str, Path]:
    """The sessions root of each harness on this machine, keyed by harness name."""
    return {h.name: Path(h.sessions_root()) for h in harnesses.all_harnesses()}
