"""What the friction-signal tests share: the counts of every signal with some given, and a
session of failing tool calls."""

from __future__ import annotations

from pathlib import Path

from dshkit.profile.signals import SIGNALS

from .logs import Log, session_dir, write_log


def only(**expected: int) -> dict[str, int]:
    return {name: expected.get(name, 0) for name in SIGNALS}


def failing_session(root: Path, name: str, failures: int) -> Path:
    log = Log()
    log.turn_start()
    log.human("go")
    for n in range(failures):
        log.call("write", f"{name}{n}")
        log.result(f"{name}{n}", 100, failed=True, code="X")
    path = session_dir(root, name) / "session.v4.jsonl.zstd"
    write_log(path, [[e] for e in log.events], session_id=name)
    return path
