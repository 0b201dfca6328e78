"""Reads what is new in one log file since its cursor: whole zstd frames or whole lines, never more.

The decision per file (docs/design/sessions.md#one-decision-per-file-per-scan):
- same size and identity as last time → nothing is opened;
- another inode, shrunk below the cursor, rewritten in place, or the bytes just before the
  cursor changed → a warning, and the file is read again from 0 (its old events replaced);
- otherwise only `[offset, size)` is read; for zstd, a segment that does not start with a frame
  warns and falls back to a full rescan; complete frames (or lines) are decoded, the cursor
  moves to the end of the last one, and a torn tail waits for the next round.
A file that failed is remembered with its identity and not decoded again until it changes.
`read_head` reads the first whole lines or frames of a log within a bound, without a cursor;
`read_last` its last ones, from the end, whatever the log's length.

The new part is read a block at a time: each block's complete lines (or frames) are parsed,
normalized, counted and handed to the caller's sink before the next block is read, so a read
holds one block and its records, whatever the file's size, with the same result as reading it
in one piece. A line longer than TEXT_CAP has its long strings cut (`cap`) before it is
parsed, and one longer than a block is cut as it is read, never held whole
(docs/design/sessions.md#one-text-is-capped-never-cut-silently).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO, NamedTuple, Protocol

import orjson

from .. import harnesses
from ..harnesses import Harness
from .cap import TEXT_CAP, LineCutter, cap_line, cap_lines
from .events import Event
from .harness import Adapter, LogFile, LogFormatError, open_log
from .summary import HumanRow, accumulate, merge_stats, new_stats
from .zstdframes import (
    MAGIC,
    Frame,
    FrameDecoder,
    FrameError,
    FrameTooLarge,
    frames_to_end,
    scan_frames,
)

# Bytes kept from just before the cursor, to notice a file replaced by a longer one. Long
# enough to reach past JSON lines' common tails into ids and times (for zstd: the checksum).
ANCHOR_LEN = 64
# Bytes read from a log at a time (more when a line or frame is longer): what a read holds of
# the file at once, besides that block's records (several times as much). Blocks from 256 KiB
# to 4 MiB scan about as fast; the smaller, the less memory.
BLOCK_BYTES = 512 << 10
# Frames parsed as one batch: large enough to amortize per-call work, small enough to stay
# cache-friendly (holding a whole file's records at once costs ~1.4x more). A batch also ends
# past this much plaintext: DSH's many small records take ~5x their text in memory.
_CHUNK_FRAMES = 64
_CHUNK_BYTES = 256 << 10


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


class PlainSink(Protocol):
    """Receives the plaintext a read accepts (decoded frames, or the lines as they are), in file
    order, while the file is read.

    A read that ends in a failure may have written more than it accepted: only the first
    `cursor.plain_len` bytes of a file's plaintext, as the returned cursor says, count.
    """

    def start(self, at: int) -> None:
        """Called before the first write: what follows belongs at byte `at` of the file's
        plaintext, and anything after `at` is stale (left by an interrupted scan, or the file
        is read again from 0)."""

    def write(self, chunk: bytes | memoryview) -> None: ...


class SinkError(Exception):
    """The sink could not take the plaintext (its OSError is the cause): a failure to store
    what was read, not of the log, so it is raised to the caller, never remembered as the
    log's error."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.error = error


@dataclass(slots=True)
class Increment:
    """The outcome of reading one file once."""

    cursor: Cursor
    plain_bytes: int = 0  # plaintext this read accepted (handed to the sink, if any)
    reset: bool = False  # read again from 0: the file's plaintext restarts from empty
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
    records, problems, taken = _parse(lines, None, strict)
    if taken == len(lines):
        return records, problems, len(body) - len(rest)
    return records, problems, sum(len(line) + 1 for line in lines[:taken])


def _parse(
    lines: list[bytes], sizes: list[int] | None, strict: bool
) -> tuple[list[Any], list[tuple[int, str]], int]:
    """`parse_lines` of a body split in lines: `(records, problems, lines accepted)`; the
    offsets in problems count `sizes` (each line's size in the log, when not its own)."""
    loads = orjson.loads
    try:
        return [loads(line) for line in lines], [], len(lines)
    except orjson.JSONDecodeError:
        pass  # find and name the bad line
    records: list[Any] = []
    problems: list[tuple[int, str]] = []
    position = 0
    for index, line in enumerate(lines):
        if line.strip():
            try:
                records.append(loads(line))
            except orjson.JSONDecodeError as exc:
                problems.append((position, f"invalid JSON ({exc})"))
                if strict:
                    return records, problems, index
        position += (len(line) if sizes is None else sizes[index]) + 1
    return records, problems, len(lines)


def _parse_block(
    buf: bytes, strict: bool
) -> tuple[list[Any], list[tuple[int, str]], int, bytes | None]:
    """`parse_lines` for a read: the records of `buf`'s complete lines, each longer than
    TEXT_CAP capped first; the problems; the bytes of the log accepted; and the plaintext of
    the lines accepted where one was capped (None: those bytes as they are)."""
    *lines, rest = buf.split(b"\n")
    if not lines or max(map(len, lines)) <= TEXT_CAP:  # the common case: nothing to cap
        records, problems, taken = _parse(lines, None, strict)
        if taken == len(lines):
            return records, problems, len(buf) - len(rest), None
        return records, problems, sum(len(line) + 1 for line in lines[:taken]), None
    del rest
    sizes = [len(line) for line in lines]
    lines = [cap_line(line) if len(line) > TEXT_CAP else line for line in lines]
    records, problems, taken = _parse(lines, sizes, strict)
    plain = b"".join(line + b"\n" for line in lines[:taken])
    return records, problems, sum(sizes[:taken]) + taken, plain


def read_increment(
    log: LogFile,
    cursor: Cursor,
    adapter: Adapter,
    decoder: FrameDecoder,
    st: os.stat_result,
    frame_budget: int | None = None,
    keep: bool = False,
    sink: PlainSink | None = None,
) -> Increment:
    """Read the new part of `log`; the returned cursor is a new object, `cursor` is untouched.

    With `keep`, the new events are also returned in `Increment.kept`. With `sink`, the
    plaintext of what is accepted is handed to it as the file is read.
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
        _read(inc, log, adapter, decoder, st, frame_budget, sink)
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


class _Blocks:
    """The bytes of a log from a read's start to the size it was stat'ed at, a block at a time.

    A caller holds one block at a time (with the unfinished line or frame before it), and
    drops it for the next.
    """

    def __init__(self, handle: BinaryIO, left: int, inc: Increment) -> None:
        self.handle = handle
        self.left = left
        self.inc = inc
        self.ahead = b""  # the first block, read to check the cursor, waiting for `after`
        self.error: OSError | None = None  # a read after the first block failed

    def read(self, size: int) -> bytes:
        """Up to `size` more bytes; raises OSError."""
        data = self.handle.read(min(size, self.left))
        self.left -= len(data)
        self.inc.bytes_read += len(data)
        return data

    def after(self, carried: bytes) -> bytes:
        """`carried` (the unfinished line or frame the caller holds) then the next block; b""
        at the end, or after a read error (kept in `error`; what was taken before it stays).

        The block is at least as long as `carried`: a frame longer than a block is completed
        in steps that double, not one block at a time (a line that long is read on through
        `_read_long_line` instead).
        """
        if self.ahead:
            data, self.ahead = self.ahead, b""
            return carried + data if carried else data
        try:
            data = self.read(max(BLOCK_BYTES, len(carried)))
        except OSError as exc:
            self.error = exc
            data = b""
        if not data:
            self.left = 0  # the end, or the file shrank since its stat: what was read is all
            return b""
        return carried + data if carried else data


class _Taken:
    """What one read has accepted so far, and where its plaintext goes."""

    def __init__(self, inc: Increment, sink: PlainSink | None) -> None:
        self.inc = inc
        self.sink = sink
        self.anchor = inc.cursor.anchor
        self.tail = self.anchor  # the last ANCHOR_LEN bytes accepted, with those before
        self.count = 0  # bytes of the file accepted
        self.started = False

    def take(self, data: bytes, begin: int, end: int, plain: bytes | None = None) -> None:
        """Accept `data[begin:end]`, the file's next bytes, whose plaintext is `plain` (when
        not given: those bytes themselves)."""
        view = memoryview(data)[begin:end] if plain is None else plain  # a view: no copy
        self.accept(end - begin, data[max(begin, end - ANCHOR_LEN) : end], view)

    def accept(self, count: int, last: bytes, plain: bytes | memoryview) -> None:
        """Accept the file's next `count` bytes, which end with `last` (their last ANCHOR_LEN
        bytes, or all of them) and whose plaintext is `plain`. SinkError when the sink
        cannot take it."""
        self.tail = (self.tail + last)[-ANCHOR_LEN:]
        self.count += count
        size = len(plain)
        self.inc.plain_bytes += size
        if self.sink is None or not size:
            return
        try:
            if not self.started:
                self.sink.start(self.inc.cursor.plain_len)
                self.started = True
            self.sink.write(plain)
        except OSError as exc:
            raise SinkError(exc) from exc

    def drop(self) -> None:
        """Nothing of this read counts after all (what the sink got is past the cursor)."""
        self.tail = self.anchor
        self.count = 0
        self.inc.plain_bytes = 0


def _read(
    inc: Increment,
    log: LogFile,
    adapter: Adapter,
    decoder: FrameDecoder,
    st: os.stat_result,
    frame_budget: int | None,
    sink: PlainSink | None,
    end: int | None = None,
) -> None:
    """Read from the cursor to byte `end` of the file (its stat'ed size when None)."""
    cur = inc.cursor
    start = cur.offset
    stop = st.st_size if end is None else max(start, min(end, st.st_size))
    inc.from_start = start == 0
    anchor = cur.anchor if start else b""
    taken = _Taken(inc, sink)
    with open_log(log) as handle:  # read-only, always, and never through a link
        handle.seek(start - len(anchor))
        blocks = _Blocks(handle, stop - start + len(anchor), inc)
        moved = _first_block(blocks, anchor, start, log.compressed)
        if moved is None and log.compressed:
            _read_frames(inc, blocks, start, adapter, decoder, st, frame_budget, taken)
        elif moved is None:
            _read_lines(inc, blocks, start, adapter, st, taken)
    if moved is not None:
        # After a restart the offset is 0, so neither fallback can fire twice.
        _restart(inc, log, moved)
        return _read(inc, log, adapter, decoder, st, frame_budget, sink, end)
    cur.anchor = taken.tail if taken.count else cur.anchor
    cur.offset = start + taken.count
    cur.plain_len += inc.plain_bytes
    cur.mtime_ns, cur.dev, cur.ino = st.st_mtime_ns, st.st_dev, st.st_ino
    # Stopped by the frame budget or the end: record only what was read, so the next round
    # goes on.
    cur.size = cur.offset if inc.pending or stop < st.st_size else st.st_size
    merge_stats(cur.stats, inc.delta)
    if blocks.error is not None:  # what came before it is kept; the rest once the file changes
        _fail(inc, unreadable(blocks.error), st)


def _first_block(blocks: _Blocks, anchor: bytes, start: int, compressed: bool) -> str | None:
    """Read the anchor and the first block (left in `blocks.ahead`); why the cursor cannot be
    trusted, if it cannot (then the file is read again from 0)."""
    data = blocks.read(len(anchor) + BLOCK_BYTES)  # an error here fails the read as a whole
    if anchor and data[: len(anchor)] != anchor:
        return "changed before the read position"
    segment = data[len(anchor) :]
    # A segment shorter than a magic number is the whole rest: it may be a torn one.
    torn_magic = len(segment) < 4 and MAGIC.startswith(segment)
    if compressed and start and not segment.startswith(MAGIC) and not torn_magic:
        return f"has no zstd frame at the read position {start}"
    blocks.ahead = segment
    return None


def _read_frames(
    inc: Increment,
    blocks: _Blocks,
    start: int,
    adapter: Adapter,
    decoder: FrameDecoder,
    st: os.stat_result,
    frame_budget: int | None,
    taken: _Taken,
) -> None:
    """Decode the complete frames from `start` on, a block at a time.

    Each frame is decompressed on its own; lines are parsed and normalized a chunk of frames
    at a time (cheaper than per frame, and than holding a whole file's records at once). A
    frame cut by the end of a block is completed from the next one.
    """
    decode = decoder.decode
    buf, base = blocks.after(b""), start  # the bytes in hand, and the file offset of the first
    found = 0
    stopped = False
    failure: str | None = None
    while buf:
        scan = scan_frames(buf, base, None if frame_budget is None else frame_budget - found)
        frames = scan.frames
        found += len(frames)
        at = 0
        while at < len(frames):
            chunk = frames[at : at + _CHUNK_FRAMES]
            texts: list[bytes] = []
            size = 0
            for frame in chunk:
                try:
                    text = decode(buf[frame.start - base : frame.end - base], frame)
                except (FrameError, FrameTooLarge) as exc:
                    failure = str(exc)
                    break
                inc.frames += 1
                if text[-1:] != b"\n" and text:
                    failure = f"zstd frame at byte {frame.start} ends inside a line"
                    break
                text = cap_lines(text)  # the decoder's output is what bounds a frame here
                texts.append(text)
                size += len(text)
                if size >= _CHUNK_BYTES:
                    break
            kept, plain = _take_frames(inc, texts, chunk, adapter, st)
            if kept:
                taken.take(buf, chunk[0].start - base, chunk[kept - 1].end - base, plain)
            if kept < len(texts) or failure is not None:
                break
            at += len(texts)
        else:
            if scan.error is not None:
                failure = str(scan.error)
            elif scan.stopped_at is not None:
                stopped = True
            else:  # every frame in hand is taken; a torn one waits for the next block
                rest = base + len(buf) if scan.torn_start is None else scan.torn_start
                carried = buf[rest - base :]
                del buf  # freed before the next block is read
                buf, base = blocks.after(carried), rest
                continue
        break
    if failure is not None and inc.cursor.error is None:
        _fail(inc, failure, st)
    inc.pending = stopped and inc.cursor.error is None


def _take_frames(
    inc: Increment, texts: list[bytes], frames: list[Frame], adapter: Adapter, st: os.stat_result
) -> tuple[int, bytes]:
    """Parse and normalize decoded frames, counting them in `inc.delta`; returns how many
    frames it kept, and their plaintext."""
    state = inc.cursor.state
    saved = _copy(state)
    loads = orjson.loads
    plain = b"".join(texts)
    try:
        records = [loads(line) for line in plain.split(b"\n")[:-1]]
        _count(inc, adapter.normalize(records, state))
        return len(texts), plain
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
            return index, b"".join(texts[:index])
    return len(texts), plain


def _read_lines(
    inc: Increment,
    blocks: _Blocks,
    start: int,
    adapter: Adapter,
    st: os.stat_result,
    taken: _Taken,
) -> None:
    """Take the complete lines from `start` on, a block's lines at a time.

    As if all were one batch: bad lines are reported wherever they are, and a log the adapter
    refuses (LogFormatError) has nothing of this read taken. A line longer than a block is
    read on through a `LineCutter` and taken as a batch of its own.
    """
    lines = _Lines(inc, adapter, st, taken)
    buf, base = blocks.after(b""), start  # the bytes in hand, and the file offset of the first
    while buf:
        # The records of the complete lines; the unfinished last one is left in `buf`.
        records, problems, accepted, plain = _parse_block(buf, lines.strict)
        last = buf[max(0, accepted - ANCHOR_LEN) : accepted]
        view = memoryview(buf)[:accepted] if plain is None else plain  # a view: no copy
        if not lines.batch(records, problems, base, accepted, last, view):
            break
        del records, view
        # Past the last complete line (no line was cut short but by the block's end).
        carried = buf[accepted:]
        del buf  # freed before the next block is read
        base += accepted
        if len(carried) <= BLOCK_BYTES:
            buf = blocks.after(carried)
            continue
        # An unfinished line longer than a block is read on through a cutter, never held.
        long = _read_long_line(blocks, carried)
        del carried
        if long is None:  # the end came first: a torn line waits for the next round
            break
        cut, size, last, rest = long
        records, problems, accepted = parse_lines(cut, lines.strict)
        whole = accepted == len(cut)  # else a bad line a strict log stops before
        if not lines.batch(records, problems, base, size if whole else 0, last, cut):
            break
        del records, cut
        base += size
        buf = rest or blocks.after(b"")
    lines.close()


class _Lines:
    """Batches of complete lines taken in file order, with what one read decided so far."""

    def __init__(self, inc: Increment, adapter: Adapter, st: os.stat_result, taken: _Taken):
        self.inc = inc
        self.adapter = adapter
        self.st = st
        self.taken = taken
        self.strict = adapter.strict_lines
        self.refused: LogFormatError | None = None

    def batch(
        self,
        records: list[Any],
        problems: list[tuple[int, str]],
        base: int,
        count: int,
        last: bytes,
        plain: bytes | memoryview,
    ) -> bool:
        """Count and take the records of the next `count` bytes of the file (at `base`, ending
        with `last`, whose plaintext is `plain`); False when the read ends here (strict)."""
        inc, state = self.inc, self.inc.cursor.state
        if problems:
            messages = [f"line at byte {base + at}: {reason}" for at, reason in problems]
            if self.strict:
                _fail(inc, messages[0], self.st)
            else:
                inc.errors.extend(messages)
                # Kept with the cursor, so the problem stays visible after this scan's report.
                state["badLines"] = state.get("badLines", 0) + len(messages)
                state["lastProblem"] = messages[-1]
        if self.refused is None:
            try:
                _count(inc, self.adapter.normalize(records, state))
            except LogFormatError as exc:
                self.refused = exc
                _drop(inc, self.taken)
            else:
                if count:
                    self.taken.accept(count, last, plain)
        return not (self.strict and problems)

    def close(self) -> None:
        if self.refused is not None:
            _fail(self.inc, str(self.refused), self.st)


def _read_long_line(blocks: _Blocks, carried: bytes) -> tuple[bytes, int, bytes, bytes] | None:
    """Read on to the end of the line `carried` begins, cutting it as it comes (`LineCutter`):
    the line cut (with its newline), its size in the log (newline included), its last
    ANCHOR_LEN bytes there, and what the block holds after it. None when the file ends (or a
    read fails) first."""
    cutter = LineCutter()
    size = 0
    last = b""
    data = carried
    while data:
        end = data.find(b"\n")
        piece = data if end < 0 else data[:end]
        cutter.feed(piece)
        size += len(piece)
        last = (last + piece[-ANCHOR_LEN:])[-ANCHOR_LEN:]
        if end >= 0:
            return cutter.finish() + b"\n", size + 1, (last + b"\n")[-ANCHOR_LEN:], data[end + 1 :]
        del piece
        data = blocks.after(b"")
    return None


def _drop(inc: Increment, taken: _Taken) -> None:
    """Forget what this read counted and took so far."""
    inc.delta = new_stats()
    inc.humans = []
    if inc.kept is not None:
        inc.kept = []
    taken.drop()


def _copy(value: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of JSON-shaped state (much faster than copy.deepcopy)."""
    copied: dict[str, Any] = orjson.loads(orjson.dumps(value))
    return copied


def _count(inc: Increment, events: list[Event]) -> None:
    accumulate(inc.delta, events, inc.humans)
    if inc.kept is not None:
        inc.kept += events


@dataclass(slots=True)
class Head:
    """The first whole lines or frames of a log (`read_head`)."""

    events: list[Event]
    cwd: str | None  # the working directory the log names in what was read, if it does
    errors: list[str] = field(default_factory=list)  # what could not be read, and why
    bytes_read: int = 0  # of the file, by `read_last` (what the log's length does not grow)


def _log_at(harness: str, path: str) -> tuple[Harness, LogFile, os.stat_result, Cursor]:
    """The `harness` log at `path` as `read_head` and `read_last` read it: the harness, the
    log file, its stat and a fresh cursor (ValueError, OSError: as they say)."""
    found = harnesses.get(harness)
    log = found.adapter.log_file(os.path.abspath(path))
    if log is None:
        raise ValueError(f"{path} is not named like a {found.label} session log")
    st = os.stat(log.path)
    cursor = Cursor(log.path, harness, log.session_id, log.root, "", generation=log.generation)
    return found, log, st, cursor


def read_head(harness: str, path: str, max_bytes: int) -> Head:
    """The events in the first `max_bytes` of the `harness` log at `path`: its whole JSON lines,
    or (DSH) its whole zstd frames, each decoded on its own within its bounds; a line or frame
    cut by the bound is left out. The file is only opened `rb`, and no cursor is kept.

    ValueError when the path is not named like a log of that harness; OSError when it cannot be
    stat'ed. A read that fails part way keeps what came before, and says why in `errors`."""
    found, log, st, cursor = _log_at(harness, path)
    inc = Increment(cursor, kept=[])
    try:
        _read(inc, log, found.adapter, FrameDecoder(), st, None, None, max_bytes)
    except OSError as exc:
        _fail(inc, unreadable(exc), st)
    cwd = inc.cursor.state.get("cwd")
    return Head(inc.kept or [], cwd if isinstance(cwd, str) and cwd else None, inc.errors)


# What of a log's start `read_last` reads for the state its records are read with (DSH's
# header frame, a sub-agent's mark): the first whole lines or frames within it.
LAST_HEAD_BYTES = 64 << 10


def read_last(harness: str, path: str, max_bytes: int) -> Head:
    """The events of the whole lines or frames in about the last `max_bytes` of the `harness`
    log at `path`, read from the end: the cost does not grow with the log. They are read
    with the state of the log's first records (`LAST_HEAD_BYTES`: DSH's header, which says
    whether a sub-agent wrote it); a line or frame cut by the bound is left out (a frame
    longer than the bound: the bound doubles until one starts within it). No cursor is
    kept; the file is only opened `rb`.

    ValueError when the path is not named like a log of that harness; OSError when it cannot be
    stat'ed. A read that fails part way keeps what came before, and says why in `errors`."""
    found, log, st, cursor = _log_at(harness, path)
    head = Increment(cursor, kept=[])
    start = 0
    try:
        if st.st_size > max_bytes:
            _read(head, log, found.adapter, FrameDecoder(), st, None, None, LAST_HEAD_BYTES)
            if head.errors:
                return Head([], None, head.errors, head.bytes_read)
            start, searched = _last_start(log, st.st_size, max_bytes)
            head.bytes_read += searched
            start = max(head.cursor.offset, start)
        tail = Increment(replace(head.cursor, offset=start, anchor=b""), kept=[])
        _read(tail, log, found.adapter, FrameDecoder(), st, None, None)
    except OSError as exc:
        return Head([], None, [unreadable(exc)], head.bytes_read)
    if start and tail.reset:  # the file changed under the read: what it read is from 0
        tail.errors.append(f"{log.path} changed while its last records were read")
    events = (head.kept or []) if start == head.cursor.offset else []
    cwd = tail.cursor.state.get("cwd")
    return Head(
        events + (tail.kept or []),
        cwd if isinstance(cwd, str) and cwd else None,
        tail.errors,
        head.bytes_read + tail.bytes_read,
    )


def _last_start(log: LogFile, size: int, max_bytes: int) -> tuple[int, int]:
    """Where the whole lines or frames of the log's last `max_bytes` start (0: the whole),
    and how many bytes finding it read."""
    window = max(max_bytes, 1)
    searched = 0
    with open_log(log) as handle:
        while window < size:
            handle.seek(size - window)
            data = handle.read(window)
            searched += len(data)
            if log.compressed:
                at = frames_to_end(data, size - window)
                if at is not None:
                    return at, searched
            else:
                newline = data.find(b"\n")
                if newline >= 0:
                    return size - window + newline + 1, searched
            window *= 2
    return 0, searched
