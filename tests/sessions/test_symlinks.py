"""The scan stays inside its roots: no symbolic link in a session directory is followed, to a
file or to a directory, and a log swapped for a link between discovery and its read is refused.
A link to a folder is named among the scan's problems, never skipped silently.

Each case is real files under a temporary root, with a secret log outside it written in the
harness's own format (so that, if it were followed, it would be read and cached); after the
scan, the secret's bytes are nowhere in the state directory (database, WAL, plaintext cache).
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from dshkit.sessions import ADAPTERS, Scanner, Source
from dshkit.sessions.reader import Cursor, read_increment
from dshkit.sessions.zstdframes import FrameDecoder
from dshkit.store import Store

from ..support.logs import human, session_dir

SECRET = "TOPSECRET-3f9a1c-not-for-the-scan"
UUID = "0c0a0b0e-1111-4222-8333-{:012d}"


def dsh_log(text: str, session_id: str) -> bytes:
    head = {"type": "session", "version": 4, "id": session_id, "createdAt": 1, "cwd": "/w"}
    return b"".join(orjson.dumps(r) + b"\n" for r in (head, human(0, text)))


def claude_log(text: str) -> bytes:
    line = {"type": "user", "message": {"role": "user", "content": text}, "cwd": "/w"}
    return orjson.dumps(line) + b"\n"


def codex_log(text: str) -> bytes:
    content = [{"type": "input_text", "text": text}]
    payload = {"type": "message", "role": "user", "content": content}
    line = {"timestamp": "2026-11-30T04:13:58.688Z", "type": "response_item", "payload": payload}
    return orjson.dumps(line) + b"\n"


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def rollout(n: int) -> str:
    return f"rollout-2026-11-30T04-13-58-{UUID.format(n)}.jsonl"


def build(tmp_path: Path) -> tuple[list[Source], Path]:
    """Three roots, each with one real log and every kind of link out of it (and one link to
    a log inside it); the secret logs live in `outside`. Returns the sources and `outside`."""
    outside = tmp_path / "outside"
    outside.mkdir()

    dsh = tmp_path / "dsh"
    real = session_dir(dsh, "s-real") / "session.jsonl"
    write(real, dsh_log("hello from dsh", "s-real"))
    secret = write(outside / "dsh-file" / "session.jsonl", dsh_log(SECRET, "s-file"))
    os.symlink(secret, session_dir(dsh, "s-file") / "session.jsonl")  # a log file
    write(outside / "dsh-session" / "session.jsonl", dsh_log(SECRET, "s-dir"))
    os.symlink(outside / "dsh-session", real.parent.parent / "s-dir")  # a session directory
    write(outside / "dsh-project" / "s-proj" / "session.jsonl", dsh_log(SECRET, "s-proj"))
    os.symlink(outside / "dsh-project", dsh / "--elsewhere--")  # a project directory
    os.symlink(real, session_dir(dsh, "s-inside") / "session.jsonl")  # inside the root

    claude = tmp_path / "claude"
    project = claude / "-home-dev-p"
    real = write(project / f"{UUID.format(1)}.jsonl", claude_log("hello from claude"))
    secret = write(outside / "claude-file.jsonl", claude_log(SECRET))
    os.symlink(secret, project / f"{UUID.format(2)}.jsonl")  # the transcript as reported
    write(outside / "claude-project" / f"{UUID.format(3)}.jsonl", claude_log(SECRET))
    os.symlink(outside / "claude-project", claude / "-home-dev-elsewhere")
    write(outside / "claude-agents" / "agent-1.jsonl", claude_log(SECRET))
    (project / UUID.format(1)).mkdir()
    os.symlink(outside / "claude-agents", project / UUID.format(1) / "subagents")
    os.symlink(real, project / f"{UUID.format(4)}.jsonl")  # inside the root

    codex = tmp_path / "codex"
    day = codex / "2026" / "11" / "30"
    real = write(day / rollout(1), codex_log("hello from codex"))
    secret = write(outside / "codex-file.jsonl", codex_log(SECRET))
    os.symlink(secret, day / rollout(2))
    write(outside / "codex-day" / rollout(3), codex_log(SECRET))
    os.symlink(outside / "codex-day", day.parent / "29")
    write(outside / "codex-year" / "01" / "01" / rollout(4), codex_log(SECRET))
    os.symlink(outside / "codex-year", codex / "2027")
    os.symlink(real, day / rollout(5))  # inside the root

    sources = [Source("dsh", dsh), Source("claude", claude), Source("codex", codex)]
    return sources, outside


def state_bytes(state: Path) -> dict[str, bytes]:
    """Every file under the state directory (the database, its WAL, the plaintext cache)."""
    return {str(p): p.read_bytes() for p in state.rglob("*") if p.is_file()}


def test_a_scan_follows_no_link_out_of_its_roots(tmp_path: Path) -> None:
    sources, _ = build(tmp_path)
    state = tmp_path / "state"
    with Store(state) as store:
        scanner = Scanner(store)
        report = scanner.scan(sources)
        again = scanner.scan(sources)
        titles = sorted(info.title for info in scanner.catalog.recent(None, None))
    files = state_bytes(state)
    assert any(name.endswith("dshkit.db") for name in files)
    assert any("/plain/" in name for name in files)
    leaked = [name for name, data in files.items() if SECRET.encode() in data]
    assert leaked == []
    # One real log per root: the links (out of the root and in it) are not logs of the scan.
    assert report.files == again.files == 3
    assert report.sessions == 3
    assert titles == ["hello from claude", "hello from codex", "hello from dsh"]
    # Each link to a folder is named among the problems, every time, never skipped silently.
    dsh, claude, codex = (source.root for source in sources)
    folders = [
        dsh / "--elsewhere--",
        session_dir(dsh, "s-real").parent / "s-dir",
        claude / "-home-dev-elsewhere",
        claude / "-home-dev-p" / UUID.format(1) / "subagents",
        codex / "2026" / "11" / "29",
        codex / "2027",
    ]
    for scanned in (report, again):
        assert sorted(e["file"] for e in scanned.errors) == sorted(map(str, folders))
        assert all("symbolic link to a folder, not followed" in e["error"] for e in scanned.errors)


def test_a_link_to_a_folder_inside_the_root_is_named_too(tmp_path: Path) -> None:
    # Even a link that stays inside the root is not followed (its sessions are read where
    # they are), and it is said.
    root = tmp_path / "claude"
    write(root / "-home-dev-p" / f"{UUID.format(1)}.jsonl", claude_log("hello"))
    os.symlink(root / "-home-dev-p", root / "-home-dev-alias")
    with Store(tmp_path / "state") as store:
        report = Scanner(store).scan([Source("claude", root)])
    assert report.files == 1
    (problem,) = report.errors
    assert problem["file"] == str(root / "-home-dev-alias")
    assert problem["error"].startswith("a symbolic link to a folder, not followed")


class Sink:
    """The plaintext a read hands on (what the scan would cache)."""

    def __init__(self) -> None:
        self.data = b""

    def start(self, at: int) -> None:
        pass

    def write(self, chunk: bytes | memoryview) -> None:
        self.data += bytes(chunk)


@pytest.mark.parametrize("how", ["file", "directory"])
def test_a_log_swapped_for_a_link_after_discovery_is_not_read(tmp_path: Path, how: str) -> None:
    adapter = ADAPTERS["claude"]
    root = tmp_path / "claude"
    write(root / "-home-dev-p" / f"{UUID.format(1)}.jsonl", claude_log("x" * 200))
    (log,) = list(adapter.discover(str(root)))
    st = os.lstat(log.path)
    swap(Path(log.path), tmp_path / "outside", how)  # after discovery, before the read
    sink = Sink()
    cursor = Cursor(log.path, "claude", log.session_id, log.root, "")
    inc = read_increment(log, cursor, adapter, FrameDecoder(), st, keep=True, sink=sink)
    assert SECRET.encode() not in sink.data
    assert SECRET not in orjson.dumps(inc.kept).decode()
    assert inc.cursor.offset == 0 and inc.kept == []
    (error,) = inc.errors
    assert error.startswith("cannot read the file:") and "symbolic link" in error


def swap(path: Path, outside: Path, how: str) -> None:
    """Replace the log at `path` with a way to a secret log in `outside`: a link in its place
    ("file"), or its directory renamed and a link to another one holding a log of the same
    name put there ("directory")."""
    if how == "file":
        secret = write(outside / "secret.jsonl", claude_log(SECRET))
        path.unlink()
        os.symlink(secret, path)
    else:
        write(outside / "p" / path.name, claude_log(SECRET))
        path.parent.rename(path.parent.with_name("moved"))
        os.symlink(outside / "p", path.parent)


def test_a_root_that_is_itself_a_link_is_read_through_it(tmp_path: Path) -> None:
    # ~/.claude/projects may be a link to another disk: the root is where the person points.
    real = tmp_path / "disk" / "projects"
    write(real / "-home-dev-p" / f"{UUID.format(1)}.jsonl", claude_log("hello through a link"))
    root = tmp_path / "projects"
    os.symlink(real, root)
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        report = scanner.scan([Source("claude", root)])
        (info,) = scanner.catalog.recent(None, None)
        (log,) = scanner.catalog.files(info.key)
    assert (report.files, report.errors, info.title) == (1, [], "hello through a link")
    assert log.path.startswith(str(root))
