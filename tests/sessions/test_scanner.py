"""One transcript can never cost everything: a huge message is stored capped and says so, and a
file the disk cannot hold is skipped and told while every other file is stored.

Real logs, a real store: the full disk is a small tmpfs mounted over the state directory where
this process may mount one (root), so that the plaintext cache and SQLite both really hit
ENOSPC; `PRAGMA max_page_count` makes SQLite's own SQLITE_FULL everywhere else.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from dshkit.sessions import Scanner, SessionsService, Source
from dshkit.sessions.cap import MARKER, TEXT_CAP, Cut, cuts, full_length
from dshkit.sessions.wire import ScanProblem
from dshkit.store import Store, StoreFull

from ..support import disks
from ..support.logs import dsh, human, session_dir, write_log

HUGE = 100_000_000  # characters of the huge message
PIECE = 1 << 20


def state_bytes(state: Path) -> int:
    """What the state directory holds: the database, its WAL (the store being open) and the
    plaintext cache."""
    return sum(p.stat().st_size for p in state.rglob("*") if p.is_file())


def write_message_log(harness: str, root: Path, chars: int) -> None:
    """A log of `harness` holding one human message of `chars` characters, "HEAD " first and
    " TAIL" last: a JSON line written a piece at a time (DSH: one zstd frame)."""
    if harness == "dsh":
        text = "HEAD " + "x" * (chars - 10) + " TAIL"
        write_log(session_dir(root, "s-1") / "session.v4.jsonl.zstd", [[human(1, text)]])
        return
    if harness == "claude":
        path = root / "-w" / "0c0a0b0e-1111-4222-8333-000000000001.jsonl"
        head = b'{"type":"user","message":{"role":"user","content":"'
        end = b'"},"cwd":"/w","timestamp":"2026-11-30T04:13:58.688Z"}\n'
    else:
        name = "rollout-2026-11-30T04-13-58-0c0a0b0e-1111-4222-8333-000000000001.jsonl"
        path = root / "2026" / "11" / "30" / name
        head = (
            b'{"timestamp":"2026-11-30T04:13:58.688Z","type":"response_item","payload":'
            b'{"type":"message","role":"user","content":[{"type":"input_text","text":"'
        )
        end = b'"}]}}\n'
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as log:
        log.write(head + b"HEAD ")
        left = chars - 10
        while left:
            log.write(b"x" * min(PIECE, left))
            left -= min(PIECE, left)
        log.write(b" TAIL" + end)


@pytest.mark.parametrize(("harness", "chars"), [("claude", HUGE), ("codex", 3 << 20)])
def test_a_huge_message_is_stored_capped_saying_its_length(
    tmp_path: Path, harness: str, chars: int
) -> None:
    root = tmp_path / harness
    write_message_log(harness, root, chars)
    state = tmp_path / "state"
    with Store(state) as store:
        before = state_bytes(state)
        report = Scanner(store).scan([Source(harness, root)])
        grown = state_bytes(state) - before
        (text,) = [m.text for m in Scanner(store).catalog.human_messages()]
    assert report.errors == [] and report.human_messages == 1
    # Stored once in the cache and once in the database (and its WAL): the cap each time.
    assert grown < 5 << 20, f"the state directory grew by {grown:,} bytes"
    (cut,) = cuts(text)
    assert cut.total == chars == full_length(text)
    head, tail = text.split(MARKER.format(cut=cut.cut, total=cut.total))
    assert head.startswith("HEAD x") and tail.endswith("x TAIL")
    assert len(head) + cut.cut + len(tail) == chars

    # Whatever shows the message can tell: its length, and what the store did not keep.
    service = SessionsService(state, sources=[Source(harness, root)])
    (info,) = service.recent()
    (shown,) = service.show(info.session_id).as_json()["humanMessageTexts"]
    assert (shown["length"], shown["notStoredChars"]) == (chars, cut.cut)
    (item,) = service.window(info.session_id).as_json()["humanMessages"]["items"]
    assert item["cutChars"] == chars - len(item["text"]) and item["notStoredChars"] == cut.cut


def test_a_long_message_in_a_dsh_frame_is_capped_too(tmp_path: Path) -> None:
    write_message_log("dsh", tmp_path / "dsh", 4 * TEXT_CAP)
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        report = scanner.scan(dsh(tmp_path / "dsh"))
        (text,) = [m.text for m in scanner.catalog.human_messages()]
        (key,) = report.keys
        (event,) = [e for e in scanner.catalog.events(key) if e["type"] == "user/message"]
    assert report.errors == []
    (cut,) = cuts(text)
    assert cut == Cut(cut.cut, 4 * TEXT_CAP) and cut.cut > 2 * TEXT_CAP
    # The scan and what is rebuilt from the cache read the same text.
    assert event["data"]["content"][0]["text"] == text


def test_a_short_message_is_stored_whole(tmp_path: Path) -> None:
    write_message_log("claude", tmp_path / "claude", TEXT_CAP - 100)
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        scanner.scan([Source("claude", tmp_path / "claude")])
        (text,) = [m.text for m in scanner.catalog.human_messages()]
    assert cuts(text) == [] and len(text) == TEXT_CAP - 100


# -- a full disk ---------------------------------------------------------------------------------

SMALL = ("a-small", "c-small", "d-small")
BIG_FRAMES = 150  # each a human message of about 20 KB of distinct words: 3 MB of text


def write_sessions(root: Path, small: tuple[str, ...] = SMALL) -> tuple[Path, bytes]:
    """Small DSH sessions and, between them in scan order, one of 3 MB of text; the big one's
    log and a word of its text."""
    for name in small:
        batches = [[human(0, f"hello from {name}")], [human(1, "bye")]]
        write_log(session_dir(root, name) / "session.v4.jsonl.zstd", batches, session_id=name)
    rng = random.Random(7)
    words = [[f"{rng.getrandbits(40):010x}" for _ in range(1800)] for _ in range(BIG_FRAMES)]
    big = session_dir(root, "b-big") / "session.v4.jsonl.zstd"
    write_log(big, [[human(seq, " ".join(w))] for seq, w in enumerate(words)], session_id="b-big")
    return big, words[-1][-1].encode()


def check_skipped(
    state: Path, scanner: Scanner, errors: list[ScanProblem], big: Path, word: bytes, why: str
) -> None:
    """The big session alone was not stored, said so, and left nothing in the cache."""
    assert [e["file"] for e in errors] == [str(big)]
    assert errors[0]["error"].startswith("not stored: ") and why in errors[0]["error"]
    stored = {info.session_id: info.human_messages for info in scanner.catalog.recent(None, None)}
    assert stored == dict.fromkeys(SMALL, 2)
    caches = list((state / "plain").iterdir())
    assert len(caches) == len(SMALL)
    assert not any(word in cache.read_bytes() for cache in caches)


def check_stored_later(scanner: Scanner, root: Path) -> None:
    """A scan with room stores the big session, reading nothing else again."""
    report = scanner.scan(dsh(root))
    assert report.errors == [] and report.frames_decoded == BIG_FRAMES + 1  # its header too
    stored = {info.session_id: info.human_messages for info in scanner.catalog.recent(None, None)}
    assert stored == {**dict.fromkeys(SMALL, 2), "b-big": BIG_FRAMES}
    (big,) = [key for key in report.keys if key[1] == "b-big"]
    assert len(scanner.catalog.events(big)) == BIG_FRAMES


@pytest.fixture
def small_disk() -> Iterator[Callable[[Path, int], None]]:
    """Mounts a tmpfs of a given size over a directory (again to resize it); skips where this
    process may not mount one. Unmounted at the end."""
    mounted: list[Path] = []

    def mounting(where: Path, size: int) -> None:
        disks.mount(where, size)
        mounted.append(where)

    yield mounting
    for where in dict.fromkeys(mounted):
        disks.unmount(where)


@pytest.mark.parametrize(
    ("size", "why"),
    [
        (2 << 20, "cannot write the plaintext cache"),  # its text does not fit in the cache
        (5 << 20, "the disk is full"),  # its text fits, its rows do not fit in the database
    ],
)
@pytest.mark.process
def test_a_session_the_disk_cannot_hold_is_skipped_and_stored_once_there_is_room(
    tmp_path: Path, small_disk: Callable[[Path, int], None], size: int, why: str
) -> None:
    root = tmp_path / "logs"
    big, word = write_sessions(root)
    state = tmp_path / "state"
    small_disk(state, size)
    with Store(state) as store:
        scanner = Scanner(store)
        report = scanner.scan(dsh(root))
        check_skipped(state, scanner, report.errors, big, word, why)
        small_disk(state, 64 << 20)
        check_stored_later(scanner, root)


def test_a_session_the_database_cannot_hold_is_skipped_and_stored_once_there_is_room(
    tmp_path: Path,
) -> None:
    root = tmp_path / "logs"
    big, word = write_sessions(root)
    state = tmp_path / "state"
    with Store(state) as store:
        # Room for the small sessions' rows, not for the big one's 3 MB (SQLITE_FULL).
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages + 64}")
        scanner = Scanner(store)
        report = scanner.scan(dsh(root))
        check_skipped(state, scanner, report.errors, big, word, "the disk is full")
        store.db.execute("PRAGMA max_page_count = 1073741823")
        check_stored_later(scanner, root)


def test_a_scan_that_can_store_nothing_says_the_store_is_full(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    write_sessions(root, small=())
    state = tmp_path / "state"
    with Store(state) as store:
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages}")  # no room for its rows
        with pytest.raises(StoreFull, match="the disk is full"):
            Scanner(store).scan(dsh(root))
        assert list((state / "plain").iterdir()) == []  # nothing of any read is left
        store.db.execute("PRAGMA max_page_count = 1073741823")
        assert Scanner(store).scan(dsh(root)).errors == []


def test_within_a_session_only_the_file_that_does_not_fit_is_skipped(tmp_path: Path) -> None:
    # A Claude Code session whose own transcript is too big for the database: its subagent's
    # transcript is stored, and the session says what was stored; with room, the rest too.
    project = tmp_path / "claude" / "-home-dev-p"
    session = "0c0a0b0e-1111-4222-8333-000000000001"
    main = project / f"{session}.jsonl"
    agent = project / session / "subagents" / "agent-1.jsonl"
    agent.parent.mkdir(parents=True)
    rng = random.Random(3)
    said = [
        {"type": "user", "message": {"role": "user", "content": " ".join(
            f"{rng.getrandbits(40):010x}" for _ in range(1800))}}
        for _ in range(150)
    ]  # fmt: skip
    main.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in said))
    work = [{"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}}]
    agent.write_bytes(orjson.dumps(work[0]) + b"\n")
    sources = [Source("claude", tmp_path / "claude")]
    with Store(tmp_path / "state") as store:
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages + 64}")
        scanner = Scanner(store)
        report = scanner.scan(sources)
        assert [e["file"] for e in report.errors] == [str(main)]
        (info,) = scanner.catalog.recent()
        assert (info.files, info.human_messages, info.events) == (1, 0, 1)
        assert [c.path for c in scanner.catalog.files(info.key)] == [str(agent)]
        store.db.execute("PRAGMA max_page_count = 1073741823")
        again = scanner.scan(sources)
        (info,) = scanner.catalog.recent()
    assert again.errors == [] and (info.files, info.human_messages, info.events) == (2, 150, 301)
