"""The corpus generator: deterministic, and its ground truth is what a scan finds."""

from __future__ import annotations

import hashlib
from pathlib import Path

from dshkit.sessions import Scanner
from dshkit.store import Store

from .support.corpus import Corpus
from .support.logs import dsh


def _digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return digest.hexdigest()


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    Corpus(tmp_path / "a", seed=7).generate(sessions=10, frames=500)
    Corpus(tmp_path / "b", seed=7).generate(sessions=10, frames=500)
    Corpus(tmp_path / "c", seed=8).generate(sessions=10, frames=500)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b") != _digest(tmp_path / "c")


def test_ground_truth_matches_scans_through_appends(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path / "root", seed=11)
    made = corpus.generate(sessions=40, frames=6000)
    assert made.torn_files > 0 and made.files > made.sessions  # torn tails, generations
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        first = scanner.scan(dsh(tmp_path / "root"))
        assert (first.sessions, first.events, first.human_messages) == (
            made.sessions,
            made.events,
            made.human_messages,
        )
        assert first.frames_decoded == made.frames
        grown = corpus.append(frames=500, target_bytes=400_000)
        second = scanner.scan(dsh(tmp_path / "root"))
        assert second.events == made.events + grown.events
        assert second.human_messages == made.human_messages + grown.human_messages
        assert second.frames_decoded == grown.frames
