"""Shared test helpers: real fixtures (copied from ../shared/fixtures), DSH log writing,
read-only proofs."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from bench.corpus import encode_frame, header

from dshkit.sessions import Scanner, Source
from dshkit.sessions.dsh import encode_segment, project_key
from dshkit.store import Store

from .graft_driver import World, make_world

REPO = Path(__file__).resolve().parent.parent
# Real session logs written by DSH, Claude Code and Codex (../shared/fixtures, copied here so
# that a clone runs its own tests).
FIXTURES = REPO / "tests" / "data" / "fixtures"
DSH_ZSTD = FIXTURES / "dsh-v0" / "sessions-zstd"
DSH_PLAIN = FIXTURES / "dsh-v0" / "sessions-plain"
CLAUDE = FIXTURES / "claude-code" / "projects"
CODEX = FIXTURES / "codex" / "sessions"
# Hook tests compare whole answers; capability facts (which start detached browser probes)
# are off unless a test turns them on (tests/test_capability_hooks.py).
os.environ.setdefault("DSHKIT_CAPABILITY", "off")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "state") as opened:
        yield opened


@pytest.fixture(name="world")
def graft_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """Where graft's handoffs happen: the fake Claude Code CLI and its sessions root, in the
    environment (the state directory is `store`'s)."""
    made = make_world(tmp_path)
    for name, value in made.env().items():
        monkeypatch.setenv(name, value)
    return made


@pytest.fixture
def scanner(store: Store) -> Scanner:
    return Scanner(store)


def dsh(root: Path) -> list[Source]:
    return [Source("dsh", root)]


def session_dir(root: Path, session_id: str, cwd: str = "/home/dev/work") -> Path:
    directory = root / project_key(cwd) / encode_segment(session_id)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def event(kind: str, seq: int, data: Any, time: int | None = None) -> dict[str, Any]:
    return {
        "type": kind,
        "seq": seq,
        "time": 1_790_000_000_000 + seq if time is None else time,
        "data": data,
    }


def human(seq: int, text: str) -> dict[str, Any]:
    return event(
        "user/message",
        seq,
        {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}},
    )


def write_log(
    path: Path,
    batches: list[list[dict[str, Any]]],
    *,
    session_id: str = "s-1",
    version: int = 4,
    mode: str = "wb",
    cwd: str = "/home/dev/work",
) -> bytes:
    """Write a DSH zstd log: a header frame (unless appending), then one frame per batch."""
    blob = b"" if mode == "ab" else encode_frame([header(session_id, version, cwd, 1)])
    blob += b"".join(encode_frame(batch) for batch in batches)
    with open(path, mode) as handle:
        handle.write(blob)
    return blob


def write_lines(path: Path, records: list[dict[str, Any]], mode: str = "wb") -> None:
    with open(path, mode) as handle:
        handle.write(b"".join(orjson.dumps(r) + b"\n" for r in records))


def snapshot(*roots: Path) -> dict[str, tuple[int, int, str]]:
    """Size, mtime and content hash of every file under the roots."""
    result = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                st = path.stat()
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                result[str(path)] = (st.st_size, st.st_mtime_ns, digest)
    return result


_OPENS: list[tuple[str, str | int | None]] | None = None


def _audit(event_name: str, args: tuple[Any, ...]) -> None:
    if _OPENS is not None and event_name == "open":
        path, mode = args[0], args[1]
        _OPENS.append((os.fsdecode(path) if isinstance(path, (str, bytes)) else str(path), mode))


sys.addaudithook(_audit)


@contextmanager
def recorded_opens() -> Iterator[list[tuple[str, str | int | None]]]:
    """Every file open in this process while inside the block, as (path, mode or flags)."""
    global _OPENS
    _OPENS = []
    try:
        yield _OPENS
    finally:
        _OPENS = None


def is_write(mode: str | int | None) -> bool:
    if isinstance(mode, int):
        return bool(mode & (os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC))
    return any(flag in (mode or "r") for flag in "wax+")
