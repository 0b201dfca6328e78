"""Benchmark of the rule model (dshkit.graft.rule_classes): recall and precision by class on
sentences people write as standing rules for coding agents, and what becomes of sentences that
are not rules.

The corpus is tests/data/rules/: rules from public AGENTS.md, CLAUDE.md and Cursor rule files
(repository, path and licence in its README), Chinese and English rules and non-rules of our
own (questions, thanks, status, descriptions, tasks, one-shot steps, symptom reports).

A rule is *found* when the table classifies it as any rule class, *exact* when as its labelled
class; one the table takes for no class is *carried* verbatim in the card's maybe-a-rule block
(a sentence typed after the person's first message); one taken for something else (a task, a
step, a question …) is *lost*. Precision of a class: of the sentences put in it, how many are
rules (and how many of its own class).

    python bench/rule_detection.py [--list]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.rules import Sample, samples

from dshkit.graft.rule_classes import RULE, classify

CARRIED, LOST = "(maybe)", "(lost)"


def outcome(sample: Sample) -> tuple[str, str]:
    """(the class the table gave, or "(maybe)"; its kind, or "")."""
    found = classify(sample.text)
    return (CARRIED, "") if found is None else (found.name, found.kind)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list every miss")
    args = parser.parse_args()
    corpus = samples()
    for title, chosen in (
        ("public (AGENTS.md / CLAUDE.md / Cursor rules)", [s for s in corpus if ":" in s.origin]),
        ("ours (Chinese and English)", [s for s in corpus if ":" not in s.origin]),
        ("all", corpus),
    ):
        report(title, chosen, args.list)


def report(title: str, corpus: list[Sample], listing: bool) -> None:
    rules = [s for s in corpus if s.rule]
    others = [s for s in corpus if not s.rule]
    print(f"\n== {title}: {len(rules)} rules, {len(others)} non-rules")
    print(f"{'class':<12} {'n':>3} {'found':>7} {'exact':>7} {'maybe':>7} {'lost':>7}")
    by_label: dict[str, list[Sample]] = defaultdict(list)
    for sample in rules:
        by_label[sample.label].append(sample)
    totals: Counter[str] = Counter()
    misses = []
    for label in sorted(by_label):
        counts: Counter[str] = Counter()
        for sample in by_label[label]:
            name, kind = outcome(sample)
            counts["found"] += kind == RULE
            counts["exact"] += name == label
            counts["maybe"] += name == CARRIED
            if kind not in (RULE, ""):
                counts["lost"] += 1
                misses.append(f"  lost as {name}: {sample.text}")
            elif name == CARRIED:
                misses.append(f"  maybe: {sample.text}")
        totals.update(counts)
        n = len(by_label[label])
        print(
            f"{label:<12} {n:>3} {_pct(counts['found'], n)} {_pct(counts['exact'], n)} "
            f"{_pct(counts['maybe'], n)} {_pct(counts['lost'], n)}"
        )
    n = len(rules)
    print(
        f"{'all rules':<12} {n:>3} {_pct(totals['found'], n)} {_pct(totals['exact'], n)} "
        f"{_pct(totals['maybe'], n)} {_pct(totals['lost'], n)}"
        f"   kept (found or maybe): {_pct(totals['found'] + totals['maybe'], n).strip()}"
    )
    predicted: dict[str, list[Sample]] = defaultdict(list)
    for sample in corpus:
        name, kind = outcome(sample)
        if kind == RULE:
            predicted[name].append(sample)
    print(f"\n{'predicted':<12} {'n':>3} {'precision':>10} {'exact':>7}")
    for name in sorted(predicted):
        put = predicted[name]
        true = sum(s.rule for s in put)
        exact = sum(s.label == name for s in put)
        print(f"{name:<12} {len(put):>3} {_pct(true, len(put)):>10} {_pct(exact, len(put))}")
    put = [s for group in predicted.values() for s in group]
    print(f"{'all':<12} {len(put):>3} {_pct(sum(s.rule for s in put), len(put)):>10}")
    if others:
        print(f"\n{'non-rule':<12} {'n':>3} {'as rule':>8} {'maybe':>7} {'recognised':>11}")
        groups: dict[str, list[Sample]] = defaultdict(list)
        for sample in others:
            groups[sample.label].append(sample)
        for label in sorted(groups):
            got = [outcome(s) for s in groups[label]]
            as_rule = sum(kind == RULE for _, kind in got)
            maybe = sum(name == CARRIED for name, _ in got)
            n = len(got)
            print(
                f"{label:<12} {n:>3} {_pct(as_rule, n):>8} {_pct(maybe, n)} "
                f"{_pct(n - as_rule - maybe, n):>11}"
            )
            misses += [
                f"  non-rule {label} taken as {name}: {s.text}"
                for s, (name, kind) in zip(groups[label], got, strict=True)
                if kind == RULE
            ]
    if listing and misses:
        print("\n" + "\n".join(misses))


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:6.1f}%" if whole else "     -"


if __name__ == "__main__":
    main()
