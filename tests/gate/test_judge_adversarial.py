"""The delivery gate on pages written to catch it out: what a screenshot of a canvas's centre
shows when a panel covers it, CSS-hidden canvases, a shader that only fails to compile, a
rejection handled late, a watchdog that fires after the early stop would have come, an
overlay slid off screen, a navigation to a page never written, embedded pages, workers,
missing scripts and modules, dialogs, reloads, a context lost and restored, a page busy
while it loads; each page in real headless Chromium."""

from __future__ import annotations

import pytest

from dshkit.gate.judge import SETTLE_S, Verdict

from ..support.gate import judged, kinds, shots

__all__ = ["shots"]  # the fixture the `judged` fixtures ask for

FAILING_BUDGET_S = 4.0
LATE_BUDGET_S = 8.0  # well past the watchdog's 3.5 s after load, on a loaded machine too
GOOD_BUDGET_S = 15.0

FAILING = {
    "covered-black.html": "blank-canvas",  # black scene, an opaque panel over its centre
    "background-canvas-black.html": "blank-canvas",  # black, pointer-events:none, text on top
    "clear-only-2d.html": "blank-canvas",  # clearRect every frame, nothing drawn
    "compile-fails-clears.html": "webgl-error",  # a shader fails to compile, logged, clears
    "webgl-unavailable-overlay.html": "fatal-overlay",  # getContext('webgl') is null: says so
    "webgl-null-used.html": "page-error",  # getContext('webgl') is null, used anyway
    "worker-error.html": "page-error",  # the chart draws, its worker throws
    "worker-console-error.html": "page-error",  # its worker logs console.error
    "module-missing.html": "page-error",  # a module imports a file never written
    "script-404.html": "page-error",  # a script of its own directory is missing
    "navigates-missing.html": "page-error",  # goes on to a page never written
    "iframe-fatal.html": "fatal-overlay",  # the embedded page shows its fatal overlay
    "iframe-throws.html": "page-error",  # the embedded page throws
    "svg-script-error.svg": "page-error",  # an SVG whose script throws
    "assert-fails.html": "page-error",  # console.assert fails (logged at error level)
    "rejection-string.html": "page-error",  # a string rejection nothing handles
    "image-before-load.html": "blank-canvas",  # drawImage before the image loaded
    "version-not-first.html": "webgl-error",  # the seed's assembly bug: #version on line 2
    "derivative-in-vertex.html": "webgl-error",  # the seed's fwidth in a vertex shader
}
GOOD = (
    "black-then-draws.html",  # black while loading, then the scene
    "covered-draw-once.html",  # drew once, a black panel over the canvas's centre
    "start-screen.html",  # a start menu covers the running scene
    "rejection-caught-later.html",  # a rejection whose handler comes after a sample
    "overlay-offscreen.html",  # a failure toast slid above the top edge
    "hidden-canvas.html",  # canvases hidden by display and visibility, never drawn
    "context-restored.html",  # the WebGL context lost, restored and drawn again
    "navigates-good.html",  # goes on to a working page of its directory
    "iframe-good.html",  # embeds a working chart
    "alert-dialog.html",  # alert() and confirm() before drawing
    "error-text-content.html",  # "Error 404", "初始化失败" in the text, a class "fatal"
    "huge-page.html",  # 20,000 table rows built while it loads
    "rejection-string-later.html",  # a string rejection handled after a sample
    "chart-off-centre.html",  # a transparent 2D chart whose lines miss its centre
    "shader-fallback.html",  # a shader that does not compile, then one that does
    "watchdog-cleared.html",  # a 20 s watchdog cleared once the scene runs
    "watchdog-real-time.html",  # a 4 s watchdog that finds the scene running
)

failing = judged("failing", FAILING, FAILING_BUDGET_S)
good = judged("good", GOOD, GOOD_BUDGET_S)
late = judged("late", ["late-overlay.html", "meta-refresh.html"], LATE_BUDGET_S)


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(FAILING))
def test_each_trap_page_fails_at_the_end_of_the_budget(
    failing: dict[str, Verdict], name: str
) -> None:
    verdict = failing[name]
    assert verdict.verdict == FAILING[name], verdict.report()
    assert verdict.failed and not verdict.timings["stoppedEarly"] and not verdict.recovered
    # Judged by the last sample: a canvas still not drawn at the end never drew.
    never_drew = "waiting" if name == "clear-only-2d.html" else verdict.verdict
    assert verdict.history[-1] == never_drew


@pytest.mark.browser
@pytest.mark.parametrize("name", GOOD)
def test_each_good_trap_page_is_ok_and_stops_early(good: dict[str, Verdict], name: str) -> None:
    verdict = good[name]
    assert verdict.verdict == "ok", verdict.report()
    assert verdict.timings["stoppedEarly"] and verdict.history[-2:] == ["ok", "ok"]
    assert not verdict.recovered and verdict.errors == [] and verdict.error_count == 0
    assert "fatal-overlay" not in verdict.history


@pytest.mark.browser
def test_a_panel_over_the_canvas_is_not_what_the_canvas_shows(
    failing: dict[str, Verdict], good: dict[str, Verdict]
) -> None:
    # Black in the frame and whole: judged by its own pixels, not at its centre under the
    # light score panel.
    (black,) = failing["covered-black.html"].canvas
    assert black["framePixel"] == {"mean": 0, "max": 0}
    assert black["ownPixels"]["blank"] and black["screenshotPixel"] is None
    # Drew once (zeros in a later frame), a black panel over its centre: the screenshot of an
    # uncovered part shows the drawing.
    (once,) = good["covered-draw-once.html"].canvas
    assert once["framePixel"] == {"mean": 0, "max": 0}
    assert once["screenshotPixel"]["mean"] > 50


@pytest.mark.browser
def test_a_shader_that_only_fails_to_compile_is_a_webgl_error(failing: dict[str, Verdict]) -> None:
    verdict = failing["compile-fails-clears.html"]
    (canvas,) = verdict.canvas
    assert canvas["framePixel"]["mean"] > 20 and canvas["invalidDrawCalls"] == 0  # it clears
    (failure,) = kinds(verdict, "webgl")
    assert str(failure["what"]).startswith("vertex shader did not compile: ERROR: 0:1:")
    assert failure["where"] == "canvas 1" and verdict.errors == []


@pytest.mark.browser
def test_a_context_refused_is_judged_by_what_the_page_does_with_it(
    failing: dict[str, Verdict],
) -> None:
    assert "不支持" in (failing["webgl-unavailable-overlay.html"].overlay_text or "")
    (thrown,) = kinds(failing["webgl-null-used.html"], "exception")
    assert "reading 'clearColor'" in str(thrown["what"])


@pytest.mark.browser
def test_errors_of_workers_missing_files_and_failed_navigations_are_the_pages(
    failing: dict[str, Verdict],
) -> None:
    (thrown,) = kinds(failing["worker-error.html"], "exception")
    assert "reading 'rows'" in str(thrown["what"])
    (missing,) = kinds(failing["script-404.html"], "console.error")
    assert missing["where"] == "chart-lib-missing.js:0:0" and "FILE_NOT_FOUND" in str(missing)
    module = [f["where"] for f in kinds(failing["module-missing.html"], "console.error")]
    assert "app-missing-module.js:0:0" in module
    (gone,) = kinds(failing["navigates-missing.html"], "navigation")
    assert gone["what"] == ("navigation to next-page-missing.html failed: net::ERR_FILE_NOT_FOUND")
    assert "ok" in failing["navigates-missing.html"].history  # it was fine before it left
    assert failing["navigates-missing.html"].blocked == []


@pytest.mark.browser
def test_an_embedded_page_is_on_screen_too(failing: dict[str, Verdict]) -> None:
    embedded = failing["iframe-fatal.html"]
    assert "初始化失败" in (embedded.overlay_text or "")
    assert [f["where"] for f in kinds(embedded, "overlay")] == ["#fatal"]
    (thrown,) = kinds(failing["iframe-throws.html"], "exception")
    assert thrown["where"] == "throws-after-render.html:16:7"


@pytest.mark.browser
def test_a_rejection_handled_late_is_not_an_error(good: dict[str, Verdict]) -> None:
    verdict = good["rejection-caught-later.html"]
    # Reported unhandled at first (a sample may see it so), handled after the first sample.
    assert verdict.history[-1] == "ok" and set(verdict.history) <= {"page-error", "ok"}
    assert not kinds(verdict, "exception")


@pytest.mark.browser
def test_hidden_things_are_not_judged(good: dict[str, Verdict]) -> None:
    assert good["hidden-canvas.html"].canvas == []  # display:none and visibility:hidden
    assert good["overlay-offscreen.html"].overlay_text is None
    assert good["error-text-content.html"].overlay_text is None


@pytest.mark.browser
def test_a_context_lost_and_restored_is_ok(good: dict[str, Verdict]) -> None:
    verdict = good["context-restored.html"]
    assert "blank-canvas" in verdict.history  # while lost
    lost = [f for f in kinds(verdict, "webgl") if f["what"] == "WebGL context lost"]
    assert len(lost) == 1
    (canvas,) = verdict.canvas
    assert canvas["framePixel"]["mean"] > 50 and canvas["invalidDrawCalls"] == 0


@pytest.mark.browser
def test_a_page_busy_while_it_loads_has_not_recovered_from_anything(
    good: dict[str, Verdict],
) -> None:
    verdict = good["huge-page.html"]
    assert not verdict.recovered  # an unanswered sample before its load is no failure
    assert verdict.elapsed_ms >= (verdict.timings["loadMs"] or 0) + SETTLE_S * 1000


@pytest.mark.browser
def test_the_early_stop_waits_for_a_watchdog_due_soon(late: dict[str, Verdict]) -> None:
    verdict = late["late-overlay.html"]
    assert verdict.verdict == "fatal-overlay", verdict.report()
    first = verdict.history.index("fatal-overlay")
    assert first >= 2 and set(verdict.history[:first]) == {"ok"}  # good for seconds first
    (shown,) = kinds(verdict, "overlay")
    assert int(str(shown["atMs"])) >= 3500


@pytest.mark.browser
def test_a_page_that_reloads_itself_is_judged_at_the_interval(late: dict[str, Verdict]) -> None:
    verdict = late["meta-refresh.html"]
    # Never loaded 3 s on its own clock, so never stopped early; and sampled at the
    # interval meanwhile, not as fast as the browser answers.
    assert verdict.verdict == "ok" and not verdict.timings["stoppedEarly"]
    assert verdict.timings["samples"] <= LATE_BUDGET_S / 0.25 + 8, verdict.history


@pytest.mark.browser
def test_the_seeds_shader_assembly_bugs_without_an_overlay_are_webgl_errors(
    failing: dict[str, Verdict],
) -> None:
    version = [str(f["what"]) for f in kinds(failing["version-not-first.html"], "webgl")]
    assert any("did not link" in s and "#version" in s for s in version), version
    (derivative,) = kinds(failing["derivative-in-vertex.html"], "webgl")
    assert "fwidth" in str(derivative["what"])
    assert failing["derivative-in-vertex.html"].errors == []  # a warning is no error


@pytest.mark.browser
def test_a_2d_canvas_is_read_whole_when_its_centre_is_empty(
    failing: dict[str, Verdict], good: dict[str, Verdict]
) -> None:
    (empty,) = failing["image-before-load.html"].canvas
    assert empty["drawCalls"] == 1 and empty["framePixel"]["empty"] is True
    assert empty["screenshotPixel"] is None  # the white page behind it is not the canvas
    (chart,) = good["chart-off-centre.html"].canvas
    assert "empty" not in chart["framePixel"]


@pytest.mark.browser
def test_an_assertion_that_fails_is_an_error(failing: dict[str, Verdict]) -> None:
    (failed,) = kinds(failing["assert-fails.html"], "console.error")
    assert "图表数据为空" in str(failed["what"])


@pytest.mark.browser
def test_a_watchdog_cleared_or_satisfied_does_not_hold_a_good_page(
    good: dict[str, Verdict],
) -> None:
    cleared = good["watchdog-cleared.html"]
    assert cleared.elapsed_ms < 10_000  # its 20 s timer was cleared: not waited for
    satisfied = good["watchdog-real-time.html"]
    assert satisfied.elapsed_ms >= 4000  # waited for the 4 s check, which found it running
