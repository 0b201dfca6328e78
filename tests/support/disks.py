"""Small file systems of a test's own (tmpfs), for full and read-only disks: mounting needs
root, so each helper skips the test where this process may not mount."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def mount(where: Path, size: int | str) -> None:
    """A tmpfs of `size` (bytes, or "8m") over `where` (made if missing); mounted there
    already, it is resized. Skips the test where this process may not mount one."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small file system needs root")
    where.mkdir(parents=True, exist_ok=True)
    resize = ",remount" if os.path.ismount(where) else ""
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700{resize}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        pytest.skip(f"cannot mount a small file system here: {done.stderr.strip()}")


def read_only(where: Path) -> None:
    """Remount the tmpfs at `where` read-only."""
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


def unmount(where: Path) -> None:
    # A connection closed while a failed statement still lived keeps its files open until
    # that statement is collected: collect it, so the file system can go.
    gc.collect()
    subprocess.run(["umount", "-l", str(where)], check=False)


@contextmanager
def small_disk(tmp_path: Path, size: int | str = "8m") -> Iterator[Path]:
    """`tmp_path/disk`, a tmpfs of `size` until the block ends."""
    disk = tmp_path / "disk"
    mount(disk, size)
    try:
        yield disk
    finally:
        unmount(disk)
