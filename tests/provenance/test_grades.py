"""Source grades: ordered person > observed > model > external, named by their labels, and
what each may be: only the person's words framed as something to follow, external text never
word for word."""

from __future__ import annotations

import pytest

from dshkit.provenance import Grade


def test_the_grades_are_ordered_from_the_persons_words_down_to_external_text() -> None:
    assert Grade.PERSON > Grade.OBSERVED > Grade.MODEL > Grade.EXTERNAL
    assert sorted(Grade, reverse=True) == [
        Grade.PERSON,
        Grade.OBSERVED,
        Grade.MODEL,
        Grade.EXTERNAL,
    ]
    assert max(Grade.MODEL, Grade.OBSERVED) is Grade.OBSERVED  # the better source wins


@pytest.mark.parametrize("grade", list(Grade))
def test_a_grade_is_read_back_from_its_label(grade: Grade) -> None:
    assert grade.label == grade.name.lower()
    assert Grade.parse(grade.label) is grade
    assert Grade.parse(grade.label.upper()) is grade


@pytest.mark.parametrize("label", ["", "user", "persons", "tool", "3", " person"])
def test_an_unknown_label_is_refused_naming_the_known_ones(label: str) -> None:
    with pytest.raises(ValueError, match="unknown source grade") as refused:
        Grade.parse(label)
    assert "(one of external, model, observed, person)" in str(refused.value)


def test_only_the_persons_words_may_instruct_and_external_text_is_never_verbatim() -> None:
    assert [g for g in Grade if g.may_instruct] == [Grade.PERSON]
    assert [g for g in Grade if not g.verbatim] == [Grade.EXTERNAL]
    assert Grade.MODEL.verbatim and not Grade.MODEL.may_instruct
    assert Grade.OBSERVED.verbatim and not Grade.OBSERVED.may_instruct
