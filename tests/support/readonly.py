"""Read-only proofs: every file under some roots as it is, and every file this process opens.

Importing this module installs the audit hook that `recorded_opens` reads (an audit hook stays
for the life of the process; it records nothing outside the block)."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def snapshot(*roots: Path) -> dict[str, tuple[int, int, str]]:
    """Size, mtime and content hash of every file under the roots."""
    result = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                st = path.stat()
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                result[str(path)] = (st.st_size, st.st_mtime_ns, digest)
    return result


_OPENS: list[tuple[str, str | int | None]] | None = None


def _audit(event_name: str, args: tuple[Any, ...]) -> None:
    if _OPENS is not None and event_name == "open":
        path, mode = args[0], args[1]
        _OPENS.append((os.fsdecode(path) if isinstance(path, (str, bytes)) else str(path), mode))


sys.addaudithook(_audit)


@contextmanager
def recorded_opens() -> Iterator[list[tuple[str, str | int | None]]]:
    """Every file open in this process while inside the block, as (path, mode or flags)."""
    global _OPENS
    _OPENS = []
    try:
        yield _OPENS
    finally:
        _OPENS = None


def is_write(mode: str | int | None) -> bool:
    if isinstance(mode, int):
        return bool(mode & (os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC))
    return any(flag in (mode or "r") for flag in "wax+")
