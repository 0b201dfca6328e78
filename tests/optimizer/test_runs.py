"""The north star as stored runs show it: every prompt counted, a fallback as the raw words,
each tier against the raw words on comparable prompts with both sample sizes, the added
latency per tier, and the last run a person can mark."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dshkit.errors import NotFound
from dshkit.optimizer.runs import (
    MIN_SAMPLE,
    Run,
    last_markable,
    record_outcome,
    save_run,
    success_rates,
    wilson,
)
from dshkit.store import Store

SHORT, LONG = "修个 bug", "把登录页的按钮改成蓝色，并且把标题换成欢迎回来，别动其他页面的任何东西"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "state") as opened:
        yield opened


def run(
    store: Store,
    tier: str,
    raw: str,
    outcome: str | None = None,
    *,
    fallback: str | None = None,
    passed: str | None = None,
    ms: int = 100,
    session: str = "s",
) -> Run:
    saved = save_run(
        store,
        Run(
            tier=tier,
            form="ptc",
            raw=raw,
            output=raw,
            fallback=fallback,
            passed=passed,
            timings={"totalMs": ms},
            harness="claude",
            session_id=session,
        ),
    )
    if outcome:
        record_outcome(store, saved.id or 0, outcome)
    return saved


def test_a_fallback_counts_as_the_raw_words_not_its_tier(store: Store) -> None:
    run(store, "basic", SHORT, "ok")
    run(store, "basic", SHORT, "rework", fallback="stall: nothing for 8 s")
    rates = success_rates(store)
    assert (rates["basic"]["runs"], rates["basic"]["judged"], rates["basic"]["ok"]) == (1, 1, 1)
    assert (rates["off"]["runs"], rates["off"]["rework"]) == (1, 1)
    assert rates["basic"]["latency"]["prompts"] == 2  # its cost includes the fallback
    assert rates["basic"]["latency"]["fallbacks"] == 1


def test_tiers_are_compared_with_the_raw_words_on_prompts_of_the_same_length(
    store: Store,
) -> None:
    for _ in range(MIN_SAMPLE):
        run(store, "basic", SHORT, "ok")
        run(store, "basic", LONG, "ok")
        run(store, "off", SHORT, "rework", passed="off")
        run(store, "off", SHORT, "ok", passed="skip-prefix")
        run(store, "off", LONG * 3, "rework")  # another length class: no comparison for LONG
    rates = success_rates(store)
    # Only the short prompts compare: basic all ok against the raw words' half.
    assert rates["basic"]["vsRawWords"] == pytest.approx(0.5)
    assert (rates["basic"]["comparable"], rates["basic"]["rawComparable"]) == (10, 20)
    assert rates["off"]["vsRawWords"] is None and rates["off"]["judged"] == 30


def test_what_asked_nothing_to_refine_is_costed_but_never_rated(store: Store) -> None:
    run(store, "basic", "继续", "ok", passed="continuation", ms=2)
    run(store, "basic", "/compact", passed="command", ms=3)
    rates = success_rates(store)
    assert rates["basic"]["runs"] == 0 and rates["basic"]["judged"] == 0
    assert "off" not in rates
    assert rates["basic"]["latency"] == {
        "prompts": 2,
        "skipped": 2,
        "fallbacks": 0,
        "p50Ms": 2,
        "p95Ms": 3,
    }


def test_latency_percentiles_per_tier(store: Store) -> None:
    for ms in range(1, 21):
        run(store, "advanced", LONG, ms=ms * 100)
    latency = success_rates(store)["advanced"]["latency"]
    assert (latency["p50Ms"], latency["p95Ms"]) == (1000, 1900)


def test_the_last_markable_run_skips_continuations_and_other_sessions(store: Store) -> None:
    with pytest.raises(NotFound, match="no optimizer run to mark"):
        last_markable(store, "claude", "s")
    first = run(store, "basic", SHORT)
    run(store, "basic", "继续", passed="continuation")
    run(store, "basic", LONG, session="other")
    assert last_markable(store, "claude", "s").id == first.id
    prefixed = run(store, "basic", "》原话", passed="skip-prefix")
    assert last_markable(store, "claude", "s").id == prefixed.id


def test_a_pasted_back_refined_instruction_is_neither_rated_nor_marked(store: Store) -> None:
    first = run(store, "basic", SHORT)
    run(store, "basic", "》" + SHORT, passed="refined-sent")
    assert last_markable(store, "claude", "s").id == first.id
    assert success_rates(store)["basic"]["runs"] == 1


def test_one_judged_run_is_a_count_not_a_rate(store: Store) -> None:
    """`runs stats` once printed "100% +67% (1/3)" from one judged run."""
    run(store, "basic", SHORT, "ok")
    for outcome in ("ok", "rework", "rework"):
        run(store, "off", SHORT, outcome, passed="off")
    basic = success_rates(store)["basic"]
    assert (basic["ok"], basic["judged"], basic["minSample"]) == (1, 1, MIN_SAMPLE)
    assert basic["successRate"] is None and basic["interval"] is None
    assert basic["vsRawWords"] is None and (basic["comparable"], basic["rawComparable"]) == (1, 3)


def test_a_rate_over_the_minimum_comes_with_its_wilson_interval(store: Store) -> None:
    for index in range(MIN_SAMPLE):
        run(store, "basic", SHORT, "ok" if index < 8 else "rework")
    basic = success_rates(store)["basic"]
    assert basic["successRate"] == pytest.approx(0.8)
    low, high = basic["interval"] or (0.0, 0.0)
    # 8 of 10: the Wilson 95% interval is 0.4902-0.9433 (the normal one would reach 1.05).
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_at_the_edges() -> None:
    assert wilson(0, 0) is None
    low, high = wilson(10, 10) or (0.0, 0.0)
    assert high == 1.0 and low == pytest.approx(0.7225, abs=1e-4)
    low, high = wilson(0, 10) or (1.0, 1.0)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
