"""What one huge message costs a scan: the peak resident size and what the store grows by.

Writes one session log per harness holding one human message of --mib MiB (Claude Code and
Codex: a JSON line; DSH: a zstd frame, whose output the decoder bounds at 64 MiB a frame, so
its message is kept under that), then scans each in a fresh process of its own and prints
its peak resident size (VmHWM, against the same process scanning a tiny log) and what
the state directory holds right after the scan: the database, its WAL and the plaintext
cache.

    python bench/huge_message.py [--mib 100] [--dsh-mib 48]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.logs import human, session_dir, write_log

SCAN = """
import sys
from pathlib import Path
from dshkit.sessions import Scanner, Source
from dshkit.store import Store
with Store(Path(sys.argv[1])) as store:
    report = Scanner(store).scan([Source(sys.argv[2], Path(sys.argv[3]))])
    text = store.db.execute("SELECT text FROM human_messages").fetchone()[0]
    # Before the store is closed: its WAL is still there (closing folds it in).
    stored = sum(p.stat().st_size for p in store.state_dir.rglob("*") if p.is_file())
# This process's own high-water mark (ru_maxrss would carry over the parent's across exec).
with open("/proc/self/status") as status:
    rss = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(rss, stored, len(text), report.errors)
"""


def write_claude(root: Path, text: str) -> None:
    line = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "cwd": "/w",
        "timestamp": "2026-11-30T04:13:58.688Z",
    }
    path = root / "-w" / "0c0a0b0e-1111-4222-8333-000000000001.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(line) + b"\n")


def write_codex(root: Path, text: str) -> None:
    content = [{"type": "input_text", "text": text}]
    payload = {"type": "message", "role": "user", "content": content}
    line = {"timestamp": "2026-11-30T04:13:58.688Z", "type": "response_item", "payload": payload}
    day = root / "2026" / "11" / "30"
    day.mkdir(parents=True, exist_ok=True)
    name = "rollout-2026-11-30T04-13-58-0c0a0b0e-1111-4222-8333-000000000001.jsonl"
    (day / name).write_bytes(orjson.dumps(line) + b"\n")


def write_dsh(root: Path, text: str) -> None:
    write_log(session_dir(root, "s-1") / "session.v4.jsonl.zstd", [[human(1, text)]])


WRITERS = {"claude": write_claude, "codex": write_codex, "dsh": write_dsh}


def scan(tmp: Path, harness: str, chars: int) -> tuple[int, int, int, int, str]:
    """Peak RSS (KiB), the state directory's bytes, the log's bytes, the stored message's
    length, and the scan's errors."""
    root = tmp / f"{harness}-{chars}"
    # Distinct words, so that nothing but the cap can make the stored text small.
    text = " ".join(str(n) for n in range(chars // 7 + 1))[:chars]
    WRITERS[harness](root, text)
    del text
    log = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    state = tmp / f"state-{harness}-{chars}"
    done = subprocess.run(
        [sys.executable, "-c", SCAN, str(state), harness, str(root)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")},
    )
    rss, stored, length, errors = done.stdout.split(" ", 3)
    return int(rss), int(stored), log, int(length), errors.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=100, help="the message, in MiB (JSON lines)")
    parser.add_argument("--dsh-mib", type=int, default=48, help="DSH's message, in MiB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dshkit-bench-") as tmp:
        base, *_ = scan(Path(tmp), "claude", 100)
        print(f"a tiny message: max RSS {base / 1024:.1f} MiB")
        for harness, mib in (("claude", args.mib), ("codex", args.mib), ("dsh", args.dsh_mib)):
            rss, stored, log, length, errors = scan(Path(tmp), harness, mib * 1_000_000)
            print(
                f"{harness:6} a {mib} MB message ({log / 2**20:.1f} MiB log): max RSS "
                f"{rss / 1024:7.1f} MiB; state directory {stored / 2**20:6.2f} MiB; "
                f"stored message {length:,} characters; errors {errors}"
            )


if __name__ == "__main__":
    main()
