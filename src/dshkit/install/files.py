"""Writing a person's config files carefully: planned as changes first (a dry run shows the
diff), each file written only when its content changes, whole (never half-written), through
a symlink (the link stays a link; one that points nowhere is refused: where the file should
be is the person's to say), keeping its mode. What dshkit creates is its owner's alone:
files 0600, directories 0700.

What dshkit wrote and the bytes to give back are kept in its state directory (`ledger`),
never beside the file. Taking dshkit out gives a file dshkit alone changed its old bytes
back (one it created goes, and the directories it made for it once they are empty); a file
someone edited since keeps their edits and loses only dshkit's part (the edit a format
module gives).
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..paths import PRIVATE_FILE, replace_whole
from .ledger import EDITED, Ledger, Record, drop_legacy, make_dirs, remove_empty, sha256
from .model import InstallError


@dataclass
class Change:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is removed
    recorded: bool = False  # taking dshkit out: the ledger has a record of it to drop

    @property
    def writes(self) -> bool:
        """Whether the file's content changes."""
        return self.after != self.before

    @property
    def action(self) -> str:
        """What the change does to the file: "created", "updated", "removed" or
        "unchanged"."""
        if not self.writes:
            return "unchanged"
        if self.before is None:
            return "created"
        return "removed" if self.after is None else "updated"

    def diff(self) -> str:
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=f"{self.path} (now)" if self.before is not None else "/dev/null",
            tofile=str(self.path) if self.after is not None else "/dev/null",
        )
        return "".join(lines)


def read(path: Path) -> str | None:
    """The file's text, line ends as they are; None when it does not exist."""
    try:
        with open(path, newline="") as file:
            return file.read()
    except FileNotFoundError:
        return None


def refuse_dangling(path: Path) -> None:
    """Refuse a path through a symbolic link that points nowhere (the file's, or a
    directory's on the way): writing there would guess where the person meant it to be."""
    for part in (path, *path.parents):
        if part.is_symlink() and not part.exists():
            raise InstallError(
                f"{part} is a symbolic link to {os.readlink(part)}, which does not exist: "
                "dshkit will not guess where it should point; point it at a file (or remove "
                "it) and install again"
            )


def edit(changes: list[Change], path: Path, change: Callable[[str | None], str | None]) -> None:
    """Apply `change` to what `changes` already make of `path` (else to the file as it is)."""
    for planned in changes:
        if planned.path == path:
            planned.after = change(planned.after)
            return
    refuse_dangling(path)
    before = read(path)
    changes.append(Change(path, before, change(before)))


def take_out(
    changes: list[Change], path: Path, without: Callable[[str], str], ledger: Ledger
) -> None:
    """Take dshkit's part out of `path`: its old bytes when the file is still what dshkit
    wrote, else `without` applied to what `changes` already make of it."""
    record = ledger.get(path)
    change = next((c for c in changes if c.path == path), None)
    if change is None:
        before = read(path)
        if before is None and record is None:
            return
        change = Change(path, before, before)
        changes.append(change)
    change.recorded = change.recorded or record is not None
    if change.before is None:
        return  # gone already: only its record is left to drop
    if record is not None and record.untouched(change.before):
        change.after = record.before
    elif change.after is not None:
        change.after = without(change.after)


def apply(changes: list[Change], installing: bool, state_dir: Path) -> None:
    """Write the changes, and keep the ledger in `state_dir`: installing records each file
    (its bytes before the first install, the directories made for it); uninstalling drops
    the records, and removes the directories made that are empty by then."""
    ledger = Ledger(state_dir)
    made: list[str] = []
    for change in changes:
        record = ledger.get(change.path)
        if installing:
            mode = _mode(change.path)
            created = make_dirs(change.path.parent)
            # Recorded before the file is written: whatever happens next, its old bytes are kept.
            ledger.put(_recorded(record, change, created))
            _put(change, mode)
            continue
        if change.writes:
            _put(change, _mode(change.path))
        if record is not None:
            made += record.made
            drop_legacy(record)
            ledger.drop(change.path)
    remove_empty(made)


def _recorded(record: Record | None, change: Change, made: list[str]) -> Record:
    """The record of a file dshkit is about to write (see EDITED)."""
    wrote = sha256(change.after or "")
    if record is None:
        return Record(os.path.realpath(change.path), wrote, change.before, made)
    if record.wrote == EDITED or change.before is None or not record.untouched(change.before):
        wrote = EDITED
    return Record(record.path, wrote, record.before, record.made + made, record.legacy)


def _put(change: Change, mode: int | None) -> None:
    if change.after is not None:
        _write(change.path, change.after, mode)
    elif change.before is not None:
        change.path.unlink()


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)  # through a symlink: its target's mode
    except FileNotFoundError:
        return None


def _write(path: Path, text: str, mode: int | None) -> None:
    """Replace the file's content whole (never half-written), through a symlink so the link
    stays a link, with `mode` (None: a new file, its owner's alone)."""
    # Created with the mode it keeps, never wider even for a moment (it may hold secrets).
    replace_whole(os.path.realpath(path), text.encode(), PRIVATE_FILE if mode is None else mode)
