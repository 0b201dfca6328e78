"""Latency of the hot hook path: `dshkit hook PreToolUse` against a bare interpreter start.

Runs each case --runs times, interleaved, as the harnesses do (a fresh process, a payload on
stdin), and prints p50 and p95 of each and their ratio to the bare interpreter. The registry
holds the command risk policy on PreToolUse: a call for another tool (Read) is answered from
the raw payload without importing the handler (target: p50 within 2x); a command (Bash) runs
the policy itself, whose cost is reported beside it.

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


def payload(tool: str) -> bytes:
    return (
        b'{"session_id":"s","transcript_path":"/h/.claude/projects/-p/s.jsonl",'
        b'"hook_event_name":"PreToolUse","tool_name":"' + tool.encode() + b'",'
        b'"tool_input":{"command":"ls -la src"}}'
    )


def timed(command: list[str], env: dict[str, str], data: bytes) -> float:
    started = time.perf_counter()
    subprocess.run(command, input=data, stdout=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - started


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100)[int(share * 100) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    hook = [str(Path(sys.executable).parent / "dshkit"), "hook", "PreToolUse"]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "DSH_HOME": home}
        # As installed: bytecode cached (the first round writes it), no handlers of one's own.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("DSHKIT_HOOK_HANDLERS", None)
        cases: dict[str, tuple[list[str], bytes]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], payload("Read")),
            "another tool (Read)": (hook, payload("Read")),
            "a command (Bash): policy": (hook, payload("Bash")),
        }
        figures: dict[str, list[float]] = {name: [] for name in cases}
        for round in range(args.runs + 1):
            for name, (command, data) in cases.items():
                took = timed(command, env, data)
                if round:  # round 0 warms up
                    figures[name].append(took)
    bare = percentile(figures["python -c pass"], 0.5)
    for name, values in figures.items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        print(
            f"{name:<27} p50 {p50 * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms   "
            f"p50 ratio {p50 / bare:4.2f}x"
        )
    print("target: p50 ratio <= 2x for PreToolUse calls no handler wants")


if __name__ == "__main__":
    main()
