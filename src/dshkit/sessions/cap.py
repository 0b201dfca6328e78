"""Caps what one text of a log can cost: a longer string is kept as its head and its tail.

A JSON line (or a decoded DSH frame's line) longer than TEXT_CAP bytes is copied with each
string longer than TEXT_CAP bytes, as written in the log, replaced by its first and last
TEXT_CAP / 2 bytes around a marker saying how many characters of how many were cut here
(docs/design/sessions.md#one-text-is-capped-never-cut-silently). What comes of it is still
one JSON line, parsed, counted and cached like any other, so the scan and everything rebuilt
from the cache see the same text; the whole text stays in the harness's own log.

The copy is made as the line is read (`LineCutter.feed`, a piece at a time), so a line is
never held whole: a 100 MB message costs a scan what the marker says, not 100 MB three times
(the cache, the database and its WAL).
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

import orjson

# Bytes of one string, as the log writes it (escaped UTF-8), kept at most: its first and last
# half. Far above what anything shows or reads of one text (the console shows 2,000 characters,
# the profile 600) and above the tool outputs the harnesses keep whole themselves (Claude
# Code's shell output stops at 30,000 characters), so real texts are kept whole, while a pasted
# log or a runaway output of any size costs 256 KiB in the cache and as much in the database.
TEXT_CAP = 256 << 10
_HALF = TEXT_CAP // 2
# Pieces a long line is fed to the cutter in (bounds the copies a piece makes).
_PIECE = 1 << 20


@functools.cache
def _tokens() -> re.Pattern[bytes]:
    """Whole tokens of a string's content: runs of plain bytes, simple escapes, \\u escapes,
    and surrogate pairs as one token (a pair cut in two is a line orjson refuses). Possessive:
    it stops before a quote, a backslash starting no whole escape, or the end. (Compiled at
    first use, as the others: the hooks import this module and seldom need it.)"""
    return re.compile(
        rb'(?:[^"\\]++'
        rb"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
        rb"|\\u(?![dD][89abAB])[0-9a-fA-F]{4}"
        rb"|\\[^u])*+"
    )


@functools.cache
def _escape() -> re.Pattern[bytes]:
    """One escape (a pair, like Python's str, is one character)."""
    return re.compile(
        rb"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[^u])"
    )


_LONGEST_ESCAPE = 12
_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that start no character
_QUOTE = ord('"')

# The marker, in the text where the cut is (plain text: it may be shown anywhere).
MARKER = "…[dshkit cut {cut:,} of {total:,} characters here; the whole text is in the log]…"


@functools.cache
def _marker() -> re.Pattern[str]:
    return re.compile(r"…\[dshkit cut ([0-9,]+) of ([0-9,]+) characters here; [^\]]*\]…")


class Cut(NamedTuple):
    """One cut in a text: `cut` of its `total` characters are not kept."""

    cut: int
    total: int


def cuts(text: str) -> list[Cut]:
    """The cuts the scan made in `text` (none for a text kept whole)."""
    if "…[dshkit cut " not in text:  # the common case, without a regex
        return []
    return [
        Cut(int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")))
        for m in _marker().finditer(text)
    ]


def full_length(text: str) -> int:
    """The length of `text` as the log has it: markers out, what they stand for in."""
    found = cuts(text)
    if not found:
        return len(text)
    markers = sum(len(m.group(0)) for m in _marker().finditer(text))
    return len(text) - markers + sum(c.cut for c in found)


def chars(raw: bytes | bytearray) -> int:
    """The characters of a JSON string's content `raw` (whole tokens) once decoded."""
    try:
        return len(orjson.loads(b'"' + raw + b'"'))  # several times faster than counting
    except orjson.JSONDecodeError:  # not valid JSON as it is: counted the slow way
        pass
    if b"\\" in raw:
        raw = _escape().sub(b"_", raw)
    return len(raw.translate(None, _CONTINUATION))


def cap_line(line: bytes | memoryview) -> bytes:
    """`line` (one JSON line, no newline) with every string longer than TEXT_CAP bytes cut."""
    if len(line) <= TEXT_CAP:
        return bytes(line)
    cutter = LineCutter()
    view = memoryview(line)
    for at in range(0, len(line), _PIECE):
        cutter.feed(bytes(view[at : at + _PIECE]))
    return cutter.finish()


def cap_lines(text: bytes) -> bytes:
    """`text` (JSON lines) with each line longer than TEXT_CAP bytes capped (`cap_line`);
    `text` itself when none is."""
    if len(text) <= TEXT_CAP:
        return text
    out: list[bytes] = []
    begin = done = 0
    view = memoryview(text)  # a long line is cut from where it is, not copied first
    while begin < len(text):
        end = text.find(b"\n", begin)
        end = len(text) if end < 0 else end
        if end - begin > TEXT_CAP:
            out += (text[done:begin], cap_line(view[begin:end]))
            done = end
        begin = end + 1
    if not out:
        return text
    out.append(text[done:])
    return b"".join(out)


class LineCutter:
    """Copies one JSON line fed a piece at a time, cutting each string longer than TEXT_CAP
    bytes: what it holds is the copy so far (strings cut) and, in a string being cut, its
    last TEXT_CAP / 2 bytes. A line that is not valid JSON comes out as invalid as it came in.
    """

    def __init__(self) -> None:
        self.out = bytearray()
        self.pending = b""  # an escape or a character the piece ended in, awaiting its rest
        self.in_string = False
        self.start = 0  # where the current string's content starts in `out`
        self.cutting = False  # the current string is past the cap: its head is in `out`
        self.cut = 0  # characters of the current string not kept
        self.tail: list[bytes] = []  # the current string's last whole tokens, while cutting
        self.tail_bytes = 0

    def feed(self, data: bytes) -> None:
        """The line's next bytes (no newline among them)."""
        if self.pending:
            data, self.pending = self.pending + data, b""
        pos, size = 0, len(data)
        while pos < size:
            if not self.in_string:
                quote = data.find(b'"', pos)
                if quote < 0:
                    self.out += data[pos:]
                    return
                self.out += data[pos : quote + 1]
                self._open()
                pos = quote + 1
                continue
            end = _whole(data, pos, size)
            if end == size:  # a character cut by the end of the piece waits for its rest
                whole = end - _unfinished(data, pos, end)
                if whole > pos:
                    self._content(data[pos:whole])
                self.pending = data[whole:]
                return
            if end > pos:
                self._content(data[pos:end])
            if data[end] == _QUOTE:
                self._close()
                self.out += b'"'
                pos = end + 1
            elif size - end < _LONGEST_ESCAPE:  # the rest of an escape may come next
                self.pending = data[end:]
                return
            else:  # a backslash that starts no escape: invalid JSON, copied as it is
                self._content(data[end : end + 1])
                pos = end + 1

    def finish(self) -> bytes:
        """The line, cut (an unterminated string, invalid anyway, is ended with its marker)."""
        if self.pending:
            self._content(self.pending)
            self.pending = b""
        if self.in_string:
            self._close()
        return bytes(self.out)

    def _open(self) -> None:
        self.in_string = True
        self.start = len(self.out)
        self.cutting = False
        self.cut = 0

    def _content(self, region: bytes) -> None:
        """Whole tokens of the current string (a UTF-8 character may be split)."""
        if self.cutting:
            self._keep_tail(region)
            return
        self.out += region
        if len(self.out) - self.start > TEXT_CAP:
            self._start_cut()

    def _start_cut(self) -> None:
        """The string outgrew the cap: keep its head in `out`; the rest goes to the tail."""
        head = _boundary_before(self.out, self.start, self.start + _HALF)
        rest = bytes(self.out[head:])
        del self.out[head:]
        self.cutting = True
        self.tail, self.tail_bytes = [], 0
        self._keep_tail(rest)

    def _keep_tail(self, region: bytes) -> None:
        """Hold the string's last whole tokens, about TEXT_CAP / 2 bytes of them; count what
        falls out of them as cut."""
        self.tail.append(region)
        self.tail_bytes += len(region)
        while len(self.tail) > 1 and self.tail_bytes - len(self.tail[0]) >= _HALF:
            dropped = self.tail.pop(0)
            self.tail_bytes -= len(dropped)
            self.cut += chars(dropped)

    def _close(self) -> None:
        self.in_string = False
        if not self.cutting:
            return
        tail = b"".join(self.tail)
        at = _boundary_after(tail, len(tail) - _HALF)
        self.cut += chars(tail[:at])
        tail = tail[at:]
        kept = chars(self.out[self.start :]) + chars(tail)
        marker = MARKER.format(cut=self.cut, total=self.cut + kept)
        self.out += marker.encode()
        self.out += tail
        self.cutting = False
        self.tail, self.tail_bytes = [], 0


def _whole(buf: bytes | bytearray, start: int, end: int) -> int:
    """Where the whole tokens of a string's content from `start` stop, before `end`."""
    found = _tokens().match(buf, start, end)
    return start if found is None else found.end()


def _unfinished(data: bytes, start: int, end: int) -> int:
    """How many bytes at the end of `data[start:end]` begin a UTF-8 character they do not
    finish."""
    lead = end - 1
    while lead >= start and end - lead < 4 and data[lead] in _CONTINUATION:
        lead -= 1
    if lead < start:
        return 0
    first = data[lead]
    length = 2 if 0xC0 <= first < 0xE0 else 3 if 0xE0 <= first < 0xF0 else 4 if first >= 0xF0 else 1
    return end - lead if end - lead < length else 0


def _boundary_before(buf: bytearray, start: int, limit: int) -> int:
    """The last place at or before `limit` in the string content from `start` where a whole
    character ends (neither inside an escape nor inside a UTF-8 sequence)."""
    end = _whole(buf, start, limit)
    while end > start and buf[end] in _CONTINUATION:
        end -= 1
    return end


def _boundary_after(buf: bytes, at: int) -> int:
    """The first place at or after `at` in the string content `buf` (whole tokens from its
    start) where a whole character begins."""
    end = 0 if at <= 0 else _whole(buf, 0, at)
    if end < at and buf[end : end + 1] == b"\\":  # an escape spans `at`: step past it
        escape = _escape().match(buf, end)
        end = escape.end() if escape else end + 1
    while end < len(buf) and buf[end] in _CONTINUATION:
        end += 1
    return end
