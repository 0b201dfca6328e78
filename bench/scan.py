"""Benchmark of the session layer's scan on a generated DSH corpus, against the decode floor.

Prints, in one run: first scan, no-growth rescan, warm start, and an incremental round
(append frames, then rescan), each as time, zstd frames decoded and log bytes read, and each
as a ratio to the floor: the same bytes decompressed frame by frame and every line parsed,
with no bookkeeping (frame boundaries for the floor are found beforehand, untimed, by
zstandard's own streaming decoder). Timings on a shared VM wander by tens of percent from
run to run and noise only ever adds, so the floor and each phase are run --repeat times,
interleaved, and the best runs are compared (the spread is printed too).

    python bench/scan.py [--sessions 200] [--frames 60000] [--seed 1] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import zstandard

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.corpus import Corpus

from dshkit.sessions import Scanner, Source
from dshkit.sessions.zstdframes import scan_frames
from dshkit.store import Store


def frame_bounds(data: bytes, start: int) -> list[tuple[int, int]]:
    """Complete frames of data[start:], found independently by zstandard's decoder."""
    bounds = []
    position = start
    while position < len(data):
        obj = zstandard.ZstdDecompressor().decompressobj()
        try:
            obj.decompress(data[position : position + (1 << 20)])
        except zstandard.ZstdError:
            break
        if not obj.eof:
            break
        end = position + min(1 << 20, len(data) - position) - len(obj.unused_data)
        bounds.append((position, end))
        position = end
    return bounds


def floor_work(files: list[tuple[Path, int]], walk: bool = False) -> Callable[[], int]:
    """A closure doing the floor's work on `(file, from offset)` pairs; returns lines parsed.

    Frame boundaries are found beforehand, untimed; with `walk`, the timed work also walks
    the frame structure to find them (the one step a multi-frame file cannot skip).
    """
    plan: list[tuple[Path, list[tuple[int, int]] | None, int]] = []
    for path, start in files:
        data = path.read_bytes()
        if path.suffix == ".zstd":
            plan.append((path, frame_bounds(data, start), start))
        else:
            plan.append((path, None, start))

    def work() -> int:
        lines = 0
        dctx = zstandard.ZstdDecompressor()
        for path, given, start in plan:
            data = path.read_bytes()[start:]
            bounds = given
            if walk and given is not None:
                bounds = [(f.start, f.end) for f in scan_frames(data, base=start).frames]
            if bounds is None:
                chunks = [data[: data.rfind(b"\n") + 1]]
            else:
                chunks = [
                    dctx.decompressobj().decompress(data[a - start : b - start]) for a, b in bounds
                ]
            for chunk in chunks:
                for line in chunk.split(b"\n")[:-1]:
                    orjson.loads(line)
                    lines += 1
        return lines

    return work


def timed(func: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    gc.collect()
    started = time.perf_counter()
    result = func(*args)
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--frames", type=int, default=60_000)
    parser.add_argument("--append-frames", type=int, default=4_000)
    parser.add_argument("--append-bytes", type=int, default=8 << 20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="dshkit-bench-") as tmp:
        root = Path(tmp) / "sessions"
        state = Path(tmp) / "state"
        corpus = Corpus(root, seed=args.seed)
        made = corpus.generate(args.sessions, args.frames)
        print(
            f"corpus: {made.sessions} sessions, {made.files} files, {made.frames:,} frames, "
            f"{made.events:,} events, {made.bytes / 2**20:.1f} MiB, {made.torn_files} torn tails"
        )
        logs = sorted(p for p in root.rglob("session*") if p.is_file())
        sources = [Source("dsh", root)]

        # First scan and rescans, interleaved with the floor, each on a fresh state directory.
        floor = floor_work([(p, 0) for p in logs])
        walked_floor = floor_work([(p, 0) for p in logs], walk=True)
        floor_runs: list[float] = []
        walked_runs: list[float] = []
        first_runs: list[float] = []
        rescan_runs: list[float] = []
        for _ in range(args.repeat):
            seconds, lines = timed(floor)
            floor_runs.append(seconds)
            walked_runs.append(timed(walked_floor)[0])
            shutil.rmtree(state, ignore_errors=True)
            with Store(state) as store:
                scanner = Scanner(store)
                seconds, first = timed(scanner.scan, sources)
                first_runs.append(seconds)
                assert first.events == made.events, (first.events, made.events)
                for _ in range(3):
                    seconds, rescan = timed(scanner.scan, sources)
                    rescan_runs.append(seconds)
        floor_s = min(floor_runs)
        walked_s = min(walked_runs)
        first_s = min(first_runs)
        rescan_s = min(rescan_runs)
        rows: list[tuple[str, float, int, int, str]] = [
            (
                "first scan",
                first_s,
                first.frames_decoded,
                first.bytes_read,
                f"{first_s / floor_s:.2f}x floor, {first_s / walked_s:.2f}x walking floor",
            ),
            (
                "no-growth rescan",
                rescan_s,
                rescan.frames_decoded,
                rescan.bytes_read,
                f"{rescan_s / first_s:.2%} of first scan",
            ),
        ]

        # Warm start: a new process opens the store (ready to scan), or rebuilds every event.
        ready_s, store = timed(lambda: Store(state))
        scanner = Scanner(store)
        rows.append(
            ("warm start: store open", ready_s, 0, 0, f"{ready_s / first_s:.2%} of first scan")
        )
        warm_runs = []
        for _ in range(args.repeat):
            seconds, warm = timed(scanner.catalog.warm_start)
            warm_runs.append(seconds)
            assert sum(map(len, warm.values())) == made.events
            del warm
        warm_s = min(warm_runs)
        rows.append(("warm start: all events", warm_s, 0, 0, f"{warm_s / first_s:.2f}x first scan"))

        # Incremental rounds: sessions grow, then one rescan; each round against its own floor.
        expected = made.events
        inc_runs: list[tuple[float, float, int, Any]] = []
        for _ in range(max(1, args.repeat // 2)):
            rows_now = store.db.execute("SELECT path, offset FROM log_files")
            offsets = {Path(path): offset for path, offset in rows_now}
            sizes = {p: p.stat().st_size for p in logs}
            appended = corpus.append(args.append_frames, args.append_bytes)
            expected += appended.events
            grown = [p for p in logs if p.stat().st_size != sizes[p]]
            new_bytes = sum(p.stat().st_size - offsets[p] for p in grown)
            floor_inc, _ = timed(floor_work([(p, offsets[p]) for p in grown]))
            inc_s, inc = timed(scanner.scan, sources)
            assert inc.events == expected, (inc.events, expected)
            inc_runs.append((inc_s / floor_inc, inc_s, new_bytes, inc))
        ratio, inc_s, new_bytes, inc = min(inc_runs, key=lambda run: run[0])
        rows.append(
            (
                "incremental round",
                inc_s,
                inc.frames_decoded,
                inc.bytes_read,
                f"{ratio:.2f}x its floor; read {inc.bytes_read / new_bytes:.2f}x the new bytes",
            )
        )
        store.close()

        print(
            f"walking floor (the floor plus walking frame structure): {walked_s * 1000:.0f} ms\n"
            f"floor: {floor_s * 1000:.0f} ms for {made.frames:,} frames / {lines:,} lines "
            f"(runs {min(floor_runs) * 1000:.0f}-{max(floor_runs) * 1000:.0f} ms); first scan "
            f"runs {min(first_runs) * 1000:.0f}-{max(first_runs) * 1000:.0f} ms"
        )
        print(
            f"incremental rounds: {appended.frames:,} frames, {new_bytes / 2**20:.2f} MiB each; "
            f"ratios to their floors {', '.join(f'{run[0]:.2f}' for run in inc_runs)}"
        )
        print(f"{'phase':<24}{'time':>11}{'frames':>9}{'bytes read':>13}  ratio")
        for name, seconds, frames, nbytes, against in rows:
            print(f"{name:<24}{seconds * 1000:>9.1f}ms{frames:>9,}{nbytes:>13,}  {against}")
        print(
            f"(best of {args.repeat}; python {sys.version.split()[0]}, "
            f"zstandard {zstandard.__version__})"
        )


if __name__ == "__main__":
    main()
