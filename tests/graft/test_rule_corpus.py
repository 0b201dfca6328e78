"""The rule model on the corpus of tests/data/rules/ (public AGENTS.md / CLAUDE.md / Cursor
rules and our own sentences in both languages): nothing that is not a rule is taken for one,
and what is not recognised as a rule is rarely lost (bench/rule_detection.py gives the
figures by class)."""

from __future__ import annotations

from dshkit.graft.rule_classes import RULE, classify

from ..support.rules import samples


def kind(text: str) -> str | None:
    """The kind the table gives a sentence (None: no class takes it, a maybe-rule)."""
    found = classify(text)
    return None if found is None else found.kind


def test_no_question_thanks_status_description_or_task_is_taken_for_a_rule() -> None:
    assert [s.text for s in samples() if not s.rule and kind(s.text) == RULE] == []


def test_our_chinese_and_english_rules_are_all_kept() -> None:
    ours = [s for s in samples() if s.rule and ":" not in s.origin]
    assert [s.text for s in ours if kind(s.text) not in (RULE, None)] == []
    assert sum(kind(s.text) == RULE for s in ours) / len(ours) >= 0.95


def test_public_rules_are_found_or_carried_as_maybe_rules() -> None:
    public = [s for s in samples() if s.rule and ":" in s.origin]
    found = sum(kind(s.text) == RULE for s in public)
    kept = sum(kind(s.text) in (RULE, None) for s in public)
    # measured on the licensed public set (December 2026): 66.1% found, 94.9% kept (39 and 56
    # of 59); the earlier, unlicensed set gave 83% and 96%
    assert found / len(public) >= 0.65 and kept / len(public) >= 0.94
