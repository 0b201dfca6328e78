"""The delivery gate in real headless Chromium: the seed's samples, a page for every verdict
and every pitfall found running Chromium here, the stored evidence, the CLI, and the browser
cleaned up on every way out."""

from __future__ import annotations

import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import orjson
import pytest

from dshkit.errors import NotFound
from dshkit.gate import GateService
from dshkit.gate.browser import Browser
from dshkit.gate.judge import Verdict, png_stats
from dshkit.gate.verdicts import recent_verdicts
from dshkit.store import Store

from ..support.cli import run_dshkit
from ..support.gate import judged, own_pixels, shots
from ..support.paths import PAGES

__all__ = ["shots"]  # the fixture the `judged` fixtures ask for

# Failing pages use the whole budget, good ones stop early: a short budget for the first, a
# long one for the second (a good page must stop by its own rule, well before it).
FAILING_BUDGET_S = 4.0
GOOD_BUDGET_S = 15.0
KILL_LANDS_S = 5.0  # the longest a SIGKILLed child of the browser may take to be gone

FAILING = {
    "shader-assembly.html": "fatal-overlay",  # seed: the three-layer assembly bug
    "tank.html": "blank-canvas-0",  # seed: a 0×0 backing store under a full-page CSS size
    "page-error.html": "page-error",  # an exception once it was sampled good after load
    "rejection.html": "page-error",  # an unhandled rejection
    "console-error.html": "page-error",
    "blank-canvas.html": "blank-canvas",
    "infinite-loop.html": "unresponsive",
}
GOOD = (
    "shader-assembly.fixed.html",  # seed: fixed
    "tank.fixed.html",  # seed: fixed
    "overlay-clears.html",  # seed: a failure overlay from a first attempt, then the scene
    "dark-scene.html",
    "loading-text.html",
    "hidden-overlay.html",
    "draw-once.html",
    "late-context.html",
    "no-canvas.html",
    "chart-2d.html",
    "badge.svg",
)


failing = judged("failing", FAILING, FAILING_BUDGET_S)
good = judged("good", GOOD, GOOD_BUDGET_S)


@pytest.mark.browser
def test_the_seed_shader_assembly_page_is_a_fatal_overlay_with_its_shader_log(
    failing: dict[str, Verdict],
) -> None:
    verdict = failing["shader-assembly.html"]
    assert verdict.verdict == "fatal-overlay" and not verdict.recovered
    assert verdict.overlay_text is not None
    assert "初始化失败" in verdict.overlay_text
    assert "[scene.vs] ERROR: 0:3: 'layout' : syntax error" in verdict.overlay_text
    assert verdict.timings["stoppedEarly"] is False  # a failure is final only at the end


@pytest.mark.browser
def test_the_seed_zero_canvas_page_is_blank_canvas_0(failing: dict[str, Verdict]) -> None:
    verdict = failing["tank.html"]
    assert verdict.verdict == "blank-canvas-0"
    # Pitfall 1: the 0×0 store still has a drawing buffer; its size is what tells.
    (canvas,) = verdict.canvas
    assert (canvas["width"], canvas["height"]) == (0, 0)
    assert (canvas["cssWidth"], canvas["cssHeight"]) == (1280, 720)


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(FAILING))
def test_each_failing_page_gets_its_verdict_at_the_end_of_the_budget(
    failing: dict[str, Verdict], name: str
) -> None:
    verdict = failing[name]
    assert verdict.verdict == FAILING[name], verdict.evidence()
    assert verdict.failed and not verdict.timings["stoppedEarly"]
    assert verdict.history[-1] == verdict.verdict  # judged by the last sample


@pytest.mark.browser
def test_page_errors_carry_what_the_page_threw(failing: dict[str, Verdict]) -> None:
    late = failing["page-error.html"]
    assert "ok" in late.history  # pitfall 4: it looked good right after load
    assert any("Cannot read properties of undefined" in e for e in late.errors)
    assert any("数据源未配置" in e for e in failing["rejection.html"].errors)
    assert failing["console-error.html"].errors == [
        "console.error: 配置加载失败: settings.json 缺少字段 theme"
    ]


@pytest.mark.browser
def test_a_stuck_main_thread_is_unresponsive_not_a_hung_gate(
    failing: dict[str, Verdict],
) -> None:
    verdict = failing["infinite-loop.html"]
    stuck = verdict.history[verdict.history.index("unresponsive") :]
    assert set(stuck) == {"unresponsive"}  # every sample from then on bounded by its timeout
    assert verdict.canvas == [] and verdict.errors == []


@pytest.mark.browser
def test_a_blank_canvas_is_dark_inside_the_frame_and_whole(failing: dict[str, Verdict]) -> None:
    (canvas,) = failing["blank-canvas.html"].canvas
    assert canvas["framePixel"] == {"mean": 0, "max": 0}
    # Its own buffer, read whole in the frame it drew: what it shows, no screenshot needed.
    assert own_pixels(canvas) == {
        "blank": True,
        "max": 0,
        "mean": 0,
        "alpha": 255,
    }
    assert not canvas["ownPixels"]["faint"]
    assert canvas["screenshotPixel"] is None


@pytest.mark.browser
@pytest.mark.parametrize("name", GOOD)
def test_good_pages_are_ok_and_stop_early_by_their_own_rule(
    good: dict[str, Verdict], name: str
) -> None:
    verdict = good[name]
    assert verdict.verdict == "ok", verdict.evidence()
    timings = verdict.timings
    assert timings["stoppedEarly"] is True and verdict.history[-2:] == ["ok", "ok"]
    assert timings["loadMs"] is not None
    assert verdict.elapsed_ms < GOOD_BUDGET_S * 1000
    assert verdict.screenshot is not None and Path(verdict.screenshot).is_file()
    assert verdict.blocked == []  # it loads nothing from outside its directory


@pytest.mark.browser
def test_an_overlay_that_clears_is_ok_and_recovered(good: dict[str, Verdict]) -> None:
    verdict = good["overlay-clears.html"]
    assert verdict.recovered and verdict.history[0] == "fatal-overlay"
    assert verdict.overlay_text is None
    assert not any(v.recovered for n, v in good.items() if n != "overlay-clears.html")


@pytest.mark.browser
def test_what_is_not_dead(good: dict[str, Verdict]) -> None:
    (dark,) = good["dark-scene.html"].canvas
    assert 2 <= dark["framePixel"]["mean"] < 20  # a night scene, not black
    loading = good["loading-text.html"]
    assert loading.history[0] != "ok" and "fatal-overlay" not in loading.history
    assert "fatal-overlay" not in good["hidden-overlay.html"].history
    assert good["no-canvas.html"].canvas == []


@pytest.mark.browser
def test_a_page_that_drew_once_is_judged_by_its_screenshot(good: dict[str, Verdict]) -> None:
    (canvas,) = good["draw-once.html"].canvas
    assert canvas["framePixel"] == {"mean": 0, "max": 0}  # pitfall 2: zeros in a later frame
    assert canvas["screenshotPixel"]["mean"] > 50


@pytest.mark.browser
def test_the_judge_leaves_the_context_type_to_the_page(good: dict[str, Verdict]) -> None:
    (canvas,) = good["late-context.html"].canvas  # pitfall 3: asked for after 600 ms
    assert canvas["context"] == "webgl2" and good["late-context.html"].errors == []


@pytest.mark.browser
def test_draw_calls_through_a_linked_program_are_counted(good: dict[str, Verdict]) -> None:
    (canvas,) = good["shader-assembly.fixed.html"].canvas
    assert canvas["drawCalls"] > 0 and canvas["invalidDrawCalls"] == 0
    assert not [f for f in good["shader-assembly.fixed.html"].findings if f["kind"] == "webgl"]


@pytest.mark.browser
def test_warnings_are_not_errors(good: dict[str, Verdict]) -> None:
    assert "console.warn" in (PAGES / "dark-scene.html").read_text()  # pitfall 7
    assert good["dark-scene.html"].errors == []


@pytest.mark.browser
def test_screenshots_are_private_pngs(good: dict[str, Verdict]) -> None:
    shot = Path(good["tank.fixed.html"].screenshot or "")
    assert shot.stat().st_mode & 0o777 == 0o600
    mean, peak = png_stats(shot.read_bytes())
    assert mean > 50 and peak > 100  # the fixed tank's green clear colour


@pytest.mark.browser
def test_verdicts_are_stored_with_their_evidence(tmp_path: Path) -> None:
    state = tmp_path / "state"
    gate = GateService(state)
    verdict = gate.check(PAGES / "console-error.html", 2.0)
    assert verdict.id is not None
    with Store(state) as store:
        (stored,) = recent_verdicts(store)
    assert gate.verdict(verdict.id) == stored == gate.verdicts(1).as_json()["verdicts"][0]
    with pytest.raises(NotFound, match=f"no gate verdict {verdict.id + 1}"):
        gate.verdict(verdict.id + 1)
    assert stored["id"] == verdict.id and stored["verdict"] == "page-error"
    assert stored["sha256"] == verdict.sha256 and stored["errorCount"] == 1
    assert stored["timings"]["budgetMs"] == 2000 and stored["history"]
    assert str(stored["screenshot"]).startswith(str(state / "gate-shots"))


@pytest.mark.browser
def test_the_command_prints_exactly_the_verdict(tmp_path: Path) -> None:
    done = _cli(tmp_path, str(PAGES / "tank.html"), "--budget", "2", "--json")
    assert done.returncode == 1
    printed = orjson.loads(done.stdout)
    assert list(printed) == [
        "verdict",
        "recovered",
        "elapsedMs",
        "screenshot",
        "canvas",
        "errors",
        "overlayText",
        "findings",
        "report",
    ]
    assert printed["verdict"] == "blank-canvas-0"
    fine = _cli(tmp_path, str(PAGES / "no-canvas.html"))
    assert fine.returncode == 0 and fine.stdout.startswith(b"ok after ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["README.md"], "not a web deliverable"),
        (["missing.html"], "no such file"),
        ([str(PAGES / "no-canvas.html"), "--budget", "0.5"], "0.5 is not in the range"),
    ],
)
def test_the_command_refuses_what_it_cannot_judge(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = _cli(tmp_path, *args)
    assert done.returncode != 0 and message in done.stderr.decode()


@pytest.mark.browser
def test_the_browser_group_and_profile_go_on_an_exception() -> None:
    with pytest.raises(RuntimeError, match="boom"), Browser() as browser:
        assert browser.process is not None
        pid, profile = browser.process.pid, browser.profile
        assert profile.is_dir()
        raise RuntimeError("boom")
    assert not profile.exists() and _alive_in_group(pid) == []


@pytest.mark.browser
def test_the_browser_group_and_profile_go_when_a_judge_is_interrupted(tmp_path: Path) -> None:
    # The hook's alarm interrupts a gate mid-sample: nothing of the browser may stay behind.
    script = (
        "import signal, sys\n"
        "from pathlib import Path\n"
        "from dshkit.gate.judge import judge_files\n"
        "import dshkit.gate.browser as b\n"
        "start = b.Browser._start\n"
        "def spy(self):\n"
        "    start(self)\n"
        "    print(self.process.pid, self.profile, flush=True)\n"
        "b.Browser._start = spy\n"
        "def alarm(*_): raise KeyboardInterrupt\n"
        "signal.signal(signal.SIGALRM, alarm)\n"
        "signal.setitimer(signal.ITIMER_REAL, 3.0)\n"
        "try:\n"
        f"    judge_files([Path({str(PAGES / 'infinite-loop.html')!r})], 20, Path(sys.argv[1]))\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, timeout=60
    )
    pid, profile, outcome = done.stdout.decode().split()
    assert outcome == "interrupted", done.stderr
    assert not Path(profile).exists() and _alive_in_group(int(pid)) == []


def test_png_stats_reads_every_filter() -> None:
    # A 3×2 RGB image whose rows use filters 1 (sub) and 4 (Paeth).
    rows = bytes([1, 10, 20, 30, 5, 5, 5, 5, 5, 5]) + bytes([4, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    header = struct.pack(">IIBBBBB", 3, 2, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + b"\0\0\0\0"

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    # Row 1: (10,20,30) (15,25,35) (20,30,40); row 2: the pixel above plus (1,1,1) for the
    # first, then Paeth picks the pixel above: (11,21,31) (15,25,35) (20,30,40).
    assert png_stats(png) == ((225 + 228) / 18, 40)


def _alive_in_group(group: int) -> list[int]:
    """The processes of `group` still running once SIGKILL has had time to land (it is sent
    to the group at once, but a child on a busy machine can take a moment to die; a killed
    child re-parented to an init that does not reap stays a zombie: dead, not running)."""
    deadline = time.monotonic() + KILL_LANDS_S
    while (alive := _running_in_group(group)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return alive


def _running_in_group(group: int) -> list[int]:
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] not in ("Z", "X"):
            alive.append(int(entry.name))
    return alive


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return run_dshkit(
        "gate", *args, "--state-dir", str(tmp_path / "state"),
        home=tmp_path, cwd=tmp_path, text=False, timeout=60, check=False,
    )  # fmt: skip
