"""`paths.replace_whole`, the one atomic write of the files dshkit replaces (the token, the
serve record, the guard's mode, graft's hints, the installer's ledger and the harness
settings it edits): whole or not at all, its mode exact whatever the umask, never through a
link, no temporary left behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from dshkit.paths import replace_whole


def test_a_file_is_replaced_whole_with_its_mode_exact(tmp_path: Path) -> None:
    target = tmp_path / "token"
    old = os.umask(0o000)  # a careless umask: the mode given is what the file gets
    try:
        replace_whole(target, b"first\n")
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        replace_whole(str(target), b"second\n", 0o644)  # a harness's settings keep theirs
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
    finally:
        os.umask(old)
    os.umask(0o077)
    try:
        replace_whole(target, b"third\n", 0o644)  # nor narrower than asked
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert target.read_bytes() == b"third\n"
    assert [p.name for p in tmp_path.iterdir()] == ["token"]  # no temporary left behind


def test_a_link_in_the_way_is_replaced_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"someone's\n")
    planted = tmp_path / "serve.json"
    planted.symlink_to(elsewhere)
    replace_whole(planted, b"{}")
    assert not planted.is_symlink() and planted.read_bytes() == b"{}"
    assert elsewhere.read_bytes() == b"someone's\n"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "guard-mode").mkdir()  # a directory where the file goes: the rename fails
    with pytest.raises(OSError):
        replace_whole(tmp_path / "guard-mode", b"strict\n")
    assert [p.name for p in tmp_path.iterdir()] == ["guard-mode"]
    with pytest.raises(FileNotFoundError):  # no directory to write in: the caller's OSError
        replace_whole(tmp_path / "missing" / "file", b"x")
