"""The rule detection corpus (tests/data/rules/, its README says where each sentence comes
from): sentences people write as standing rules for coding agents, labelled with their class,
and sentences that are not rules (questions, thanks, status, descriptions, tasks, steps)."""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from .paths import DATA

CORPUS = DATA / "rules"


@dataclass(frozen=True)
class Sample:
    text: str
    rule: bool  # a standing rule
    label: str  # its class (a rule class of rule_classes.TABLE, or what else it is)
    origin: str  # "owner/repo:path", or ours


def samples() -> list[Sample]:
    found = []
    for name in ("public.jsonl", "own.jsonl"):
        for line in (CORPUS / name).read_bytes().splitlines():
            row = orjson.loads(line)
            origin = f"{row['repo']}:{row['path']}" if "repo" in row else row["from"]
            found.append(Sample(row["text"], row["rule"], row["class"], origin))
    return found
