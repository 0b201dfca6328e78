"""Latency of reading the tail of a live transcript (what graft's watermark does every turn).

A Claude Code transcript and a DSH zstd log each grow by one turn at a time; after each
append, `read_tail` returns just the new events. Prints the first (whole-file) read and the
p50/p95 of the incremental reads (target: a few ms for a typical turn).

    python bench/tail.py [--turns 200] [--history 2000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.corpus import encode_frame, header

from dshkit.sessions.dsh import encode_segment, project_key
from dshkit.sessions.tail import read_tail
from dshkit.store import Store


def claude_turn(n: int) -> bytes:
    usage = {"input_tokens": 900 + n, "output_tokens": 120, "cache_read_input_tokens": 40_000}
    lines = [
        {"type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": f"step {n}"}},
        {
            "type": "assistant",
            "uuid": f"a{n}",
            "requestId": f"r{n}",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "running the tests " * 20},
                    {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "ls"}},
                ],
                "usage": usage,
            },
        },
        {
            "type": "user",
            "uuid": f"r{n}",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok\n" * 200}
                ],
            },
        },
    ]
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def dsh_turn(n: int, seq: int) -> tuple[bytes, int]:
    events = [
        {"type": "turn/start", "seq": seq, "time": seq, "data": {"turn": n}},
        {
            "type": "user/message",
            "seq": seq + 1,
            "time": seq + 1,
            "data": {"role": "user", "content": [{"type": "text", "text": f"step {n}"}],
                     "source": {"kind": "user"}},
        },
        {
            "type": "assistant/message",
            "seq": seq + 2,
            "time": seq + 2,
            "data": {"turn": n, "message": {"role": "assistant",
                                            "content": [{"type": "text", "text": "done " * 200}]},
                     "usage": {"inputTokens": 1000 + n, "cacheReadTokens": 40_000}},
        },
    ]  # fmt: skip
    return encode_frame(events), seq + 3


def timed(store: Store, path: Path) -> float:
    started = time.perf_counter()
    tail = read_tail(store, str(path), consumer="bench")
    elapsed = time.perf_counter() - started
    assert tail.events, "the append must show"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="incremental reads to time")
    parser.add_argument("--history", type=int, default=2000, help="turns already in the log")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        base = Path(home)
        claude = base / ".claude" / "projects" / "-home-dev-p" / "session-1.jsonl"
        claude.parent.mkdir(parents=True)
        claude.write_bytes(b"".join(claude_turn(n) for n in range(args.history)))
        dsh = base / "sessions" / project_key("/home/dev/p") / encode_segment("s1")
        dsh.mkdir(parents=True)
        log = dsh / "session.v4.jsonl.zstd"
        blob, seq = encode_frame([header("s1", 4, "/home/dev/p", 1)]), 0
        for n in range(args.history):
            frame, seq = dsh_turn(n, seq)
            blob += frame
        log.write_bytes(blob)
        with Store(base / "state") as store:
            for name, path in (("Claude Code", claude), ("DSH", log)):
                first = timed(store, path)
                rounds = []
                for n in range(args.turns):
                    if path is claude:
                        append = claude_turn(args.history + n)
                    else:
                        append, seq = dsh_turn(args.history + n, seq)
                    with open(path, "ab") as handle:
                        handle.write(append)
                    rounds.append(timed(store, path))
                size = path.stat().st_size / 1e6
                p50 = statistics.median(rounds) * 1000
                p95 = statistics.quantiles(rounds, n=20)[-1] * 1000
                print(
                    f"{name:<12} log {size:6.1f} MB  first read {first * 1000:7.1f} ms   "
                    f"one turn appended: p50 {p50:5.2f} ms  p95 {p95:5.2f} ms"
                )


if __name__ == "__main__":
    main()
