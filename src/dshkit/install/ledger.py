"""dshkit's bookkeeping of the person's files it writes, kept in its state directory and never
beside those files: what it last wrote, the bytes to give back, the directories it made.

`<state dir>/install/` (0700) holds one record (0600) per file, named by a hash of the file's
real path (a file reached through a symlink is recorded once, under its target), and
`directories.json`, the directories made to hold the ledger itself. When the last record is
dropped, the ledger goes, and with it each directory made for it that is empty by then: a
home that had no state directory before an install has none after the uninstall.

An older dshkit kept its records beside the files (`settings.json.dshkit-written`, the
backup `settings.json.dshkit-backup`): such a pair is taken in as the file's record, and
removed once the file is next written or taken out.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..paths import PRIVATE_DIR, replace_whole

LEDGER = "install"  # the ledger's directory in the state directory
DIRECTORIES = "directories.json"  # the directories made to hold the ledger
# What is recorded instead of what dshkit wrote once a person edited the file between two
# installs: the original bytes no longer are the file without dshkit, so taking dshkit out
# removes only its entries.
EDITED = "edited"
_LEGACY_WRITTEN, _LEGACY_BACKUP = ".dshkit-written", ".dshkit-backup"


@dataclass
class Record:
    """What dshkit knows of one file it writes."""

    path: str  # the file's real path
    wrote: str  # the sha256 of what dshkit last wrote, or EDITED
    before: str | None  # the file before dshkit first wrote it (None: it did not exist)
    made: list[str] = field(default_factory=list)  # directories made for it, outermost first
    legacy: list[Path] = field(default_factory=list)  # an older dshkit's marks beside it

    def untouched(self, current: str) -> bool:
        """Whether the file is still exactly what dshkit wrote."""
        return self.wrote == sha256(current)


class Ledger:
    """The records of one state directory."""

    def __init__(self, state_dir: Path) -> None:
        self.root = state_dir / LEDGER

    def get(self, path: Path) -> Record | None:
        """The record of `path` (None: dshkit has written nothing there)."""
        try:
            data = json.loads(self._file(path).read_text())
        except FileNotFoundError:
            return _legacy(path)
        return Record(data["path"], data["wrote"], data["before"], list(data["made"]))

    def put(self, record: Record) -> None:
        """Write the record (the ledger is made first if need be)."""
        if not self.root.is_dir():
            made = make_dirs(self.root)
            if made:
                replace_whole(self.root / DIRECTORIES, (json.dumps(made) + "\n").encode())
        data = {k: getattr(record, k) for k in ("path", "wrote", "before", "made")}
        text = json.dumps(data, ensure_ascii=False) + "\n"
        replace_whole(self._file(Path(record.path)), text.encode())
        drop_legacy(record)

    def drop(self, path: Path) -> None:
        """Forget `path`; the last record gone, the ledger goes, and the directories made for
        it that are empty by then."""
        self._file(path).unlink(missing_ok=True)
        try:
            left = {entry.name for entry in self.root.iterdir()} - {DIRECTORIES}
        except FileNotFoundError:
            return
        if left:
            return
        try:
            made = [str(d) for d in json.loads((self.root / DIRECTORIES).read_text())]
        except (FileNotFoundError, ValueError, TypeError):
            made = []
        (self.root / DIRECTORIES).unlink(missing_ok=True)
        remove_empty([str(self.root), *made])

    def _file(self, path: Path) -> Path:
        real = os.path.realpath(path)
        return self.root / (hashlib.sha256(real.encode()).hexdigest()[:32] + ".json")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_dirs(directory: Path) -> list[str]:
    """Make `directory` and its missing parents, each 0700 (it is dshkit that needs them);
    returns those it made, outermost first."""
    missing: list[Path] = []
    for candidate in (directory, *directory.parents):
        if os.path.isdir(candidate):
            break
        missing.append(candidate)
    made = []
    for candidate in reversed(missing):
        os.mkdir(candidate, PRIVATE_DIR)
        os.chmod(candidate, PRIVATE_DIR)  # exactly, whatever the umask
        made.append(str(candidate))
    return made


def remove_empty(directories: list[str]) -> None:
    """Remove each directory that is empty, the deepest first (a parent can empty out once
    its child goes); a directory with anything in it stays."""
    for directory in sorted(set(directories), key=lambda d: d.count(os.sep), reverse=True):
        if os.path.isdir(directory) and not os.path.islink(directory):
            with contextlib.suppress(OSError):  # not empty: something of someone's is in it
                os.rmdir(directory)


def drop_legacy(record: Record) -> None:
    for mark in record.legacy:
        mark.unlink(missing_ok=True)
    record.legacy = []


def _legacy(path: Path) -> Record | None:
    """The record an older dshkit kept beside `path` (None: there is none)."""
    written = path.with_name(path.name + _LEGACY_WRITTEN)
    backup = path.with_name(path.name + _LEGACY_BACKUP)
    try:
        wrote = written.read_text().strip()
    except FileNotFoundError:
        return None
    try:
        with open(backup, newline="") as file:  # its bytes as they are, line ends too
            before: str | None = file.read()
    except FileNotFoundError:
        before = None
    return Record(os.path.realpath(path), wrote, before, legacy=[written, backup])
