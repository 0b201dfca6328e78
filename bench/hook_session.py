"""Hook latency over whole sessions: every call a harness makes, from a fresh home into the
watermark's band, each against a bare interpreter start, and the calls over 2x named.

`bench/hook_latency.py` times each path in a steady state, round after round. A session
moves between them: its first call in a home, its first prompt, the tool call that crosses
into the band, the nudge, the escalation after it, a new session in a home already used.
This replays such sessions through the real `dshkit hook EVENT` (started as `install-hooks`
writes it: through its launcher where it can, `install.launcher`), as the harness orders the
calls, with the gap a model's answer leaves between them (each call's detached step and
what a turn's end starts are waited for, not timed):

- a Claude Code session in a fresh home (no store, no settings kept): a start, then turns of
  a person's prompt, tool calls (the request logged, PreToolUse, the result logged,
  PostToolUse) and a closing answer (Stop), its context growing from 15,000 tokens into the
  band (to 146,000 of a 200,000 window: nudged, then escalated, never cut);
- a second Claude Code session in the same home, a few turns below the band;
- a DSH session in the same home, its zstd log grown a frame per step, a prompt hook before
  every model step (as DSH's bridge asks), into the band too.

Prints, per session and event, the calls, the p50, p95 and max of their wall time as a
multiple of the bare interpreter's p50, how many were over 2x and the time they took beyond
as many bare starts; then every call over 2x (which session, which call, its context, the
start of what it said). `--json` prints the same as one JSON object. What runs after a
turn's end or a cut reaches no model (the client is pointed at a closed local port). With
fewer turns a session grows faster, which lowers the forced line (the growth it predicts):
it may be cut.

    python bench/hook_session.py [--turns 12] [--calls 6] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.hook_latency import dsh_frame, settle

from dshkit.install import launcher
from dshkit.install.commands import dshkit_command

WINDOW_END = 146_000  # the last step's context: in the band of a 200,000 window, not cut
START = 15_000


class Replay:
    """The calls of one home, each timed beside a bare interpreter start."""

    def __init__(self, home: str) -> None:
        self.home = home
        self.state = os.path.join(home, "dshkit")
        self.env = {**os.environ, "HOME": home, "DSH_HOME": home, "CLAUDECODE": "1"}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)  # (as a harness starts it: bytecode kept)
        # What a turn's end or a cut starts after the answer must reach no real model: the
        # client is pointed at a closed port on this machine, with no key.
        self.env.pop("DSHKIT_LLM_API_KEY", None)
        self.env["DSHKIT_LLM_BASE_URL"] = "http://127.0.0.1:9/v1"
        # As `install-hooks` writes a hook: through the launcher where it can (`install.launcher`).
        self.command = [*launcher.program(dshkit_command()), "hook"]
        self.calls: list[dict[str, Any]] = []
        self.bare: list[float] = []
        self.count = 0

    def call(self, session: str, event: str, payload: dict[str, Any], context: int) -> None:
        self.count += 1
        data = json.dumps({**payload, "hook_event_name": event}).encode()
        started = time.perf_counter()
        done = subprocess.run(
            [*self.command, event], input=data, env=self.env, capture_output=True, check=False
        )
        took = time.perf_counter() - started
        said = (done.stdout or done.stderr).decode(errors="replace").strip()
        self.calls.append(
            {"session": session, "n": self.count, "event": event, "context": context,
             "ms": took * 1000, "said": said}
        )  # fmt: skip
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=self.env, check=True)
        self.bare.append(time.perf_counter() - started)
        settle(self.state)  # (the model's time between calls: what runs after is not timed)


def contexts(turns: int, calls: int, end: int) -> list[list[int]]:
    """Each step's context, turn by turn, growing evenly from START to `end`."""
    steps = turns * calls
    grown = [START + (end - START) * i // max(steps - 1, 1) for i in range(steps)]
    return [grown[t * calls : (t + 1) * calls] for t in range(turns)]


def claude_session(replay: Replay, label: str, turns: int, calls: int, end: int) -> None:
    """A Claude Code session: its log written as Claude Code writes it, its hooks called in
    Claude Code's order."""
    name = str(uuid.uuid4())  # (as Claude Code names them)
    log = Path(replay.home) / ".claude" / "projects" / "-p" / f"{name}.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.touch()
    base = {"sessionId": name, "cwd": "/p", "timestamp": "2026-12-07T10:00:00.000Z"}
    common = {"session_id": name, "transcript_path": str(log), "cwd": "/p"}
    moded = {**common, "permission_mode": "default"}

    def logged(*lines: dict[str, Any]) -> None:
        with open(log, "a", encoding="utf-8") as handle:
            handle.writelines(json.dumps({**base, **line}) + "\n" for line in lines)

    replay.call(label, "SessionStart", {**common, "source": "startup"}, 0)
    number = 0
    for turn, steps in enumerate(contexts(turns, calls, end)):
        words = f"turn {turn}: fix the failing test in src/app.py and run the suite"
        logged({"type": "user", "message": {"role": "user", "content": words}})
        prompt = {**moded, "prompt": words, "prompt_id": f"{name}-{turn}"}
        replay.call(label, "UserPromptSubmit", prompt, steps[0])
        for context in steps:
            number += 1
            tool, given = (
                ("Bash", {"command": "pytest -q"})
                if number % 3 == 0
                else ("Read", {"file_path": "a"})
            )
            use = {"type": "tool_use", "id": f"t{number}", "name": tool, "input": given}
            usage = {"input_tokens": context, "output_tokens": 10}
            message = {"id": f"m{number}", "role": "assistant", "content": [use], "usage": usage}
            logged({"type": "assistant", "message": message, "requestId": f"r{number}"})
            called = {**moded, "tool_name": tool, "tool_input": given, "tool_use_id": f"t{number}"}
            replay.call(label, "PreToolUse", called, context)
            result = {"type": "tool_result", "tool_use_id": f"t{number}", "content": "x" * 2_000}
            logged({"type": "user", "message": {"role": "user", "content": [result]}})
            response = {**called, "tool_response": {"stdout": "x" * 200}}
            replay.call(label, "PostToolUse", response, context)
        number += 1
        answer = {"type": "text", "text": "done"}
        usage = {"input_tokens": steps[-1] + 500, "output_tokens": 10}
        message = {"id": f"m{number}", "role": "assistant", "content": [answer], "usage": usage}
        logged({"type": "assistant", "message": message, "requestId": f"r{number}"})
        stop = {**moded, "stop_hook_active": False, "last_assistant_message": "done"}
        replay.call(label, "Stop", stop, steps[-1])


def dsh_session(replay: Replay, label: str, turns: int, calls: int, end: int) -> None:
    """A DSH session: its log a zstd frame per step, as DSH appends them, a prompt hook
    before every model step (the bridge's), tool hooks around each call, Stop per turn."""
    name = f"session-{uuid.uuid4()}"  # (as DSH names them)
    log = Path(replay.home) / ".dsh" / "sessions" / "--p--" / name / "session.jsonl.zstd"
    log.parent.mkdir(parents=True)
    common = {"session_id": name, "transcript_path": str(log), "cwd": "/p"}
    moded = {**common, "permission_mode": "default"}
    sequence = 0

    def framed(*records: dict[str, Any]) -> None:
        nonlocal sequence
        stamped = []
        for record in records:
            stamped.append({**record, "seq": sequence, "time": int(time.time() * 1000)})
            sequence += 1
        with open(log, "ab") as handle:
            handle.write(dsh_frame(stamped))

    header = {"type": "session", "version": 0, "id": name, "cwd": "/p"}
    with open(log, "wb") as handle:
        handle.write(dsh_frame([header]))
    framed(
        {"type": "sandbox/mode", "data": {"mode": "workspace-write"}},
        {"type": "approval/policy", "data": {"policy": "ask"}},
    )
    replay.call(label, "SessionStart", {**common, "source": "startup"}, 0)
    number = 0
    for turn, steps in enumerate(contexts(turns, calls, end)):
        words = f"turn {turn}: fix the failing test in src/app.py and run the suite"
        said = {"role": "user", "content": [{"type": "text", "text": words}]}
        framed(
            {"type": "turn/start", "data": {"turn": turn + 1}},
            {"type": "user/message", "data": {**said, "source": {"kind": "user"}}},
        )
        # A step per tool call, and the last step's answer, which calls nothing.
        for index, context in enumerate([*steps, steps[-1] + 500]):
            calling = index < len(steps)
            prompt = {**moded, "prompt": words, "prompt_id": f"{name}-{number}"}
            replay.call(label, "UserPromptSubmit", prompt, context)
            number += 1
            usage = {"inputTokens": context, "outputTokens": 10}
            message = {"role": "assistant", "content": [], "source": {"model": "deepseek-chat"}}
            step = {"turn": turn + 1, "message": message, "usage": usage}
            records: list[dict[str, Any]] = [{"type": "assistant/message", "data": step}]
            call = {"turn": turn + 1, "step": number, "callId": f"c{number}", "name": "read_file"}
            if calling:
                records.append(
                    {"type": "tool/call", "data": {**call, "arguments": '{"path": "a"}'}}
                )
            framed(*records)
            if not calling:
                break
            called = {**moded, "tool_name": "read_file", "tool_input": {"path": "a"}}
            replay.call(label, "PreToolUse", called, context)
            result = {"role": "tool", "content": [{"type": "text", "text": "x" * 2_000}]}
            output = {"turn": turn + 1, "step": number, "message": result}
            framed({"type": "tool/result", "data": output})
            replay.call(label, "PostToolUse", {**called, "tool_response": "x" * 200}, context)
        replay.call(label, "Stop", {**moded, "stop_hook_active": False}, steps[-1])


def percentile(values: list[float], share: float) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(share * 100) - 1]


def gist(said: str) -> str:
    """What a hook's answer told the model or the person (its JSON's text), or the answer."""
    try:
        answer = json.loads(said)
    except ValueError:
        return said
    if not isinstance(answer, dict):
        return said
    inner = answer.get("hookSpecificOutput")
    for found in (inner if isinstance(inner, dict) else {}, answer):
        for key in ("additionalContext", "permissionDecisionReason", "reason", "systemMessage"):
            if isinstance(found.get(key), str):
                return str(found[key])
    return said


def report(replay: Replay, as_json: bool) -> None:
    bare = statistics.median(replay.bare)
    rows: list[dict[str, Any]] = []
    for session in dict.fromkeys(call["session"] for call in replay.calls):
        mine = [call for call in replay.calls if call["session"] == session]
        for event in [*dict.fromkeys(call["event"] for call in mine), "all"]:
            ms = [call["ms"] for call in mine if event in ("all", call["event"])]
            ratios = [each / 1000 / bare for each in ms]
            rows.append(
                {"session": session, "event": event, "calls": len(ratios),
                 "p50": percentile(ratios, 0.5), "p95": percentile(ratios, 0.95),
                 "max": max(ratios), "over_2x": sum(r > 2 for r in ratios),
                 "beyond_bare_ms": sum(ms) - bare * 1000 * len(ms)}
            )  # fmt: skip
    over = [
        {**call, "ratio": call["ms"] / 1000 / bare}
        for call in replay.calls
        if call["ms"] / 1000 / bare > 2
    ]
    if as_json:
        print(json.dumps({"bare_ms": bare * 1000, "rows": rows, "over_2x": over}, indent=2))
        return
    print(f"bare interpreter p50 {bare * 1000:.1f} ms, {len(replay.calls)} hook calls")
    print(
        f"{'session':<9} {'event':<17} {'calls':>5} {'p50':>6} {'p95':>6} {'max':>6} "
        f"{'>2x':>4} {'beyond bare':>11}"
    )
    for row in rows:
        print(
            f"{row['session']:<9} {row['event']:<17} {row['calls']:>5} {row['p50']:>5.2f}x "
            f"{row['p95']:>5.2f}x {row['max']:>5.2f}x {row['over_2x']:>4} "
            f"{row['beyond_bare_ms']:>8.0f} ms"
        )
    print(f"calls over 2x: {len(over)} of {len(replay.calls)}")
    for call in over:
        said = " ".join(gist(call["said"]).split())[:50]
        print(
            f"  {call['session']:<9} #{call['n']:<4} {call['event']:<17} "
            f"context {call['context']:>7,}  {call['ms']:6.1f} ms  {call['ratio']:5.2f}x"
            + (f"  said: {said}" if said else "")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--calls", type=int, default=6, help="tool calls a turn")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as home:
        replay = Replay(home)
        claude_session(replay, "claude-1", args.turns, args.calls, WINDOW_END)
        claude_session(replay, "claude-2", max(args.turns // 3, 1), args.calls, 60_000)
        dsh_session(replay, "dsh-1", args.turns, args.calls, WINDOW_END)
        settle(replay.state)
    report(replay, args.json)


if __name__ == "__main__":
    main()
