"""Benchmark of the friction signals: a full count, one incremental update, and the memory of
one big session.

Generates a DSH corpus of about --messages human messages, counts every signal once, then
grows a few sessions (as live sessions do) and times the incremental round: the scan of the
new bytes plus the signals of the sessions that changed. Then one session of --big-mib MiB
of logs alone: the time of its first count and the peak of memory traced while counting it
(tracemalloc, Python allocations only), against the size of its cached plaintext.

    python bench/signals.py [--messages 1000] [--grow 3] [--big-mib 32] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.corpus import Corpus, CorpusStats

from dshkit.profile.signals import SignalConfig, collect_signals
from dshkit.sessions import Scanner, Source
from dshkit.store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--grow", type=int, default=3, help="sessions that grow before the update")
    parser.add_argument("--big-mib", type=int, default=32, help="the big session's logs (0: skip)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dshkit-bench-") as tmp:
        root = Path(tmp) / "sessions"
        corpus = Corpus(root, seed=args.seed)
        # The generator writes about one human message per 9.4 frames.
        made = corpus.generate(sessions=max(1, args.messages // 32), frames=args.messages * 9)
        sources = [Source("dsh", root)]
        config = SignalConfig()
        with Store(Path(tmp) / "state") as store:
            scanner = Scanner(store)
            started = time.perf_counter()
            keys = scanner.scan(sources).keys
            full = collect_signals(scanner.catalog, keys, config, memo=True)
            full_s = time.perf_counter() - started
            live = [log for log in corpus.logs if log.live and log.path.suffix == ".zstd"]
            corpus.logs = live[: args.grow]  # only these sessions go on
            grown = corpus.append(frames=60, target_bytes=120_000)
            started = time.perf_counter()
            scanned = scanner.scan(sources)
            update = collect_signals(scanner.catalog, scanned.keys, config, memo=True)
            update_s = time.perf_counter() - started
        print(
            f"corpus: {made.sessions} sessions, {made.human_messages:,} human messages, "
            f"{made.events:,} events"
        )
        print(f"full count:         {full_s * 1000:8.1f} ms  ({full.recomputed} sessions computed)")
        print(
            f"incremental update: {update_s * 1000:8.1f} ms  ({update.recomputed} sessions "
            f"computed, {grown.frames} new frames in {args.grow} sessions, scan included)"
        )
        print("totals:", ", ".join(f"{k} {v}" for k, v in update.totals.items()))
        if args.big_mib > 0:
            big_session(Path(tmp), args.big_mib, args.seed)


def big_session(tmp: Path, mib: int, seed: int) -> None:
    """One session of `mib` MiB of logs alone: its count's time and traced peak."""
    root = tmp / "big"
    stats = CorpusStats()
    frames = max(3, round((mib << 20) / Corpus.mean_frame_bytes()))
    Corpus(root, seed=seed).stream_session(0, frames, stats)
    with Store(tmp / "big-state") as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        cache = sum(c.plain_len for key in keys for c in scanner.catalog.files(key))
        started = time.perf_counter()
        collect_signals(scanner.catalog, keys, SignalConfig(), memo=True)
        count_s = time.perf_counter() - started
        store.db.execute("DELETE FROM session_signals")  # counted again, traced
        tracemalloc.start()
        try:
            collect_signals(scanner.catalog, keys, SignalConfig(), memo=True)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    print(
        f"one session of {stats.bytes / 2**20:.0f} MiB ({stats.events:,} events, "
        f"{cache / 2**20:.0f} MiB cached): counted in {count_s * 1000:.0f} ms, "
        f"traced peak {peak / 2**20:.1f} MiB ({peak / cache:.0%} of its cache)"
    )


if __name__ == "__main__":
    main()
