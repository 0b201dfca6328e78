"""A scan holds one block of a log at a time, and reading in blocks changes no result."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.sessions import Scanner, Source, reader
from dshkit.sessions.cap import TEXT_CAP, cuts, full_length
from dshkit.sessions.events import human_messages, message_text
from dshkit.sessions.scanner import ScanReport
from dshkit.store import Store

from ..support.corpus import Corpus, CorpusStats
from ..support.corpus_multi import ClaudeCorpus, CodexCorpus
from ..support.logs import human, session_dir, write_log

HUGE_BLOCK = 1 << 40  # a whole log in one block, as it was read before blocks


def _peak_of_scan(state: Path, sources: list[Source]) -> tuple[int, ScanReport]:
    """The most memory Python held at once during a first scan (allocations, not timing)."""
    with Store(state) as store:
        scanner = Scanner(store)
        tracemalloc.start()
        try:
            report = scanner.scan(sources)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return peak, report


def test_scanning_a_large_transcript_holds_a_block_not_the_file(tmp_path: Path) -> None:
    stats = CorpusStats()
    files = ClaudeCorpus(tmp_path / "claude", seed=7).session(0, 32 << 20, stats)
    size = files[0].stat().st_size
    assert size >= 30 << 20
    peak, report = _peak_of_scan(tmp_path / "state", [Source("claude", tmp_path / "claude")])
    assert (report.errors, report.events) == ([], stats.events)
    # Before blocks, the whole file was held raw and as parsed records: several times its size.
    assert peak < size / 3, f"peak {peak / 2**20:.1f} MiB for a {size / 2**20:.1f} MiB log"


def test_scanning_a_large_dsh_log_holds_a_block_not_the_file(tmp_path: Path) -> None:
    stats = CorpusStats()
    (log,) = Corpus(tmp_path / "dsh", seed=7).stream_session(0, 50_000, stats)
    size = log.stat().st_size
    assert size >= 12 << 20
    peak, report = _peak_of_scan(tmp_path / "state", [Source("dsh", tmp_path / "dsh")])
    assert (report.errors, report.events) == ([], stats.events)
    # Before, the compressed log and twice its plaintext (about twice its size) were held. Now
    # a block, a chunk of frames, and the human messages until they are committed.
    assert peak < size / 3, f"peak {peak / 2**20:.1f} MiB for a {size / 2**20:.1f} MiB log"


# -- reading in blocks changes no result -----------------------------------------------------

SMALL_BLOCK = 4096  # far below the logs' sizes, and below their longest lines
# A text over the cap, with what a cut must not split: escapes, pairs, multi-byte characters.
LONG_TEXT = "".join(f'{n} "引号" \\ 😀\n' for n in range(3 * TEXT_CAP // 16))
HEADER = {"type": "session", "version": 0, "id": "x", "createdAt": 1, "delegationDepth": 0}


def _lines(records: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def _write_corpus(root: Path) -> tuple[Corpus, Path, bytes, Path]:
    """Logs of every kind, each many small blocks long, with the awkward cases in them; the
    DSH corpus (to grow it), the Claude Code transcript and the end of its torn last line, and
    the Codex transcript."""
    corpus = Corpus(root / "dsh", seed=11)
    corpus.generate(sessions=10, frames=6000)  # torn tails
    assert min(p.stat().st_size for p in root.glob("dsh/*/*/*.zstd")) > 40 * SMALL_BLOCK
    # Generations repeat each other: their events are kept whole for the union.
    directory = session_dir(root / "dsh", "generations")
    batches = [[human(seq, f"{seq} " * 40)] for seq in range(300)]
    write_log(directory / "session.jsonl.zstd", batches[:200], version=0, session_id="g")
    write_log(directory / "session.v4.jsonl.zstd", batches, session_id="g")
    files = ClaudeCorpus(root / "claude", seed=11).session(0, 400_000, CorpusStats())
    (codex,) = CodexCorpus(root / "codex", seed=11).session(1, 300_000, CorpusStats())
    claude = files[0]
    lines = claude.read_bytes().splitlines(keepends=True)
    assert max(map(len, lines)) > 2 * SMALL_BLOCK  # lines longer than a block
    # Lenient: a bad line mid-file is skipped and reported; a torn last line waits.
    lines.insert(len(lines) // 2, b'{"type": "user", oops\n')
    # Lines over the text cap, a good one and a bad one: cut whole in one block, or as they
    # are read over many.
    long = {"type": "user", "message": {"role": "user", "content": LONG_TEXT}, "cwd": "/w"}
    lines.insert(len(lines) // 3, orjson.dumps(long) + b"\n")
    lines.insert(len(lines) // 3, b'{"type": "user", "x": "' + b"y" * 3 * TEXT_CAP + b'" oops}\n')
    claude.write_bytes(b"".join(lines[:-1]) + lines[-1][:-40])
    events = [human(seq, f"message {seq} " + "x" * 300) for seq in range(800)]
    events[100] = human(100, LONG_TEXT)
    # Strict (DSH): the first bad line ends the read; the lines before it are taken.
    strict = session_dir(root / "dsh", "strict") / "session.jsonl"
    strict.write_bytes(_lines([HEADER, *events[:500]]) + b"{oops\n" + _lines(events[500:]))
    # Refused (DSH): a record that is no object, later a bad line: nothing is taken.
    refused = session_dir(root / "dsh", "refused") / "session.jsonl"
    refused.write_bytes(
        _lines([HEADER, *events[:400], [1], *events[400:600]])  # type: ignore[list-item]
        + b"{oops\n"
        + _lines(events[600:])
    )
    return corpus, claude, lines[-1][-40:], codex


def _outcome(state: Path, report: ScanReport) -> dict[str, Any]:
    """Everything a scan leaves: its report, the rows, the events and the cache files."""
    with Store(state) as store:
        db = store.db
        files = [
            (*row[:5], orjson.loads(row[5]), orjson.loads(row[6]), row[7])
            for row in db.execute(
                "SELECT path, offset, size, anchor, plain_len, state, stats, error "
                "FROM log_files ORDER BY path"
            )
        ]
        sessions = db.execute("SELECT * FROM sessions ORDER BY harness, session_id").fetchall()
        humans = db.execute("SELECT * FROM human_messages ORDER BY 1, 2, 3, 4").fetchall()
        keys = [tuple(row[:2]) for row in sessions]
        events = {key: Scanner(store).catalog.events(key) for key in keys}
    caches = {p.name: p.read_bytes() for p in sorted((state / "plain").iterdir())}
    # Bytes read aside: in blocks, a read ends where a failure or the frame budget stops it.
    told = {**report.as_json(), "elapsedMs": 0, "bytesRead": 0, "warnings": report.warnings}
    return {
        "report": told,
        "files": files,
        "sessions": [tuple(row) for row in sessions],
        "humans": [tuple(row) for row in humans],
        "events": events,
        "caches": caches,
    }


def _scan(
    monkeypatch: pytest.MonkeyPatch, block: int, state: Path, root: Path, budget: int | None = None
) -> dict[str, Any]:
    monkeypatch.setattr(reader, "BLOCK_BYTES", block)
    sources = [Source(harness, root / harness) for harness in ("dsh", "claude", "codex")]
    with Store(state) as store:
        scanner = Scanner(store, frame_budget=budget)
        report = scanner.scan(sources)
        while report.pending:  # budget-limited rounds, until all is read
            report = scanner.scan(sources)
    outcome = _outcome(state, report)
    for path, offset, _, anchor, *_ in outcome["files"]:  # the bytes just before each cursor
        with open(path, "rb") as log:
            log.seek(max(0, offset - len(anchor)))
            assert anchor == log.read(len(anchor)) and len(anchor) == min(offset, 64), path
    return outcome


def test_reading_in_small_blocks_gives_what_one_huge_block_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "logs"
    corpus, claude, torn_end, codex = _write_corpus(root)
    small = _scan(monkeypatch, SMALL_BLOCK, tmp_path / "small", root)
    assert small == _scan(monkeypatch, HUGE_BLOCK, tmp_path / "huge", root)
    errors = [(Path(e["file"]).parent.name, e["error"]) for e in small["report"]["errors"]]
    bad_lines = {name: e.split(": ")[1][:12] for name, e in errors if e.startswith("line at")}
    assert bad_lines == dict.fromkeys((claude.parent.name, "strict", "refused"), "invalid JSON")
    (refused,) = root.glob("dsh/*/refused/session.jsonl")
    bad_line = refused.read_bytes().index(b"{oops")
    told = [e for name, e in errors if name == "refused"]
    assert [e.split(" (")[0] for e in told] == [
        f"line at byte {bad_line}: invalid JSON",  # told, though after the refusal
        "a log line is not a JSON object",
    ]
    assert [len(c) for c in small["caches"].values()].count(0) == 1  # the refused log's
    # The long texts (Claude Code's, and the strict log's) are cut, saying their length.
    texts = [message_text(e) for es in small["events"].values() for e in human_messages(es)]
    assert [full_length(t) for t in texts if cuts(t)] == [len(LONG_TEXT)] * 2

    # The logs grow (the torn line completed, a line shorter than the anchor, frames): the
    # increments agree too.
    with open(claude, "ab") as handle:
        handle.write(torn_end)
    with open(codex, "ab") as handle:
        handle.write(b'{"type": "new"}\n')
    corpus.append(frames=400, target_bytes=200_000)
    grown_small = _scan(monkeypatch, SMALL_BLOCK, tmp_path / "small", root)
    assert grown_small == _scan(monkeypatch, HUGE_BLOCK, tmp_path / "huge", root)
    assert grown_small["caches"] != small["caches"]

    # Budget-limited rounds stop mid-file, at block boundaries or not: the same end result.
    budget_small = _scan(monkeypatch, SMALL_BLOCK, tmp_path / "budget-small", root, budget=150)
    assert budget_small == _scan(monkeypatch, HUGE_BLOCK, tmp_path / "budget-huge", root, 150)
    assert budget_small["events"] == grown_small["events"]
