"""The tail of one live transcript: what a running session appended since it was last looked at.

A hook names its session's log in `transcript_path`; a capability that must act on every turn
(graft's watermark) reads just the new bytes of that one file here. It does not wait for the
store-wide scan lease, keeps its own cursor per path (`transcript_tails`), and writes nothing
but that cursor: the scan still reads the same bytes into the store on its own schedule.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

import orjson

from .. import harnesses
from ..store import Store
from ..storeview import TAIL_CURSOR
from .events import Event
from .reader import Cursor, read_increment
from .zstdframes import FrameDecoder

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Collection

# What tells, on the hot path, whether a log gained an event of some kinds since a cursor,
# and which (what a consumer of those kinds reads of each: its type and data).
TAIL_CHECK = "dshkit.sessions.livetail:quiet_since"
TAIL_EVENTS = "dshkit.sessions.livetail:kinds_since"


@dataclass
class Tail:
    """What one tail read found."""

    harness: str
    session_id: str
    path: str
    events: list[Event] = field(default_factory=list)  # new since the last tail read
    reset: bool = False  # read again from the start: `events` is the whole file
    bytes_read: int = 0
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_tail(
    store: Store,
    path: str,
    harness: str | None = None,
    *,
    consumer: str,
    kinds: Collection[str] | None = None,
) -> Tail:
    """The events appended to the transcript at `path` since `consumer` last read it.

    Each consumer (a capability: "capability", "graft", …) has its own cursor, so one never
    takes another's events. A consumer's first call returns the whole file. `harness` is the
    registry name of the harness that wrote it (detected from the path when not given).
    ValueError when the path is not a log of that harness; OSError when it cannot be read.

    A consumer that reads only events of certain `kinds` (event types), and of each only its
    type and data, says so: the read is announced (audit event `dshkit.sessions.tail`: the
    log's path, the consumer, the kinds, the function that tells whether the log gained any
    since the consumer's cursor, TAIL_CHECK, the one that tells which, TAIL_EVENTS, and True
    before the read, False after it), so that a hook's hint may hold while the log gains
    only other events, and a template while another session's log holds the same ones
    (`hooks.hint`).
    """
    if kinds is None:
        return _read_tail(store, path, harness, consumer)
    import sys

    announced = (os.path.abspath(path), consumer, tuple(sorted(kinds)), TAIL_CHECK, TAIL_EVENTS)
    sys.audit("dshkit.sessions.tail", *announced, True)
    try:
        return _read_tail(store, path, harness, consumer)
    finally:
        sys.audit("dshkit.sessions.tail", *announced, False)


def _read_tail(store: Store, path: str, harness: str | None, consumer: str) -> Tail:
    name = harness or harnesses.detect({"transcript_path": path}, {})
    try:
        found = harnesses.get(name)
    except harnesses.UnknownHarness:
        raise ValueError(f"{path}: cannot tell which harness wrote it; name the harness") from None
    log = found.adapter.log_file(os.path.abspath(path))
    if log is None:
        raise ValueError(f"{path} is not named like a {found.label} session log")
    st = os.stat(log.path)
    row = store.db.execute(TAIL_CURSOR, (consumer, log.path)).fetchone()
    cursor = _load(row[0]) if row else Cursor(log.path, name, log.session_id, log.root, "")
    inc = read_increment(log, cursor, found.adapter, FrameDecoder(), st, keep=True)
    if inc.cursor != cursor:
        store.db.execute(
            "INSERT OR REPLACE INTO transcript_tails (consumer, path, cursor) VALUES (?, ?, ?)",
            (consumer, log.path, _dump(inc.cursor)),
        )
    return Tail(
        name,
        log.session_id,
        log.path,
        inc.kept or [],
        inc.reset or not cursor.offset,
        inc.bytes_read,
        inc.errors,
        inc.warnings,
    )


def _dump(cursor: Cursor) -> str:
    return orjson.dumps({**asdict(cursor), "anchor": cursor.anchor.hex()}).decode()


def _load(text: str) -> Cursor:
    values = orjson.loads(text)
    values["anchor"] = bytes.fromhex(values["anchor"])
    return Cursor(**values)
