"""The Claude Code and Codex generators: the real adapters find exactly what they claim."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from dshkit.sessions import Scanner, Source
from dshkit.sessions.events import human_messages, message_text, pair_tool_calls
from dshkit.store import Store

from .support.corpus import CorpusStats
from .support.corpus_multi import ROOTS, ClaudeCorpus, CodexCorpus, link_subset, plan, scale_corpus


def _digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return digest.hexdigest()


def _blob(files: list[Path]) -> bytes:
    return b"".join(path.read_bytes() for path in files)


@pytest.mark.parametrize(
    ("harness", "writer", "shapes"),
    [
        (
            "claude",
            ClaudeCorpus,
            # Every kind of entry the count must get right is among the written lines.
            (
                b'"isCompactSummary":true',
                b'"isMeta":true',
                b"<command-name>",
                b"[Request interrupted by user]",
                b'"type":"hook_additional_context"',
                b'"type":"tool_result"',
                b'"is_error":true',
                b'"name":"AskUserQuestion"',
                b'"isSidechain":true',
                b'"type":"summary"',
                b'"type":"queue-operation"',
                b'"type":"thinking"',
            ),
        ),
        (
            "codex",
            CodexCorpus,
            (
                b'"type":"session_meta"',
                b'"role":"developer"',
                b"<environment_context>",
                b"# AGENTS.md instructions",
                b"<user_instructions>",
                b'"content_item_metadata"',
                b'"type":"function_call_output"',
                b'"success":false',
                b'"type":"custom_tool_call"',
                b'"type":"token_usage_record"',
                b'"type":"turn_aborted"',
                b'"type":"world_state"',
            ),
        ),
    ],
)
def test_ground_truth_is_what_the_adapter_reads(
    tmp_path: Path,
    harness: str,
    writer: type[ClaudeCorpus] | type[CodexCorpus],
    shapes: tuple[bytes, ...],
) -> None:
    root = tmp_path / harness
    made, files = writer(root, seed=5).generate(sessions=60, target_bytes=50_000)
    blob = _blob(files)
    assert [shape for shape in shapes if shape not in blob] == []
    assert made.sessions == 60 and made.bytes == len(blob) >= 60 * 50_000
    with Store(tmp_path / "state") as store:
        scanner = Scanner(store)
        report = scanner.scan([Source(harness, root)])
        assert report.errors == []
        assert (report.files, report.sessions, report.events, report.human_messages) == (
            made.files,
            made.sessions,
            made.events,
            made.human_messages,
        )
        # What counts as human is typed text, never a tag, wrapper or tool output.
        for key in report.keys:
            events = scanner.catalog.events(key)
            for text in map(message_text, human_messages(events)):
                assert not text.lstrip().startswith(("<", "[Request", "# AGENTS", "Caveat"))
            assert pair_tool_calls(events).unpaired_results == []


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    for writer in (ClaudeCorpus, CodexCorpus):
        for name, seed in (("a", 7), ("b", 7), ("c", 8)):
            writer(tmp_path / writer.__name__ / name, seed=seed).generate(3, 30_000)
        a, b, c = (_digest(tmp_path / writer.__name__ / name) for name in "abc")
        assert a == b != c


def test_scale_corpus_and_its_first_sessions(tmp_path: Path) -> None:
    """The three harnesses together, read as `dshkit scan --root` reads them (every layout on
    every root); and a prefix of the sessions, hard-linked, is a corpus of its own."""
    corpus = tmp_path / "corpus"
    planned = plan(12, 3_000_000, seed=2)
    made = scale_corpus(corpus, 12, 3_000_000, seed=2)
    assert [m.harness for m in made] == [p.harness for p in planned]
    assert {m.harness for m in made} == set(ROOTS)
    assert sum(m.bytes for m in made) >= 3_000_000
    for name, sessions in (("all", made), ("first", made[:5])):
        directory = corpus if name == "all" else tmp_path / "first"
        if name == "first":
            link_subset(corpus, sessions, directory)
        sources = [Source(h, directory / root) for root in ROOTS.values() for h in ROOTS]
        with Store(tmp_path / f"state-{name}") as store:
            report = Scanner(store).scan(sources)
        truth = CorpusStats(
            files=sum(len(m.files) for m in sessions),
            sessions=len(sessions),
            events=sum(m.events for m in sessions),
            human_messages=sum(m.human_messages for m in sessions),
        )
        assert report.errors == []
        assert (report.files, report.sessions, report.events, report.human_messages) == (
            truth.files,
            truth.sessions,
            truth.events,
            truth.human_messages,
        )
