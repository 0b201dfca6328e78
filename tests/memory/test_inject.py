"""What a session is given of memory, as time passes (`dshkit.memory.inject`): the ranking's
recency moves with the clock, and the choice says when it would first be another."""

from __future__ import annotations

import random
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from dshkit.hooks import hint
from dshkit.memory import inject
from dshkit.memory.records import EXPERIENCE, FACT, GRADES, NEGATIVE

from ..support.cli import environment, hook_here, run_dshkit, state_of
from ..support.memory import fix_session, make_repo, write_session

DAY = 86_400_000
NOW = 1_796_000_000_000


def order(records: list[Any], wanted: set[str], now: int) -> list[int]:
    """The records' ids as `choose` ranks them at `now`."""
    ranked = sorted(records, key=lambda r: (-inject._score(r, wanted, now), -r.id))
    return [r.id for r in ranked]


def records(seed: int) -> list[Any]:
    rng = random.Random(seed)
    words = ["pytest fails", "uv sync", "deploy to staging", "port 8080", "use ruff"]
    return [
        SimpleNamespace(
            id=n,
            kind=rng.choice([NEGATIVE, FACT, EXPERIENCE]),
            grade=rng.choice(list(GRADES)),
            text=rng.choice(words),
            # mostly past, some days ahead of now (a clock elsewhere), one undated
            valid_from=rng.choice([None, NOW + rng.randint(1, 5) * DAY])
            if rng.random() < 0.1
            else NOW - rng.randint(0, 400) * DAY - rng.randint(0, DAY),
        )
        for n in range(rng.randint(2, 12))
    ]


def test_the_ranking_holds_until_the_time_it_names() -> None:
    ahead: list[int] = []  # how far ahead each bound is (ms)
    for seed in range(400):
        chosen = records(seed)
        wanted = inject._grams(random.Random(seed).choice(["", "fix pytest", "deploy"]))
        ranked = sorted(chosen, key=lambda r: (-inject._score(r, wanted, NOW), -r.id))
        until = inject.ranked_until(ranked, wanted, NOW)
        now = order(chosen, wanted, NOW)
        if until is None:  # no two neighbours ever cross, nor does a record start to age
            for later in (DAY, 365 * DAY, 100 * 365 * DAY):
                assert order(chosen, wanted, NOW + later) == now, seed
            continue
        assert until >= NOW, seed
        for before in (until - 1, NOW + (until - NOW) // 2):  # the same up to it
            assert order(chosen, wanted, max(NOW, before)) == now, seed
        ahead.append(until - NOW)
    # Not needlessly early: half of these rankings hold for days (the bound is exact where
    # two neighbours cross: the case below).
    assert len(ahead) > 100 and sorted(ahead)[len(ahead) // 2] > 3 * DAY


def test_a_newer_memory_is_passed_by_a_weightier_older_one_when_it_says() -> None:
    # 0.9 + 1.0 against 1.0 + 0.25 now: the newer fact ahead, on recency alone.
    newer: Any = SimpleNamespace(id=1, kind=FACT, grade="tool", text="a", valid_from=NOW)
    older: Any = SimpleNamespace(
        id=2, kind=NEGATIVE, grade="tool", text="b", valid_from=NOW - 60 * DAY
    )
    assert order([newer, older], set(), NOW) == [1, 2]
    until = inject.ranked_until([newer, older], set(), NOW)
    assert until is not None and 80 * DAY < until - NOW < 90 * DAY  # (0.75 * 2**-t/30 = 0.1)
    assert order([newer, older], set(), until - 1) == [1, 2]
    assert order([newer, older], set(), until + 1) == [2, 1]


@pytest.mark.process
def test_a_starts_template_holds_memory_only_until_its_ranking_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The memory face names when its choice would change (`Call.holds_until`), and the
    # start's template made from its answer keeps that time.
    home = tmp_path / "home"
    home.mkdir()
    repo = make_repo(home / "app")
    write_session(home / ".dsh" / "sessions", "s-one", repo, fix_session())
    run_dshkit("memory", "harvest", "--all", home=home)
    monkeypatch.setattr(inject, "ranked_until", lambda ranked, wanted, now: now + 12_345)
    session = "0b7e0000-5d1c-4a8e-9f00-7c3a9d2e1b00"
    payload = {
        "session_id": session,
        "transcript_path": f"/h/.claude/projects/-p/{session}.jsonl",
        "cwd": str(repo),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    variables = environment(home, {"DSHKIT_CAPABILITY": "off"})
    code, out, _ = hook_here(["SessionStart"], variables, orjson.dumps(payload))
    assert code == 0 and b"dshkit-memory" in out
    template = hint.template_path(str(state_of(home)), "SessionStart", payload, "claude")
    until = orjson.loads(Path(template).read_bytes())["key"]["until"]
    assert isinstance(until, int) and abs(until - 12_345 - time.time() * 1000) < 60_000
