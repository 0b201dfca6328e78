"""Writing a person's config files carefully: planned as changes first (a dry run shows the
diff), each file written only when its content changes, whole (never half-written), through
a symlink (the link stays a link), keeping its mode, after a backup with the same mode.

Taking dshkit out gives a file dshkit alone changed its old bytes back; a file someone
edited since keeps their edits and loses only dshkit's part (the edit a format module gives).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BACKUP = ".dshkit-backup"
WRITTEN = ".dshkit-written"  # the sha256 of what dshkit wrote, to know if it was edited since
# ... or this, for good, once a person edited the file between two installs: the backup no
# longer holds the file without dshkit, so uninstalling takes only dshkit's entries out.
EDITED = "edited"


@dataclass
class Change:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is removed

    def diff(self) -> str:
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=f"{self.path} (now)" if self.before is not None else "/dev/null",
            tofile=str(self.path) if self.after is not None else "/dev/null",
        )
        return "".join(lines)


def read(path: Path) -> str | None:
    """The file's text; None when it does not exist."""
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def edit(changes: list[Change], path: Path, change: Callable[[str | None], str | None]) -> None:
    """Apply `change` to what `changes` already make of `path` (else to the file as it is)."""
    for planned in changes:
        if planned.path == path:
            planned.after = change(planned.after)
            return
    before = read(path)
    changes.append(Change(path, before, change(before)))


def take_out(changes: list[Change], path: Path, without: Callable[[str], str]) -> None:
    """Take dshkit's part out of `path`: its old bytes when the file is still what dshkit
    wrote, else `without` applied to what `changes` already make of it."""
    change = next((c for c in changes if c.path == path), None)
    if change is None:
        before = read(path)
        if before is None:
            return
        change = Change(path, before, before)
        changes.append(change)
    if change.before is None:
        return
    untouched, original = _restore(path, change.before)
    if untouched:
        change.after = original
    elif change.after is not None:
        change.after = without(change.after)


def apply(changes: list[Change], installing: bool) -> None:
    """Write the changes. Installing backs each file up the first time (with its mode);
    uninstalling drops the backup and the record of what was written."""
    for change in changes:
        backup = change.path.with_name(change.path.name + BACKUP)
        written = change.path.with_name(change.path.name + WRITTEN)
        mode = _mode(change.path)
        if installing and not written.exists():
            change.path.parent.mkdir(parents=True, exist_ok=True)
            if change.before is not None:
                _write(backup, change.before, mode)
        if change.after is None:
            change.path.unlink(missing_ok=True)
        else:
            _write(change.path, change.after, mode)
        if installing:
            _write(written, _record(written, change.before, change.after), mode)
        else:
            written.unlink(missing_ok=True)
            backup.unlink(missing_ok=True)


def _record(written: Path, before: str | None, after: str | None) -> str:
    """What to record of a file dshkit writes (see WRITTEN and EDITED)."""
    if written.exists():
        last = written.read_text().strip()
        if last == EDITED or before is None or last != _sha(before):
            return EDITED
    return _sha(after or "")


def _restore(path: Path, current: str) -> tuple[bool, str | None]:
    """`(True, pre-install content)` when the file is still exactly what dshkit wrote (content
    None: it did not exist before); `(False, None)` when it was edited since."""
    written = path.with_name(path.name + WRITTEN)
    if not written.exists() or written.read_text().strip() != _sha(current):
        return False, None
    backup = path.with_name(path.name + BACKUP)
    return True, backup.read_text() if backup.exists() else None


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)  # through a symlink: its target's mode
    except FileNotFoundError:
        return None


def _write(path: Path, text: str, mode: int | None) -> None:
    """Replace the file's content whole (never half-written), through a symlink so the link
    stays a link, with `mode` (None: a new file's default)."""
    target = Path(os.path.realpath(path))
    temporary = target.with_name(target.name + ".dshkit-tmp")
    # Created with the old mode, never wider even for a moment (a 0600 file may hold secrets).
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    descriptor = os.open(temporary, flags, 0o666 if mode is None else mode)
    try:
        if mode is not None:
            os.fchmod(descriptor, mode)  # exactly the old mode, whatever the umask
        data = memoryview(text.encode())
        while data:
            data = data[os.write(descriptor, data) :]
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        os.close(descriptor)
    os.replace(temporary, target)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
