"""The guard's labelled corpora (tests/data/guard/): commands by class, each labelled with what
it is (destructive, unknown: worth a question, safe), and a thousand everyday agent commands,
all judged as Claude Code's Bash tool on Linux hands them to the hook (the tests and
bench/guard_accuracy.py read them here)."""

from __future__ import annotations

import json
from pathlib import Path

from dshkit.guard.service import classify_sent

DATA = Path(__file__).resolve().parent.parent / "data" / "guard"
CLASSES = ("secrets", "code", "fanout", "remote", "lookalikes", "batch", "loops")
LABELS = ("destructive", "unknown", "safe")
WORK, HOME = "/home/dev/proj", "/home/dev"


class Case:
    """One labelled command of a class corpus."""

    __slots__ = ("command", "label", "origin")

    def __init__(self, command: str, label: str, origin: str) -> None:
        if label not in LABELS:
            raise ValueError(f"{origin}: label {label!r} is not one of {', '.join(LABELS)}")
        self.command = command
        self.label = label
        self.origin = origin

    def __repr__(self) -> str:
        return f"{self.label}: {self.command!r}"


def cases(name: str) -> list[Case]:
    """The labelled commands of one class corpus, `tests/data/guard/NAME.jsonl`."""
    path = DATA / f"{name}.jsonl"
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            found.append(Case(row["command"], row["label"], f"{path.name}:{number}"))
    return found


def everyday() -> list[str]:
    """The everyday commands an agent runs (tests/data/guard/everyday.txt), one a line."""
    text = (DATA / "everyday.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def judged(command: str) -> str:
    """The guard's risk for a command sent by Claude Code's Bash tool in WORK."""
    return classify_sent(command, "Bash", WORK, home=HOME).risk


def reason(command: str) -> str:
    return classify_sent(command, "Bash", WORK, home=HOME).reason
