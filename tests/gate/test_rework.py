"""The rework instruction: every hard failure the judge can give has its meaning for the
agent, and the evidence is the judge's report of its findings (an old stored verdict, with
none, still shows its errors and canvases)."""

from __future__ import annotations

from typing import Any

from dshkit.gate.judge import HARD_FAILURES, VERDICTS, Verdict
from dshkit.gate.rework import MEANING, NOT_FAILURES, instruction


def _verdict(name: str, findings: list[dict[str, Any]], **fields: Any) -> Verdict:
    return Verdict(
        path="/work/page.html",
        sha256="0" * 64,
        verdict=name,
        recovered=False,
        elapsed_ms=4000,
        screenshot="/state/gate-shots/shot.png",
        canvas=fields.get("canvas", []),
        errors=fields.get("errors", []),
        overlay_text=fields.get("overlay_text"),
        findings=findings,
    )


def _finding(kind: str, what: str, where: str | None, at_ms: int, count: int = 1) -> dict[str, Any]:
    return {"kind": kind, "what": what, "where": where, "atMs": at_ms, "count": count}


def test_every_hard_failure_of_the_judge_has_a_meaning_for_the_agent() -> None:
    assert set(MEANING) == set(HARD_FAILURES)
    # Every other verdict is no failure: nothing goes back (needs-gesture, needs-network).
    assert set(NOT_FAILURES) == set(VERDICTS) - HARD_FAILURES
    for name in ("parse-error", "webgl-error"):
        text = instruction([_verdict(name, []).evidence()])
        assert f"判定：{name}（{MEANING[name]}）" in text


def test_the_evidence_is_the_judges_report_of_its_findings() -> None:
    verdict = _verdict(
        "webgl-error",
        [
            _finding("webgl", "program failed to link: ERROR: 0:3: 'layout'", "#scene", 310),
            _finding("webgl", "37 draw calls with no valid shader program in use", "#scene", 320),
            _finding("console.error", "console.error: shader failed", "main.js:12:5", 330, 3),
            {
                "kind": "not-seen",
                "what": "https://cdn.example.com/three.js (script): blocked",
                "where": None,
                "atMs": None,
                "count": 1,
            },
        ],
        errors=["console.error: shader failed (×3)"],
    )
    text = instruction([verdict.evidence()])
    report = verdict.report()
    for line in report[1:]:  # each finding, as the judge reports it to people
        assert f"- {line.strip()}" in text
    assert "main.js:12:5" in text and "(×3)" in text and "- 0.3s webgl #scene:" in text
    assert "\n- not-seen https://cdn.example.com/three.js" in text
    assert "页面错误：" not in text  # the raw error list is not repeated beside the report
    assert "截图：/state/gate-shots/shot.png" in text


def test_a_cut_report_line_still_leaves_the_whole_overlay_text() -> None:
    log = "初始化失败\n" + "\n".join(f"[scene.vs] ERROR: 0:{n}: 'layout'" for n in range(40))
    finding = _finding("overlay", log, "#fatal", 500)
    text = instruction([_verdict("fatal-overlay", [finding], overlay_text=log).evidence()])
    assert "[scene.vs] ERROR: 0:39: 'layout'" in text  # past the report line's cut
    assert "…" in _verdict("fatal-overlay", [finding]).report()[1]


def test_a_verdict_stored_before_findings_still_shows_its_errors_and_canvases() -> None:
    old = {
        "verdict": "page-error",
        "path": "/work/page.html",
        "elapsedMs": 4000,
        "errors": ["uncaught TypeError: boom (×2)", "console.error: nope"],
        "errorCount": 12,
        "canvas": [
            {
                "width": 300,
                "height": 150,
                "cssWidth": 300,
                "cssHeight": 150,
                "context": "2d",
                "framePixel": {"mean": 0, "max": 0},
                "screenshotPixel": None,
            }
        ],
        "screenshot": None,
    }
    text = instruction([old, old | {"report": ["page-error after 4.0 s: …"], "findings": []}])
    assert text.count("- uncaught TypeError: boom (×2)") == 2
    assert text.count("（另有 9 条错误未列出，见证据记录）") == 2
    assert "画布 1：后备缓冲 300×150" in text and "实测证据" not in text
