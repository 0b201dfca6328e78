"""The north star as stored runs show it: every prompt counted, a fallback as the raw words,
each tier against the raw words on comparable prompts with both sample sizes, the added
latency per tier, and the last run a person can mark."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dshkit.errors import NotFound
from dshkit.optimizer.runs import Run, last_markable, record_outcome, save_run, success_rates
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
    run(store, "basic", SHORT, "ok")
    run(store, "basic", LONG, "ok")
    run(store, "off", SHORT, "rework", passed="off")
    run(store, "off", SHORT, "ok", passed="skip-prefix")
    run(store, "off", LONG * 3, "rework")  # another length class: no comparison for LONG
    rates = success_rates(store)
    # Only the short prompts compare: basic 1/1 against the raw words' 1/2.
    assert rates["basic"]["vsRawWords"] == pytest.approx(0.5)
    assert (rates["basic"]["comparable"], rates["basic"]["rawComparable"]) == (1, 2)
    assert rates["off"]["vsRawWords"] is None and rates["off"]["judged"] == 3


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
