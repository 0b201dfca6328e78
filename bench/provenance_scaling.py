"""How the provenance scanners' time grows with their input: secret redaction on long and
adversarial texts, and the injection scanner on a long text of many encoded runs.

Each text (tests/support/adversarial.py, the ones tests/provenance counts the work on) is
timed at n and at 8n, the best of --runs each; the ratio is about 8 where the time is linear
and about 64 where it is quadratic (what a backtracking pattern does on a long line). Target:
every ratio well under 16.

    python bench/provenance_scaling.py [--scale 0.25] [--runs 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.adversarial import many_runs, secret_texts

from dshkit.provenance.injection import scan
from dshkit.provenance.secrets import redact

FACTOR = 8


def best(run: Callable[[], object], runs: int) -> float:
    """The shortest of `runs` timings of `run`, in seconds (the least disturbed by load)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def row(name: str, small: str, large: str, work: Callable[[str], object], runs: int) -> None:
    at_n, at_8n = best(lambda: work(small), runs), best(lambda: work(large), runs)
    print(
        f"  {name:24} {len(small):>10,} chars {at_n * 1000:8.0f} ms   "
        f"{len(large):>11,} chars {at_8n * 1000:8.0f} ms   ratio {at_8n / at_n:5.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.25, help="n, as a share of the tests'")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    redact("warm up")  # detect-secrets is imported on the first call
    scan("warm up")  # and the scanner's model on the first scan
    print(f"time at n and {FACTOR}n (linear: a ratio near {FACTOR}; quadratic: {FACTOR**2})")
    print("secret redaction")
    small, large = secret_texts(args.scale), secret_texts(args.scale * FACTOR)
    for name in small:
        row(name, small[name], large[name], redact, args.runs)
    print("injection scanner")
    row("many encoded runs", many_runs(1), many_runs(FACTOR), scan, args.runs)


if __name__ == "__main__":
    main()
