"""Time to verdict of the delivery gate, each run with its own browser as the hook runs it.

Good pages (they stop early, after a sustained good window): the wall time of the whole call,
the browser's start included, and the time on the page (`elapsedMs`); target ≤ 4.0 s (the
seed's good pages). Failing pages (they use the whole budget): the wall time of the whole call
and on the page, against the budget; target ≤ budget + 1 s.

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
    "loading-text.html",
    "fatalities-report.html",
    "offscreen.html",
    "below-fold-drawn.html",
    "click-to-start.html",
)
FAILING = (
    "shader-assembly.html",
    "tank.html",
    "page-error.html",
    "blank-canvas.html",
    "infinite-loop.html",
    "throws-after-render.html",
    "never-draws.html",
    "context-lost.html",
    "never-links.html",
    "broken.svg",
    "collapsed-webgl.html",
    "black-under-light-panel.html",
    "below-fold-black.html",
    "blinking-fatal.html",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each page")
    parser.add_argument("--budget", type=float, default=5.0, help="budget of failing pages (s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as shots:
        good_call: list[float] = []
        good_page: list[float] = []
        for _ in range(args.runs):
            for name in GOOD:
                started = time.monotonic()
                (verdict,) = judge_files([PAGES / name], 20.0, Path(shots))
                seconds = time.monotonic() - started
                assert verdict.verdict == "ok", (name, verdict.report())
                good_call.append(seconds)
                good_page.append(verdict.elapsed_ms / 1000)
                browser = verdict.timings["browserStartMs"]
                print(
                    f"  ok             {name:28} call {seconds:5.2f} s, page "
                    f"{verdict.elapsed_ms / 1000:5.2f} s (browser start {browser} ms)"
                )
        bad_call: list[float] = []
        bad_page: list[float] = []
        for _ in range(args.runs):
            for name in FAILING:
                started = time.monotonic()
                (verdict,) = judge_files([PAGES / name], args.budget, Path(shots))
                seconds = time.monotonic() - started
                assert verdict.failed, (name, verdict.report())
                bad_call.append(seconds)
                bad_page.append(verdict.elapsed_ms / 1000)
                print(
                    f"  {verdict.verdict:14} {name:28} call {seconds:5.2f} s, page "
                    f"{verdict.elapsed_ms / 1000:5.2f} s"
                )
    print(
        f"good pages ({len(good_call)} runs): whole call median {statistics.median(good_call):.2f}"
        f" s, max {max(good_call):.2f} s; on the page median {statistics.median(good_page):.2f}"
        f" s, max {max(good_page):.2f} s (target <= 4.0 s)"
    )
    print(
        f"failing pages ({len(bad_call)} runs, budget {args.budget:g} s): whole call median "
        f"{statistics.median(bad_call):.2f} s, max {max(bad_call):.2f} s; on the page median "
        f"{statistics.median(bad_page):.2f} s, max {max(bad_page):.2f} s "
        f"(target <= {args.budget + 1:g} s)"
    )


if __name__ == "__main__":
    main()
