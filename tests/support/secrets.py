"""The secret redaction corpus: secrets a person pastes and benign text that looks like them.

Read from tests/data/secrets/ (its README says where each case comes from and under which
licence), with what is too big to keep there made here, the same on every run: image data in
base64 (one a long paste), the repository's own docs split into paragraphs (real prose, paths
and commands), and every line of the real session fixtures.
"""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass

import orjson

from .paths import DATA, FIXTURES, REPO

CORPUS = DATA / "secrets"
# Kinds no detector of ours covers, on purpose: detect-secrets' high-entropy plugins are left
# out (they flag hashes and ids), Stripe's test-mode keys are not in its Stripe pattern. Their
# cases are measured (recall by kind), not required.
NOT_COVERED = frozenset({"Base64 High Entropy String", "Hex High Entropy String"})
# Public cases of covered kinds that are not redacted, each with why (a test checks they still
# are not: a detector that learns one moves it out of here).
KNOWN_MISSES = {
    "https://hooks.slack.com/services/Txxxxxxxx/Bxxxxxxxx/xxxxxxxxxxxxxxxxxxxxxxxx": "placeholder",
    "SKxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": "placeholder",
    "ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": "placeholder",
    "sk_test_51OuEMLAlTWGaDypq4P5cuDHbuKeG4tAGPYHJpEXQ7zE8mKK3jkhTFPvCxnSSK5zB5EQZrJsYdsatNmAHGgb0v"
    "SKD00GTMSWRHs": "a Stripe test-mode key: detect-secrets' pattern is for live ones",
    '"client_secret" : "6da89121079f83b2eb6acccf8219ea982c3d79bccc3e9c6a85856480661f8fde",': (
        "a blank before the colon: detect-secrets' keyword patterns take none"
    ),
}
# Benign cases that are redacted, each with why.
KNOWN_FALSE_POSITIVES = {
    "-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----": (
        "an empty key block, redacted whole (nothing lost but the placeholder)"
    ),
}


@dataclass(frozen=True)
class Secret:
    kind: str  # the marker's kind expected
    text: str
    values: tuple[str, ...]  # what must not be left in the redacted text
    origin: str


@dataclass(frozen=True)
class Benign:
    category: str
    text: str
    origin: str


def _rows() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for name in ("own.jsonl", "public.jsonl"):
        rows += [orjson.loads(line) for line in (CORPUS / name).read_bytes().splitlines()]
    return rows


def secrets() -> list[Secret]:
    return [
        Secret(row["kind"], row["text"], tuple(row["secret"]), row["from"])
        for row in _rows()
        if row["case"] == "secret"
    ]


def image_data(size: int = 3000, seed: int = 30) -> str:
    """A data URL of `size` random bytes, as a pasted screenshot's."""
    raw = random.Random(seed).randbytes(size)
    return "data:image/png;base64," + base64.b64encode(raw).decode()


def benign(docs: bool = True) -> list[Benign]:
    """The benign texts: the corpus files', image data, and (with `docs`) every paragraph of
    the repository's docs and every line of the session fixtures (their plain JSONL logs)."""
    found = [
        Benign(row["category"], row["text"], row["from"])
        for row in _rows()
        if row["case"] == "benign"
    ]
    found += [Benign("image data", image_data(seed=seed), "made here") for seed in range(30, 35)]
    found.append(
        Benign("image data", f"![shot]({image_data(60_000)}) why is it blank?", "made here")
    )
    if docs:
        for page in sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")]):
            for paragraph in page.read_text(encoding="utf-8").split("\n\n"):
                if paragraph.strip():
                    found.append(Benign("repository docs", paragraph, str(page.relative_to(REPO))))
        for log in sorted(FIXTURES.rglob("*.jsonl")):
            for line in log.read_text(encoding="utf-8").splitlines():
                found.append(Benign("session logs", line, str(log.relative_to(REPO))))
    return found
