"""Latency of the guard's intent check (guard/intent.py: the person's newest message, read
from the session's transcript when a deny might be relaxed) on a small and a 50 MiB DSH log.

The check reads the log from its end (`sessions.reader.read_last`: the header frame, then the
frames of the last MiB), so its time should not grow with the session. For reference it also
prints what decompressing the whole log costs (how the check read a DSH log before).

    python bench/guard_intent.py [--mib 50] [--runs 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.corpus import encode_frame, header
from tests.support.logs import event, human, session_dir

from dshkit.guard.intent import latest_message


def write_log(root: Path, mib: float) -> Path:
    """A DSH v4 log of turns (the person's message, the assistant's long answer) up to `mib`
    MiB on disk, its text random enough that zstd only halves it; the newest message last."""
    path = session_dir(root, f"s-{mib}") / "session.v4.jsonl.zstd"
    noise = random.Random(1)
    target = int(mib * (1 << 20))
    size = 0
    seq = 0
    with path.open("wb") as out:
        frame = encode_frame([header(f"s-{mib}", 4, "/home/dev/work", 1)])
        out.write(frame)
        size += len(frame)
        while size < target:
            answer = {"role": "assistant", "content": [
                {"type": "text", "text": noise.randbytes(6000).hex()}]}  # fmt: skip
            frame = encode_frame([
                human(seq, f"step {seq}: go on"),
                event("assistant/message", seq + 1, {"turn": 1, "step": 1, "message": answer}),
            ])  # fmt: skip
            out.write(frame)
            size += len(frame)
            seq += 2
        out.write(encode_frame([human(seq, "算了，丢弃我所有的改动")]))
    return path


def whole(path: Path) -> int:
    """The plaintext of the whole log, decompressed (the reference: the old way)."""
    import zstandard

    total = 0
    with path.open("rb") as handle:
        reader = zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True)
        while chunk := reader.read(1 << 20):
            total += len(chunk)
    return total


def timed(runs: int, call: object) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=50.0, help="the large log's size on disk")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        print(f"{'log':>12} {'on disk':>10} {'intent check':>14} {'whole decompress':>18}")
        for mib in (0.05, args.mib):
            path = write_log(root, mib)
            assert latest_message(str(path), "dsh") == "算了，丢弃我所有的改动"
            check = timed(args.runs, lambda p=path: latest_message(str(p), "dsh"))
            reference = timed(max(1, args.runs // 2), lambda p=path: whole(p))
            size = path.stat().st_size / (1 << 20)
            print(f"{mib:>10g} M {size:>8.2f} M {check:>11.1f} ms {reference:>15.1f} ms")


if __name__ == "__main__":
    main()
