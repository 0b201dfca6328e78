"""Benchmark of secret redaction: recall by kind, false positives on benign text, and time.

The corpus is tests/data/secrets/ (made-up values of our own; detect-secrets' and gitleaks'
public test fixtures, origin and licence in its README) with what tests/support/secrets.py
makes (image data in base64, every paragraph of this repository's docs, every line of the
real session fixtures). A secret case is found when none of its values is left in the redacted
text and its kind is named; a benign text is a false positive when anything is redacted.

`--entropy` also measures what was left out: detect-secrets' two high-entropy plugins, run on
the same corpus as its file scan runs them (quoted strings) and as its ad hoc scan does
(any string), so the choice can be checked. Times: texts of about --mib MiB, typical and
adversarial (one long line; many candidates on one line).

    python bench/secret_redaction.py [--entropy] [--mib 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.secrets import NOT_COVERED, Benign, benign, image_data, secrets

from dshkit.provenance.secrets import redact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entropy", action="store_true", help="measure the high-entropy plugins")
    parser.add_argument("--mib", type=float, default=1.0, help="size of the timed texts")
    args = parser.parse_args()
    started = time.perf_counter()
    redact("warm up")  # detect-secrets is imported on the first call
    print(f"first call (imports detect-secrets): {(time.perf_counter() - started) * 1000:.0f} ms")
    texts = benign()
    recall()
    false_positives(texts)
    if args.entropy:
        entropy(texts)
    timing(int(args.mib * 2**20))


def recall() -> None:
    found: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    elsewise: Counter[str] = Counter()  # gone, under another kind's marker
    for case in secrets():
        origin = "own" if case.origin == "own" else "public"
        result = redact(case.text)
        total[case.kind, origin] += 1
        if not any(v in result.text for v in case.values):
            if case.kind in result.found:
                found[case.kind, origin] += 1
            else:
                elsewise[case.kind] += 1
    print("\nrecall by kind (found / cases; own cases, public fixtures)")
    for kind in sorted({kind for kind, _ in total}):
        cells = [
            f"{found[kind, origin]}/{total[kind, origin]}" if total[kind, origin] else "-"
            for origin in ("own", "public")
        ]
        note = "  (left out on purpose)" if kind in NOT_COVERED else ""
        if elsewise[kind]:
            note += f"  ({elsewise[kind]} redacted as another kind)"
        print(f"  {kind:28} own {cells[0]:>5}   public {cells[1]:>5}{note}")
    covered = [k for k in total if k[0] not in NOT_COVERED]
    hit, cases = sum(found[k] for k in covered), sum(total[k] for k in covered)
    print(f"  {'all kinds covered':28} {hit}/{cases} = {hit / cases:.1%}")


def false_positives(texts: list[Benign]) -> None:
    flagged: Counter[str] = Counter()
    total: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for text in texts:
        total[text.category] += 1
        result = redact(text.text)
        if result.found:
            flagged[text.category] += 1
            examples.setdefault(text.category, f"{result.found[0]}: {text.text[:70]!r}")
    print("\nfalse positives on benign text (texts with anything redacted / texts)")
    for category in sorted(total, key=lambda c: (c.startswith("public"), c)):
        example = f"  e.g. {examples[category]}" if category in examples else ""
        print(f"  {category:22} {flagged[category]:>4}/{total[category]:<5}{example}")
    all_flagged, all_texts = sum(flagged.values()), sum(total.values())
    print(f"  {'all':22} {all_flagged:>4}/{all_texts:<5} = {all_flagged / all_texts:.2%}")


def entropy(texts: list[Benign]) -> None:
    """What detect-secrets' high-entropy plugins would add: secrets found that we miss, and
    benign texts they flag, quoted strings only and any string."""
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
        HighEntropyStringsPlugin,
    )

    plugins: list[HighEntropyStringsPlugin] = [Base64HighEntropyString(), HexHighEntropyString()]

    def flags(text: str, eager: bool) -> bool:
        for line in text.splitlines():
            for plugin in plugins:
                if eager:
                    with plugin.non_quoted_string_regex(is_exact_match=False):
                        found = list(plugin.analyze_string(line))
                else:
                    found = list(plugin.analyze_string(line))
                if any(plugin.calculate_shannon_entropy(v) > plugin.entropy_limit for v in found):
                    return True
        return False

    print("\nthe high-entropy plugins (left out), as detect-secrets runs them")
    for eager, how in ((False, "quoted strings"), (True, "any string")):
        missed = [c for c in secrets() if not _found(c.kind, c.text, c.values)]
        gained = sum(flags(c.text, eager) for c in missed)
        flagged: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for text in texts:
            total[text.category] += 1
            flagged[text.category] += flags(text.text, eager)
        worst = ", ".join(
            f"{c} {flagged[c]}/{total[c]}" for c in sorted(total) if flagged[c] and total[c]
        )
        print(f"  {how}: would find {gained} of the {len(missed)} secret cases we miss")
        print(f"    and flag {sum(flagged.values())}/{sum(total.values())} benign texts: {worst}")


def _found(kind: str, text: str, values: tuple[str, ...]) -> bool:
    result = redact(text)
    return kind in result.found and not any(v in result.text for v in values)


def timing(size: int) -> None:
    rng = random.Random(30)
    words = "the tests fail again 修复 测试 请用中文 src/app.py line 42 password: see vault"
    vocabulary = words.split(" ")
    cases: dict[str, Callable[[], str]] = {
        "prose, lines of ~80 chars": lambda: "\n".join(
            " ".join(rng.choice(vocabulary) for _ in range(12)) for _ in range(size // 80)
        ),
        "image data, one line": lambda: image_data(size * 3 // 4),
        "Chinese, one line": lambda: "这是一段很长的中文说明" * (size // 11),
        "'//' repeated, one line": lambda: "//" * (size // 2),
        "URLs with passwords, one line": lambda: " ".join(
            f"https://u{i}:Pw{i}x@h.example/{i}" for i in range(size // 32)
        ),
        "BEGIN PRIVATE KEY, no END": lambda: "-----BEGIN PRIVATE KEY-----\n" * (size // 28),
    }
    print(f"\ntime to redact a text of about {size / 2**20:.1f} MiB")
    for name, make in cases.items():
        text = make()
        started = time.perf_counter()
        result = redact(text)
        took = time.perf_counter() - started
        print(
            f"  {name:30} {len(text):>10,} chars {took * 1000:8.0f} ms "
            f"({took * 1e9 / len(text):5.0f} ns/char, {len(result.found):,} redacted)"
        )
    message = "用这个 key：sk-" + "3f9a1b2c4d5e6f70" * 2 + "，然后跑 make fast\n" * 20
    runs = 200
    started = time.perf_counter()
    for _ in range(runs):
        redact(message)
    took = (time.perf_counter() - started) / runs
    print(f"  a typical message ({len(message)} chars): {took * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
