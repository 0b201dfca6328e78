"""Time to verdict of the delivery gate, each run with its own browser as the hook runs it.

Good pages: the median time from the call to its verdict, the browser's start included
(target: ≤ 2.5 s). Failing pages: how far past the budget the verdict comes (target: ≤ 1 s),
measured on the page (`elapsedMs` − budget) and on the whole call (less the browser's start).

    python bench/gate.py [--runs 3] [--budget 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from dshkit.gate.judge import judge_files

PAGES = Path(__file__).resolve().parent.parent / "tests" / "data" / "gate"
GOOD = (
    "shader-assembly.fixed.html",
    "tank.fixed.html",
    "dark-scene.html",
    "draw-once.html",
    "no-canvas.html",
)
FAILING = (
    "shader-assembly.html",
    "tank.html",
    "page-error.html",
    "blank-canvas.html",
    "infinite-loop.html",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each page")
    parser.add_argument("--budget", type=float, default=5.0, help="budget of failing pages (s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as shots:
        good: list[float] = []
        for _ in range(args.runs):
            for name in GOOD:
                started = time.monotonic()
                (verdict,) = judge_files([PAGES / name], 20.0, Path(shots))
                seconds = time.monotonic() - started
                assert verdict.verdict == "ok", (name, verdict.evidence())
                good.append(seconds)
                browser = verdict.timings["browserStartMs"]
                print(f"  ok  {name:28} {seconds:5.2f} s (browser start {browser} ms)")
        page_over: list[float] = []
        call_over: list[float] = []
        for _ in range(args.runs):
            for name in FAILING:
                started = time.monotonic()
                (verdict,) = judge_files([PAGES / name], args.budget, Path(shots))
                seconds = time.monotonic() - started
                assert verdict.failed, (name, verdict.evidence())
                page_over.append(verdict.elapsed_ms / 1000 - args.budget)
                browser = verdict.timings["browserStartMs"] / 1000
                call_over.append(seconds - browser - args.budget)
                print(f"  {verdict.verdict:14} {name:24} {verdict.elapsed_ms / 1000:5.2f} s")
    print(
        f"good pages: median time to verdict {statistics.median(good):.2f} s, "
        f"max {max(good):.2f} s over {len(good)} runs (target <= 2.5 s, browser start included)"
    )
    print(
        f"failing pages (budget {args.budget:g} s): overshoot past the budget median "
        f"{statistics.median(page_over):.2f} s, max {max(page_over):.2f} s on the page; "
        f"whole call less the browser's start: median {statistics.median(call_over):.2f} s, "
        f"max {max(call_over):.2f} s (target <= 1 s)"
    )


if __name__ == "__main__":
    main()
