"""The guard's labelled command corpora, read by glob: every `tests/data/guard/**/*.jsonl` and
`tests/data/guard_peer/*.jsonl` (a new file joins without a change here), for the benches
(`bench/guard_vs_peer.py`, `bench/guard_explain.py`) and the tests alike.

One case a line: `command` (or `cmd`), a label (`label`, `expected` or `risk`: destructive,
unknown or safe; another or none: unlabelled), a class (`class` or `category`; else the file's
name) and a shell (`shell`, bash unless given).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
CORPORA = ("tests/data/guard/**/*.jsonl", "tests/data/guard_peer/*.jsonl")
STOPS = {"destructive": True, "unknown": True, "safe": False}  # should the guard stop it


@dataclass(frozen=True)
class Case:
    command: str
    label: str | None
    cls: str
    shell: str
    source: str


def corpora(patterns: tuple[str, ...] = CORPORA, root: Path = ROOT) -> list[Case]:
    """Every case of every corpus file; ValueError names a line without a command."""
    found: list[Case] = []
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                case = json.loads(line)
                command = case.get("command", case.get("cmd"))
                if not isinstance(command, str):
                    raise ValueError(f"{path}:{number}: no string command")
                label = case.get("label", case.get("expected", case.get("risk")))
                cls = str(case.get("class") or case.get("category") or path.stem)
                shell = str(case.get("shell", "bash"))
                source = f"{path.relative_to(root)}:{number}"
                found.append(Case(command, label if label in STOPS else None, cls, shell, source))
    return found
