"""The delivery gate on pages written from the pitfalls of judging a page by what shows: errors
after a good start, canvases not drawn yet, a late failure, an ordinary report that names
fatalities, XML parse errors, a program that never links, and what the gate itself blocked;
each page in real headless Chromium. Then the evidence for people: one line per finding,
counts that agree with what is listed."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from dshkit.gate.judge import (
    ERROR_KINDS,
    FAILURE_WORDS,
    OVERLAY_IDS,
    SETTLE_S,
    Verdict,
    report_lines,
)
from dshkit.gate.verdicts import recent_verdicts, save_verdict
from dshkit.store import Store

from ..support.gate import judged, kinds, shots

__all__ = ["shots"]  # the fixture the `judged` fixtures ask for

FAILING_BUDGET_S = 4.0  # past the late failure of context-lost.html (2.5 s after load)
GOOD_BUDGET_S = 15.0

FAILING = {
    "throws-after-render.html": "page-error",  # renders, then throws once sampled good
    "parse-time-throw.html": "page-error",  # one script throws while parsing, the canvas works
    "console-error-once.html": "page-error",  # one console.error, the scene runs
    "loading-black.html": "blank-canvas",  # loading over a context-less canvas, then black
    "loading-zero.html": "blank-canvas-0",  # loading, then a 0×0 backing store
    "never-draws.html": "blank-canvas",  # a WebGL context over a grey page, no draw call
    "context-lost.html": "fatal-overlay",  # good for 2.5 s after load, then lost for good
    "broken.xhtml": "parse-error",
    "broken.svg": "parse-error",
    "never-links.html": "webgl-error",  # drawArrays with no valid program, a flat clear colour
    "overlay-clears-then-black.html": "blank-canvas",  # the overlay goes, the failure stays
    "error-cancelled.html": "page-error",  # its own handlers cancel the error and rejection
}
GOOD = (
    "fatalities-report.html",  # id="fatalities", "Error bars show…", "failed to report"
    "offscreen.html",  # the canvas drawn by a worker
    "blocked-resource.html",  # a CDN image and an API fetch, both refused by the gate
    "text-measure.html",  # canvases that never draw, off screen or with no CSS size
)


failing = judged("failing", FAILING, FAILING_BUDGET_S)
good = judged("good", GOOD, GOOD_BUDGET_S)


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(FAILING))
def test_each_pitfall_page_fails_at_the_end_of_the_budget(
    failing: dict[str, Verdict], name: str
) -> None:
    verdict = failing[name]
    assert verdict.verdict == FAILING[name], verdict.report()
    assert verdict.failed and not verdict.timings["stoppedEarly"]
    assert not verdict.recovered  # nothing cleared
    # Judged by the last sample: a canvas still not drawn at the end never drew.
    assert verdict.history[-1] in (verdict.verdict, "waiting" if name == "never-draws.html" else "")


@pytest.mark.browser
def test_an_error_is_never_forgiven(failing: dict[str, Verdict]) -> None:
    late = failing["throws-after-render.html"]
    first_error = late.history.index("page-error")
    assert set(late.history[first_error:]) == {"page-error"}  # and drew fine after
    (canvas,) = late.canvas
    assert canvas["drawCalls"] > 0 and canvas["framePixel"]["mean"] > 50
    (thrown,) = kinds(late, "exception")
    assert thrown["where"] == "throws-after-render.html:16:7"
    assert "Cannot read properties of null (reading 'update')" in str(thrown["what"])
    assert int(str(thrown["atMs"])) >= late.timings["loadMs"]  # it threw after its load
    parse = failing["parse-time-throw.html"]
    assert "ok" not in parse.history and parse.history[-1] == "page-error"
    assert [f["where"] for f in kinds(parse, "exception")] == ["parse-time-throw.html:6:1"]
    cancelled = [str(f["what"]) for f in kinds(failing["error-cancelled.html"], "exception")]
    assert len(cancelled) == 2 and all("cancelled by the page's own" in c for c in cancelled)
    assert "reading 'render'" in cancelled[0] and "图例数据缺失" in cancelled[1]
    once = failing["console-error-once.html"]
    assert once.errors == ["console.error: 纹理配置缺失：使用默认材质"]
    assert [f["count"] for f in kinds(once, "console.error")] == [1]


@pytest.mark.browser
def test_a_canvas_is_judged_by_what_the_page_drew(failing: dict[str, Verdict]) -> None:
    # A canvas with no context yet is not judged: the screenshot behind it is the page's.
    for name in ("loading-black.html", "loading-zero.html"):
        history = failing[name].history
        assert history[0] == "waiting" and "ok" not in history, (name, history)
    (black,) = failing["loading-black.html"].canvas
    assert black["context"] == "webgl" and black["drawCalls"] > 0
    assert black["ownPixels"]["blank"] and black["ownPixels"]["max"] == 0
    # A context never drawn into: the grey page shows through, and it is not the canvas.
    never = failing["never-draws.html"]
    assert set(never.history) == {"waiting"}
    (canvas,) = never.canvas
    assert canvas["context"] == "webgl" and canvas["drawCalls"] == 0
    assert canvas["screenshotPixel"] is None  # the screenshot is no fallback for it
    assert [f["what"] for f in kinds(never, "canvas")] == [
        "640×360 (CSS 1280×720), webgl: not one draw call"
    ]


@pytest.mark.browser
def test_a_page_good_for_seconds_then_lost_for_good_fails(failing: dict[str, Verdict]) -> None:
    verdict = failing["context-lost.html"]
    overlay_at = verdict.history.index("fatal-overlay")
    # A sample taken before the first frame drew is "waiting" (not yet judged); after it, the
    # page is good for at least two samples, then lost for good.
    before = verdict.history[:overlay_at]
    drawn = [state for state in before if state != "waiting"]
    assert before[: len(before) - len(drawn)] == ["waiting"] * (len(before) - len(drawn))
    assert len(drawn) >= 2 and set(drawn) == {"ok"}, verdict.history
    assert set(verdict.history[overlay_at:]) == {"fatal-overlay"}
    assert (verdict.overlay_text or "").split() == [
        "渲染失败",
        "WebGL",
        "上下文丢失，无法继续渲染。",
    ]
    (canvas,) = verdict.canvas
    assert canvas["contextLostMs"] is not None and canvas["framePixel"] == {"lost": True}
    (lost,) = [f for f in kinds(verdict, "webgl") if f["what"] == "WebGL context lost"]
    (shown,) = kinds(verdict, "overlay")
    assert shown["where"] == "#fatal" and int(str(shown["atMs"])) >= int(str(lost["atMs"]))


@pytest.mark.browser
def test_an_overlay_that_went_away_from_a_page_still_broken_is_not_recovered(
    failing: dict[str, Verdict],
) -> None:
    verdict = failing["overlay-clears-then-black.html"]
    assert verdict.history[0] == "fatal-overlay" and not verdict.recovered
    (shown,) = kinds(verdict, "overlay")
    assert shown["where"] == "#fatal" and " — gone at " in str(shown["what"])


@pytest.mark.browser
def test_a_document_the_parser_rejects_is_a_parse_error(failing: dict[str, Verdict]) -> None:
    (xhtml,) = kinds(failing["broken.xhtml"], "parse-error")
    assert xhtml["what"] == (
        "error on line 5 at column 18: Opening and ending tag mismatch: br line 5 and p"
    )
    (svg,) = kinds(failing["broken.svg"], "parse-error")
    assert str(svg["what"]).startswith("error on line 3 at column 53:")


@pytest.mark.browser
def test_a_program_that_never_links_is_a_webgl_error(failing: dict[str, Verdict]) -> None:
    verdict = failing["never-links.html"]
    (canvas,) = verdict.canvas
    assert canvas["framePixel"]["mean"] > 50  # the flat clear colour, not black
    assert canvas["invalidDrawCalls"] > 0 and canvas["drawCalls"] > 0  # the clears
    link = [f for f in kinds(verdict, "webgl") if "did not link" in str(f["what"])]
    assert len(link) == 1 and link[0]["where"] == "canvas 1"
    assert "'out' : storage qualifier supported in GLSL ES 3.00" in str(link[0]["what"])
    said = [str(f["what"]) for f in kinds(verdict, "webgl")]
    assert any("drawArrays: no valid shader program in use" in s for s in said)
    assert verdict.errors == [] and verdict.error_count == 0


@pytest.mark.browser
@pytest.mark.parametrize("name", GOOD)
def test_what_is_not_broken_is_ok(good: dict[str, Verdict], name: str) -> None:
    verdict = good[name]
    assert verdict.verdict == "ok", verdict.report()
    assert verdict.timings["stoppedEarly"] and not verdict.recovered
    assert "fatal-overlay" not in verdict.history and verdict.errors == []


@pytest.mark.browser
def test_the_early_stop_waits_for_a_sustained_good_window(good: dict[str, Verdict]) -> None:
    for verdict in good.values():
        loaded = verdict.timings["loadMs"]
        assert loaded is not None and verdict.elapsed_ms >= loaded + SETTLE_S * 1000


@pytest.mark.browser
def test_what_the_gate_blocked_is_evidence_not_an_error(good: dict[str, Verdict]) -> None:
    verdict = good["blocked-resource.html"]
    assert verdict.error_count == 0 and verdict.errors == []
    unseen = [str(f["what"]) for f in kinds(verdict, "not-seen")]
    assert any(s.startswith("https://cdn.example.com/logo.png (image)") for s in unseen)
    assert all("could not see" in s or "not counted" in s for s in unseen)
    assert any("fetch the gate refused" in s and "Failed to fetch" in s for s in unseen)


@pytest.mark.browser
def test_the_evidence_lists_what_it_counts(
    failing: dict[str, Verdict], good: dict[str, Verdict]
) -> None:
    for verdict in [*failing.values(), *good.values()]:
        evidence = verdict.evidence()
        listed = sum(int(str(f["count"])) for f in verdict.findings if f["kind"] in ERROR_KINDS)
        counted = sum(int(m[1]) if (m := re.search(r" \(×(\d+)\)$", e)) else 1
                      for e in verdict.errors)  # fmt: skip
        assert evidence["errorCount"] == listed == counted, verdict.report()
        report = evidence["report"]
        assert report == verdict.report() and len(report) == len(verdict.findings) + 1
        assert report[0].startswith(f"{verdict.verdict} after ")
        times = [f["atMs"] for f in verdict.findings if f["atMs"] is not None]
        assert times == sorted(times)  # in the order seen


def test_the_overlay_convention_is_an_id_not_a_prefix() -> None:
    convention = re.compile(OVERLAY_IDS)
    for name in ("fatal", "fatalTitle", "fatalMsg", "fatalDetail", "fatal-msg", "fatal_box"):
        assert convention.search(name), name
    for name in ("fatalities", "fatalitiesChart", "fatally", "nonfatal"):
        assert not convention.search(name), name
    wording = re.compile(FAILURE_WORDS, re.IGNORECASE)
    assert wording.search("初始化失败") and wording.search("Shader failed to compile")
    assert not wording.search("terrorism statistics, failsafe mode")


def test_a_report_for_people_from_findings_and_from_an_old_stored_verdict() -> None:
    findings: list[dict[str, object]] = [
        {"kind": "exception", "what": "uncaught TypeError: x\n    at f (a.html:2:3)",
         "where": "a.html:2:3", "atMs": 712, "count": 1},
        {"kind": "console.error", "what": "console.error: oops", "where": None, "atMs": 900,
         "count": 3},
        {"kind": "not-seen", "what": "https://cdn.example.com/x.js (script): blocked",
         "where": None, "atMs": None, "count": 1},
    ]  # fmt: skip
    assert report_lines("page-error", False, 4300, findings) == [
        "page-error after 4.3 s: the page threw an uncaught exception, left a rejection "
        "unhandled or logged console.error",
        " 0.7s exception a.html:2:3: uncaught TypeError: x / at f (a.html:2:3)",
        " 0.9s console.error console.error: oops (×3)",
        "      not-seen https://cdn.example.com/x.js (script): blocked",
    ]
    # A verdict stored before findings existed still reads as its first line.
    assert report_lines("ok", True, 2000, []) == [
        "ok (recovered) after 2.0 s: the page loaded and showed what it drew, with no error"
    ]


def test_findings_are_stored_with_the_verdict(tmp_path: Path) -> None:
    verdict = Verdict(
        path=str(tmp_path / "a.html"), sha256="0" * 64, verdict="page-error", recovered=False,
        elapsed_ms=4100, screenshot=None, canvas=[], errors=["console.error: oops"],
        overlay_text=None, error_count=1,
        findings=[{"kind": "console.error", "what": "console.error: oops", "where": "a.html:1:1",
                   "atMs": 120, "count": 1}],
    )  # fmt: skip
    with Store(tmp_path / "state") as store:
        save_verdict(store, verdict)
        (stored,) = recent_verdicts(store)
    assert stored["findings"] == verdict.findings
    assert stored["report"] == verdict.report() and len(stored["report"]) == 2


def test_a_verdict_stored_before_findings_reads_back_with_a_report(tmp_path: Path) -> None:
    old = {
        "verdict": "fatal-overlay",
        "recovered": False,
        "elapsedMs": 21000,
        "errors": [],
        "overlayText": "初始化失败",
        "canvas": [],
        "screenshot": None,
        "errorCount": 0,
    }
    with Store(tmp_path / "state") as store:
        with store.transaction() as db:
            db.execute(
                "INSERT INTO gate_verdicts (at, path, sha256, verdict, recovered, elapsed_ms, "
                "screenshot, evidence) VALUES (1, 'a.html', 'x', 'fatal-overlay', 0, 21000, "
                "NULL, ?)",
                (orjson.dumps(old).decode(),),
            )
        (stored,) = recent_verdicts(store)
    assert stored["overlayText"] == "初始化失败" and stored["findings"] == []
    assert stored["report"] == [
        "fatal-overlay after 21.0 s: the page shows its own fatal-error overlay"
    ]
