"""The watermark's plain rules (`dshkit.graft.lines`) that the hot path shares with the
decisions."""

from __future__ import annotations

import random
import re

import pytest

from dshkit.graft.lines import phased, plan_due

# The rule as the decisions once wrote it: the plain-string version must say the same.
PHASE = re.compile(r"^\s*(阶段|phase)\s*\d+\s*[:：]", re.IGNORECASE)
PIECES = ("阶段", "段", "phase", "PHASE", "Phase", "p", " ", "\t", "\u3000", "\n", "1", "２")
MORE = ("٣", "12", ":", "：", "-", "x", "阶", "ph ase")


@pytest.mark.parametrize("seed", range(4))
def test_a_phase_item_is_read_as_the_pattern_reads_it(seed: int) -> None:
    rng = random.Random(seed)
    pieces = PIECES + MORE
    for _ in range(20_000):
        item = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 7)))
        assert phased(item) == bool(PHASE.match(item)), repr(item)


def test_the_plan_first_nudge_is_due_for_a_long_list_without_phases_once() -> None:
    steps = [f"step {n}" for n in range(4)]
    assert plan_due(steps, nudged=False)
    assert not plan_due(steps, nudged=True)
    assert not plan_due(steps[:3], nudged=False)
    assert not plan_due([*steps, "阶段 １：收尾"], nudged=False)
