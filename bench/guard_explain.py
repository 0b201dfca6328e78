"""How long `dshkit guard explain` takes to trace one command line, in process: the traced walk,
the decisions, the trace (segments, wrappers, expansions, paths) and the person's rules read
from a config with some. Target: p95 under 50 ms a line.

The lines: every case of the corpora `bench/guard_vs_peer.py` reads (our own, and whatever is
under tests/data/guard/), each explained --runs times; p50, p95 and the slowest are printed,
and the slowest lines named.

    python bench/guard_explain.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.guard_corpus import corpora

TARGET_MS = 50.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    from dshkit.guard.service import explain_line

    cases = corpora()
    settings = {
        "mode": "balanced",
        "allow": ["git push:*", "npm run *"],
        "deny": ["npm publish"],
        "projects": {},
    }
    timings: list[tuple[float, str]] = []
    with tempfile.TemporaryDirectory() as scratch:
        work = str(Path(scratch) / "proj")
        for case in cases:
            explain_line(case.command, case.shell, work, settings=settings)  # warm
            for _ in range(args.runs):
                started = time.perf_counter()
                explain_line(case.command, case.shell, work, settings=settings, home=scratch)
                timings.append(((time.perf_counter() - started) * 1000, case.command))
    times = sorted(t for t, _ in timings)
    p50 = statistics.median(times)
    p95 = times[int(len(times) * 0.95) - 1]
    print(f"{len(cases)} lines x {args.runs}: p50 {p50:.2f} ms, p95 {p95:.2f} ms, "
          f"max {times[-1]:.2f} ms (target p95 < {TARGET_MS:.0f} ms: "
          f"{'met' if p95 < TARGET_MS else 'MISSED'})")  # fmt: skip
    for spent, command in sorted(timings, reverse=True)[:3]:
        print(f"  {spent:.2f} ms  {command[:80]!r}")


if __name__ == "__main__":
    main()
