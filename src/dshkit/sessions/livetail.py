"""What a live log gained since a tail cursor, read on the hot path without the session reader.

`sessions.tail` reads a live transcript's new part into events, with the reader, the adapters
and the store: the right tool once something is to be done with it, and about 40 ms of imports
for a hook. A hook that only needs to know what the new records are (graft's fold: the digest's
fields; a hint: whether any record of the kinds a handler reads came) reads them here, from the
cursor a tail read left in the store (`transcript_tails`), as the reader would take them:

- on the file the cursor was left on (its device and inode), not shrunk below it, not
  rewritten in place, the anchor bytes before it unchanged;
- whole lines (a last one still being written is left for later), or, for a log of zstd
  frames, the lines of each whole frame, each decoded on its own and bounded
  (`zstdframes`), a torn last frame left for later;
- each line read with the interpreter's C scanner (`_json`).

Where the reader would do otherwise (read the file again from its start, stop at an error),
or there is more than READ_LIMIT bytes of log or PLAIN_LIMIT bytes of text to read, the answer
is None: the caller takes its full path, which reads the tail for real.
"""

from __future__ import annotations

import os

from ..jsonscan import line_value, scanner

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

READ_LIMIT = 2 << 20  # the most log since the cursor read here; past it, the full path
PLAIN_LIMIT = 8 << 20  # the most text decoded from a framed log's new frames
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # (zstdframes.MAGIC: a plain log loads no zstd support)


def records_since(path: str, cursor: Mapping[str, Any] | None) -> list[Any] | None:
    """The records of the log at `path` after `cursor` (a tail cursor's JSON; None: from the
    start), in order, as the tail reader would take them now; None where it would not (see
    the module docstring). A record is a parsed line: any JSON value."""
    try:
        lines = _lines_since(path, cursor)
    except OSError:
        return None
    if lines is None:
        return None
    scan = scanner()
    try:
        return [line_value(scan, line) for line in lines if line.strip()]
    except ValueError:  # (a line that is not one JSON value: the reader stops there)
        return None


def quiet_since(path: str, cursor: str | None, kinds: Iterable[str]) -> bool:
    """Whether the log at `path` gained no event of `kinds` since the tail `cursor` (its JSON,
    as the store keeps it; None: none yet, the whole log counts), as the tail reader would
    take it now; False where that cannot be told. What a hook's hint asks of a log a handler
    tails for those kinds only (`sessions.tail.read_tail`, `hooks.hint`)."""
    found = kinds_since(path, cursor, kinds)
    return found is not None and not found


def kinds_since(path: str, cursor: str | None, kinds: Iterable[str]) -> list[Any] | None:
    """The events of `kinds` the log at `path` gained since the tail `cursor` (as
    `quiet_since` has it), in order, each as what a consumer of those kinds reads of it: its
    type and its data ([type, data]; not its sequence number or time, which every log has
    its own); None where that cannot be told. What a hook's template asks of a log a handler
    tails for those kinds only: the same events in another session's log
    (`hooks.hint.write_template`)."""
    records = records_since(path, None if cursor is None else scanner()(cursor, 0)[0])
    if records is None:
        return None
    wanted = set(kinds)
    return [
        [record.get("type"), record.get("data")]
        for record in records
        if isinstance(record, dict) and record.get("type") in wanted
    ]


def _lines_since(path: str, cursor: Mapping[str, Any] | None) -> list[bytes] | None:
    with open(path, "rb") as handle:
        st = os.fstat(handle.fileno())
        start = 0
        anchor = b""
        if cursor is not None:
            if cursor.get("error") is not None:
                return None
            if (st.st_dev, st.st_ino) != (cursor.get("dev"), cursor.get("ino")):
                return None  # replaced: read again from the start
            start = cursor.get("offset") or 0
            if st.st_size < start:
                return None  # shrunk below the read position
            if st.st_size == cursor.get("size") and st.st_mtime_ns != cursor.get("mtime_ns"):
                return None  # rewritten in place
            anchor = bytes.fromhex(cursor.get("anchor") or "") if start else b""
        if st.st_size - start > READ_LIMIT:
            return None
        handle.seek(start - len(anchor))
        raw = handle.read(st.st_size - start + len(anchor))
        if raw[: len(anchor)] != anchor:
            return None  # changed before the read position
        raw = raw[len(anchor) :]
        if raw[:4] == _ZSTD_MAGIC:
            return _frame_lines(raw, start)
        if start and raw:
            handle.seek(0)
            if handle.read(4) == _ZSTD_MAGIC:
                return None  # a framed log with no frame at the read position
    return raw[: raw.rfind(b"\n") + 1].split(b"\n")


def _frame_lines(raw: bytes, start: int) -> list[bytes] | None:
    """The lines of the whole zstd frames in `raw` (the log from byte `start` on); None where
    the reader would stop: a structural error, a frame that does not decode or ends inside a
    line, more than PLAIN_LIMIT bytes of text."""
    from .zstdframes import FrameDecoder, scan_frames

    found = scan_frames(raw, start)
    if found.error is not None:
        return None
    decoder = FrameDecoder(max_output=PLAIN_LIMIT)
    lines: list[bytes] = []
    size = 0
    for frame in found.frames:
        try:
            text = decoder.decode(raw[frame.start - start : frame.end - start], frame)
        except ValueError:  # (FrameError, FrameTooLarge)
            return None
        size += len(text)
        if size > PLAIN_LIMIT or (text and text[-1:] != b"\n"):
            return None
        lines.extend(text.split(b"\n")[:-1])
    return lines
