"""Reads what is new in one log file since its cursor: whole zstd frames or whole lines, never more.

The decision per file (seed 001 §3.3, plus file identity):
- same size and identity as last time → nothing is opened;
- another inode, shrunk below the cursor, rewritten in place, or the bytes just before the
  cursor changed → a warning, and the file is read again from 0 (its old events replaced);
- otherwise only `[offset, size)` is read; for zstd, a segment that does not start with a frame
  warns and falls back to a full rescan; complete frames (or lines) are decoded, the cursor
  moves to the end of the last one, and a torn tail waits for the next round.
A file that failed is remembered with its identity and not decoded again until it changes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import orjson

from .events import Event
from .harness import Adapter, LogFile, LogFormatError
from .summary import HumanRow, accumulate, merge_stats, new_stats
from .zstdframes import MAGIC, Frame, FrameDecoder, FrameError, FrameTooLarge, scan_frames

# Bytes kept from just before the cursor, to notice a file replaced by a longer one. Long
# enough to reach past JSON lines' common tails into ids and times (for zstd: the checksum).
ANCHOR_LEN = 64
# Frames parsed as one batch: large enough to amortize per-call work, small enough to stay
# cache-friendly (holding a whole file's records at once costs ~1.4x more).
_CHUNK_FRAMES = 64


@dataclass(slots=True)
class Cursor:
    """Where reading of one log file stands; persisted as a `log_files` row."""

    path: str
    harness: str
    session_id: str
    root: str
    cache_name: str
    generation: int = 0
    offset: int = 0
    size: int = 0
    dev: int = 0
    ino: int = 0
    mtime_ns: int = 0
    anchor: bytes = b""
    plain_len: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=new_stats)
    error: str | None = None
    error_identity: str | None = None

    @property
    def seen(self) -> Seen:
        return Seen(
            self.offset,
            self.size,
            self.mtime_ns,
            self.dev,
            self.ino,
            self.error,
            self.error_identity,
        )


class Seen(NamedTuple):
    """What was last seen of a file: enough to tell from a stat alone that nothing changed."""

    offset: int
    size: int
    mtime_ns: int
    dev: int
    ino: int
    error: str | None
    error_identity: str | None

    def unchanged(self, st: os.stat_result) -> bool:
        """The file is exactly as it was last read (nothing to open)."""
        return (
            st.st_size == self.size
            and st.st_mtime_ns == self.mtime_ns
            and st.st_ino == self.ino
            and st.st_dev == self.dev
        )

    def failed_as(self, st: os.stat_result) -> bool:
        """The file failed before and has not changed since."""
        return self.error is not None and self.error_identity == identity(st)

    def settled(self, st: os.stat_result) -> bool:
        """Nothing to read: unchanged since last read, or failed and unchanged since."""
        return self.unchanged(st) or self.failed_as(st)


def identity(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def unreadable(exc: OSError) -> str:
    return f"cannot read the file: {exc.strerror or exc}"


@dataclass(slots=True)
class Increment:
    """The outcome of reading one file once."""

    cursor: Cursor
    plaintext: bytes = b""
    reset: bool = False  # the cache restarts from empty before `plaintext` is appended
    delta: dict[str, Any] = field(default_factory=new_stats)  # summary of the new events only
    from_start: bool = False  # this read began at byte 0, so `kept` (if asked for) is complete
    kept: list[Event] | None = None  # the new events, when the caller asked to keep them
    humans: list[HumanRow] = field(default_factory=list)  # the new human messages
    frames: int = 0
    bytes_read: int = 0
    pending: bool = False  # the frame budget stopped it with complete frames left
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def parse_lines(body: bytes, strict: bool) -> tuple[list[Any], list[tuple[int, str]], int]:
    """JSON records of the complete lines in `body`: `(records, problems, bytes accepted)`.

    A problem is `(offset of the line in body, reason)`. Strict: the first bad line ends the
    batch (accepted stops before it). Lenient: a bad line is skipped and listed. Blank lines
    are skipped.
    """
    *lines, rest = body.split(b"\n")
    loads = orjson.loads
    try:
        return [loads(line) for line in lines], [], len(body) - len(rest)
    except orjson.JSONDecodeError:
        pass  # find and name the bad line
    records: list[Any] = []
    problems: list[tuple[int, str]] = []
    position = 0
    for line in lines:
        if line.strip():
            try:
                records.append(loads(line))
            except orjson.JSONDecodeError as exc:
                problems.append((position, f"invalid JSON ({exc})"))
                if strict:
                    return records, problems, position
        position += len(line) + 1
    return records, problems, position


def read_increment(
    log: LogFile,
    cursor: Cursor,
    adapter: Adapter,
    decoder: FrameDecoder,
    st: os.stat_result,
    frame_budget: int | None = None,
    keep: bool = False,
) -> Increment:
    """Read the new part of `log`; the returned cursor is a new object, `cursor` is untouched.

    With `keep`, the new events are also returned in `Increment.kept`.
    """
    seen = cursor.seen
    if seen.failed_as(st):
        return Increment(cursor, errors=[cursor.error or ""])
    if seen.unchanged(st):
        return Increment(cursor)
    own = replace(cursor, state=_copy(cursor.state), stats=_copy(cursor.stats))
    inc = Increment(own, kept=[] if keep else None)
    cur = inc.cursor
    if cur.size or cur.offset or cur.ino:
        if (st.st_dev, st.st_ino) != (cur.dev, cur.ino):
            _restart(inc, log, "was replaced by another file")
        elif st.st_size < cur.offset:
            _restart(inc, log, "shrank below the read position (truncated or rotated)")
        elif st.st_size == cur.size and st.st_mtime_ns != cur.mtime_ns:
            _restart(inc, log, "was rewritten in place")
    cur.error = cur.error_identity = None
    try:
        _read(inc, log, adapter, decoder, st, frame_budget)
    except OSError as exc:
        _fail(inc, unreadable(exc), st)
    return inc


def _restart(inc: Increment, log: LogFile, reason: str) -> None:
    inc.warnings.append(f"{log.path} {reason}; reading it again from the start")
    cur = inc.cursor
    inc.reset = True
    inc.delta = new_stats()
    inc.humans = []
    if inc.kept is not None:
        inc.kept = []
    cur.offset = cur.plain_len = 0
    cur.anchor = b""
    cur.state = {}
    cur.stats = new_stats()


def _fail(inc: Increment, message: str, st: os.stat_result) -> None:
    inc.errors.append(message)
    inc.cursor.error = message
    inc.cursor.error_identity = identity(st)


def _read(
    inc: Increment,
    log: LogFile,
    adapter: Adapter,
    decoder: FrameDecoder,
    st: os.stat_result,
    frame_budget: int | None,
) -> None:
    cur = inc.cursor
    start = cur.offset
    inc.from_start = start == 0
    anchor = cur.anchor if start else b""
    with open(log.path, "rb") as handle:  # read-only, always: session logs are not ours
        handle.seek(start - len(anchor))
        data = handle.read(st.st_size - start + len(anchor))
    inc.bytes_read += len(data)
    # After a restart the offset is 0, so neither fallback below can fire twice.
    if anchor and data[: len(anchor)] != anchor:
        _restart(inc, log, "changed before the read position")
        return _read(inc, log, adapter, decoder, st, frame_budget)
    segment = data[len(anchor) :]
    if log.compressed:
        torn_magic = len(segment) < 4 and MAGIC.startswith(segment)
        if start and not segment.startswith(MAGIC) and not torn_magic:
            _restart(inc, log, f"has no zstd frame at the read position {start}")
            return _read(inc, log, adapter, decoder, st, frame_budget)
        accepted = _read_frames(inc, segment, start, adapter, decoder, st, frame_budget)
    else:
        accepted = _read_lines(inc, segment, start, adapter, st)
    cur.anchor = (cur.anchor + segment[:accepted])[-ANCHOR_LEN:] if accepted else cur.anchor
    cur.offset = start + accepted
    cur.plain_len += len(inc.plaintext)
    cur.mtime_ns, cur.dev, cur.ino = st.st_mtime_ns, st.st_dev, st.st_ino
    # Stopped by the frame budget: record only what was read, so the next round goes on.
    cur.size = cur.offset if inc.pending else st.st_size
    merge_stats(cur.stats, inc.delta)


def _read_frames(
    inc: Increment,
    segment: bytes,
    start: int,
    adapter: Adapter,
    decoder: FrameDecoder,
    st: os.stat_result,
    frame_budget: int | None,
) -> int:
    """Decode the complete frames of `segment`; returns how many of its bytes were accepted.

    Each frame is decompressed on its own; lines are parsed and normalized a chunk of frames
    at a time (cheaper than per frame, and than holding a whole file's records at once).
    """
    scan = scan_frames(segment, base=start, max_frames=frame_budget)
    decode = decoder.decode
    plain: list[bytes] = []
    accepted = 0
    failure: str | None = None
    for first in range(0, len(scan.frames), _CHUNK_FRAMES):
        frames = scan.frames[first : first + _CHUNK_FRAMES]
        texts: list[bytes] = []
        for frame in frames:
            try:
                text = decode(segment[frame.start - start : frame.end - start], frame)
            except (FrameError, FrameTooLarge) as exc:
                failure = str(exc)
                break
            inc.frames += 1
            if text[-1:] != b"\n" and text:
                failure = f"zstd frame at byte {frame.start} ends inside a line"
                break
            texts.append(text)
        kept = _take_frames(inc, texts, frames, adapter, st)
        plain += texts[:kept]
        if kept:
            accepted = frames[kept - 1].end - start
        if kept < len(texts) or failure is not None:
            break
    else:
        failure = str(scan.error) if scan.error is not None else None
    if failure is not None and inc.cursor.error is None:
        _fail(inc, failure, st)
    inc.pending = scan.stopped_at is not None and inc.cursor.error is None
    inc.plaintext = b"".join(plain)
    return accepted


def _take_frames(
    inc: Increment, texts: list[bytes], frames: list[Frame], adapter: Adapter, st: os.stat_result
) -> int:
    """Parse and normalize decoded frames, counting them in `inc.delta`; returns how many
    frames it kept."""
    state = inc.cursor.state
    saved = _copy(state)
    loads = orjson.loads
    try:
        records = [loads(line) for line in b"".join(texts).split(b"\n")[:-1]]
        _count(inc, adapter.normalize(records, state))
        return len(texts)
    except (orjson.JSONDecodeError, LogFormatError):
        state.clear()
        state.update(saved)
    for index, text in enumerate(texts):  # the slow path: find the frame at fault
        records, problems, _ = parse_lines(text, strict=True)
        try:
            if problems:
                line_at, reason = problems[0]
                raise LogFormatError(f"line at plaintext byte {line_at}: {reason}")
            _count(inc, adapter.normalize(records, state))
        except LogFormatError as exc:
            _fail(inc, f"zstd frame at byte {frames[index].start}: {exc}", st)
            return index
    return len(texts)


def _read_lines(
    inc: Increment, segment: bytes, start: int, adapter: Adapter, st: os.stat_result
) -> int:
    """Take the complete lines of `segment`; returns how many of its bytes were accepted."""
    body = segment[: segment.rfind(b"\n") + 1]
    records, problems, accepted = parse_lines(body, adapter.strict_lines)
    messages = [f"line at byte {start + line_at}: {reason}" for line_at, reason in problems]
    if messages and adapter.strict_lines:
        _fail(inc, messages[0], st)
    elif messages:
        inc.errors.extend(messages)
        # Kept with the cursor, so the problem stays visible after this scan's report is gone.
        state = inc.cursor.state
        state["badLines"] = state.get("badLines", 0) + len(messages)
        state["lastProblem"] = messages[-1]
    try:
        events = adapter.normalize(records, inc.cursor.state)
    except LogFormatError as exc:
        _fail(inc, str(exc), st)
        return 0
    _count(inc, events)
    inc.plaintext = body[:accepted]
    return accepted


def _copy(value: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of JSON-shaped state (much faster than copy.deepcopy)."""
    copied: dict[str, Any] = orjson.loads(orjson.dumps(value))
    return copied


def _count(inc: Increment, events: list[Event]) -> None:
    accumulate(inc.delta, events, inc.humans)
    if inc.kept is not None:
        inc.kept += events
