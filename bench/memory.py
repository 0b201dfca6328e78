"""Memory's costs: SessionStart with and without the memory injection, and the harvest of a
large session in bounded memory.

SessionStart is `dshkit hook SessionStart` in a fresh process (as the harnesses run it) for a
new session in a workspace whose memory holds --records records, against the same start with
`[memory] inject = false` (the handler returns before reading memory) and a start in a
workspace with no memory. Printed: p50 and p95 wall clock, CPU time, and the ratio of the
injecting start to the one without (target: <= 1.2x).

The harvest reads a DSH session of --mib MiB (its tool results large, a failure and its fix
every few calls) from the store's cache, in a process of its own; printed: its peak resident
size against the same process harvesting a tiny session, and the records it found.

    python bench/memory.py [--runs 30] [--records 200] [--mib 64]
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.corpus import encode_frame, header
from tests.support.logs import session_dir
from tests.support.memory import make_repo

from dshkit.memory import records as rec
from dshkit.memory.records import FACT, NEGATIVE, TOOL, Draft
from dshkit.memory.workspace import identify
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

HOOK = [str(Path(sys.executable).parent / "dshkit"), "hook", "SessionStart"]


def timed(
    command: list[str], env: dict[str, str], data: bytes, show: bool = False
) -> tuple[float, float, int]:
    """Wall-clock and CPU seconds and the peak resident KiB of one run."""
    started = time.perf_counter()
    out = None if show else subprocess.DEVNULL
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out, env=env)
    assert child.stdin is not None
    child.stdin.write(data)
    child.stdin.close()
    _, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{command} exited {os.waitstatus_to_exitcode(status)}")
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100)[int(share * 100) - 1]


def start_payload(session: str, cwd: Path) -> bytes:
    return (
        b'{"session_id":"'
        + session.encode()
        + b'","transcript_path":"/h/.claude/projects/-p/'
        + session.encode()
        + b'.jsonl","cwd":"'
        + str(cwd).encode()
        + b'",'
        b'"hook_event_name":"SessionStart","source":"startup"}'
    )


def fill(state: Path, cwd: Path, count: int) -> None:
    workspace = identify(str(cwd))
    with Store(state) as store, store.transaction():
        for n in range(count):
            kind = NEGATIVE if n % 2 else FACT
            text = (
                f"`pytest -q tests/test_{n}.py` 曾失败：AssertionError {n}；修改 src/m{n}.py 后成功"
            )
            draft = Draft(kind, text, grade=TOOL, seq=n, valid_from=n * 1000, subject=f"s{n}")
            rec.add(store, workspace, ("dsh", f"s-{n % 20}"), draft)


def session_start(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        homes = {name: root / name for name in ("inject", "off", "empty")}
        repos = {}
        for name, home in homes.items():
            home.mkdir()
            repos[name] = make_repo(home / "work" / "app")
            state = home / ".dsh" / "dshkit"
            Store(state).close()
            if name != "empty":
                fill(state, repos[name], args.records)
            if name == "off":
                (state / "config.toml").write_text("[memory]\ninject = false\n")
        envs = {
            name: {
                **os.environ,
                "HOME": str(home),
                "DSH_HOME": str(home / ".dsh"),
                "DSHKIT_CAPABILITY": "off",
            }
            for name, home in homes.items()
        }
        for env in envs.values():
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env.pop("DSHKIT_HOOK_HANDLERS", None)
        figures: dict[str, list[float]] = {name: [] for name in homes}
        cpu: dict[str, list[float]] = {name: [] for name in homes}
        for round in range(args.runs + 1):
            for name in homes:
                data = start_payload(f"s{round}", repos[name])
                took, spent, _ = timed(HOOK, envs[name], data)
                if round:  # round 0 warms up
                    figures[name].append(took)
                    cpu[name].append(spent)
    labels = {
        "inject": f"SessionStart, {args.records} records given",
        "off": "SessionStart, [memory] inject = false",
        "empty": "SessionStart, a workspace without memory",
    }
    for name, values in figures.items():
        print(
            f"{labels[name]:<44} p50 {percentile(values, 0.5) * 1000:6.1f} ms   "
            f"p95 {percentile(values, 0.95) * 1000:6.1f} ms   "
            f"cpu p50 {percentile(cpu[name], 0.5) * 1000:6.1f} ms"
        )
    ratio = percentile(figures["inject"], 0.5) / percentile(figures["off"], 0.5)
    ratio_cpu = percentile(cpu["inject"], 0.5) / percentile(cpu["off"], 0.5)
    print(f"injection / no injection: p50 {ratio:4.2f}x, cpu {ratio_cpu:4.2f}x (target <= 1.2x)")


def write_big_session(root: Path, cwd: Path, mib: int) -> int:
    """A DSH log of about `mib` MiB of plaintext, written frame by frame."""
    path = session_dir(root, "s-big", str(cwd)) / "session.v4.jsonl.zstd"
    chunk = "y" * 32_000
    seq, written = 0, 0
    with open(path, "wb") as out:
        out.write(encode_frame([header("s-big", 4, str(cwd), 1)]))
        call = 0
        while written < mib << 20:
            batch = []
            for _ in range(16):
                call += 1
                failed = call % 5 == 0
                command = f'{{"command": "pytest -q tests/t{call % 7}.py"}}'
                events = [
                    ("user/message", {"role": "user", "source": {"kind": "user"},
                                      "content": [{"type": "text", "text": f"第 {call} 步"}]}),
                    ("tool/call", {"callId": f"c{call}", "name": "bash",
                                   "arguments": command}),
                    ("tool/result", {"message": {"source": {"callId": f"c{call}"},
                                                 "isError": failed,
                                                 "content": [{"type": "text", "text": chunk}]}}),
                ]  # fmt: skip
                for kind, data in events:
                    seq += 1
                    batch.append({"type": kind, "seq": seq, "time": seq, "data": data})
                written += len(chunk) + 300
            out.write(encode_frame(batch))
    return written


HARVEST = """
import resource, sys, tracemalloc
from pathlib import Path
from dshkit.memory.service import MemoryService
service = MemoryService(Path(sys.argv[1]))
tracemalloc.start()
report = service.harvest([sys.argv[2]])
peak = tracemalloc.get_traced_memory()[1]
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("records added", report.as_json()["added"], end="; ")
print(f"Python heap peak during the harvest {peak / 2**20:.1f} MiB, max RSS {rss / 1024:.1f} MiB")
"""


def harvest(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = make_repo(root / "work" / "app")
        sessions = root / "sessions"
        size = write_big_session(sessions, repo, args.mib)
        tiny = session_dir(sessions, "s-tiny", str(repo)) / "session.v4.jsonl.zstd"
        tiny.write_bytes(encode_frame([header("s-tiny", 4, str(repo), 1)]))
        state = root / "state"
        with Store(state) as store:
            started = time.perf_counter()
            report = Scanner(store).scan([Source("dsh", sessions)])
            scanned = time.perf_counter() - started
            if report.errors:
                raise SystemExit(f"the scan failed: {report.errors}")
            events = store.db.execute("SELECT sum(events) FROM sessions").fetchone()[0]
        print(
            f"wrote and scanned a session of {size / 2**20:.0f} MiB, {events} events "
            f"({scanned:.1f} s to scan)"
        )
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
        for session in ("s-tiny", "s-big"):
            command = [sys.executable, "-c", HARVEST, str(state), session]
            print(f"harvest of {session}: ", end="", flush=True)
            took, _, peak = timed(command, env, b"", show=True)
            print(f"  {took:6.1f} s, peak resident {peak / 1024:6.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--only", choices=("start", "harvest"), default=None)
    args = parser.parse_args()
    if args.only in (None, "start"):
        session_start(args)
    if args.only in (None, "harvest"):
        harvest(args)


if __name__ == "__main__":
    main()
