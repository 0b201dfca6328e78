"""One file's read: lines over the cap are cut whatever the block size, the log's own offsets are
still told, and a sink that cannot take the text fails the read, not the log."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import orjson
import pytest

from dshkit.sessions import ADAPTERS, reader
from dshkit.sessions.cap import TEXT_CAP, cuts
from dshkit.sessions.events import human_messages, message_text
from dshkit.sessions.reader import Cursor, Increment, SinkError, read_increment
from dshkit.sessions.zstdframes import FrameDecoder

UUID = "0c0a0b0e-1111-4222-8333-000000000001"


class Sink:
    """Keeps the plaintext a read hands on; `room` bytes of it at most (then ENOSPC)."""

    def __init__(self, room: int | None = None) -> None:
        self.data = b""
        self.room = room

    def start(self, at: int) -> None:
        self.data = self.data[:at]

    def write(self, chunk: bytes | memoryview) -> None:
        if self.room is not None and len(self.data) + len(chunk) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.data += bytes(chunk)


def claude_log(tmp_path: Path, *lines: bytes) -> tuple[Path, bytes]:
    path = tmp_path / "claude" / "-w" / f"{UUID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = b"".join(line + b"\n" for line in lines)
    path.write_bytes(body)
    return path, body


def read(path: Path, sink: Sink) -> Increment:
    adapter = ADAPTERS["claude"]
    log = adapter.log_file(str(path))
    assert log is not None
    cursor = Cursor(log.path, "claude", log.session_id, log.root, "")
    return read_increment(log, cursor, adapter, FrameDecoder(), os.stat(path), sink=sink)


def said(text: str) -> bytes:
    return orjson.dumps({"type": "user", "message": {"role": "user", "content": text}})


@pytest.mark.parametrize("block", [reader.BLOCK_BYTES, 4096])
def test_a_line_over_the_cap_is_cut_and_the_log_s_offsets_still_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    # In one block the long line is cut whole; in blocks of 4 KiB it is cut as it is read.
    monkeypatch.setattr(reader, "BLOCK_BYTES", block)
    long = said("长" * (2 * TEXT_CAP))
    path, body = claude_log(tmp_path, said("first"), long, b"{oops", said("last"))
    sink = Sink()
    inc = read(path, sink)
    assert inc.cursor.offset == len(body) and inc.cursor.anchor == body[-64:]
    # The bad line is told where it is in the log, not in the shorter text cached.
    (problem,) = inc.errors
    assert problem.startswith(f"line at byte {body.index(b'{oops')}: invalid JSON")
    assert inc.cursor.plain_len == len(sink.data) < len(body) - TEXT_CAP
    cached = [orjson.loads(line) for line in sink.data.splitlines() if line != b"{oops"]
    texts = [message_text(e) for e in human_messages(ADAPTERS["claude"].normalize(cached, {}))]
    assert (texts[0], texts[2]) == ("first", "last")
    (cut,) = cuts(texts[1])
    assert cut.total == 2 * TEXT_CAP
    # What the read counted is what the cache holds.
    assert [row[2] for row in inc.humans] == texts


def test_a_sink_that_cannot_take_the_text_fails_the_read_not_the_log(tmp_path: Path) -> None:
    path, _ = claude_log(tmp_path, *(said(f"message {n} " + "x" * 1000) for n in range(200)))
    with pytest.raises(SinkError) as raised:
        read(path, Sink(room=50_000))
    assert raised.value.error.errno == errno.ENOSPC
    # Nothing is remembered against the log: with room, the same read takes it all.
    inc = read(path, Sink())
    assert inc.errors == [] and len(inc.humans) == 200
