"""The side-by-side bench's corpora and docs/guard.md's table of deliberate disagreements with
cc-safety-net: each row's example line gets the verdict the table says dshkit gives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dshkit.guard import classify

from ..support.guard_corpus import ROOT, corpora

DOC = ROOT / "docs" / "guard.md"


def table_rows() -> list[tuple[str, str]]:
    """(first example line, dshkit's verdict) of each row of the deliberate table."""
    text = DOC.read_text()
    section = text[text.index("## Side by side with a peer") :]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        example = re.match(r"`([^`]+)`", cells[0])
        assert example is not None, line
        rows.append((example.group(1), cells[1]))
    return rows


def test_the_deliberate_table_has_rows() -> None:
    assert len(table_rows()) >= 5


@pytest.mark.parametrize(("line", "verdict"), table_rows())
def test_each_deliberate_disagreement_is_what_dshkit_does(
    line: str, verdict: str, tmp_path: Path
) -> None:
    found = classify(line, "bash", str(tmp_path / "proj"), home=str(tmp_path))
    assert found.decision("balanced") == verdict, (line, found)


def test_the_corpora_are_read_by_glob(tmp_path: Path) -> None:
    own = [c for c in corpora() if c.source.startswith("tests/data/guard_peer/")]
    assert len(own) >= 60 and all(c.label is not None for c in own)
    assert {"everyday", "git", "remote", "delete"} <= {c.cls for c in own}
    corpus = tmp_path / "tests" / "data" / "guard" / "new"
    corpus.mkdir(parents=True)
    (corpus / "extra.jsonl").write_text('{"cmd": "ls", "expected": "safe"}\n\n{"command": "x"}\n')
    joined = corpora(root=tmp_path)
    assert [(c.command, c.label, c.cls) for c in joined] == [
        ("ls", "safe", "extra"),
        ("x", None, "extra"),
    ]
