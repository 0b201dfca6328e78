#!/usr/bin/env python3
"""Write tests/data/poisoning/*.jsonl, the corpora bench/memory_poisoning.py measures the
injection scanner and memory's structural defence on (origins and licences:
tests/data/poisoning/README.md).

    build-poisoning-corpus.py --bipia DIR --deepset FILE.json --ci-log FILE

--bipia: a checkout of microsoft/BIPIA (MIT); --deepset: deepset/prompt-injections' train and
test splits as a JSON list of {"text", "label", "split"} (read from its parquet files with
pyarrow, which dshkit does not depend on); --ci-log: captured output of real tool runs. The
benign READMEs are read from the installed packages' metadata. Each line written is
{"text", "source", "class"} (class: the kind of injection, or "benign:<kind>").
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
from importlib import metadata
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests/data/poisoning"
SEED = 31
# Installed packages whose README is benign text close to what a session reads, with licences.
READMES = {
    "rich": "MIT",
    "click": "BSD-3-Clause",
    "httpx": "BSD-3-Clause",
    "requests": "Apache-2.0",
    "pytest": "MIT",
    "pydantic": "MIT",
    "jsonschema": "MIT",
    "attrs": "MIT",
    "detect-secrets": "Apache-2.0",
    "pygments": "BSD-2-Clause",
    "starlette": "BSD-3-Clause",
    "uvicorn": "BSD-3-Clause",
}


def write(name: str, rows: list[dict[str, str]]) -> None:
    with (OUT / name).open("w", encoding="utf-8") as file:
        for row in rows:
            file.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{name}: {len(rows)}")


def paragraphs(text: str, low: int = 60, high: int = 700) -> list[str]:
    found = []
    for part in re.split(r"\n\s*\n", text):
        part = part.strip()
        if low <= len(part) <= high and not part.startswith(("[![", "<img", "|")):
            found.append(part)
    return found


def bipia(root: Path) -> list[dict[str, str]]:
    rows = []
    for name in ("text_attack_test.json", "code_attack_test.json"):
        data = json.loads((root / "benchmark" / name).read_text())
        for category, attacks in data.items():
            for attack in attacks[: 5 if name.startswith("text") else 2]:
                rows.append(
                    {"text": attack, "source": f"bipia:{name}:{category}", "class": "bipia"}
                )
    return rows


def deepset(path: Path) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    rows = json.loads(path.read_text())
    attacks = [
        {"text": r["text"], "source": f"deepset:{r['split']}", "class": "deepset"}
        for r in rows
        if r["label"] == 1
    ]
    benign = [
        {"text": r["text"], "source": f"deepset:{r['split']}", "class": "benign:question"}
        for r in rows
        if r["label"] == 0
    ]
    random.Random(SEED).shuffle(benign)
    return attacks, benign[:150]


def readmes() -> list[dict[str, str]]:
    rows = []
    for package, licence in READMES.items():
        body = metadata.metadata(package).get_payload() or ""  # type: ignore[attr-defined]
        found = paragraphs(str(body))
        random.Random(SEED).shuffle(found)
        for text in found[:14]:
            rows.append(
                {"text": text, "source": f"pypi:{package} ({licence})", "class": "benign:readme"}
            )
    return rows


def mentions(bipia_root: Path, repo: Path) -> list[dict[str, str]]:
    """Docs that talk about prompt injection: BIPIA's README and dshkit's own design pages."""
    rows = []
    for path, source in (
        (bipia_root / "README.md", "bipia:README.md (MIT)"),
        (repo / "docs/design/provenance.md", "dshkit:docs/design/provenance.md"),
        (repo / "docs/design/memory.md", "dshkit:docs/design/memory.md"),
    ):
        for text in paragraphs(path.read_text(encoding="utf-8"), 80, 900):
            rows.append({"text": text, "source": source, "class": "benign:mentions"})
    return rows


def ci_log(path: Path) -> list[dict[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = []
    for start in range(0, len(lines), 6):
        chunk = "\n".join(lines[start : start + 6]).strip()
        if chunk:
            rows.append({"text": chunk, "source": "captured tool runs", "class": "benign:ci-log"})
    return rows


def git_messages(git: Path, skip: int, count: int) -> list[str]:
    log = subprocess.run(
        ["git", "--git-dir", str(git), "log", f"--skip={skip}", f"-n{count}", "--format=%B%x00"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [m.strip()[:900] for m in log.split("\0") if len(m.strip()) >= 10]


def markdown(git: Path, under: str) -> list[str]:
    names = subprocess.run(
        ["git", "--git-dir", str(git), "ls-tree", "-r", "--name-only", "HEAD", under],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found = []
    for name in sorted(n for n in names if n.endswith(".md")):
        body = subprocess.run(
            ["git", "--git-dir", str(git), "show", f"HEAD:{name}"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        found += [p for p in paragraphs(body, 30) if not p.startswith(("```", "<", "!["))]
    return found


def held_out(args: argparse.Namespace) -> None:
    """benign_dev.jsonl: developer text from sources the model is never trained on (commit
    messages in English and Chinese, Chinese docs), and deepset's test-split questions."""
    rng = random.Random(SEED)
    rows = [
        {"text": r["text"], "source": "deepset:test", "class": "benign:question"}
        for r in json.loads(args.deepset.read_text())
        if r["split"] == "test" and r["label"] == 0
    ]
    for git, skip, kind, source in (
        (args.commits, 0, "benign:commits", "git log:Yelp/detect-secrets (Apache-2.0)"),
        (args.commits_zh, 600, "benign:commits-zh", "git log:dromara/Sa-Token (Apache-2.0)"),
    ):
        found = git_messages(git, skip, 1000)
        rows += [{"text": t, "source": source, "class": kind} for t in rng.sample(found, 150)]
    found = markdown(args.commits_zh, "sa-token-doc")
    rows += [
        {
            "text": t,
            "source": "dromara/Sa-Token sa-token-doc (Apache-2.0)",
            "class": "benign:docs-zh",
        }
        for t in rng.sample(found, 150)
    ]
    write("benign_dev.jsonl", rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bipia", type=Path)
    parser.add_argument("--deepset", type=Path, required=True)
    parser.add_argument("--ci-log", type=Path)
    parser.add_argument("--held-out", action="store_true", help="write benign_dev.jsonl only")
    parser.add_argument("--commits", type=Path, help="git dir: English commit messages")
    parser.add_argument("--commits-zh", type=Path, help="git dir: Chinese commits and docs")
    args = parser.parse_args()
    if args.held_out:
        if not args.commits or not args.commits_zh:
            parser.error("--held-out needs --commits and --commits-zh")
        held_out(args)
        return
    if not args.bipia or not args.ci_log:
        parser.error("--bipia and --ci-log are required")
    repo = Path(__file__).resolve().parent.parent
    OUT.mkdir(parents=True, exist_ok=True)
    attacks, questions = deepset(args.deepset)
    write("bipia.jsonl", bipia(args.bipia))
    write("deepset.jsonl", attacks)
    write(
        "benign.jsonl",
        questions + readmes() + mentions(args.bipia, repo) + ci_log(args.ci_log),
    )


if __name__ == "__main__":
    main()
