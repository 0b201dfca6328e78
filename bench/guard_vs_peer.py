"""The command guard side by side with a real peer, cc-safety-net (npm), over our own corpora:
where the two disagree, by class, and who is right by the case's label.

The peer is installed from the npm registry into `.cache/bench-peer/` (a bench's tool, never
a dependency of dshkit) and called through its published API (`checkCommand` of
`cc-safety-net/api`) by a small Node driver, its HOME a scratch directory (its own settings
and logs go there). Both judge each line for the same workspace and home. Our answer is the
balanced mode's (the default): allow, or it stops the command (ask or deny); the peer's is
allow or deny.

The corpora: every `tests/data/guard/**/*.jsonl` and `tests/data/guard_peer/*.jsonl` (files
found by glob, so a new corpus joins without a change here), one case a line: `command`
(or `cmd`), a label (`label`, `expected` or `risk`: destructive, unknown or safe; absent: no
one is right) and a class (`class` or `category`; else the file's name). A disagreement is
right for the one that matches the label: a destructive or unknown line should be stopped, a
safe one let through. docs/guard.md keeps the table of the deliberate ones.

    python bench/guard_vs_peer.py [--show 10] [--class NAME] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.guard_corpus import ROOT, STOPS, Case, corpora

PEER, VERSION = "cc-safety-net", "2.4.5"
CACHE = ROOT / ".cache" / "bench-peer"
DRIVER = """
import { checkCommand } from "cc-safety-net/api";
import { createInterface } from "node:readline";
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { command, cwd } = JSON.parse(line);
  let found;
  try { found = checkCommand({ command, cwd }); }
  catch (error) { found = { kind: "error", reason: String(error) }; }
  process.stdout.write(JSON.stringify(found) + "\\n");
}
"""


def install() -> Path:
    """The peer's package in the cache, installed from npm when it is not there yet."""
    package = CACHE / "node_modules" / PEER / "package.json"
    if not package.exists() or json.loads(package.read_text())["version"] != VERSION:
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(CACHE),
             f"{PEER}@{VERSION}"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    driver = CACHE / "driver.mjs"
    driver.write_text(DRIVER)
    return driver


def peer(cases: list[Case], driver: Path, home: Path, work: Path) -> list[tuple[str, str]]:
    """The peer's (kind, reason) for each case."""
    feed = "".join(json.dumps({"command": c.command, "cwd": str(work)}) + "\n" for c in cases)
    env = {**os.environ, "HOME": str(home), "SAFETY_NET_HOME": str(home / ".cc-safety-net")}
    done = subprocess.run(
        ["node", str(driver)], input=feed, capture_output=True, text=True, env=env,
        cwd=CACHE, check=True,
    )  # fmt: skip
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if len(answers) != len(cases):
        raise SystemExit(f"the peer answered {len(answers)} of {len(cases)} cases: {done.stderr}")
    return [(str(a.get("kind")), str(a.get("ruleId") or a.get("reason") or "")) for a in answers]


def ours(cases: list[Case], home: Path, work: Path) -> list[tuple[str, str]]:
    """Our balanced decision and reason for each case."""
    from dshkit.guard import classify

    found = []
    for case in cases:
        judged = classify(case.command, case.shell, str(work), home=str(home))
        found.append((judged.decision("balanced"), judged.reason))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", type=int, default=10, help="disagreements shown per class")
    parser.add_argument("--class", dest="only", default=None, help="one class only")
    parser.add_argument("--json", action="store_true", help="every disagreement as JSON lines")
    args = parser.parse_args()
    cases = [c for c in corpora() if args.only in (None, c.cls)]
    if not cases:
        raise SystemExit("no cases: tests/data/guard_peer/ or tests/data/guard/ has none")
    driver = install()
    with tempfile.TemporaryDirectory(prefix="guard-peer-") as scratch:
        home = Path(scratch) / "home" / "dev"
        work = home / "proj"
        work.mkdir(parents=True)
        started = time.perf_counter()
        mine = ours(cases, home, work)
        ours_s = time.perf_counter() - started
        started = time.perf_counter()
        theirs = peer(cases, driver, home, work)
        peer_s = time.perf_counter() - started
    table: dict[str, Counter[str]] = defaultdict(Counter)
    split: dict[str, list[dict[str, object]]] = defaultdict(list)
    for case, (decision, why), (kind, rule) in zip(cases, mine, theirs, strict=True):
        we_stop, they_stop = decision != "allow", kind != "allow"
        row = table[case.cls]
        row["cases"] += 1
        if case.label is not None:
            row["ours right"] += we_stop == STOPS[case.label]
            row["peer right"] += they_stop == STOPS[case.label]
        if we_stop == they_stop:
            continue
        row["only ours stops" if we_stop else "only peer stops"] += 1
        right = None
        if case.label is not None:
            right = "ours" if we_stop == STOPS[case.label] else "peer"
        split[case.cls].append(
            {"class": case.cls, "command": case.command, "label": case.label, "ours": decision,
             "oursWhy": why, "peer": kind, "peerWhy": rule, "right": right,
             "source": case.source}
        )  # fmt: skip
    if args.json:
        for rows in split.values():
            for found in rows:
                print(json.dumps(found, ensure_ascii=False))
        return
    print(
        f"{len(cases)} cases; ours {ours_s * 1000:.0f} ms, {PEER} {VERSION} {peer_s * 1000:.0f} ms"
    )
    print(f"{'class':<14}{'cases':>6}{'ours right':>12}{'peer right':>12}"
          f"{'only ours stops':>17}{'only peer stops':>17}")  # fmt: skip
    for cls in sorted(table):
        row = table[cls]
        print(f"{cls:<14}{row['cases']:>6}{row['ours right']:>12}{row['peer right']:>12}"
              f"{row['only ours stops']:>17}{row['only peer stops']:>17}")  # fmt: skip
    for cls in sorted(split) if args.show else ():
        print(f"\n{cls}:")
        for found in split[cls][: args.show]:
            who = f"right: {found['right']}" if found["right"] else "unlabelled"
            print(f"  {found['command']!r} [{found['label']}; {who}]")
            print(f"    ours {found['ours']}: {found['oursWhy']}")
            print(f"    peer {found['peer']}: {found['peerWhy']}")


if __name__ == "__main__":
    main()
