"""`sessions.reader.read_head`: the first whole frames or lines of a log within a bound, read
only, for a caller that needs a log's opening (graft finding the session it started)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dshkit.sessions import Catalog, Scanner, Source
from dshkit.sessions.events import human_messages, message_text
from dshkit.sessions.reader import read_head
from dshkit.store import Store

from ..support.corpus import encode_frame, header
from ..support.logs import event, human, session_dir, write_lines
from ..support.paths import CLAUDE, CODEX, DSH_PLAIN, DSH_ZSTD
from ..support.readonly import is_write, recorded_opens, snapshot

CWD = "/home/dev/work"


def test_a_dsh_log_is_read_frame_by_frame_up_to_the_bound(tmp_path: Path) -> None:
    path = session_dir(tmp_path, "s-1") / "session.v4.jsonl.zstd"
    frames = [
        encode_frame([header("s-1", 4, CWD, 1)]),
        encode_frame([human(0, "first"), event("turn/start", 1, {"turn": 1})]),
        encode_frame([human(2, "second")]),
        encode_frame([human(3, "third")]),
    ]
    path.write_bytes(b"".join(frames))
    ends = [sum(len(f) for f in frames[: n + 1]) for n in range(len(frames))]

    whole = read_head("dsh", str(path), 1 << 20)
    assert [e["seq"] for e in whole.events] == [0, 1, 2, 3]
    assert (whole.cwd, whole.errors) == (CWD, [])
    # A frame the bound cuts is left out; one ending exactly at it is in.
    assert [e["seq"] for e in read_head("dsh", str(path), ends[2]).events] == [0, 1, 2]
    assert [e["seq"] for e in read_head("dsh", str(path), ends[2] + 5).events] == [0, 1, 2]
    assert [e["seq"] for e in read_head("dsh", str(path), ends[2] - 1).events] == [0, 1]
    assert read_head("dsh", str(path), ends[0]).events == []
    assert read_head("dsh", str(path), ends[0]).cwd == CWD  # the header names it


def test_a_transcript_is_read_line_by_line_up_to_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "projects" / "-home-dev-p" / "s-2.jsonl"
    path.parent.mkdir(parents=True)
    lines = [
        {"type": "user", "cwd": "/home/dev/p", "message": {"role": "user", "content": text}}
        for text in ("one", "two", "three")
    ]
    write_lines(path, lines)
    size = path.stat().st_size
    texts = [
        [message_text(e) for e in human_messages(read_head("claude", str(path), bound).events)]
        for bound in (size, size - 1, 10)
    ]
    assert texts == [["one", "two", "three"], ["one", "two"], []]
    assert read_head("claude", str(path), size).cwd == "/home/dev/p"
    assert read_head("claude", str(path), 10).cwd is None  # no whole line: nothing named yet


def test_the_real_logs_are_read_whole_and_only_read() -> None:
    roots = {"dsh": [DSH_ZSTD, DSH_PLAIN], "claude": [CLAUDE], "codex": [CODEX]}
    before = snapshot(DSH_ZSTD, DSH_PLAIN, CLAUDE, CODEX)
    read = 0
    with recorded_opens() as opens:
        for harness, paths in roots.items():
            for root in paths:
                for log in (p for p in root.rglob("*") if p.is_file()):
                    head = read_head(harness, str(log), 1 << 30)
                    assert head.errors == [] and head.events, log
                    assert head.cwd, log
                    read += 1
    assert read == 6
    assert opens and not any(is_write(mode) for _, mode in opens)
    assert snapshot(DSH_ZSTD, DSH_PLAIN, CLAUDE, CODEX) == before


def test_a_whole_head_is_what_the_scan_reads(store: Store) -> None:
    Scanner(store).scan([Source("claude", CLAUDE), Source("codex", CODEX), Source("dsh", DSH_ZSTD)])
    catalog = Catalog(store)
    checked = 0
    for info in catalog.recent(None, limit=None):
        [cursor] = catalog.files(info.key)
        head = read_head(info.harness, cursor.path, os.path.getsize(cursor.path))
        assert head.events == catalog.events(info.key)
        checked += 1
    assert checked == 5


def test_a_path_that_is_no_log_of_the_harness_is_refused(tmp_path: Path) -> None:
    stray = tmp_path / "notes.txt"
    stray.write_text("hello\n")
    with pytest.raises(ValueError, match="is not named like a"):
        read_head("codex", str(stray), 100)
    with pytest.raises(OSError):
        read_head("claude", str(tmp_path / "projects" / "-p" / "gone.jsonl"), 100)
