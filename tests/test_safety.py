"""Session directories stay untouched, warm starts need none, and a killed scan loses nothing."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dshkit.sessions import Scanner, Source
from dshkit.store import LeaseBusy, Store

from .support.corpus import Corpus
from .support.logs import dsh
from .support.paths import CLAUDE, CODEX, DSH_PLAIN, DSH_ZSTD
from .support.readonly import is_write, recorded_opens, snapshot

ALL_FIXTURES = [
    Source("dsh", DSH_ZSTD),
    Source("dsh", DSH_PLAIN),
    Source("claude", CLAUDE),
    Source("codex", CODEX),
]


def test_scans_never_write_under_session_roots(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    corpus = Corpus(root, seed=3)
    corpus.generate(sessions=12, frames=600)
    sources = [*dsh(root), *ALL_FIXTURES]
    roots = [s.root for s in sources]
    before = snapshot(*roots)
    with Store(tmp_path / "state") as store, recorded_opens() as opens:
        scanner = Scanner(store)
        scanner.scan(sources)
        corpus.append(frames=50, target_bytes=50_000)  # the generator writes, not dshkit
        mark = len(opens)
        scanner.scan(sources)
        scanner.scan(sources)
        scanner.catalog.warm_start()
    under_roots = [(p, m) for p, m in opens[mark:] if any(p.startswith(str(r)) for r in roots)]
    assert under_roots, "the audit hook saw the scan open session files"
    assert [(p, m) for p, m in under_roots if is_write(m)] == []
    after = snapshot(*roots)
    fixture_files = [p for p in before if not p.startswith(str(root))]
    assert fixture_files and all(before[p] == after[p] for p in fixture_files)


def test_warm_start_rebuilds_every_event_without_session_directories(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    made = Corpus(root, seed=4).generate(sessions=15, frames=900)
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        report = scanner.scan([*dsh(root), *ALL_FIXTURES])
        expected = {key: scanner.catalog.events(key) for key in store_keys(store)}
    assert report.events == made.events + 91  # the corpus plus the real fixtures
    hidden = tmp_path / "moved-away"
    root.rename(hidden)  # the generated root is gone; fixtures are only watched
    with Store(tmp_path / "state") as store, recorded_opens() as opens:
        warm = Scanner(store).catalog.warm_start()
    assert warm == expected
    assert sum(len(v) for v in warm.values()) == report.events
    touched = [
        p
        for p, _ in opens
        if p.startswith((str(root), str(hidden), str(DSH_ZSTD.parent), str(CLAUDE), str(CODEX)))
    ]
    assert touched == []


def store_keys(store: Store) -> list[tuple[str, str]]:
    return [tuple(r) for r in store.db.execute("SELECT harness, session_id FROM sessions")]


def _state_of(state: Path) -> tuple[list[tuple], dict[str, bytes]]:
    with Store(state) as store:
        sessions = store.db.execute(
            "SELECT harness, session_id, files, events, human_messages, tool_calls, first_time, "
            "last_time FROM sessions ORDER BY 1, 2"
        ).fetchall()
        files = store.db.execute("SELECT cache_name, plain_len FROM log_files").fetchall()
    cache = {name: (state / "plain" / name).read_bytes()[:length] for name, length in files}
    return [tuple(r) for r in sessions], cache


@pytest.mark.process
def test_scan_killed_mid_way_then_rerun_equals_an_uninterrupted_scan(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    Corpus(root, seed=5).generate(sessions=60, frames=24_000)
    clean = tmp_path / "clean"
    with Store(clean) as store:
        Scanner(store).scan(dsh(root))
    expected = _state_of(clean)

    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from dshkit.sessions import Scanner, Source
        from dshkit.store import Store
        with Store(Path({str(tmp_path / "killed")!r})) as store:
            Scanner(store).scan([Source("dsh", Path({str(root)!r}))])
        """
    )
    # Killed once the cache holds this much plaintext: points spread over the whole scan,
    # reached whatever the machine's speed (a timed kill can come after a fast scan's end).
    total = sum(len(v) for v in expected[1].values())
    for share in (0.05, 0.3, 0.6, 0.9):
        shutil.rmtree(tmp_path / "killed", ignore_errors=True)
        child = subprocess.Popen([sys.executable, "-c", script])
        while _cache_bytes(tmp_path / "killed" / "plain") < share * total:
            assert child.poll() is None, f"the scan ended before {share:.0%} of it was cached"
            time.sleep(0.002)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        with Store(tmp_path / "killed") as store:
            Scanner(store).scan(dsh(root))
        assert _state_of(tmp_path / "killed") == expected, share


def _cache_bytes(plain: Path) -> int:
    try:
        return sum(entry.stat().st_size for entry in plain.iterdir())
    except FileNotFoundError:
        return 0


@pytest.mark.process
def test_one_scan_at_a_time_per_store(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    Corpus(root, seed=6).generate(sessions=60, frames=30_000)
    state = tmp_path / "state"
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from dshkit.sessions import Scanner, Source
        from dshkit.store import Store
        with Store(Path({str(state)!r})) as store:
            Scanner(store).scan([Source("dsh", Path({str(root)!r}))])
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script])
    try:
        with Store(state) as store:
            deadline = time.monotonic() + 20
            while not (store.get_meta("lease.scan") or "").startswith(f"{child.pid}:"):
                assert time.monotonic() < deadline and child.poll() is None, "no lease seen"
                time.sleep(0.01)
            with pytest.raises(
                LeaseBusy, match=f"another dshkit process \\({child.pid}\\) is running scan"
            ):
                Scanner(store).scan(dsh(root), wait=0.2)
            assert child.poll() is None, "the busy check must not have waited for the end"
            report = Scanner(store).scan(dsh(root), wait=60)  # waits for it, then runs
            assert report.errors == [] and child.wait(timeout=30) == 0
            assert report.frames_decoded == 0  # the other scan had read everything
    finally:
        child.kill()


def test_a_lost_cache_is_read_again_from_the_log(tmp_path: Path) -> None:
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        first = scanner.scan([Source("dsh", DSH_ZSTD)])
        for cache in (tmp_path / "state" / "plain").iterdir():
            cache.write_bytes(cache.read_bytes()[:100])  # e.g. a disk that lost writes
        (key,) = first.changed_sessions
        assert scanner.catalog.events(key) == []  # what is left cannot be trusted
        again = scanner.scan([Source("dsh", DSH_ZSTD)])
        assert again.frames_decoded == first.frames_decoded and again.events == first.events
        assert len(scanner.catalog.events(key)) == first.events
