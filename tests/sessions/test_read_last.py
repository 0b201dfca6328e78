"""`sessions.reader.read_last`: the last whole frames or lines of a log, read from its end, so
what a caller pays (the guard's reading of the person's latest words, on a PreToolUse) does
not grow with the session; with the state of the log's first records (DSH's header)."""

from __future__ import annotations

import random
from pathlib import Path

from dshkit.sessions.events import human_messages, message_text
from dshkit.sessions.reader import LAST_HEAD_BYTES, read_last
from dshkit.sessions.zstdframes import MAGIC, frames_to_end

from ..support.corpus import encode_frame, header
from ..support.logs import human, session_dir, write_lines

CWD = "/home/dev/work"


def long_dsh_log(root: Path, frames: int, *, subagent: bool = False) -> Path:
    """A DSH v4 log of a header frame then `frames` frames, each a person's message padded with
    ~8 KiB of random hex (zstd halves it, no more)."""
    path = session_dir(root, "s-1") / "session.v4.jsonl.zstd"
    first = header("s-1", 4, CWD, 1)
    if subagent:
        first.update(origin="subagent", delegationDepth=1)
    noise = random.Random(7)
    parts = [encode_frame([first])]
    for seq in range(frames):
        pad = noise.randbytes(4096).hex()
        parts.append(encode_frame([human(seq, f"message {seq} {pad}")]))
    path.write_bytes(b"".join(parts))
    return path


def test_the_last_frames_of_a_long_dsh_log_are_read_from_its_end(tmp_path: Path) -> None:
    path = long_dsh_log(tmp_path, 600)  # about 2.5 MiB on disk
    size = path.stat().st_size
    assert size > 2 << 20
    last = read_last("dsh", str(path), 64 << 10)
    assert last.errors == [] and last.cwd == CWD
    seqs = [event["seq"] for event in last.events]
    assert seqs and seqs[-1] == 599 and seqs == list(range(seqs[0], 600))
    assert 0 < len(seqs) < 20  # only the frames of the last 64 KiB, not the whole session
    humans = human_messages(last.events)
    assert message_text(humans[-1]).startswith("message 599 ")
    # what it read: the head (for the header), the window twice, never the log
    assert last.bytes_read <= LAST_HEAD_BYTES + 3 * (64 << 10), (last.bytes_read, size)


def test_a_sub_agents_log_read_from_its_end_keeps_its_headers_word(tmp_path: Path) -> None:
    # its typed prompts are the parent agent's, not the person's: the header says so
    path = long_dsh_log(tmp_path, 300, subagent=True)
    last = read_last("dsh", str(path), 64 << 10)
    assert last.errors == [] and last.events
    assert human_messages(last.events) == []


def test_a_short_log_is_read_whole(tmp_path: Path) -> None:
    path = long_dsh_log(tmp_path, 3)
    last = read_last("dsh", str(path), 1 << 20)
    assert [event["seq"] for event in last.events] == [0, 1, 2] and last.errors == []


def test_a_frame_longer_than_the_bound_is_still_found(tmp_path: Path) -> None:
    path = session_dir(tmp_path, "s-1") / "session.v4.jsonl.zstd"
    big = random.Random(3).randbytes(300_000).hex()  # one frame of ~600 KB
    parts = [encode_frame([header("s-1", 4, CWD, 1)])]
    parts += [encode_frame([human(seq, f"m{seq} {big}")]) for seq in range(4)]
    path.write_bytes(b"".join(parts))
    last = read_last("dsh", str(path), 64 << 10)  # (the bound doubles to reach a frame)
    assert [event["seq"] for event in last.events][-1] == 3 and last.errors == []


def test_a_magic_number_inside_a_payload_is_no_frame() -> None:
    noise = random.Random(11)
    raw = bytearray(encode_frame([{"text": noise.randbytes(800).hex()}]))
    raw[200:206] = MAGIC + b"\x04\x58"  # a magic number and frame header in the payload
    second = encode_frame([{"n": 2}])
    third = encode_frame([{"n": 3}])
    window = bytes(raw[100:]) + second + third  # the end of a file, cut inside `first`
    base = 5_000
    assert frames_to_end(window, base) == base + len(raw) - 100
    assert frames_to_end(bytes(raw[100:]), base) is None  # no frame starts in it


def test_a_plain_log_read_from_its_end_leaves_out_the_cut_line(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "projects" / "-p" / "c1.jsonl"
    path.parent.mkdir(parents=True)
    records = [
        {"type": "user", "sessionId": "c1", "cwd": "/p", "uuid": f"u{n}",
         "timestamp": "2026-12-01T10:00:00Z",
         "message": {"role": "user", "content": f"message {n} " + "x" * 2000}}
        for n in range(400)
    ]  # fmt: skip
    write_lines(path, records)
    last = read_last("claude", str(path), 16 << 10)
    assert last.errors == []
    texts = [message_text(m) for m in human_messages(last.events)]
    assert texts[-1].startswith("message 399 ") and 1 < len(texts) < 12
    assert all(t.startswith("message ") for t in texts)
