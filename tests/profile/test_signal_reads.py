"""Reading the signals writes nothing: the console's totals and hits count in memory what no
scan or generation has stored yet (and keep it in memory for the next read); the paths that
write anyway — a refresh the caller asked for, a generation — store the counts for later
reads."""

from __future__ import annotations

from pathlib import Path

from dshkit.llm import LLMConfig
from dshkit.profile.generate import generate
from dshkit.profile.service import ProfileService
from dshkit.profile.signals import SignalConfig, Unstored, collect_signals
from dshkit.sessions import Refresh, Scanner, Source
from dshkit.store import Store

from ..support.fakes import FakeOpenAI
from ..support.profile import A1, answer
from ..support.signals import failing_session, only


def memo_rows(state: Path) -> int:
    with Store(state) as store:
        return int(store.db.execute("SELECT count(*) FROM session_signals").fetchone()[0])


def snapshot(state: Path) -> dict[str, list[str]]:
    """Every table's rows."""
    with Store(state) as store:
        tables = [
            name
            for (name,) in store.db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        return {
            t: sorted(repr(tuple(r)) for r in store.db.execute(f'SELECT * FROM "{t}"'))
            for t in tables
        }


def test_a_read_counts_in_memory_and_stores_nothing(tmp_path: Path) -> None:
    root, state = tmp_path / "root", tmp_path / "state"
    for name in ("a", "b"):
        failing_session(root, name, 3)
    with Store(state) as store:
        Scanner(store).scan([Source("dsh", root)])
    before = snapshot(state)
    service = ProfileService(state, sources=[Source("dsh", root)])
    totals = service.signal_totals()
    assert totals.totals == only(repeatFailures=2) and totals.sessions == 2
    hits = service.signal_hits("repeatFailures", session="a")
    assert hits.total == 1 and hits.hits[0]["sessionId"] == "a"
    assert snapshot(state) == before  # the old code stored both sessions' counts
    with Store(state) as store:
        # The next read of the same revisions is counted from memory, not again.
        unstored = Unstored()
        catalog = Scanner(store).catalog
        keys = [("dsh", "a"), ("dsh", "b")]
        first = collect_signals(catalog, keys, SignalConfig(), unstored=unstored)
        again = collect_signals(catalog, keys, SignalConfig(), unstored=unstored)
        assert (first.recomputed, again.recomputed) == (2, 0)
        assert again.as_json() == first.as_json()
    assert memo_rows(state) == 0
    # A refresh the caller asked for writes anyway: the counts are stored with it.
    report = service.signals(refresh=Refresh.WAIT)
    assert report.totals == only(repeatFailures=2) and memo_rows(state) == 2
    with Store(state) as store:
        stored = collect_signals(Scanner(store).catalog, keys, SignalConfig())
        assert stored.recomputed == 0


def test_a_generation_stores_the_counts_the_next_read_uses(tmp_path: Path) -> None:
    root, state = tmp_path / "root", tmp_path / "state"
    failing_session(root, "a", 3)
    with FakeOpenAI() as fake, Store(state) as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        assert memo_rows(state) == 0
        fake.replies.append(answer({"entries": [{**A1, "evidence": ["[1]"]}]}))
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        assert generate(scanner, keys, llm, force=True).ok
    assert memo_rows(state) == 1
    written = snapshot(state)
    assert ProfileService(state, sources=[]).signal_totals().totals == only(repeatFailures=1)
    assert snapshot(state) == written
