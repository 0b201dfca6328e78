"""Chromium's profile directories: named after the process that made them, and swept once that
process is dead (only this user's directories, only directories, never a live process's); and
where Chromium keeps its temporary files (a run's own directory, where its socket fits)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from dshkit.chromium import FLAGS, environment, find, new_profile, sweep_profiles

from .support.paths import own_temporary
from .support.procs import left, running_in_group, wait_until


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_profile_is_named_after_its_process() -> None:
    profile = new_profile("gate")
    try:
        assert profile.is_dir() and profile.name.startswith(f"dshkit-gate-{os.getpid()}-")
        assert (profile.stat().st_mode & 0o777) == 0o700
    finally:
        profile.rmdir()
    with pytest.raises(ValueError, match="not a profile kind"):
        new_profile("other")


@pytest.mark.process
def test_only_this_users_dead_processes_profiles_are_swept(tmp_path: Path) -> None:
    dead, live = dead_pid(), os.getpid()
    stale = [tmp_path / f"dshkit-gate-{dead}-abc", tmp_path / f"dshkit-shot-{dead}-x_1"]
    for path in stale:
        (path / "Default").mkdir(parents=True)
        (path / "Default" / "Cookies").write_text("")
    kept = [
        tmp_path / f"dshkit-gate-{live}-abc",  # its process runs
        tmp_path / f"dshkit-gate-{dead}-other",  # another user's
        tmp_path / f"dshkit-memo-{dead}-abc",  # not a profile
        tmp_path / "dshkit-gate-abcdefgh",  # no process named (as before pids were)
        tmp_path / f"dshkit-gate-{dead}-",
    ]
    for path in kept:
        path.mkdir()
    if os.geteuid() == 0:
        os.chown(kept[1], 65534, 65534)
    else:  # (only root can give a directory away)
        shutil.rmtree(kept.pop(1))
    not_a_directory = tmp_path / f"dshkit-gate-{dead}-file"
    not_a_directory.write_text("")
    link = tmp_path / f"dshkit-gate-{dead}-link"
    link.symlink_to(kept[0])

    assert sorted(sweep_profiles(str(tmp_path))) == sorted(map(str, stale))

    assert not any(path.exists() for path in stale)
    assert all(path.is_dir() for path in kept)
    assert not_a_directory.is_file() and link.is_symlink()
    assert sweep_profiles(str(tmp_path / "missing")) == []


@pytest.mark.browser
def test_chromium_keeps_its_temporary_files_in_a_runs_directory_where_its_socket_fits() -> None:
    # Chromium makes its singleton socket in a directory of its own under TMPDIR, and does not
    # start where that socket's path is longer than a socket's may be (107 bytes): the longest
    # directory that can hold it is given, one byte more is not.
    binary = find()
    assert binary is not None
    with own_temporary() as temporary:
        longest = temporary / "r".ljust(62 - len(str(temporary)) - 1, "r")
        longest.mkdir()
        assert environment(Path(f"{longest}r")).get("TMPDIR") == os.environ.get("TMPDIR")
        assert environment(longest)["TMPDIR"] == str(longest)
        browser = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={longest / 'profile'}", "about:blank"],
            env=environment(longest),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # (its group ended whole, before its directory goes)
        )
        try:
            wait_until(
                lambda: any(longest.glob("org.chromium.Chromium.*/SingletonSocket")),
                "Chromium made no socket in the run's directory",
            )
            assert browser.poll() is None, "Chromium did not start"
        finally:
            os.killpg(browser.pid, signal.SIGKILL)
            browser.wait()
            assert left(lambda: running_in_group(browser.pid)) == []
