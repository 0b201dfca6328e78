"""The gate on pages written from issue 34's classes, each in real headless Chromium: a
rendering canvas whose box collapsed, a canvas judged by its own pixels (a light panel over
it, a transparent clear over a light page, below the first screen), a blinking fatal banner,
a game waiting for a click, and failures after the early stop, seen by watching the page to
the end of its budget (and stored after the early ok, for delivery to hand back)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshkit.gate import GateService
from dshkit.gate.delivery import latest_verdict, note_writes, owed
from dshkit.gate.judge import HARD_FAILURES, NEEDS_GESTURE, Verdict, judge_files
from dshkit.store import Store

from ..support.gate import judged, kinds, own_pixels, shots
from ..support.paths import PAGES

__all__ = ["shots"]

FAILING_BUDGET_S = 8.0
FAILING = {
    # Item 1: drawn into every frame, its CSS box 0 high (a 0-high backing store, or not).
    "collapsed-webgl.html": "blank-canvas-0",
    "collapsed-css.html": "blank-canvas",
    # Item 2: black or transparent in every frame, whatever the screen shows around it.
    "black-under-light-panel.html": "blank-canvas",  # a light pointer-events:none panel
    "transparent-clear.html": "blank-canvas",  # a transparent clear over a light page
    "below-fold-black.html": "blank-canvas",  # below the first screen: no screenshot there
    # Item 5: a fatal banner on and off all along: never recovered for good.
    "blinking-fatal.html": "fatal-overlay",
    # Item 4: clicked once like a person, what follows is judged.
    "click-canvas-then-throws.html": "page-error",
}
GOOD_BUDGET_S = 10.0
GOOD = (
    "below-fold-drawn.html",  # one animates, one drew once: both shown below the fold
    "click-to-start.html",  # a start button; the game runs once clicked
    "start-overlay-black-scene.html",  # black until a click anywhere: text over it says so
)

failing = judged("failing", FAILING, FAILING_BUDGET_S)
good = judged("good", GOOD, GOOD_BUDGET_S)
waiting = judged("waiting", ["needs-gesture.html"], 4.0)


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(FAILING))
def test_each_page_of_the_issue_fails(failing: dict[str, Verdict], name: str) -> None:
    verdict = failing[name]
    assert verdict.verdict == FAILING[name], verdict.report()
    assert not verdict.recovered


@pytest.mark.browser
@pytest.mark.parametrize("name", GOOD)
def test_each_good_page_of_the_issue_is_ok(good: dict[str, Verdict], name: str) -> None:
    verdict = good[name]
    assert verdict.verdict == "ok" and verdict.timings["stoppedEarly"], verdict.report()


@pytest.mark.browser
def test_a_rendering_canvas_is_never_a_canvas_to_measure_text(
    failing: dict[str, Verdict],
) -> None:
    (zero,) = failing["collapsed-webgl.html"].canvas
    assert (zero["height"], zero["cssHeight"]) == (0, 0) and zero["drawCalls"] > 0
    (flat,) = failing["collapsed-css.html"].canvas
    assert (flat["height"], flat["cssHeight"]) == (360, 0) and flat["drawCalls"] > 0
    (problem,) = kinds(failing["collapsed-css.html"], "canvas")
    assert "CSS box collapsed" in str(problem["what"])


@pytest.mark.browser
def test_a_canvas_is_judged_by_its_own_pixels(
    failing: dict[str, Verdict], good: dict[str, Verdict]
) -> None:
    for name in ("black-under-light-panel.html", "below-fold-black.html"):
        (canvas,) = failing[name].canvas
        assert own_pixels(canvas) == {
            "blank": True,
            "max": 0,
            "mean": 0,
            "alpha": 255,
        }
    (clear,) = failing["transparent-clear.html"].canvas
    assert clear["ownPixels"]["blank"] and clear["ownPixels"]["alpha"] == 0
    (problem,) = kinds(failing["transparent-clear.html"], "canvas")
    assert "transparent all over" in str(problem["what"])
    loop, once = good["below-fold-drawn.html"].canvas
    assert loop["framePixel"]["mean"] > 50  # read in the frame it drew
    # Drew once (zeros in a later frame), below the fold: its own screenshot, taken there.
    assert once["framePixel"] == {"mean": 0, "max": 0}
    assert once["screenshotPixel"] is not None and once["screenshotPixel"]["mean"] > 50


@pytest.mark.browser
def test_a_blinking_fatal_banner_is_a_failure(failing: dict[str, Verdict]) -> None:
    verdict = failing["blinking-fatal.html"]
    shown = kinds(verdict, "overlay")
    assert len(shown) >= 3  # it came back again and again
    assert "ok" in verdict.history  # and the last samples may well be clean: not recovered


@pytest.mark.browser
def test_a_page_waiting_for_a_click_is_clicked_once_and_judged_after(
    failing: dict[str, Verdict], good: dict[str, Verdict], waiting: dict[str, Verdict]
) -> None:
    started = good["click-to-start.html"]
    (gesture,) = kinds(started, "gesture")
    assert "开始游戏" in str(gesture["what"]) and started.timings["gestureMs"] is not None
    assert started.history[0] == "waiting" and started.history[-1] == "ok"
    (canvas,) = started.canvas
    assert canvas["context"] == "webgl" and canvas["drawCalls"] > 0
    # Black in every frame until clicked: not blank, but waiting (the page listens).
    overlay = good["start-overlay-black-scene.html"]
    (clicked,) = kinds(overlay, "gesture")
    assert "Click anywhere to play" in str(clicked["what"]) and overlay.history[0] == "blank-canvas"
    thrown = failing["click-canvas-then-throws.html"]
    assert kinds(thrown, "gesture") and kinds(thrown, "exception")
    # Starts on one key only: the gesture made (Space) did not start it. Not dead: no rework.
    verdict = waiting["needs-gesture.html"]
    assert verdict.verdict == NEEDS_GESTURE and not verdict.failed
    assert NEEDS_GESTURE not in HARD_FAILURES
    (pressed,) = kinds(verdict, "gesture")
    assert "pressed Space" in str(pressed["what"])


WATCH_BUDGET_S = 10.0


@pytest.mark.browser
def test_failures_after_the_early_stop_are_seen_by_watching(shots: Path) -> None:
    early: dict[str, Verdict] = {}

    def handed(verdict: Verdict) -> None:
        early[Path(verdict.path).name] = verdict

    names = ("late-raf-throw.html", "late-interval-overlay.html", "draw-once.html")
    final = {
        Path(v.path).name: v
        for v in judge_files([PAGES / n for n in names], WATCH_BUDGET_S, shots, handed)
    }
    for name in names:  # each was handed over as ok early, before its failure
        assert early[name].verdict == "ok" and early[name].timings["stoppedEarly"]
    thrown = final["late-raf-throw.html"]
    assert thrown.verdict == "page-error" and not thrown.timings["stoppedEarly"]
    (error,) = kinds(thrown, "exception")
    assert int(str(error["atMs"])) > early["late-raf-throw.html"].elapsed_ms  # after the ok
    watchdog = final["late-interval-overlay.html"]
    assert watchdog.verdict == "fatal-overlay" and "资源加载超时" in (watchdog.overlay_text or "")
    # A page with no work left (it drew once) is watched no further: the early ok stands.
    assert final["draw-once.html"] is early["draw-once.html"]
    assert final["draw-once.html"].timings["watchedMs"] < WATCH_BUDGET_S * 1000


@pytest.mark.browser
def test_a_late_failure_is_stored_after_the_early_ok_and_owed(tmp_path: Path) -> None:
    page = tmp_path / "site" / "late.html"
    page.parent.mkdir()
    page.write_text((PAGES / "late-raf-throw.html").read_text())
    state = tmp_path / "state"
    key = ("claude", "c1")
    with Store(state) as store:
        note_writes(store, key, [page.resolve()])
    final = GateService(state).check(page, WATCH_BUDGET_S, watch=True)
    assert final.verdict == "page-error"
    with Store(state) as store:
        rows = store.db.execute("SELECT verdict FROM gate_verdicts ORDER BY id").fetchall()
        assert [r[0] for r in rows] == ["ok", "page-error"]  # the ok stored first, at once
        newest = latest_verdict(store, str(page.resolve()), final.sha256)
        assert newest is not None and newest["verdict"] == "page-error"
        (failed,) = owed(store, key).failed  # what Stop or the next prompt hands back
        assert failed["verdict"] == "page-error"
