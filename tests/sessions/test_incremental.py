"""Incremental reading as seed 001 §3 specifies, plus file identity and failure memory."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from dshkit.sessions import Scanner
from dshkit.store import Store

from ..support.corpus import encode_frame
from ..support.logs import dsh, event, human, session_dir, write_lines, write_log

HEAD = {"type": "session", "version": 0, "id": "s-1", "createdAt": 1, "delegationDepth": 0}


def test_no_growth_rescan_reads_and_decodes_nothing(tmp_path: Path, scanner: Scanner) -> None:
    log = session_dir(tmp_path / "root", "s-1") / "session.v4.jsonl.zstd"
    write_log(log, [[human(0, "hi")], [event("turn/start", 1, {"turn": 1})]])
    first = scanner.scan(dsh(tmp_path / "root"))
    assert (first.frames_decoded, first.events, first.human_messages) == (3, 2, 1)
    again = scanner.scan(dsh(tmp_path / "root"))
    assert (again.frames_decoded, again.bytes_read) == (0, 0)
    assert (again.events, again.human_messages, again.sessions) == (2, 1, 1)


def test_only_new_complete_frames_are_decoded(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "root"
    log = session_dir(root, "s-1") / "session.v4.jsonl.zstd"
    write_log(log, [[human(0, "one")]])
    scanner.scan(dsh(root))
    size = log.stat().st_size
    added = write_log(log, [[human(1, "two")], [human(2, "three")]], mode="ab")
    report = scanner.scan(dsh(root))
    assert report.frames_decoded == 2
    assert report.bytes_read == len(added) + 64  # the new bytes, plus the identity anchor
    assert report.human_messages == 3
    assert log.stat().st_size == size + len(added)


def test_torn_tail_waits_then_completes(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "root"
    log = session_dir(root, "s-1") / "session.v4.jsonl.zstd"
    write_log(log, [[human(0, "one")]])
    frame = encode_frame([human(1, "two"), human(2, "three")])
    with open(log, "ab") as handle:
        handle.write(frame[:7])
    torn = scanner.scan(dsh(root))
    assert (torn.errors, torn.human_messages, torn.frames_decoded) == ([], 1, 2)
    unchanged = scanner.scan(dsh(root))
    assert (unchanged.bytes_read, unchanged.frames_decoded) == (0, 0)
    with open(log, "ab") as handle:
        handle.write(frame[7:])
    done = scanner.scan(dsh(root))
    assert (done.errors, done.human_messages, done.frames_decoded) == ([], 3, 1)


def test_truncation_restarts_from_zero_and_replaces_old_events(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "root"
    log = session_dir(root, "s-1") / "session.v4.jsonl.zstd"
    write_log(log, [[human(0, "a")], [human(1, "b")], [human(2, "c")]])
    assert scanner.scan(dsh(root)).human_messages == 3
    write_log(log, [[human(0, "rotated")]])  # smaller than the cursor
    report = scanner.scan(dsh(root))
    assert report.human_messages == 1 and report.errors == []
    assert any("shrank below the read position" in w for w in report.warnings)
    texts = [e["data"]["content"][0]["text"] for e in scanner.catalog.events(("dsh", "s-1"))]
    assert texts == ["rotated"]


def test_segment_not_starting_with_magic_falls_back_to_a_full_rescan(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "root"
    log = session_dir(root, "s-1") / "session.v4.jsonl.zstd"
    first = write_log(log, [[human(0, "a")]])
    scanner.scan(dsh(root))
    # Same prefix (so the anchor still matches), then bytes that are no frame at the cursor:
    # the cursor is not trusted, the file is read again from 0, and the bad bytes reported.
    log.write_bytes(first + b"not a frame at all")
    report = scanner.scan(dsh(root))
    assert any("has no zstd frame at the read position" in w for w in report.warnings)
    assert report.frames_decoded == 2 and report.human_messages == 1
    assert [e["error"] for e in report.errors] == [
        f"bytes that do not start a zstd frame at byte {len(first)}"
    ]


@pytest.mark.parametrize(
    ("how", "warning"),
    [("replace", "replaced by another file"), ("rewrite", "rewritten in place")],
)
def test_file_changed_under_the_same_size_is_read_again(
    tmp_path: Path, scanner: Scanner, how: str, warning: str
) -> None:
    root = tmp_path / "root"
    log = session_dir(root, "s-1") / "session.jsonl"
    write_lines(log, [HEAD, human(0, "original")])
    scanner.scan(dsh(root))
    before = log.stat()
    if how == "replace":  # a new inode
        write_lines(tmp_path / "new", [HEAD, human(0, "ORIGINAL")])
        os.replace(tmp_path / "new", log)
    else:  # the same inode, and a later mtime even on a coarse clock
        write_lines(log, [HEAD, human(0, "ORIGINAL")])
        os.utime(log, ns=(before.st_atime_ns, log.stat().st_mtime_ns + 1_000_000))
    after = log.stat()
    assert after.st_size == before.st_size
    assert (after.st_ino == before.st_ino) == (how == "rewrite")
    report = scanner.scan(dsh(root))
    assert any(warning in w for w in report.warnings)
    assert [e["data"]["content"][0]["text"] for e in scanner.catalog.events(("dsh", "s-1"))] == [
        "ORIGINAL"
    ]


def test_longer_replacement_is_caught_by_the_bytes_before_the_cursor(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "plain"
    log = session_dir(root, "s-1") / "session.jsonl"
    write_lines(log, [HEAD, human(0, "first")])
    scanner.scan(dsh(root))
    # Same inode, rewritten longer: another session's log differs at least in its times.
    other = event("user/message", 0, human(0, "FIRST")["data"], time=1_800_000_000_000)
    write_lines(log, [HEAD, other, human(1, "second")], mode="r+b")
    report = scanner.scan(dsh(root))
    assert any("changed before the read position" in w for w in report.warnings)
    texts = [e["data"]["content"][0]["text"] for e in scanner.catalog.events(("dsh", "s-1"))]
    assert texts == ["FIRST", "second"]


def test_plain_log_counts_only_complete_lines(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "root"
    log = session_dir(root, "s-1") / "session.jsonl"
    write_lines(log, [HEAD, human(0, "one")])
    with open(log, "ab") as handle:
        handle.write(orjson.dumps(human(1, "two"))[:-3])
    assert scanner.scan(dsh(root)).human_messages == 1
    with open(log, "ab") as handle:
        handle.write(orjson.dumps(human(1, "two"))[-3:] + b"\n")
    report = scanner.scan(dsh(root))
    assert report.human_messages == 2 and report.errors == []


def test_failed_file_is_remembered_until_it_changes(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "root"
    log = session_dir(root, "s-1") / "session.v4.jsonl.zstd"
    write_log(log, [[human(0, "good")]])
    with open(log, "ab") as handle:
        handle.write(encode_frame([human(1, "x")])[:-4] + b"\x00\x00\x00\x00")  # bad checksum
    first = scanner.scan(dsh(root))
    assert len(first.errors) == 1 and "corrupt zstd frame" in first.errors[0]["error"]
    assert first.human_messages == 1, "the frames before the bad one are kept"
    again = scanner.scan(dsh(root))
    assert again.errors == first.errors, "still reported"
    assert (again.frames_decoded, again.bytes_read) == (0, 0), "but not decoded again"
    with open(log, "ab") as handle:
        handle.write(b"more")
    changed = scanner.scan(dsh(root))
    assert changed.bytes_read > 0, "retried once the file changed"
    assert "corrupt zstd frame" in changed.errors[0]["error"]


def test_bad_input_is_reported_per_file_and_the_rest_is_scanned(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "root"
    write_log(session_dir(root, "good") / "session.v4.jsonl.zstd", [[human(0, "fine")]])
    (session_dir(root, "garbage") / "session.v4.jsonl.zstd").write_bytes(b"\x00" * 64)
    write_log(session_dir(root, "v7") / "session.v7.jsonl.zstd", [[human(0, "?")]], version=7)
    bad_json = session_dir(root, "badjson") / "session.v4.jsonl.zstd"
    write_log(bad_json, [])
    with open(bad_json, "ab") as handle:
        import zstandard

        handle.write(zstandard.ZstdCompressor().compress(b'{"type": oops}\n'))
    midline = session_dir(root, "midline") / "session.v4.jsonl.zstd"
    write_log(midline, [])
    with open(midline, "ab") as handle:
        handle.write(zstandard.ZstdCompressor().compress(orjson.dumps(human(0, "no newline"))))
    skippable = session_dir(root, "skippable") / "session.v4.jsonl.zstd"
    write_log(skippable, [[human(0, "before")]])
    with open(skippable, "ab") as handle:
        handle.write(b"\x50\x2a\x4d\x18\x00\x00\x00\x00")
    bomb = session_dir(root, "bomb") / "session.v4.jsonl.zstd"
    write_log(bomb, [])
    with open(bomb, "ab") as handle:
        handle.write(zstandard.ZstdCompressor().compress(b" " * (2 << 20)))
    store = scanner.store
    report = Scanner(store, max_frame_output=1 << 20).scan(dsh(root))
    problems = {Path(e["file"]).parent.name: e["error"] for e in report.errors}
    assert set(problems) == {"garbage", "v7", "badjson", "midline", "skippable", "bomb"}
    assert "do not start a zstd frame" in problems["garbage"]
    assert "unsupported DSH log version 7 (supported: 0, 1, 2, 3, 4)" in problems["v7"]
    assert "invalid JSON" in problems["badjson"]
    assert "ends inside a line" in problems["midline"]
    assert "skippable" in problems["skippable"]
    assert "1048576-byte per-frame limit" in problems["bomb"]
    assert report.human_messages == 2  # "fine", and "before" ahead of the skippable frame


def test_frame_budget_rotates_so_no_file_starves(tmp_path: Path, store: Store) -> None:
    root = tmp_path / "root"
    for n in range(4):
        batches = [[human(i, f"{n}-{i}")] for i in range(5)]
        write_log(session_dir(root, f"s-{n}") / "session.v4.jsonl.zstd", batches)
    rounds = []
    scanner = Scanner(store, frame_budget=4)
    while True:
        report = scanner.scan(dsh(root))
        rounds.append(report.frames_decoded)
        if not report.pending:
            break
    assert sum(rounds) == 4 * 6 and max(rounds) <= 4
    assert Scanner(store).scan(dsh(root)).human_messages == 20
    # Every session advanced within the first rounds: the start rotates past the last stop.
    touched = {
        row[0] for row in store.db.execute("SELECT session_id FROM log_files WHERE offset > 0")
    }
    assert touched == {f"s-{n}" for n in range(4)}


def test_generations_are_unioned_and_deduplicated_by_the_seed_rule(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "root"
    directory = session_dir(root, "s-1")
    shared = [human(0, "same in both generations"), event("turn/start", 1, {"turn": 1})]
    write_log(
        directory / "session.jsonl.zstd", [shared, [human(2, "old text at seq 2")]], version=0
    )
    write_log(directory / "session.v4.jsonl.zstd", [shared, [human(2, "new text at seq 2")]])
    report = scanner.scan(dsh(root))
    assert report.sessions == 1 and report.files == 2
    events = scanner.catalog.events(("dsh", "s-1"))
    texts = [e["data"]["content"][0]["text"] for e in events if e["type"] == "user/message"]
    # Identical twins drop; same seq with different data keeps both (seed 001 §3.7).
    assert texts == ["same in both generations", "old text at seq 2", "new text at seq 2"]
    assert report.events == 4 and report.human_messages == 3


def test_twins_inside_one_generation_are_dropped_too(tmp_path: Path, scanner: Scanner) -> None:
    root = tmp_path / "root"
    log = session_dir(root, "s-1") / "session.v4.jsonl.zstd"
    write_log(log, [[human(0, "a"), human(1, "b")], [human(1, "b")]])  # seq 1 written twice
    report = scanner.scan(dsh(root))
    assert (report.events, report.human_messages) == (2, 2)
    write_log(log, [[human(2, "c")]], mode="ab")
    assert scanner.scan(dsh(root)).human_messages == 3
    assert len(scanner.catalog.events(("dsh", "s-1"))) == 3


def test_a_generation_deleted_after_reading_stays_in_the_session(
    tmp_path: Path, scanner: Scanner
) -> None:
    root = tmp_path / "root"
    directory = session_dir(root, "s-1")
    write_log(directory / "session.jsonl.zstd", [[human(0, "old generation")]], version=0)
    write_log(directory / "session.v4.jsonl.zstd", [[human(1, "new generation")]])
    assert scanner.scan(dsh(root)).human_messages == 2
    (directory / "session.jsonl.zstd").unlink()  # what was read stays known from the cache
    write_log(directory / "session.v4.jsonl.zstd", [[human(2, "later")]], mode="ab")
    report = scanner.scan(dsh(root))
    assert report.human_messages == 3 == len(scanner.catalog.events(("dsh", "s-1")))
