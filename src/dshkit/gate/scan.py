"""Deliverables a shell command changed: a bounded walk of a working directory for web
deliverables modified since a moment, loading nothing (`delivery` records what it finds; the
gate's quiet checks, `gate.glance`, look with it on the hot path)."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Iterator

# What the gate judges, by name (`judge` checks its own list is the same).
DELIVERABLE_SUFFIXES = (".html", ".htm", ".xhtml", ".svg")
# At most this many directory entries looked at, this deep, and this many deliverables found
# (the newest kept).
SCAN_ENTRIES = 5000
SCAN_DEPTH = 6
SCAN_FOUND = 20
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv"})


def changed(root: str, since_ms: int) -> list[str]:
    """Deliverables under `root` modified at or after `since_ms` (ms since the epoch), the
    newest SCAN_FOUND of them, newest first, from a walk bounded by SCAN_ENTRIES entries and
    SCAN_DEPTH levels that skips hidden directories (.git, .venv, …) and dependency trees
    (node_modules, …)."""
    since_ns = since_ms * 1_000_000
    found: list[tuple[int, str]] = []
    for entry in _walk(root):
        if entry.name.lower().endswith(DELIVERABLE_SUFFIXES):
            try:
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.st_mtime_ns >= since_ns and entry.is_file(follow_symlinks=False):
                found.append((stat.st_mtime_ns, entry.path))
    found.sort(key=lambda item: item[0], reverse=True)
    return [path for _, path in found[:SCAN_FOUND]]


def _walk(root: str) -> Iterator[os.DirEntry[str]]:
    """The entries under `root`, breadth first, within the bounds (symbolic links to
    directories are not followed)."""
    seen = 0
    level = [root]
    for _depth in range(SCAN_DEPTH):
        below: list[str] = []
        for directory in level:
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        seen += 1
                        if seen > SCAN_ENTRIES:
                            return
                        if entry.is_dir(follow_symlinks=False):
                            if not entry.name.startswith(".") and entry.name not in SKIPPED_DIRS:
                                below.append(entry.path)
                        else:
                            yield entry
            except OSError:
                continue
        level = below
        if not level:
            return
