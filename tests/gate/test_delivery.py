"""Delivery's parts on a real store: the bounded scan for files shell commands wrote, one
background run per content (and no more than MAX_RUNNING at once), a turn that begins once,
and what a session is owed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from dshkit.gate import delivery
from dshkit.gate.judge import DELIVERABLE_SUFFIXES
from dshkit.gate.rework import DELIVERABLE_SUFFIXES as NAMED
from dshkit.store import GATE_REWORK_DELIVERY, Store

KEY = ("claude", "c1")


def test_the_hooks_know_a_deliverable_as_the_judge_does() -> None:
    assert NAMED == DELIVERABLE_SUFFIXES


def test_the_scan_finds_what_changed_since_the_turn_began_and_skips_dependencies(
    tmp_path: Path,
) -> None:
    since = int(time.time() * 1000) - 1000
    (tmp_path / "site" / "deep" / "a" / "b").mkdir(parents=True)
    for folder in ("node_modules/pkg", ".git", ".venv/lib", "site/__pycache__"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "page.html").write_text("x")
    (tmp_path / "site" / "index.html").write_text("x")
    (tmp_path / "site" / "deep" / "a" / "b" / "chart.SVG").write_text("x")
    (tmp_path / "site" / "notes.md").write_text("x")
    old = tmp_path / "site" / "old.htm"
    old.write_text("x")
    os.utime(old, (since / 1000 - 60, since / 1000 - 60))
    found = delivery.changed_deliverables(str(tmp_path), since)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in found) == [
        "site/deep/a/b/chart.SVG",
        "site/index.html",
    ]


def test_the_scan_is_bounded_in_entries_depth_and_what_it_keeps(tmp_path: Path) -> None:
    since = int(time.time() * 1000) - 1000
    deep = tmp_path.joinpath(*[f"d{i}" for i in range(delivery.SCAN_DEPTH + 1)])
    deep.mkdir(parents=True)
    (deep / "too-deep.html").write_text("x")
    many = tmp_path / "many"
    many.mkdir()
    for number in range(delivery.SCAN_FOUND + 5):
        page = many / f"p{number:02}.html"
        page.write_text("x")
        stamp = since / 1000 + number
        os.utime(page, (stamp, stamp))
    found = delivery.changed_deliverables(str(tmp_path), since)
    assert len(found) == delivery.SCAN_FOUND  # the newest kept
    assert found[0].name == f"p{delivery.SCAN_FOUND + 4:02}.html"
    assert all(p.name != "too-deep.html" for p in found)
    crowded = tmp_path / "crowded"
    crowded.mkdir()
    for number in range(delivery.SCAN_ENTRIES + 10):
        (crowded / f"f{number}.txt").write_text("")
    (crowded / "sub").mkdir()
    (crowded / "sub" / "page.html").write_text("x")
    assert delivery.changed_deliverables(str(crowded / "sub"), since) != []
    # Past the entry bound the walk stops: the level below the crowd is never reached.
    assert delivery.changed_deliverables(str(crowded), since) == []


def test_one_run_per_content_and_no_more_than_the_limit_at_once(tmp_path: Path) -> None:
    pages = []
    for number in range(delivery.MAX_RUNNING + 2):
        page = tmp_path / f"p{number}.html"
        page.write_text(f"version {number}")
        pages.append((page, delivery.content_hash(page)))
    with Store(tmp_path / "state") as store:
        first = delivery.claim_runs(store, pages[:2])
        assert first == [pages[0][0], pages[1][0]]
        assert delivery.claim_runs(store, pages[:1]) == []  # that content runs already
        rest = delivery.claim_runs(store, pages)
        assert len(first) + len(rest) == delivery.MAX_RUNNING
        delivery.finish_run(store, str(pages[0][0]), pages[0][1])
        assert delivery.claim_runs(store, pages[3:]) == [pages[3][0]]
        # A run that died (started long ago, no verdict) may be started again.
        store.db.execute("UPDATE gate_runs SET started = 0")
        assert delivery.claim_runs(store, pages[:1]) == [pages[0][0]]


def test_a_turn_begins_once_until_it_ends(tmp_path: Path) -> None:
    with Store(tmp_path / "state") as store:
        assert delivery.turn_began(store, KEY) is None
        delivery.begin_turn(store, KEY, 1000)
        delivery.begin_turn(store, KEY, 2000)  # a harness asking before every step
        assert delivery.turn_began(store, KEY) == 1000
        delivery.end_turn(store, KEY)
        delivery.begin_turn(store, KEY, 3000)
        assert delivery.turn_began(store, KEY) == 3000


def test_what_a_session_is_owed(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    page.write_text("v1")
    with Store(tmp_path / "state") as store:
        delivery.note_writes(store, KEY, [page, tmp_path / "gone.html"])
        owed = delivery.owed(store, KEY)
        assert owed.unjudged == [page] and owed.failed == []  # a removed file is nobody's
        sha = delivery.content_hash(page)
        evidence = '{"verdict": "page-error", "errors": ["boom"]}'
        store.db.execute(
            "INSERT INTO gate_verdicts (at, path, sha256, verdict, recovered, elapsed_ms, "
            "evidence) VALUES (1, ?, ?, 'page-error', 0, 10, ?)",
            (str(page), sha, evidence),
        )
        (failed,) = delivery.owed(store, KEY).failed
        assert failed["path"] == str(page) and failed["errors"] == ["boom"]
        delivery.mark_delivered(store, KEY, delivery.owed(store, KEY).marks())
        assert store.delivered(KEY, GATE_REWORK_DELIVERY, delivery.delivery_mark(str(page), sha))
        assert delivery.owed(store, KEY).failed == []  # delivered once
        assert delivery.owed(store, ("dsh", "d1")).failed == []  # another session wrote none
        page.write_text("v2")  # a new content is judged afresh
        assert delivery.owed(store, KEY).unjudged == [page]


def test_a_page_that_needs_the_network_is_owed_no_rework(tmp_path: Path) -> None:
    # Its failure follows from a script the gate refused: judged, and nothing goes back.
    page = tmp_path / "scene.html"
    page.write_text("<script src='https://cdn.example.com/three.js'></script>")
    with Store(tmp_path / "state") as store:
        delivery.note_writes(store, KEY, [page])
        evidence = '{"verdict": "needs-network", "errors": ["uncaught ReferenceError: THREE"]}'
        store.db.execute(
            "INSERT INTO gate_verdicts (at, path, sha256, verdict, recovered, elapsed_ms, "
            "evidence) VALUES (1, ?, ?, 'needs-network', 0, 10, ?)",
            (str(page), delivery.content_hash(page), evidence),
        )
        owed = delivery.owed(store, KEY)
        assert owed.failed == [] and owed.unjudged == []
