"""What every command with --json does before it runs (bytes that are not UTF-8 in its text
and paths are a usage error naming the input), and a wait for another process's hold on the
store said on stderr while the command waits."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import IO

import orjson
import pytest

from dshkit.store import SCAN_LEASE, Store

from ..support.cli import invoke, start_dshkit, state_of
from ..support.paths import DSH_PLAIN

NOT_UTF8 = os.fsdecode(b"\xff\xfe")  # as Python hands such bytes of an argument over


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["sessions", "show", NOT_UTF8, "--json"], "'SESSION_ID'"),
        (["optimize", "run", NOT_UTF8, "--json"], "'RAW'"),
        (["memory", "search", f"a{NOT_UTF8}", "--json"], "'QUERY'"),
        (
            ["graft", "slice", "--session=s", f"--forced-mark={NOT_UTF8}", "--json"],
            "'--forced-mark'",
        ),
        (["guard", "explain", "--json", "--", "rm", NOT_UTF8], "'[COMMAND]...'"),
    ],
    ids=lambda value: value[0] if isinstance(value, list) else "",
)
def test_text_that_is_not_utf8_is_bad_input_naming_it(
    args: list[str], named: str, tmp_path: Path
) -> None:
    out = invoke(*args, home=tmp_path, check=False)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    said = orjson.loads(out.stdout)
    assert said["kind"] == "usage" and said["exitCode"] == 2
    assert f"Invalid value for {named}" in said["error"] and "not UTF-8 text" in said["error"]
    assert "byte 0xff at offset" in out.stderr and "surrogates" not in out.stderr


def test_a_path_that_is_not_utf8_is_refused_where_it_is_kept_and_passed_where_only_opened(
    tmp_path: Path,
) -> None:
    odd = tmp_path / f"d{NOT_UTF8}"
    odd.mkdir()
    for args in (["scan", "--root", str(odd)], ["memory", "list", "--cwd", str(odd)]):
        out = invoke(*args, "--json", home=tmp_path, check=False)
        assert out.returncode == 2, out.stderr
        said = orjson.loads(out.stdout)  # the name escaped, not refused by the JSON
        assert "d\\xff\\xfe" in said["error"] and "the path is not UTF-8" in said["error"]
    # The state directory is only opened: its bytes pass through as they are.
    kept = invoke("scan", "--state-dir", str(odd / "state"), "--json", home=tmp_path)
    assert orjson.loads(kept.stdout)["files"] == 0
    assert (odd / "state" / "dshkit.db").is_file()


def test_a_line_of_a_case_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    cases = tmp_path / f"c{NOT_UTF8}.jsonl"
    cases.write_bytes(b'{"command": "ls"}\n{"command": "rm \xff\xfe"}\n')
    out = invoke("guard", "classify", "--file", str(cases), "--json", home=tmp_path, check=False)
    assert out.returncode == 2 and orjson.loads(out.stdout)["kind"] == "usage"
    assert "line 2 is not UTF-8: byte 0xff at offset 16 of the line" in out.stderr
    assert "surrogates" not in out.stderr + out.stdout


def _wait_for(process: str, line: str, stream: IO[str] | None) -> str:
    """The first line of `stream` (a child's stderr) holding `line`; fails when it ends."""
    assert stream is not None
    for said in iter(stream.readline, ""):
        if line in said:
            return said
    raise AssertionError(f"{process} ended without saying {line!r}")


@pytest.mark.process
def test_a_scan_waiting_for_another_holds_write_says_so_then_goes_on(tmp_path: Path) -> None:
    Store(state_of(tmp_path)).close()
    locker = sqlite3.connect(state_of(tmp_path) / "dshkit.db", isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")  # another process writing, as a long transaction does
    scan = start_dshkit("scan", f"--root={DSH_PLAIN}", "--harness=dsh", "--json", home=tmp_path)
    try:
        started = time.monotonic()
        notice = _wait_for("scan", "waiting for the store", scan.stderr)
        assert time.monotonic() - started >= 0.9  # not at once: after about a second
        assert "held by another process writing" in notice and "dshkit.db" in notice
        assert "then this gives up" in notice
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    out, err = scan.communicate(timeout=60)
    assert scan.returncode == 0, err
    assert orjson.loads(out)["sessions"] == 1  # stdout is the result's alone, under --json
    assert err.count("waiting for the store") == 0  # said once (read above)


@pytest.mark.process
def test_a_forget_waiting_for_a_scan_names_it_then_goes_on(tmp_path: Path) -> None:
    scanned = invoke("scan", f"--root={DSH_PLAIN}", "--harness=dsh", "--json", home=tmp_path)
    assert orjson.loads(scanned.stdout)["sessions"] == 1
    listed = orjson.loads(invoke("sessions", "list", "--json", home=tmp_path).stdout)
    with Store(state_of(tmp_path)) as store:
        # A scan under way in a live process (this one): its lease, as Store.lease writes it.
        store.set_meta(f"lease.{SCAN_LEASE}", f"{os.getpid()}:{time.time() + 120:.0f}")
        forget = start_dshkit("forget", listed[0]["id"], "--json", home=tmp_path)
        try:
            notice = _wait_for("forget", "waiting for the store", forget.stderr)
            assert f"held by another dshkit process: scan, pid {os.getpid()}" in notice
        finally:
            store.set_meta(f"lease.{SCAN_LEASE}", "")  # the scan ends
        out, err = forget.communicate(timeout=60)
    assert forget.returncode == 0, err
    assert orjson.loads(out)["forgotten"]["id"] == listed[0]["id"]
