"""Latency of the hot hook path: `dshkit hook PreToolUse` against a bare interpreter start.

Runs both --runs times, interleaved, as the harnesses do (a fresh process, a payload on
stdin), and prints p50 and p95 of each and their ratio (target: p50 within 2x).

    python bench/hook_latency.py [--runs 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAYLOAD = (
    b'{"session_id":"s","transcript_path":"/h/.claude/projects/-p/s.jsonl",'
    b'"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}'
)


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, input=PAYLOAD, stdout=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - started


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100)[int(share * 100) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    dshkit = str(Path(sys.executable).parent / "dshkit")
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "DSH_HOME": home}
        bare, hook = [], []
        for _ in range(args.runs):
            bare.append(timed([sys.executable, "-c", "pass"], env))
            hook.append(timed([dshkit, "hook", "PreToolUse"], env))
    for name, values in (("python -c pass", bare), ("dshkit hook PreToolUse", hook)):
        print(
            f"{name:<24} p50 {percentile(values, 0.5) * 1000:6.1f} ms   "
            f"p95 {percentile(values, 0.95) * 1000:6.1f} ms"
        )
    print(
        f"ratio at p50: {percentile(hook, 0.5) / percentile(bare, 0.5):.2f}x (target <= 2x); "
        f"at p95: {percentile(hook, 0.95) / percentile(bare, 0.95):.2f}x"
    )


if __name__ == "__main__":
    main()
