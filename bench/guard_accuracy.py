"""Benchmark of the command guard's judgement: the confusion matrix of each class corpus
(labelled destructive, unknown or safe, against what the guard judged), and the share of a
thousand everyday agent commands judged anything but safe.

The corpora are tests/data/guard/ (their origin in its README): secrets leaving the machine,
code that deletes, fan-out runners, remote and admin tools, look-alikes, and everyday commands
(builds, tests, greps, git, package managers, containers, clusters). A destructive command
judged unknown is asked about; judged safe, it runs: the miss that counts.

    python bench/guard_accuracy.py [--list]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.guard_corpora import CLASSES, LABELS, cases, everyday, judged, reason


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list every command judged off")
    args = parser.parse_args()
    total: Counter[tuple[str, str]] = Counter()
    for name in CLASSES:
        matrix: Counter[tuple[str, str]] = Counter()
        misses = []
        for case in cases(name):
            got = judged(case.command)
            matrix[case.label, got] += 1
            if got != case.label:
                misses.append((case, got))
        total.update(matrix)
        table(name, matrix)
        if args.list:
            for case, got in misses:
                print(f"   {case.label} -> {got}: {case.command!r}  [{reason(case.command)}]")
    table("all classes", total)
    commands = everyday()
    risks: Counter[str] = Counter()
    odd = []
    for command in commands:
        got = judged(command)
        risks[got] += 1
        if got != "safe":
            odd.append((command, got))
    size = len(commands)
    print(f"\n== everyday: {size} commands")
    for risk in LABELS:
        print(f"  {risk:<12} {risks[risk]:>5}  {100 * risks[risk] / size:6.2f} %")
    if args.list:
        for command, got in odd:
            print(f"   {got}: {command!r}  [{reason(command)}]")


def table(name: str, matrix: Counter[tuple[str, str]]) -> None:
    size = sum(matrix.values())
    print(f"\n== {name}: {size} commands (rows: labelled, columns: judged)")
    print(f"  {'':<12}" + "".join(f"{label:>13}" for label in LABELS))
    for label in LABELS:
        print(f"  {label:<12}" + "".join(f"{matrix[label, got]:>13}" for got in LABELS))
    missed = matrix["destructive", "safe"]
    alarms = matrix["safe", "destructive"] + matrix["safe", "unknown"]
    print(f"  destructive judged safe: {missed}; safe judged unknown or destructive: {alarms}")


if __name__ == "__main__":
    main()
