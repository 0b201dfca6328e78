"""Latency of the hot hook path: `dshkit hook PreToolUse` against a bare interpreter start.

Runs each case --runs times, interleaved, as the harnesses do (a fresh process, a payload on
stdin), and prints p50 and p95 of each and their ratio to the bare interpreter (target: p50
within 2x). With a command-policy-sized registry in place (a PreToolUse handler on the
command vocabulary, this module's trivial `allow`, registered through DSHKIT_HOOK_HANDLERS),
a call for another tool is answered from the raw payload; a call for a command tool runs the
handler.

    python bench/hook_latency.py [--runs 60]
"""

from __future__ import annotations

POLICY = "PreToolUse[command]=hook_latency:allow"


def allow(hook: object) -> None:
    """The bench's command policy: looks at the call, has no opinion."""
    return None


def payload(tool: str) -> bytes:
    return (
        b'{"session_id":"s","transcript_path":"/h/.claude/projects/-p/s.jsonl",'
        b'"hook_event_name":"PreToolUse","tool_name":"' + tool.encode() + b'",'
        b'"tool_input":{"command":"ls"}}'
    )


def main() -> None:
    # Imported here, not at the top: the hook imports this module for `allow`.
    import argparse
    import os
    import statistics
    import subprocess
    import sys
    import tempfile
    import time
    from pathlib import Path

    def timed(command: list[str], env: dict[str, str], data: bytes) -> float:
        started = time.perf_counter()
        subprocess.run(command, input=data, stdout=subprocess.DEVNULL, env=env, check=True)
        return time.perf_counter() - started

    def percentile(values: list[float], share: float) -> float:
        return statistics.quantiles(values, n=100)[int(share * 100) - 1]

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    dshkit = str(Path(sys.executable).parent / "dshkit")
    hook = [dshkit, "hook", "PreToolUse"]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "DSH_HOME": home}
        # As installed: bytecode cached (the first round writes it), no handlers of one's own.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("DSHKIT_HOOK_HANDLERS", None)
        policy = {
            **env,
            "DSHKIT_HOOK_HANDLERS": POLICY,
            "PYTHONPATH": str(Path(__file__).resolve().parent),
        }
        cases: dict[str, tuple[list[str], dict[str, str], bytes]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], env, payload("Read")),
            "no PreToolUse handler": (hook, env, payload("Bash")),
            "policy, other tool (Read)": (hook, policy, payload("Read")),
            "policy, its tool (Bash)": (hook, policy, payload("Bash")),
        }
        figures: dict[str, list[float]] = {name: [] for name in cases}
        for round in range(args.runs + 1):
            for name, (command, environ, data) in cases.items():
                took = timed(command, environ, data)
                if round:  # round 0 warms up
                    figures[name].append(took)
    bare = percentile(figures["python -c pass"], 0.5)
    for name, values in figures.items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        print(
            f"{name:<27} p50 {p50 * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms   "
            f"p50 ratio {p50 / bare:4.2f}x"
        )
    print("target: p50 ratio <= 2x for PreToolUse calls a handler does not want")


if __name__ == "__main__":
    main()
