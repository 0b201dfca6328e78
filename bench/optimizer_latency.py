"""Latency the prompt optimizer adds to a prompt: `dshkit hook UserPromptSubmit` as Claude Code
runs it (a fresh process, a payload on stdin) against a fake model on 127.0.0.1 that answers
at once, so what is measured is dshkit's own cost, not a model's.

Cases: tier off (the prompt is only recorded), tier basic and advanced with the model asked
(advanced on a session the store knows, reading its history and offering the tools), and
the prompts that pass without a model call (a bare continuation, a slash command, the skip
prefix). Prints p50 and p95 of each process's wall time, the difference from tier off (what
asking the model adds) and from a bare interpreter start, and the optimizer's own time as
each run recorded it (`timings.totalMs`, p50/p95 per case).

Then what the person waits per tier (basic, advanced, extreme) with the default settings
(`stall_s` 8 s, `budget_s` 10 s) against a healthy model (it streams its answer over about
0.3 s) and a stalled one (one delta, then silence), with the line the person was shown.

    python bench/optimizer_latency.py [--runs 40] [--stall-runs 5]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.fakes import FakeOpenAI, Reply

from dshkit.optimizer import OptimizerService

HOOK = [str(Path(sys.executable).parent / "dshkit"), "hook", "UserPromptSubmit"]
REFINED = "开工前先问用户：无\n把登录按钮改成蓝色，只改这一个按钮。\n收尾自检：打开登录页看按钮。"


def payload(prompt: str, session: str, cwd: str) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"/nowhere/{session}.jsonl",
            "cwd": cwd,
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    ).encode()


def timed(command: list[str], env: dict[str, str], data: bytes) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, input=data, env=env, capture_output=True, check=False)
    took = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{command} exited {done.returncode}: {done.stderr.decode()}")
    return took


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100)[int(share * 100) - 1]


def transcript(home: Path, cwd: Path, session: str) -> None:
    """A Claude Code session with a few exchanges, for the advanced case to read."""
    folder = home / ".claude" / "projects" / str(cwd).replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for n in range(6):
        base = {"sessionId": session, "cwd": str(cwd), "timestamp": f"2026-12-01T10:0{n}:00.000Z"}
        lines.append({**base, "type": "user", "message": {"content": f"第 {n} 件事：改按钮"}})
        reply = {"role": "assistant", "content": [{"type": "text", "text": f"第 {n} 件已改好。"}]}
        lines.append({**base, "type": "assistant", "message": reply, "requestId": f"r{n}"})
    (folder / f"{session}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--stall-runs", type=int, default=5, help="runs per tier and model in the wait table"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as fake:
        home = Path(tmp)
        state = home / ".dsh" / "dshkit"
        state.mkdir(parents=True)
        project = home / "work"
        project.mkdir()
        (project / "app.py").write_text("def login():\n    return 'gray button'\n")
        transcript(home, project, "known")
        env = {
            **os.environ,
            "HOME": tmp,
            "DSH_HOME": str(home / ".dsh"),
            "CLAUDECODE": "1",
            "DSHKIT_LLM_BASE_URL": fake.base_url,
            "DSHKIT_LLM_API_KEY": "sk-bench",
        }
        env.pop("CLAUDE_CONFIG_DIR", None)
        env.pop("DSHKIT_HOOK_HANDLERS", None)
        service = OptimizerService(state)
        config = state / "config.toml"
        cases: dict[str, tuple[str, str, str]] = {  # name -> (tier, prompt, session)
            "tier off (recorded only)": ("off", "把登录按钮改成蓝色", "s-off"),
            "basic, model asked": ("basic", "把登录按钮改成蓝色", "s-basic"),
            "advanced, known session": ("advanced", "把这个按钮改成蓝色", "known"),
            "basic, '继续' (no model)": ("basic", "继续", "s-cont"),
            "basic, '/compact' (no model)": ("basic", "/compact", "s-cmd"),
            "basic, 》prefix (no model)": ("basic", "》照原话发", "s-pre"),
        }
        bare = [sys.executable, "-c", "pass"]
        figures: dict[str, list[float]] = {name: [] for name in ["python -c pass", *cases]}
        for round in range(args.runs + 1):
            figures_round = {"python -c pass": timed(bare, env, b"")}
            for name, (tier, prompt, session) in cases.items():
                config.write_text(f'[optimizer]\ntier = "{tier}"\nturns = 3\n')
                if tier != "off" and not prompt.startswith(("继续", "/", "》")):
                    fake.replies.append(Reply(deltas=[REFINED]))
                figures_round[name] = timed(HOOK, env, payload(prompt, session, str(project)))
            if round:  # round 0 warms up (bytecode, the store's schema)
                for name, took in figures_round.items():
                    figures[name].append(took)
        runs = service.runs(1000).runs
    recorded: dict[str, list[float]] = {}
    for name, (_, prompt, session) in cases.items():
        mine = [r for r in runs if r.session_id == session and r.raw == prompt]
        recorded[name] = [float(r.timings.get("totalMs", 0)) for r in mine]
    base = percentile(figures["python -c pass"], 0.5)
    off = percentile(figures["tier off (recorded only)"], 0.5)
    for name, values in figures.items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        own = recorded.get(name)
        inside = (
            f"   optimizer p50 {percentile(own, 0.5):5.0f} ms p95 {percentile(own, 0.95):5.0f} ms"
            if own and len(own) > 1
            else ""
        )
        print(
            f"{name:<30} p50 {p50 * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms   "
            f"+{(p50 - off) * 1000:6.1f} ms vs off   {p50 / base:4.2f}x bare{inside}"
        )
    print(f"runs: {args.runs} per case; the fake model answers at once (127.0.0.1)")
    waits(args.stall_runs)


HEALTHY = [REFINED[i : i + 8] for i in range(0, len(REFINED), 8)]


def waits(runs: int) -> None:
    """What the person waits per tier, a healthy and a stalled model, and what they are told."""
    print(f"\nwhat the person waits (default stall_s and budget_s), {runs} runs each:")
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as fake:
        home = Path(tmp)
        state = home / ".dsh" / "dshkit"
        state.mkdir(parents=True)
        project = home / "work"
        project.mkdir()
        env = {
            **os.environ,
            "HOME": tmp,
            "DSH_HOME": str(home / ".dsh"),
            "CLAUDECODE": "1",
            "DSHKIT_LLM_BASE_URL": fake.base_url,
            "DSHKIT_LLM_API_KEY": "sk-bench",
        }
        env.pop("CLAUDE_CONFIG_DIR", None)
        env.pop("DSHKIT_HOOK_HANDLERS", None)
        models = {
            "healthy": lambda: Reply(deltas=HEALTHY, delay_s=0.3 / len(HEALTHY)),
            "stalled": lambda: Reply(deltas=["开工前"], silent=True, hold_s=60),
        }
        for tier in ("basic", "advanced", "extreme"):
            (state / "config.toml").write_text(f'[optimizer]\ntier = "{tier}"\n')
            for model, reply in models.items():
                took: list[float] = []
                told = ""
                for n in range(runs):
                    fake.replies.append(reply())
                    data = payload("把登录按钮改成蓝色", f"w-{tier}-{model}-{n}", str(project))
                    started = time.perf_counter()
                    done = subprocess.run(HOOK, input=data, env=env, capture_output=True)
                    took.append(time.perf_counter() - started)
                    answer = json.loads(done.stdout or b"{}")
                    told = str(answer.get("systemMessage", "(nothing shown)"))
                fifty, high = _p(took, 0.5), _p(took, 0.95)
                print(f"  {tier:<9} {model:<8} p50 {fifty:5.2f} s  p95 {high:5.2f} s  · {told}")


def _p(values: list[float], share: float) -> float:
    """Nearest-rank percentile (a few runs: no interpolation)."""
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * share // 1) - 1).__int__()]


if __name__ == "__main__":
    main()
