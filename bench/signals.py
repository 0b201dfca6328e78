"""Benchmark of the friction signals: a full count and one incremental update.

Generates a DSH corpus of about --messages human messages, counts every signal once, then
grows a few sessions (as live sessions do) and times the incremental round: the scan of the
new bytes plus the signals of the sessions that changed.

    python bench/signals.py [--messages 1000] [--grow 3] [--seed 1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from corpus import Corpus
from dshkit.profile.signals import SignalConfig, collect_signals
from dshkit.sessions import Scanner, Source
from dshkit.store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--grow", type=int, default=3, help="sessions that grow before the update")
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
            full = collect_signals(scanner.catalog, keys, config)
            full_s = time.perf_counter() - started
            live = [log for log in corpus.logs if log.live and log.path.suffix == ".zstd"]
            corpus.logs = live[: args.grow]  # only these sessions go on
            grown = corpus.append(frames=60, target_bytes=120_000)
            started = time.perf_counter()
            scanned = scanner.scan(sources)
            update = collect_signals(scanner.catalog, scanned.keys, config)
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


if __name__ == "__main__":
    main()
