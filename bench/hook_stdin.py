"""Time for `dshkit hook PreToolUse` to answer while its stdin is held open.

A harness that writes part of a payload (or none) and never closes stdin must not hang the
hook: it answers once `hookspec.PAYLOAD_READ_S` ran out (the command guard failing closed);
a whole payload on a pipe left open is answered at once, without that wait. Each case runs
--runs times in a fresh process and prints the median and the worst, beside a bare
interpreter start. Targets: a partial or empty payload within PAYLOAD_READ_S plus a start; a
whole one about a start (tests/hooks/test_stdin.py checks the answers, not these times).

    python bench/hook_stdin.py [--runs 5]
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

from dshkit.hookspec import PAYLOAD_READ_S


def bash_call(command: str) -> bytes:
    return (
        b'{"session_id":"s","transcript_path":"/h/.claude/projects/-p/s.jsonl",'
        b'"hook_event_name":"PreToolUse","tool_name":"Bash",'
        b'"tool_input":{"command":"' + command.encode() + b'"}}'
    )


def held_open(command: list[str], written: bytes, env: dict[str, str]) -> float:
    """Seconds from start to exit of `command`, `written` on its stdin, the pipe left open."""
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None
    try:
        process.stdin.write(written)
        process.stdin.flush()
        process.wait(timeout=60)
        return time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdin.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    hook = [str(Path(sys.executable).parent / "dshkit"), "hook", "PreToolUse"]
    whole = bash_call("rm -rf ~")
    cases: dict[str, tuple[list[str], bytes]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], b""),
        "whole payload, pipe open": (hook, whole),
        "partial payload, pipe open": (hook, whole[:-20]),
        "nothing written, pipe open": (hook, b""),
    }
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "DSH_HOME": home, "CLAUDECODE": "1"}
        env.pop("DSHKIT_HOOK_HANDLERS", None)
        held_open(hook, whole, env)  # the first run writes the bytecode
        figures: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (command, written) in cases.items():
                figures[name].append(held_open(command, written, env))
    print(f"stdin held open (read deadline {PAYLOAD_READ_S:g} s), {args.runs} runs each")
    for name, values in figures.items():
        print(
            f"  {name:28} median {statistics.median(values) * 1000:6.0f} ms"
            f"   worst {max(values) * 1000:6.0f} ms"
        )


if __name__ == "__main__":
    main()
