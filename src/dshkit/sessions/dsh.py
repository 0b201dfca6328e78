"""DSH session logs: directory layout, name encodings, header versions and record normalization.

Layout: `<root>/<projectKey(cwd)>/<encodeSegment(sessionId)>/session[.vN].jsonl[.zstd]`; every
generation in a session directory belongs to that session
(docs/design/sessions.md#a-session-is-every-generation-of-its-directory). A sub-agent's session
says so in its header (`origin: "subagent"`, `delegationDepth` 1 or more): its typed prompts
are the parent agent's, not the person's
(docs/design/sessions.md#a-sub-agents-prompt-is-not-the-persons).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any, ClassVar

from ..harnesses.dsh import VERSIONS
from .events import SUBAGENT, Event, as_agent_prompts
from .harness import LogFile, LogFormatError, list_dirs, list_files

SUPPORTED_VERSIONS = VERSIONS  # (harnesses.dsh: the registry's word)
_LOG_NAME = re.compile(r"^session(?:\.v([1-9][0-9]*))?\.jsonl(\.zstd)?$")
_SAFE = re.compile(r"[A-Za-z0-9._-]")
_ESCAPE = re.compile(r"~([0-9A-F]{4})")
_CHUNK_KINDS = {
    "text-chunks": "text-delta",
    "reasoning-chunks": "reasoning-delta",
    "tool-call-chunks": "tool-call-delta",
}


def _code_units(text: str) -> Iterator[int]:
    # DSH escapes UTF-16 code units: a character outside the BMP becomes two escapes.
    raw = text.encode("utf-16-le", "surrogatepass")
    for index in range(0, len(raw), 2):
        yield raw[index] | (raw[index + 1] << 8)


def _escape(unit: int) -> str:
    char = chr(unit)
    return char if unit < 128 and _SAFE.fullmatch(char) else f"~{unit:04X}"


def encode_segment(session_id: str) -> str:
    """The session directory name for an id (reversible; `.` and `..` escaped whole)."""
    if not session_id:
        raise ValueError("a session id cannot be empty")
    if session_id in (".", ".."):
        return "~002E" * len(session_id)
    return "".join(_escape(unit) for unit in _code_units(session_id))


def decode_segment(name: str) -> str:
    """Inverse of `encode_segment`."""
    units = bytearray()
    position = 0
    for match in _ESCAPE.finditer(name):
        units += name[position : match.start()].encode("utf-16-le")
        units += int(match.group(1), 16).to_bytes(2, "little")
        position = match.end()
    units += name[position:].encode("utf-16-le")
    return units.decode("utf-16-le", "surrogatepass")


def project_key(cwd: str | None) -> str:
    """The project directory name DSH derives from a session's working directory."""
    if not cwd:
        return "_no-cwd"
    readable: list[str] = []
    in_separator_run = False
    for unit in _code_units(cwd):
        if unit in (0x2F, 0x5C, 0x3A):  # / \ :
            if not in_separator_run:
                readable.append("-")
            in_separator_run = True
        else:
            readable.append(_escape(unit))
            in_separator_run = False
    body = "".join(readable).lstrip("-") or "root"
    return f"--{body[:251]}--"


def project_label(key: str) -> str:
    """A readable (lossy: `-` may have been a separator) rendering of a project key."""
    if key.startswith("--") and key.endswith("--") and len(key) > 4:
        key = key[2:-2]
    return decode_segment(key)


def parse_log_name(name: str) -> tuple[int, bool] | None:
    """`(generation, compressed)` for a DSH log file name, None for any other file."""
    match = _LOG_NAME.match(name)
    if not match:
        return None
    return int(match.group(1) or 0), bool(match.group(2))


class DshAdapter:
    name: ClassVar[str] = "dsh"
    strict_lines: ClassVar[bool] = True

    def discover(self, root: str, links: list[str] | None = None) -> Iterator[LogFile]:
        for project in list_dirs(root, links):
            for session_dir in list_dirs(project.path, links):
                session_id = decode_segment(session_dir.name)
                for entry in list_files(session_dir.path):
                    parsed = parse_log_name(entry.name)
                    if parsed is not None:
                        yield LogFile(
                            entry.path,
                            self.name,
                            session_id,
                            project.name,
                            root,
                            generation=parsed[0],
                            compressed=parsed[1],
                        )

    def log_file(self, path: str) -> LogFile | None:
        parsed = parse_log_name(os.path.basename(path))
        session_dir = os.path.dirname(path)
        project_dir = os.path.dirname(session_dir)
        if parsed is None or not os.path.basename(session_dir):
            return None
        return LogFile(
            path,
            self.name,
            decode_segment(os.path.basename(session_dir)),
            os.path.basename(project_dir),
            os.path.dirname(project_dir),
            generation=parsed[0],
            compressed=parsed[1],
        )

    def normalize(self, records: list[Any], state: dict[str, Any]) -> list[Event]:
        if records and "version" not in state:
            _read_header(records[0], state)
            records = records[1:]
        for index, record in enumerate(records):
            if type(record) is not dict:
                raise LogFormatError("a log line is not a JSON object")
            if "seq0" in record or "sourceEventSeqs" in record:
                records = records[:index] + _expand(records[index:])
                break
        if state.get(SUBAGENT):  # only a sub-agent's session pays for a second pass
            as_agent_prompts(records)
        return records  # the common case: records are events as they are


def _expand(records: list[Any]) -> list[Event]:
    """Records with v0 packed chunk rows and v2+ seq ranges expanded."""
    events: list[Event] = []
    for record in records:
        if type(record) is not dict:
            raise LogFormatError("a log line is not a JSON object")
        if "seq0" in record and record.get("type") in _CHUNK_KINDS:
            events.extend(_expand_chunks(record))
            continue
        sources = record.get("sourceEventSeqs")
        if sources and any(isinstance(item, list) for item in sources):
            record["sourceEventSeqs"] = _expand_seq_ranges(sources)
        events.append(record)
    return events


def _read_header(record: Any, state: dict[str, Any]) -> None:
    if not isinstance(record, dict) or record.get("type") != "session":
        raise LogFormatError("the first record is not a session header")
    version = record.get("version")
    if type(version) is not int or version not in SUPPORTED_VERSIONS:
        supported = ", ".join(str(v) for v in sorted(SUPPORTED_VERSIONS))
        raise LogFormatError(f"unsupported DSH log version {version!r} (supported: {supported})")
    state["version"] = version
    for key in ("id", "cwd", "createdAt", "parentSession", "origin", "delegationDepth"):
        if key in record:
            state[key] = record[key]
    depth = record.get("delegationDepth")
    state[SUBAGENT] = record.get("origin") == "subagent" or (
        isinstance(depth, int | float) and not isinstance(depth, bool) and depth >= 1
    )


def _expand_chunks(row: dict[str, Any]) -> list[Event]:
    """A v0 packed chunk row as its member `assistant/chunk` events (seq0+k, time0+Σdt[:k])."""
    data = row.get("data") or {}
    kind = _CHUNK_KINDS[row["type"]]
    members = data.get("args") if kind == "tool-call-delta" else data.get("texts")
    deltas = data.get("dt") or []
    seq, time = int(row["seq0"]), int(row.get("time0", 0))
    events: list[Event] = []
    for k, piece in enumerate(members or ()):
        if k:
            time += int(deltas[k - 1]) if k - 1 < len(deltas) else 0
        chunk: dict[str, Any] = {"type": kind, "index": data.get("index")}
        if kind == "tool-call-delta":
            chunk["id"] = data.get("id")
            if data.get("name") is not None:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = piece
        else:
            chunk["text"] = piece
        events.append(
            {
                "type": "assistant/chunk",
                "seq": seq + k,
                "time": time,
                "data": {"turn": data.get("turn"), "step": data.get("step"), "chunk": chunk},
            }
        )
    return events


def _expand_seq_ranges(items: list[Any]) -> list[int]:
    """v2+ `sourceEventSeqs`: ints and inclusive `[start, end]` ranges, as a flat list."""
    seqs: list[int] = []
    for item in items:
        if isinstance(item, list) and len(item) == 2:
            seqs.extend(range(int(item[0]), int(item[1]) + 1))
        else:
            seqs.append(int(item))
    return seqs
