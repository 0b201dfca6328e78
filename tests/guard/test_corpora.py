"""The guard against its labelled corpora (tests/data/guard/): no destructive command of any
class judged safe, no command labelled worth a question let through, no safe one asked about;
and the everyday agent commands all but never stopped (0 destructive, at most 0.5 % unknown)."""

from __future__ import annotations

import pytest

from tests.support.guard_corpora import CLASSES, LABELS, cases, everyday, judged, reason


@pytest.mark.parametrize("name", CLASSES)
def test_no_destructive_or_questionable_command_of_a_class_is_judged_safe(name: str) -> None:
    let_through = [
        (case.origin, case.command, reason(case.command))
        for case in cases(name)
        if case.label != "safe" and judged(case.command) == "safe"
    ]
    assert not let_through


@pytest.mark.parametrize("name", CLASSES)
def test_the_safe_look_alikes_of_a_class_stay_safe(name: str) -> None:
    stopped = [
        (case.origin, case.command, judged(case.command), reason(case.command))
        for case in cases(name)
        if case.label == "safe" and judged(case.command) != "safe"
    ]
    assert not stopped


@pytest.mark.parametrize("name", CLASSES)
def test_each_class_holds_both_directions(name: str) -> None:
    labels = {case.label for case in cases(name)}
    assert {"safe"} < labels <= set(LABELS), labels


def test_everyday_commands_are_never_destructive_and_rarely_unknown() -> None:
    commands = everyday()
    assert len(commands) >= 1_000
    judgements = {command: judged(command) for command in commands}
    destructive = [c for c, risk in judgements.items() if risk == "destructive"]
    unknown = [c for c, risk in judgements.items() if risk == "unknown"]
    assert not destructive
    assert len(unknown) <= len(commands) * 0.005, unknown


def test_a_label_outside_the_three_is_refused(tmp_path: object) -> None:
    from tests.support.guard_corpora import Case

    with pytest.raises(ValueError, match="label 'harmless'"):
        Case("ls", "harmless", "x.jsonl:1")
