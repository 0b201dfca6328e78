"""The delivery gate against model-written pages it never saw: per-verdict precision and
recall, the confusions, and the time per page.

The pages are real model outputs of a public benchmark (tests/data/gate/corpus/README.md:
origin, commit, licence, how they were labelled); their labels are ours, by looking at each
page in a plain browser. The pages themselves are not in this repository: the first run takes
them from a local clone of their repository at the recorded commit (`--repo`) into the bench
cache, later runs read the cache. No network: they load nothing from outside.

A label is what a person would call the page: `ok`, `page-error` (an uncaught error), `blank`
(the scene never shows: `blank-canvas` and `blank-canvas-0` both count), `unresponsive`, or
the gate's other verdict names (`needs-gesture`, `needs-network`: no failure, each its own
class; these pages load nothing from a network, so `needs-network` would be a mistake). A
false failure is the costly mistake (a whole turn of rework for a good page): `ok`'s recall
says how often a good page went through.

    python bench/gate_corpus.py --repo PATH/kcores-llm-arena [--budget 12] [--limit N]
        [--only TEXT]... [--label LABEL]...
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from dshkit.gate.judge import judge_files

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "tests" / "data" / "gate" / "corpus" / "labels.json"
CACHE = ROOT / ".cache" / "gate-corpus"
BLANK = {"blank-canvas": "blank", "blank-canvas-0": "blank"}


def pages(repo: Path | None) -> tuple[list[Path], list[str]]:
    """The labelled pages in the cache (taken from `repo` at the recorded commit when
    missing), and their labels."""
    known = json.loads(LABELS.read_text())
    commit, folder = known["commit"], CACHE / "kcores"
    files, labels = [], []
    for page in known["pages"]:
        path = folder / page["path"]
        if not path.is_file():
            if repo is None:
                sys.exit(f"{path} is not cached: give --repo, a clone of {known['origin']}")
            shown = subprocess.run(
                ["git", "-C", str(repo), "show", f"{commit}:{page['path']}"],
                capture_output=True,
                check=True,
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(shown.stdout)
        files.append(path)
        labels.append(page["label"])
    return files, labels


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repo", type=Path, default=None, help="a clone of the pages' repository")
    parser.add_argument("--budget", type=float, default=12.0, help="seconds per page (the hook's)")
    parser.add_argument("--limit", type=int, default=0, help="judge the first N pages only")
    parser.add_argument(
        "--only", action="append", default=[], help="judge pages whose path holds this text"
    )
    parser.add_argument(
        "--label", action="append", default=[], help="judge pages labelled so (ok, blank…)"
    )
    args = parser.parse_args()
    files, labels = pages(args.repo)
    kept = [
        (f, x)
        for f, x in zip(files, labels, strict=True)
        if (not args.only or any(o in str(f) for o in args.only))
        and (not args.label or x in args.label)
    ]
    if not kept:
        sys.exit("no labelled page matches --only and --label")
    files, labels = [f for f, _ in kept], [x for _, x in kept]
    if args.limit:
        files, labels = files[: args.limit], labels[: args.limit]
    said: list[str] = []
    on_page: list[float] = []
    wall: list[float] = []
    with tempfile.TemporaryDirectory() as shots:
        for file, label in zip(files, labels, strict=True):
            started = time.monotonic()
            (verdict,) = judge_files([file], args.budget, Path(shots))
            wall.append(time.monotonic() - started)
            on_page.append(verdict.elapsed_ms / 1000)
            name = BLANK.get(verdict.verdict, verdict.verdict)
            said.append(name)
            mark = "  " if name == label else "✗ "
            print(f"{mark}{label:12} {verdict.verdict:15} {verdict.elapsed_ms / 1000:5.1f} s  "
                  f"{file.name}")  # fmt: skip
    classes = sorted(set(labels) | set(said))
    print(f"\n{len(files)} pages, budget {args.budget:g} s")
    for cls in classes:
        tp = sum(1 for x, y in zip(labels, said, strict=True) if x == y == cls)
        predicted, actual = said.count(cls), labels.count(cls)
        precision = f"{tp / predicted:.2f}" if predicted else "  - "
        recall = f"{tp / actual:.2f}" if actual else "  - "
        print(
            f"  {cls:14} precision {precision} ({tp}/{predicted})  recall {recall} ({tp}/{actual})"
        )
    confused = Counter((x, y) for x, y in zip(labels, said, strict=True) if x != y)
    for (label, judged), n in confused.most_common():
        print(f"  labelled {label}, judged {judged}: {n}")
    agree = sum(1 for x, y in zip(labels, said, strict=True) if x == y)
    print(f"  agreement {agree}/{len(files)}")
    print(
        f"time per page: on the page median {statistics.median(on_page):.1f} s, max "
        f"{max(on_page):.1f} s; whole call (browser start included) median "
        f"{statistics.median(wall):.1f} s, max {max(wall):.1f} s"
    )


if __name__ == "__main__":
    main()
