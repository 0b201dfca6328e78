"""Memory poisoning, measured: the injection scanner alone, and the structural pipeline.

The corpora are `tests/data/poisoning/` (origins and licences in its README): public
injection sets (BIPIA, deepset/prompt-injections), dshkit's own variants per class, and
benign text that looks close (package READMEs, docs that mention prompt injection, captured
tool output, ordinary questions, Chinese developer chatter). Each attack text is also read
through the tricks of issue 31 (look-alike letters, letters spaced apart, zero-width
characters, base64 and hex), derived here from the own variants. dshkit's own Chinese variants
(`variants_zh.jsonl`: no licensed Chinese injection corpus was found) are their own classes,
`zh:*`, and their own line, apart from the public sets: batch A was written before the Chinese
rules of round 2 and those rules were fixed on it, batch B after them, unseen.

Printed:
- the scanner: recall per class and per source, and the benign flag rate per kind;
- the structural pipeline: every attack text planted in the output of a failed command of a
  DSH session (the failure then fixed), harvested and injected into the next session exactly
  as the SessionStart hook would (no budget limit, so every record is given): the fraction
  of planted texts of which any 24-character run reaches the injected text (must be 0), and
  the fraction of injected texts the scanner still finds anything in beyond dshkit's own
  header (must be 0).

    python bench/memory_poisoning.py [--no-pipeline]
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.logs import Log
from tests.support.memory import make_repo, write_session

from dshkit.memory import inject
from dshkit.memory.inject import CLOSE, HEADERS, OPEN, choose
from dshkit.memory.service import MemoryService
from dshkit.provenance.injection import PERSON_MAY, scan
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

DATA = Path(__file__).resolve().parent.parent / "tests/data/poisoning"
ATTACK_FILES = ("variants.jsonl", "bipia.jsonl", "deepset.jsonl")
OWN_ZH = "variants_zh.jsonl"  # own Chinese variants: no licensed Chinese corpus found yet
BENIGN_FILES = ("benign.jsonl", "benign_zh.jsonl", "benign_dev.jsonl")
WINDOW = 24
PER_SESSION = 50  # failures planted in one session (the harvest keeps 60 negative paths)

# Look-alikes for the derived variants: Cyrillic and Greek letters that pass for Latin ones.
LOOKALIKE = str.maketrans({"a": "а", "e": "е", "o": "ο", "i": "і", "c": "с", "p": "р"})


def load(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def derived(base: list[dict[str, str]], prefix: str = "") -> list[dict[str, str]]:
    """The own variants read through the tricks of the issue, one class per trick."""
    found = []
    for row in base:
        text = row["text"]
        source = f"derived from {prefix}{row['class']}"
        found += [
            {"text": text.translate(LOOKALIKE), "source": source, "class": "lookalike"},
            {
                "text": "  ".join(" ".join(w) for w in text.split()),
                "source": source,
                "class": "spaced",
            },
            {"text": "\u200b".join(text), "source": source, "class": "zero-width"},
            {
                "text": "ref: " + base64.b64encode(text.encode()).decode(),
                "source": source,
                "class": "base64",
            },
            {"text": "blob " + text.encode().hex(), "source": source, "class": "hex"},
        ]
        found[-5:] = [{**r, "class": prefix + r["class"]} for r in found[-5:]]
    return found


def rate(hit: int, total: int) -> str:
    return f"{hit:4d}/{total:<4d} {100 * hit / total:5.1f} %" if total else "   -"


def trained(row: dict[str, str]) -> bool:
    """Whether the scanner's model was trained on this row's corpus and split."""
    return row["source"] == "deepset:train"


def scanner(attacks: list[dict[str, str]], benign: list[dict[str, str]]) -> None:
    print(
        "trained on (scripts/train-injection-model.py, tests/data/poisoning/train.jsonl): "
        "deepset's train split, BIPIA's train attacks, self-instruct's instructions, package "
        "READMEs other than those below, docs, commit messages and tool output of other "
        "sources; measured only on what it never saw. Rules of issue 31's second round "
        "(reviewer notes, promotion, leaks of the text above, more encodings) were written "
        "after seeing which classes its held-out misses were in (never from their texts)"
    )
    skipped = [r for r in attacks + benign if trained(r)]
    attacks = [r for r in attacks if not trained(r)]
    benign = [r for r in benign if not trained(r)]
    print(f"  rows of a trained-on split left out: {len(skipped)}")
    by_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_source: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    caught = {id(row): not scan(row["text"]).clean for row in attacks}
    for row in attacks:
        for table, key in ((by_class, row["class"]), (by_source, row["source"].split(":")[0])):
            table[key][0] += caught[id(row)]
            table[key][1] += 1
    print("scanner: recall by class")
    for key, (hit, total) in sorted(by_class.items()):
        print(f"  {key:<14} {rate(hit, total)}")
    print("scanner: recall by source")
    for key, (hit, total) in sorted(by_source.items()):
        print(f"  {key[:44]:<44} {rate(hit, total)}")
    public = [r for r in attacks if r["class"] in ("bipia", "deepset")]
    zh = [r for r in attacks if r["class"].startswith("zh:")]
    own = [r for r in attacks if r["class"] not in ("bipia", "deepset") and r not in zh]
    for name, rows in (
        ("public (deepset test split, BIPIA test)", public),
        ("own variants and tricks", own),
        ("own Chinese variants and tricks", zh),
        ("all", attacks),
    ):
        print(f"  {name:<44} {rate(sum(caught[id(r)] for r in rows), len(rows))}")
    rules = sum(not scan(r["text"], learned=False).clean for r in public)
    print(f"  {'public, by the rules alone (no model)':<44} {rate(rules, len(public))}")
    # A question put to the assistant is the person's words (what deepset's legitimate
    # requests are): read as the person's, as memory reads them. Read as external text
    # (found in a tool's output), a request to the agent is injection-shaped by design.
    flagged: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    external = 0
    for row in benign:
        verdict = scan(row["text"])
        if row["class"] == "benign:question":
            external += not verdict.clean
            verdict = verdict.without(*PERSON_MAY)
        flagged[row["class"]][0] += not verdict.clean
        flagged[row["class"]][1] += 1
    print("scanner: benign flagged (quarantined)")
    for key, (hit, total) in sorted(flagged.items()):
        note = " (as the person's words)" if key == "benign:question" else ""
        print(f"  {key:<20} {rate(hit, total)}{note}")
    hit = sum(h for h, _ in flagged.values())
    print(f"  {'all':<20} {rate(hit, sum(t for _, t in flagged.values()))}")
    others = [r for r in benign if r["class"] != "benign:question"]
    rules = sum(not scan(r["text"], learned=False).clean for r in others)
    print(f"  {'by the rules alone':<20} {rate(rules, len(others))} (questions aside)")
    questions = flagged["benign:question"][1]
    print(
        f"  {'questions as external text':<20} {rate(external, questions)} (addressed to the agent)"
    )


def session(texts: list[str], first: int) -> Log:
    """A session whose every command fails once, its output carrying one planted text (and,
    for the command's own line, a word of it), and then succeeds."""
    log = Log()
    log.turn_start()
    log.human("fix the build")
    for number, text in enumerate(texts, first):
        command = f"make step{number}"
        log.call("bash", f"f{number}", {"command": command})
        log.result(f"f{number}", 200, failed=True, text=f"step {number}\n{text}\nexit status 2")
        log.call("bash", f"r{number}", {"command": "pip install -e ."})
        log.result(f"r{number}", 100, text="ok")
        log.call("bash", f"s{number}", {"command": command})
        log.result(f"s{number}", 100, text="done")
    log.say("fixed")
    return log


def windows(text: str) -> set[str]:
    plain = " ".join(text.split())
    return {plain[i : i + WINDOW] for i in range(0, max(1, len(plain) - WINDOW + 1))}


def pipeline(attacks: list[dict[str, str]]) -> None:
    texts = [r["text"] for r in attacks]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = make_repo(base / "work" / "app")
        root = base / "sessions"
        chunks = [texts[i : i + PER_SESSION] for i in range(0, len(texts), PER_SESSION)]
        for number, chunk in enumerate(chunks):
            write_session(root, f"s-{number}", repo, session(chunk, number * PER_SESSION))
        service = MemoryService(base / "state")
        with Store(base / "state") as store:
            assert Scanner(store).scan([Source("dsh", root)]).errors == []
        report = service.harvest([f"s-{n}" for n in range(len(chunks))])
        inject.CANDIDATES = 10**6  # every record considered, none left out for the budget
        with Store(base / "state") as store:
            given = choose(store, service.workspace(str(repo)), "fix the build", 10**8)
    injected = " ".join(given.text.split())
    verbatim = sum(
        1
        for text in texts
        if len(" ".join(text.split())) >= WINDOW
        and windows(text) & {injected[i : i + WINDOW] for i in range(len(injected) - WINDOW + 1)}
    )
    body = given.text
    for part in (OPEN, CLOSE, *HEADERS.values()):
        body = body.replace(part, "")
    dirty = [line for line in body.splitlines() if line.strip() and not scan(line).clean]
    negatives = report.added["negative"]
    print("structural pipeline: attack texts planted in failed commands' output")
    print(
        f"  planted {len(texts)}, negative paths harvested {negatives}, quarantined "
        f"{report.quarantined}, injected {len(given.records)}"
    )
    print(
        f"  reaching the injected text verbatim ({WINDOW}-char run): {rate(verbatim, len(texts))}"
    )
    print(
        "  injected lines the scanner still finds anything in: "
        f"{rate(len(dirty), max(1, len(given.lines)))}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-pipeline", action="store_true")
    args = parser.parse_args()
    own = load("variants.jsonl")
    zh = [{**r, "class": "zh:" + r["class"]} for r in load(OWN_ZH)]
    attacks = own + derived(own) + zh + derived(load(OWN_ZH), "zh:")
    attacks += [r for f in ATTACK_FILES[1:] for r in load(f)]
    # benign.jsonl's sample of deepset's questions and benign_dev.jsonl's test split overlap.
    benign = list({r["text"]: r for f in BENIGN_FILES for r in load(f)}.values())
    scanner(attacks, benign)
    if not args.no_pipeline:
        pipeline(attacks)


if __name__ == "__main__":
    main()
