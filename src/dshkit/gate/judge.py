"""Judging a web deliverable in headless Chromium: sample it until it is clearly good or the
budget is spent, and give a verdict with the measured evidence.

What one sample sees (docs/design/gate.md#what-one-sample-sees): the page's fatal overlay (the
page convention, docs/design/gate.md#the-overlay-convention: visible
elements with ids like `fatal`, `fatalTitle`, `fatalMsg`, `fatalDetail`, holding failure
wording, within the document's reach), the parser's error box of an XML page, each canvas's
backing-store size, what the page drew into it (draw calls counted by the init script, WebGL
draws with no valid program apart, shaders that did not compile and programs that failed to
link with their logs), and the centre of each canvas read inside a frame through the page's
own context, and the whole of it where its buffer holds the picture it shows
(docs/design/gate.md#a-canvas-is-judged-by-its-own-pixels): a canvas is judged by its own
pixels, the screenshot only the fallback for a canvas whose buffer was cleared since it drew
(a page that drew once), read where the canvas itself is on top (a panel over its centre is
not the canvas) with every other element hidden, below the first screen too. A canvas that is
a dim texture with no shape, beside at most a small overlay of the page's own (an FPS box),
a canvas never sized whose draws land outside it, and a page with nothing at all to show are
blank (docs/design/gate.md#a-scene-nobody-can-see-did-not-show). A canvas with no context,
or none drawn into yet, is not judged yet: whatever shows through it is the page behind, not
the canvas; one hidden by CSS is not judged at all, nor one with no CSS size, unless the page
renders into it.
A page that waits for a person (a start control, a waiting canvas that listens for input) gets
one gesture, as a person makes it, and what follows is judged; still waiting at the end, it
`needs-gesture` (no failure). The page's
frames are sampled with it: an embedded page is on screen too.

Errors are never forgiven: an uncaught exception, an unhandled rejection or a
`console.error` anywhere in the observation makes the page `page-error`, however well it
draws afterwards. A load the gate refused is not the page's error (nor the rejection of a
refused fetch the page left unhandled): it is listed as what the verdict could not see. A page
whose failure follows from a script refused from the network (a CDN's library, a module's
import), with no error of its own beside it, is `needs-network` (`attribution`): no failure,
never `ok`.

A sample is bounded by a timeout: a stuck main thread is `unresponsive`, never a hung gate.
Sampling stops early only when the page has stayed good for a sustained window (it is
loaded for `SETTLE_S` and good for `GOOD_RUN_S` without a break, and no one-shot timer of
its due within `TIMER_HORIZON_S` of its load is still to fire, and any fatal overlay shown
after the load is gone for good); otherwise it uses the whole budget and judges by the last
sample, because a page may show a failure and then recover, but a page good at the end after
an overlay that kept coming back is `fatal-overlay`. With `on_early`, the early "ok" is handed
over at once and the page watched on to the end of the budget while it has pending work: a
late failure is the verdict returned.
`recovered` says a failure that really cleared (an overlay gone, a thread unstuck after the
load) before an `ok`. Real time only: virtual time would fire the page's own watchdogs early.
A rejection the page handled late (`rejectionhandled`) was not left unhandled; a navigation
to a page that cannot load (never written) is the page's error.

The evidence is a list of findings (what was seen, where, when, how often) that `report`
turns into short lines for people, beside the measured JSON.

The page is untrusted (`confinement`): it loads only files under its own directory (only its
own file when that directory is the home directory, the temporary directory or the root,
which a finding says), reaches no network, runs no service worker, and each load refused is
listed in the evidence.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import re
import struct
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import Invalid
from ..paths import private_dir, private_opener
from . import attribution, probe
from .browser import Browser
from .wire import VerdictEvidenceJson, VerdictSummaryJson

DELIVERABLE_SUFFIXES = (".html", ".htm", ".xhtml", ".svg")
DEFAULT_BUDGET_S = 20.0
MIN_BUDGET_S = 1.0
MAX_BUDGET_S = 300.0

OK = "ok"
FATAL_OVERLAY = "fatal-overlay"
PARSE_ERROR = "parse-error"
PAGE_ERROR = "page-error"
BLANK_CANVAS_0 = "blank-canvas-0"
WEBGL_ERROR = "webgl-error"
BLANK_CANVAS = "blank-canvas"
UNRESPONSIVE = "unresponsive"
NEEDS_GESTURE = "needs-gesture"  # not a failure: the page waits for a person, clicked once
NEEDS_NETWORK = attribution.NEEDS_NETWORK  # not a failure: it needs a script the gate refused
VERDICTS = (
    OK,
    FATAL_OVERLAY,
    PARSE_ERROR,
    PAGE_ERROR,
    BLANK_CANVAS_0,
    WEBGL_ERROR,
    BLANK_CANVAS,
    UNRESPONSIVE,
    NEEDS_GESTURE,
    NEEDS_NETWORK,
)
HARD_FAILURES = frozenset(VERDICTS) - {OK, NEEDS_GESTURE, NEEDS_NETWORK}
WAITING = "waiting"  # a sample's state only: a canvas not judged yet (no context, no draw)
# What each verdict means, for people (the CLI, the console, the evidence's first line).
MEANING = {
    OK: "the page loaded and showed what it drew, with no error",
    FATAL_OVERLAY: "the page shows its own fatal-error overlay",
    PARSE_ERROR: "the browser could not parse the document (its parser-error box is shown)",
    PAGE_ERROR: "the page threw an uncaught exception, left a rejection unhandled or "
    "logged console.error",
    BLANK_CANVAS_0: "a canvas's backing store is 8 pixels or less: it shows nothing",
    WEBGL_ERROR: "WebGL draws nothing of the scene: a shader did not compile, or draw calls "
    "have no valid shader program in use",
    BLANK_CANVAS: "a canvas shows nothing: it never drew, it is black in the frame and on "
    "screen, it is a dim texture with no shape with at most a small overlay beside it, or it "
    "was never sized and its scene is drawn outside it; or the page shows nothing at all",
    UNRESPONSIVE: "the page's main thread did not answer a sample in time",
    NEEDS_GESTURE: "the page waits for a person's gesture: clicked once the way a person "
    "would, it still showed nothing that can be judged (not a failure)",
    NEEDS_NETWORK: "the page loads scripts from the network, which the gate refuses: what "
    "went wrong offline follows from their absence, so it could not be judged offline (not a "
    "failure; open it with the network to see it work)",
}
RECOVERABLE = frozenset({FATAL_OVERLAY, UNRESPONSIVE, WEBGL_ERROR})  # states that can clear

# The overlay convention: `fatal` alone or followed by a part of a name (fatalTitle,
# fatal-msg, fatal_detail), never a word that merely starts so (`fatalities`).
OVERLAY_IDS = r"^(?:fatal|Fatal|FATAL)(?![a-z])"
# The overlay's failure wording, Chinese and its English equivalents
# (docs/design/gate.md#the-overlay-convention).
FAILURE_WORDS = (
    "失败|错误|无法|异常|超时|不支持|丢失"
    r"|\b(?:fail(?:s|ed|ure)?|errors?|unable|cannot|can't|exception|timed? ?out"
    r"|not supported|unsupported|lost)\b"
)
# What a control that starts the page says (a person clicks it): Chinese and English.
START_WORDS = (
    "开始|开始游戏|进入|启动|点击|继续|玩"
    r"|\b(?:start|play|begin|launch|enter|click|tap|press|go)\b"
)
# The click: once the page has been loaded this long and waiting (a canvas with no context or
# no draw) for two samples in a row, with something that takes a gesture.
GESTURE_AFTER_S = 1.0
GESTURE_TIMEOUT_S = 1.0
# "Recovered for good" from a fatal overlay shown after load: gone, and the page good since
# for this long at least, and at least this many times the longest stretch the overlay was
# gone between two showings (a blinking banner is not a recovery), over this many samples.
RECOVERED_S = 3.0
RECOVERED_GAPS = 3.0
RECOVERED_SAMPLES = 4
# After an early "ok" the page is watched to the end of its budget (a rAF callback that throws
# at 5 s, an interval watchdog at 6 s), sampled this often, until it has no pending work
# (timers, intervals, an animation loop, fetches) for this many samples in a row.
WATCH_INTERVAL_S = 0.5
IDLE_IN_A_ROW = 2
TINY_CANVAS = 8  # a backing store this small in either dimension shows nothing
# A canvas never sized: its default backing store, stretched by CSS this many times at least,
# with this share of its placed draw calls (of this many at least) outside the backing store.
DEFAULT_CANVAS = (300, 150)
STRETCHED = 2
OUTSIDE_SHARE = 0.6
MIN_PLACED = 20
BLANK_MEAN, BLANK_MAX = probe.BLANK_MEAN, probe.BLANK_MAX  # mean < 2 and max < 8 (RGB)
# The early stop: loaded this long (a page may fail seconds after its load: a lost context,
# its own watchdog), and good without a break this long.
SETTLE_S = 3.0
GOOD_RUN_S = 1.0
GOOD_IN_A_ROW = 2
# Nor before the page's one-shot timers due this long after its load have fired (a watchdog
# that shows its failure at 3.5 s), seen fired by this many samples in a row. A timer due
# later does not hold a good page back.
TIMER_HORIZON_S = 8.0
QUIET_IN_A_ROW = 2
INTERVAL_S = 0.25
SAMPLE_TIMEOUT_S = 2.0
MIN_SAMPLE_S = 0.5  # the least a sample is given, the last one too (a healthy page needs less)
SHOT_REGION = probe.SPOT  # CSS pixels of a canvas's block checked in the screenshot
SHOT_TIMEOUT_S = 1.0
FINAL_SHOT_TIMEOUT_S = 2.0  # the verdict's screenshot: a busy machine can take over a second
STUCK_SHOT_TIMEOUT_S = 0.3  # the screenshot of a stuck page rarely comes: do not overshoot
VIEWPORT = {"width": 1280, "height": 720}
MAX_FRAMES = 8  # frames of a page sampled beside it (an embedded page is on screen too)
FRAME_IDS = 1_000_000  # a frame's canvas ids are its own: frame n's start at n × this
MAX_ERRORS = 50  # distinct messages kept; the total count is kept too
MAX_ERROR_CHARS = 2000
MAX_FINDINGS = 60
MAX_LINE_CHARS = 300  # of one finding in the report for people
_FAILING = re.compile(FAILURE_WORDS, re.IGNORECASE)
_GL_MESSAGE = re.compile(r"\bINVALID_[A-Z_]+\b|CONTEXT_LOST|too many errors")
_STACK_PLACE = re.compile(r"\(?([a-zA-Z][\w+.-]*:[^\s()]+?):(\d+):(\d+)\)?\s*$")
_REFUSED_FETCH = "uncaught TypeError: Failed to fetch"
_EXPLAINED_SHOWN = 3  # errors a refused script explains, quoted in its finding
ERROR_KINDS = ("exception", "console.error", "crash", "navigation")


class GateInputError(Invalid):
    """The file cannot be judged (missing, not a deliverable, budget out of range); `field`
    is "path" or "budget"."""


@dataclass
class Verdict:
    """The gate's judgment of one file, with the evidence it stands on."""

    path: str
    sha256: str
    verdict: str
    recovered: bool
    elapsed_ms: int
    screenshot: str | None
    canvas: list[dict[str, Any]]
    errors: list[str]
    overlay_text: str | None
    timings: dict[str, Any] = field(default_factory=dict)
    history: list[str] = field(default_factory=list)  # each sample's state, in order
    error_count: int = 0
    blocked: list[dict[str, Any]] = field(default_factory=list)  # loads the gate refused
    blocked_more: int = 0  # refused loads not in `blocked`
    # What was seen, where and when: {kind, what, where, atMs, count}, in time order.
    findings: list[dict[str, Any]] = field(default_factory=list)
    id: int | None = None  # once stored

    @property
    def failed(self) -> bool:
        return self.verdict in HARD_FAILURES

    def summary(self) -> VerdictSummaryJson:
        """The measured verdict: what `dshkit gate --json` prints before the findings and the
        report."""
        return {
            "verdict": self.verdict,
            "recovered": self.recovered,
            "elapsedMs": self.elapsed_ms,
            "screenshot": self.screenshot,
            "canvas": self.canvas,
            "errors": self.errors,
            "overlayText": self.overlay_text,
        }

    def report(self) -> list[str]:
        """The evidence for people: the verdict and what it means, then one short line per
        finding (when, what kind, where, what, how often)."""
        return report_lines(self.verdict, self.recovered, self.elapsed_ms, self.findings)

    def evidence(self) -> VerdictEvidenceJson:
        """Everything measured, as stored."""
        return {
            **self.summary(),
            "path": self.path,
            "sha256": self.sha256,
            "timings": self.timings,
            "history": self.history,
            "errorCount": self.error_count,
            "blocked": self.blocked,
            "blockedMore": self.blocked_more,
            "findings": self.findings,
            "report": self.report(),
        }


def report_lines(
    verdict: str, recovered: bool, elapsed_ms: int, findings: list[dict[str, Any]]
) -> list[str]:
    """`Verdict.report` from stored fields (a stored verdict without findings gets its
    first line only)."""
    head = f"{verdict}{' (recovered)' if recovered else ''} after {elapsed_ms / 1000:.1f} s"
    lines = [f"{head}: {MEANING.get(verdict, verdict)}"]
    for finding in findings:
        at = finding.get("atMs")
        when = "     " if at is None else f"{at / 1000:4.1f}s"
        where = f" {finding['where']}:" if finding.get("where") else ""
        what = " / ".join(line.strip() for line in str(finding["what"]).splitlines() if line)
        if len(what) > MAX_LINE_CHARS:
            what = what[:MAX_LINE_CHARS] + "…"
        count = finding.get("count", 1)
        times = f" (×{count})" if count > 1 else ""
        lines.append(f"{when} {finding['kind']}{where} {what}{times}")
    return lines


def check_deliverable(path: Path) -> Path:
    """`path` resolved, if it is an existing deliverable file (GateInputError otherwise).
    A symbolic link is judged as what it points to, which must be a deliverable too: a
    `page.html` linked to a key file would otherwise open the key."""
    for named in (path, path.resolve()):
        if named.suffix.lower() not in DELIVERABLE_SUFFIXES:
            raise GateInputError(
                f"{named}: not a web deliverable "
                f"(the gate judges {', '.join(DELIVERABLE_SUFFIXES)})",
                field="path",
            )
    if not path.is_file():
        raise GateInputError(f"{path}: no such file", field="path")
    return path.resolve()


def check_budget(budget: float) -> float:
    if not MIN_BUDGET_S <= budget <= MAX_BUDGET_S:
        raise GateInputError(
            f"budget {budget:g} s is out of range ({MIN_BUDGET_S:g} to {MAX_BUDGET_S:g} s)",
            field="budget",
        )
    return float(budget)


Early = Callable[["Verdict"], None]


def judge_files(
    paths: list[Path], budget: float, shots: Path, on_early: Early | None = None
) -> list[Verdict]:
    """Judge each file in turn with one browser (each page in a fresh context), a screenshot
    of each verdict written under `shots`. The browser's process group is killed and its
    profile removed however this ends.

    With `on_early`, a page judged ok early is handed to it at once and then watched to the
    end of its budget while it has pending work: the verdict returned is the final one (a
    late failure, or the early ok with the watch in its timings)."""
    files = [check_deliverable(Path(p)) for p in paths]
    check_budget(budget)
    started = time.monotonic()
    with Browser() as browser:
        return asyncio.run(_judge_all(browser, files, budget, shots, started, on_early))


async def _judge_all(
    browser: Browser,
    files: list[Path],
    budget: float,
    shots: Path,
    started: float,
    on_early: Early | None = None,
) -> list[Verdict]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = await playwright.chromium.connect_over_cdp(
            await browser.ready(), artifacts_dir=browser.artifacts
        )
        browser_ms = _ms(time.monotonic() - started)
        verdicts = []
        for file in files:
            context = await chromium.new_context(
                viewport=VIEWPORT,  # type: ignore[arg-type]
                service_workers="block",
                accept_downloads=False,
            )
            try:
                verdict = await _Judge(context, file, budget, shots, on_early).run()
            finally:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(context.close(), SHOT_TIMEOUT_S)
            verdict.timings["browserStartMs"] = browser_ms
            verdicts.append(verdict)
        return verdicts


class _ShotFailed(Exception):
    """A canvas's screenshot did not come in time."""


@dataclass
class _Seen:
    """One error of the page as it arrived."""

    kind: str  # one of ERROR_KINDS
    text: str
    where: str | None
    at: float  # monotonic
    message: str | None = None  # an exception's own message (a rejection's reason's)
    name: str | None = None  # an exception's class (SyntaxError), when known


class _Judge:
    """The sampling of one page."""

    def __init__(
        self, context: Any, file: Path, budget: float, shots: Path, on_early: Early | None = None
    ) -> None:
        self.context = context
        self.on_early = on_early
        self.gesture: dict[str, Any] | None = None  # the one gesture made, and when
        self.file = file
        self.budget = budget
        self.shots = shots
        self.errors: list[_Seen] = []  # in arrival order
        self.gl_messages: Counter[str] = Counter()  # the browser's WebGL warnings
        self.gl_first: dict[str, float] = {}
        self.loaded_at: float | None = None
        self.start = time.monotonic()
        # Imported here: the hook imports this module after every write, judging is rarer.
        from .confinement import Confinement

        self.confinement = Confinement(file)

    async def run(self) -> Verdict:
        content = self.file.read_bytes()
        sha = hashlib.sha256(content).hexdigest()
        await self.context.route("**/*", self.confinement.route)
        await self.context.route_web_socket("**/*", self.confinement.web_socket)
        await self.context.add_init_script(script=probe.INIT)
        page = await self.context.new_page()
        page.on("pageerror", self._page_error)
        page.on("console", self._console)
        # WebSockets the route did not mock (a worker's): the confined network refuses them.
        page.on("websocket", lambda socket: self.confinement.refused_below(socket.url, "websocket"))
        page.on("load", lambda _page: self._loaded())
        page.on("requestfailed", self._request_failed)
        self.start = start = time.monotonic()
        deadline = start + self.budget
        with contextlib.suppress(Exception):  # a page that never commits is judged by samples
            await asyncio.wait_for(page.goto(self.file.as_uri(), wait_until="commit"), self.budget)
        track = _Track(start)
        stopped_early = False
        early: Verdict | None = None  # the ok handed over early, watched since
        stuck_after_load = False  # a page busy while it loads has not failed
        timeout = SAMPLE_TIMEOUT_S
        while True:
            asked = time.monotonic()
            sample = await self._sample(page, timeout)
            now = time.monotonic()
            state = track.add(sample, now, lambda: bool(self._page_errors(track)), asked)
            if state == UNRESPONSIVE and self.loaded_at is not None and asked >= self.loaded_at:
                stuck_after_load = True
            if early is None and state == OK and self._may_stop(track, now):
                stopped_early = True
                if self.on_early is None:
                    break
                early = await self._verdict(page, track, sha, OK, True, stuck_after_load)
                self.on_early(early)
            if early is not None and (
                self._page_errors(track) or track.idle_in_a_row >= IDLE_IN_A_ROW
            ):
                break  # an error is final; a page with no work left can change no more
            if early is None and sample is not None and self._wants_gesture(track, sample):
                await self._make_gesture(page, sample["gesture"])
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                # The budget's last sample; but a page is stuck only once it has failed to
                # answer for a whole sample's timeout (a busy machine can delay one frame).
                spell = track.stuck_for(now)
                if spell is None or spell >= SAMPLE_TIMEOUT_S - 0.05:
                    break
                timeout = SAMPLE_TIMEOUT_S - spell
                continue
            timeout = min(SAMPLE_TIMEOUT_S, max(left, MIN_SAMPLE_S))
            pause = min(WATCH_INTERVAL_S if early else INTERVAL_S, deadline - now)
            if state == OK and self.loaded_at is not None and early is None:
                # Good so far: sample again right when an early stop becomes allowed; past
                # that, what holds it (the page's clock, its timers) is sampled at the interval.
                wait = self._stop_allowed_at(track) - now
                if wait > 0:
                    pause = min(pause, wait)
                elif track.page_since_load() < SETTLE_S:
                    pause = min(pause, max(0.02, SETTLE_S - track.page_since_load()))
            await asyncio.sleep(pause)
        verdict = self._final(track)
        if early is not None:
            early.timings["watchedMs"] = _ms(time.monotonic() - start)
            if verdict == OK:
                return early  # still ok at the end of the watch
            stopped_early = False
        return await self._verdict(page, track, sha, verdict, stopped_early, stuck_after_load)

    def _final(self, track: _Track) -> str:
        """The verdict of the whole observation: the last sample's state, but a page good at
        the end after a fatal overlay shown after load that it did not recover from for good
        (a blinking banner) is `fatal-overlay`; a canvas still waiting is blank, or needs a
        gesture when one was made."""
        history = track.history
        verdict = WAITING if not history else history[-1]
        if verdict == WAITING:
            # The budget ended with a canvas that never drew: after the one gesture a person
            # would make it cannot be judged (no rework); without one it never drew.
            verdict = NEEDS_GESTURE if self.gesture is not None else BLANK_CANVAS
        if verdict == OK and not track.recovered_for_good(self.loaded_at):
            verdict = FATAL_OVERLAY  # shown after load, and not gone for good
        return verdict

    async def _verdict(
        self,
        page: Any,
        track: _Track,
        sha: str,
        verdict: str,
        stopped_early: bool,
        stuck_after_load: bool,
    ) -> Verdict:
        """The verdict `verdict` with what `track` saw so far, and a screenshot now."""
        start = self.start
        history = list(track.history)
        errors = self._page_errors(track)
        blame = self._attribute(track, verdict, errors)
        verdict = blame.verdict
        shot = await self._screenshot(page, sha, verdict)
        elapsed = time.monotonic() - start
        recovered = verdict == OK and (
            stuck_after_load or any(s in RECOVERABLE - {UNRESPONSIVE} for s in history)
        )
        counts = Counter(e.text for e in errors)
        blocked, blocked_more = self.confinement.evidence()
        last = track.last or {}
        return Verdict(
            path=str(self.file),
            sha256=sha,
            verdict=verdict,
            recovered=recovered,
            elapsed_ms=_ms(elapsed),
            screenshot=shot,
            canvas=[_canvas_json(c, track) for c in last.get("canvases", [])],
            errors=[
                text if n == 1 else f"{text} (×{n})" for text, n in counts.most_common(MAX_ERRORS)
            ],
            overlay_text=last.get("overlay") or None,
            timings={
                "budgetMs": _ms(self.budget),
                "loadMs": None if self.loaded_at is None else _ms(self.loaded_at - start),
                "firstGoodMs": None if track.first_good is None else _ms(track.first_good - start),
                "samples": len(history),
                "stoppedEarly": stopped_early,
                "gestureMs": None if self.gesture is None else _ms(self.gesture["when"] - start),
            },
            history=history,
            error_count=len(errors),
            blocked=blocked,
            blocked_more=blocked_more,
            findings=self._findings(track, verdict, errors, blocked, blocked_more, blame),
        )

    def _attribute(
        self, track: _Track, verdict: str, errors: list[_Seen]
    ) -> attribution.Attribution:
        """`verdict`, or `needs-network` when what went wrong follows from a script the gate
        refused from the network and nothing of the page's own went wrong
        (docs/design/gate.md#a-page-that-needs-the-network-is-not-judged-offline)."""
        scripts = [attribution.Refused(u, at) for u, at in self.confinement.network_scripts()]
        refused = {s.url for s in scripts}
        own_failed = [
            str(f.get("src") or "an inline module script")
            for f in track.failed_scripts
            if str(f.get("src") or "") not in refused
            and (f.get("module") or not f.get("src"))  # a module graph that failed
        ]
        return attribution.attribute(
            verdict,
            [attribution.PageError(e.kind, e.text, e.at, e.name) for e in errors],
            scripts,
            own_failed,
            (track.last or {}).get("overlay") or None,
        )

    def _wants_gesture(self, track: _Track, sample: dict[str, Any]) -> bool:
        """Whether the page now waits for a person: loaded a while, waiting or blank two
        samples in a row, something takes a gesture, none made yet."""
        found = sample.get("gesture")
        if self.gesture is not None or not found or self.loaded_at is None:
            return False
        if time.monotonic() - self.loaded_at < GESTURE_AFTER_S:
            return False
        # Blank too: a scene that clears to black until it is started is started by a click
        # (still blank after it, it is judged blank).
        return len(track.history) >= 2 and set(track.history[-2:]) <= {WAITING, BLANK_CANVAS}

    async def _make_gesture(self, page: Any, found: dict[str, Any]) -> None:
        """One gesture, as a person makes it: a real click at the point (the whole
        pointer-down, up, click sequence), or a key press where only keys are listened to."""
        self.gesture = {**found, "when": time.monotonic()}
        with contextlib.suppress(Exception):
            if found.get("at"):
                x, y = found["at"]
                await asyncio.wait_for(page.mouse.click(x, y), GESTURE_TIMEOUT_S)
            else:
                await asyncio.wait_for(page.keyboard.press("Space"), GESTURE_TIMEOUT_S)

    def _may_stop(self, track: _Track, now: float) -> bool:
        # Loaded long enough on the judge's clock and on the page's own (a busy machine can
        # run the page's timers late).
        return (
            self.loaded_at is not None
            and track.good_in_a_row >= GOOD_IN_A_ROW
            and now >= self._stop_allowed_at(track)
            and track.page_since_load() >= SETTLE_S
            and track.quiet_in_a_row >= QUIET_IN_A_ROW
            and track.recovered_for_good(self.loaded_at)
        )

    def _stop_allowed_at(self, track: _Track) -> float:
        loaded = self.loaded_at if self.loaded_at is not None else float("inf")
        run = track.good_since if track.good_since is not None else float("inf")
        return max(loaded + SETTLE_S, run + GOOD_RUN_S)

    def _page_error(self, error: Any) -> None:
        text, where = _error_text(error, self.file.parent)
        message = getattr(error, "message", None)
        name = getattr(error, "name", None)
        self.errors.append(_Seen("exception", text, where, time.monotonic(), message, name or None))

    def _request_failed(self, request: Any) -> None:
        # A navigation that failed (to a page never written) leaves the browser's error page:
        # the page's error. A navigation the gate refused is listed as blocked; one cut short
        # by the next navigation is no failure.
        try:
            if not request.is_navigation_request():
                return
            failure = request.failure or ""
            url = request.url
        except Exception:
            return
        if "ERR_ABORTED" in failure or self.confinement.why_refused(url) is not None:
            return
        self.errors.append(
            _Seen(
                "navigation",
                _clip(f"navigation to {_short_place(url, self.file.parent)} failed: {failure}"),
                None,
                time.monotonic(),
            )
        )

    def _console(self, message: Any) -> None:
        # Only errors (and failed assertions) count against the page: the gate's own
        # readPixels makes the browser log warnings (pitfall 7). The browser's WebGL warnings
        # are kept as evidence. A load the gate refused is listed as blocked, not held
        # against the page.
        location = message.location or {}
        where = location.get("url", "")
        if message.type == "warning" and _GL_MESSAGE.search(message.text):
            text = _clip(message.text)
            self.gl_messages[text] += 1
            self.gl_first.setdefault(text, time.monotonic())
            return
        if message.type not in ("error", "assert"):  # a failed console.assert logs as an error
            return
        if not self.confinement.refused_in_console(message.text, where):
            place = _place(where, location.get("lineNumber"), location.get("columnNumber"))
            self.errors.append(
                _Seen(
                    "console.error",
                    _clip(f"console.{message.type}: {message.text}"),
                    _short_place(place, self.file.parent),
                    time.monotonic(),
                )
            )

    def _page_errors(self, track: _Track) -> list[_Seen]:
        """The page's errors (those its own handler cancelled too), less the unhandled
        rejections of fetches the gate refused."""
        excused = sum(
            f.get("count", 1)
            for f in track.fetch_failures
            if self.confinement.why_refused(str(f.get("url", ""))) is not None
        )
        # Rejections whose handler came later (the page handled them in the end).
        handled = Counter(str(h.get("message")) for h in track.handled)
        kept = []
        for error in self.errors:
            if excused and error.text.startswith(_REFUSED_FETCH):
                excused -= 1
                continue
            if error.kind == "exception" and handled[str(error.message)] > 0:
                handled[str(error.message)] -= 1
                continue
            kept.append(error)
        for cancelled in track.cancelled:
            where = cancelled.get("where")
            kept.append(
                _Seen(
                    "exception",
                    _clip(f"{cancelled['what']} (cancelled by the page's own error handler)"),
                    _short_place(where, self.file.parent) if where else None,
                    track.page_time(cancelled.get("at")) or time.monotonic(),
                )
            )
        return kept

    def _loaded(self) -> None:
        self.loaded_at = self.loaded_at or time.monotonic()

    async def _sample(self, page: Any, timeout: float) -> dict[str, Any] | None:
        """One sample, or None when the page did not answer within `timeout`."""
        started = time.monotonic()
        try:
            sample: dict[str, Any] = await asyncio.wait_for(
                page.evaluate(probe.SAMPLE, [FAILURE_WORDS, OVERLAY_IDS, START_WORDS]), timeout
            )
        except TimeoutError:
            return None
        except Exception as exc:  # navigating, or the page crashed: nothing seen this time
            if "crash" in str(exc).lower():
                self.errors.append(_Seen("crash", _clip(f"page crashed: {exc}"), None, started))
            return _EMPTY_SAMPLE | {"canvases": []}
        sample["at"] = time.monotonic()
        await self._frames(page, sample, timeout - (sample["at"] - started))
        for canvas in sample["canvases"]:
            if _tiny(canvas) or not (_screen_judged(canvas) or canvas.get("draws")):
                continue  # only a canvas that drew is judged by the screenshot
            frame = canvas["frame"]
            if canvas.get("own") is not None:
                continue  # judged by its own pixels, whole
            if frame is None or (_dark(frame) and not frame.get("empty")):
                left = timeout - (time.monotonic() - started)
                try:
                    canvas["shot"] = await self._region(page, canvas, sample["viewport"], left)
                except _ShotFailed:
                    canvas["shot"], canvas["shotFailed"] = None, True
        return sample

    async def _frames(self, page: Any, sample: dict[str, Any], timeout: float) -> None:
        """What the page's frames show, in `sample` as the page's own: an embedded page's
        overlay, parse error and canvases are on screen too. A frame that does not answer in
        time, or is not shown, is left out of this sample."""
        for index, frame in enumerate(page.frames[1 : MAX_FRAMES + 1], start=1):
            left = timeout - (time.monotonic() - sample["at"])
            if left <= 0:
                return
            try:
                element = await asyncio.wait_for(frame.frame_element(), left)
                box = await asyncio.wait_for(element.bounding_box(), left)
                if box is None or box["width"] < 1 or box["height"] < 1:
                    continue
                inner: dict[str, Any] = await asyncio.wait_for(
                    frame.evaluate(probe.SAMPLE, [FAILURE_WORDS, OVERLAY_IDS, START_WORDS]), left
                )
            except Exception:
                continue
            _merge_frame(sample, inner, index, box["x"], box["y"])

    async def _region(
        self, page: Any, canvas: dict[str, Any], viewport: list[float], timeout: float
    ) -> dict[str, float] | None:
        """Mean and max (RGB) of a block of the canvas in a screenshot, where the canvas itself
        is on top (the sample's `spot`); None if off screen or covered wherever tried."""
        spot = canvas.get("spot")
        if not spot:
            return None
        if timeout <= 0:
            raise _ShotFailed
        left, top, width, height, *where = spot
        beyond = where == ["page"]  # below the first screen: in the document's coordinates
        if beyond:
            right, bottom = left + width, top + height
        else:
            right, bottom = min(viewport[0], left + width), min(viewport[1], top + height)
        if right - left < 1 or bottom - top < 1:
            return None
        clip = {"x": left, "y": top, "width": right - left, "height": bottom - top}
        ends = time.monotonic() + timeout
        alone = False
        key = canvas.get("id")
        try:
            if key is not None and key < FRAME_IDS:
                # The canvas alone: a DOM overlay over it (an FPS counter that takes no
                # clicks) is not what the canvas shows.
                alone = bool(await asyncio.wait_for(page.evaluate(probe.SHOT_ALONE, key), timeout))
            png = await asyncio.wait_for(
                page.screenshot(clip=clip, animations="allow", full_page=beyond),
                ends - time.monotonic(),
            )
        except Exception as exc:
            raise _ShotFailed from exc
        finally:
            if alone:
                with contextlib.suppress(Exception):
                    left = max(SHOT_TIMEOUT_S, ends - time.monotonic())
                    await asyncio.wait_for(page.evaluate(probe.SHOT_RESTORE), left)
        mean, peak = png_stats(png)
        return {"mean": round(mean, 2), "max": peak}

    async def _screenshot(self, page: Any, sha: str, verdict: str) -> str | None:
        """The whole viewport as the verdict's screenshot (0600 under `shots`); None when the
        page cannot paint one in time."""
        timeout = STUCK_SHOT_TIMEOUT_S if verdict == UNRESPONSIVE else FINAL_SHOT_TIMEOUT_S
        try:
            png = await asyncio.wait_for(page.screenshot(animations="allow"), timeout)
        except Exception:
            return None
        private_dir(self.shots)
        name = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{sha[:12]}-{verdict}.png"
        path = self.shots / name
        with open(path, "wb", opener=private_opener) as handle:
            handle.write(png)
        return str(path)

    def _findings(
        self,
        track: _Track,
        verdict: str,
        errors: list[_Seen],
        blocked: list[dict[str, Any]],
        blocked_more: int,
        blame: attribution.Attribution | None = None,
    ) -> list[dict[str, Any]]:
        """What was seen, where and when, in time order (the causes of the verdict and what
        the verdict could not see)."""
        found: list[dict[str, Any]] = []

        def add(kind: str, what: str, where: str | None, at: float | None, count: int = 1) -> None:
            found.append(
                {
                    "kind": kind,
                    "what": what,
                    "where": where,
                    "atMs": None if at is None else max(0, _ms(at - self.start)),
                    "count": count,
                }
            )

        grouped: dict[tuple[str, str], list[_Seen]] = {}
        for error in errors:
            grouped.setdefault((error.kind, error.text), []).append(error)
        for (kind, text), seen in grouped.items():
            add(kind, text, seen[0].where, seen[0].at, len(seen))
        for shown in track.overlays:
            cleared = shown["until"]
            what = _clip(shown["text"], 600)
            if cleared is not None:
                what += f" — gone at {(cleared - self.start):.1f} s"
            add("overlay", what, ", ".join(f"#{i}" for i in shown["ids"]), shown["at"])
        for text, at in track.parse_errors.items():
            add("parse-error", text, self.file.name, at)
        for failure in track.failures:
            if any(
                other is not failure and failure["what"] in other["what"]
                for other in track.failures
            ):
                continue  # a shader's log already in its program's link failure
            canvas = track.canvas_names.get(failure.get("context"))
            add("webgl", failure["what"], canvas, track.page_time(failure["at"]), failure["count"])
        for text, n in self.gl_messages.items():
            add("webgl", text, "browser console", self.gl_first[text], n)
        for canvas_id, (count, first) in track.bad_draws.items():
            add(
                "webgl",
                f"{count} draw call{'s' if count != 1 else ''} with no valid shader program in "
                "use (they draw nothing)",
                track.canvas_names.get(canvas_id),
                first,
                1,
            )
        for canvas_id, at in track.lost.items():
            add("webgl", "WebGL context lost", track.canvas_names.get(canvas_id), at)
        for canvas in (track.last or {}).get("canvases", []):
            problem = _canvas_problem(canvas, track)
            if problem:
                add("canvas", problem, canvas.get("name"), track.last_at)
        if track.empty and verdict == BLANK_CANVAS:
            add(
                "canvas",
                "the page shows nothing: no canvas, no text, no image, no painted box, no "
                "background of its own",
                self.file.name,
                track.last_at,
            )
        if self.gesture is not None:
            said = self.gesture.get("what")
            how = "pressed Space" if not self.gesture.get("at") else f"clicked {said!r}"
            add(
                "gesture",
                f"the page waited for a person's gesture ({self.gesture.get('kind')}): {how} "
                "once, as a person would",
                None,
                self.gesture["when"],
            )
        if verdict == UNRESPONSIVE and track.stuck_since is not None:
            add(
                "unresponsive",
                f"the main thread answered no sample within {SAMPLE_TIMEOUT_S:g} s",
                None,
                track.stuck_since,
            )
        for entry in blocked:
            add(
                "not-seen",
                f"{entry['url']} ({entry['resourceType']}): {entry['reason']}",
                None,
                None,
                entry["count"],
            )
        if blocked_more:
            add("not-seen", f"{blocked_more} more loads blocked by the gate", None, None)
        for failure in track.fetch_failures:
            url = str(failure.get("url", ""))
            if self.confinement.why_refused(url) is not None:
                add(
                    "not-seen",
                    f"the page left the rejection of a fetch the gate refused unhandled "
                    f"({failure['what']}, {_short_url(url)}): not counted as its error",
                    None,
                    track.page_time(failure["at"]),
                    failure.get("count", 1),
                )
        if blame is not None and blame.needs_network:
            for script in blame.scripts:
                explained = [t.split("\n")[0] for t in blame.caused.get(script.url, [])]
                what = (
                    f"the page needs {_short_url(script.url)}, which the gate refused (no network)"
                )
                if explained:
                    more = len(explained) - _EXPLAINED_SHOWN
                    what += "; it explains: " + "; ".join(explained[:_EXPLAINED_SHOWN])
                    what += f" and {more} more" if more > 0 else ""
                add("needs-network", what, None, script.at)
            for src in blame.own_failed:
                add(
                    "needs-network",
                    f"the page's own script never ran: {_short_place(src, self.file.parent)} "
                    "failed to load (an import the gate refused)",
                    None,
                    None,
                )
            if blame.unclear:
                add(
                    "needs-network",
                    f"{len(blame.unclear)} more error{'s' if len(blame.unclear) != 1 else ''} "
                    "after a refused script, none of them the page's own for certain",
                    None,
                    None,
                )
        found.sort(key=lambda f: (f["atMs"] is None, f["atMs"] or 0))
        note = self.confinement.note()
        if note is not None:  # first: it explains every refused file after it
            found.insert(
                0, {"kind": "not-seen", "what": note, "where": None, "atMs": None, "count": 1}
            )
        if len(found) > MAX_FINDINGS:
            more = len(found) - MAX_FINDINGS + 1
            found = found[: MAX_FINDINGS - 1]
            found.append(
                {"kind": "more", "what": f"{more} more findings", "where": None, "atMs": None}
                | {"count": 1}
            )
        return found


_EMPTY_SAMPLE: dict[str, Any] = {
    "overlay": "",
    "fatal": False,
    "overlayIds": [],
    "canvases": [],
    "parseErrors": [],
    "failures": [],
    "fetchFailures": [],
    "failedScripts": [],
    "cancelled": [],
    "viewport": [0, 0],
    "now": None,
}


class _Track:
    """Each sample's state, and what the samples saw over the whole observation."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.history: list[str] = []
        self.times: list[float] = []  # when each sample was taken in
        self.idle_in_a_row = 0  # samples in a row where the page had no pending work
        self.last: dict[str, Any] | None = None
        self.last_at: float | None = None
        self.good_in_a_row = 0
        self.good_since: float | None = None
        self.first_good: float | None = None
        self.stuck_since: float | None = None
        self.overlays: list[dict[str, Any]] = []  # each fatal overlay shown: text, ids, at, until
        self.parse_errors: dict[str, float] = {}
        self.failures: list[dict[str, Any]] = []
        self.fetch_failures: list[dict[str, Any]] = []
        self.failed_scripts: list[dict[str, Any]] = []  # the page's scripts that failed to load
        self.cancelled: list[dict[str, Any]] = []  # errors the page's own handler cancelled
        self._cancelled: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
        self.handled: list[dict[str, Any]] = []  # rejections the page handled late
        self.quiet_in_a_row = 0  # samples in a row with no watched timer still to fire
        self.bad_seen: dict[int, int] = {}  # bad draws per context at the previous sample
        self.bad_draws: dict[int, tuple[int, float]] = {}  # count, first seen
        self.lost: dict[int, float] = {}
        self.canvas_names: dict[int | None, str] = {}
        self.canvas_states: dict[int | None, str] = {}  # each canvas's state at its last sample
        self.canvas_shots: dict[int | None, dict[str, Any]] = {}  # and its last screenshot
        self._offset: float | None = None  # monotonic − page time (s)
        # The last sample was blank for a canvas that shows nothing a person sees (`faint`)
        # beside at most a small overlay, or for a page with nothing at all to show (`empty`).
        self.faint = False
        self.empty = False

    def page_since_load(self) -> float:
        """Seconds from the page's load to its last sample, on the page's clock (0 before
        its load)."""
        last = self.last or {}
        loaded, now = last.get("loadedAt"), last.get("now")
        return 0.0 if loaded is None or now is None else (now - loaded) / 1000

    def recovered_for_good(self, loaded_at: float | None) -> bool:
        """Whether every fatal overlay shown after the load is gone for good: the last one
        gone, and the samples since span RECOVERED_S at least, and RECOVERED_GAPS times the
        longest time it was gone between two showings (a blinking banner comes back), over
        RECOVERED_SAMPLES samples at least. True when none was shown after the load."""
        shown = [
            o
            for o in self.overlays
            if loaded_at is None or o["until"] is None or o["until"] > loaded_at
        ]
        if not shown:
            return True
        gone = shown[-1]["until"]
        if gone is None:
            return False
        gaps = [b["at"] - a["until"] for a, b in itertools.pairwise(shown)]
        need = max(RECOVERED_S, RECOVERED_GAPS * max(gaps, default=0.0))
        since = [t for t in self.times if t >= gone]
        return len(since) >= RECOVERED_SAMPLES and since[-1] - gone >= need

    def stuck_for(self, now: float) -> float | None:
        """How long the page has not answered (None: it answered the last sample)."""
        return None if self.stuck_since is None else now - self.stuck_since

    def page_time(self, page_ms: float | None) -> float | None:
        """A page's `performance.now()` as a monotonic time."""
        if page_ms is None or self._offset is None:
            return None
        return self._offset + page_ms / 1000

    def add(
        self,
        sample: dict[str, Any] | None,
        now: float,
        errors: Callable[[], bool],
        asked: float,
    ) -> str:
        """Take one sample (None: unanswered, asked at `asked`); `errors` says whether the
        page has erred so far, asked once the sample is taken in."""
        if sample is None and self.stuck_since is None:
            self.stuck_since = asked
        state = self._state(sample, errors, now)
        self.history.append(state)
        self.times.append(now)
        pending = (sample or {}).get("pending")
        if isinstance(pending, dict) and not any(pending.values()):
            self.idle_in_a_row += 1
        else:
            self.idle_in_a_row = 0
        if sample is not None:
            self.last, self.last_at = sample, now
        if state == OK:
            self.good_in_a_row += 1
            if self.good_since is None:
                self.good_since = now
            self.first_good = self.first_good or now
        else:
            self.good_in_a_row, self.good_since = 0, None
        return state

    def _state(self, sample: dict[str, Any] | None, errors: Callable[[], bool], now: float) -> str:
        """What one sample shows, worst first (docs/design/gate.md#verdicts-worst-first)."""
        if sample is None:
            return UNRESPONSIVE
        self.stuck_since = None
        if sample.get("now") is not None:
            self._offset = sample.get("at", now) - sample["now"] / 1000
        self._overlay(sample, now)
        for text in sample.get("parseErrors", []):
            self.parse_errors.setdefault(_clip(text, 1000), now)
        if sample.get("failures"):
            self.failures = sample["failures"]
        if sample.get("fetchFailures"):
            self.fetch_failures = sample["fetchFailures"]
        if sample.get("failedScripts"):
            self.failed_scripts = sample["failedScripts"]
        for cancelled in sample.get("cancelled") or []:
            # Kept across the page's documents; a late handler takes a rejection back.
            self._cancelled[(cancelled["what"], cancelled.get("where"), cancelled.get("at"))] = (
                cancelled
            )
        self.cancelled = [c for c in self._cancelled.values() if not c.get("handled")]
        if sample.get("handled"):
            self.handled = sample["handled"]
        self._timers(sample)
        kinds = [self._canvas(c, now) for c in sample["canvases"]]
        content = sample.get("content")
        self.faint = self.empty = False
        if sample["fatal"]:
            return FATAL_OVERLAY
        if sample.get("parseErrors"):
            return PARSE_ERROR
        if errors():
            return PAGE_ERROR  # never forgiven, however well the page draws later
        if "tiny" in kinds:
            return BLANK_CANVAS_0
        if "webgl" in kinds:
            return WEBGL_ERROR
        if "blank" in kinds:
            return BLANK_CANVAS
        small = isinstance(content, dict) and not content.get("large")
        if "faint" in kinds and "drawn" not in kinds and small:
            # Nothing a person sees in any canvas, and beside them at most a small overlay
            # (an FPS box): the scene never showed. With content of its own beside it, a dim
            # canvas is a backdrop, not the page.
            self.faint = True
            return BLANK_CANVAS
        kinds = ["drawn" if k == "faint" else k for k in kinds]
        if "waiting" in kinds and "drawn" not in kinds:
            return WAITING
        shown = isinstance(content, dict) and content.get("painted")
        if all(k == "unseen" for k in kinds) and isinstance(content, dict) and not shown:
            self.empty = True
            return BLANK_CANVAS  # no canvas, no text, nothing painted: an empty page
        return OK

    def _timers(self, sample: dict[str, Any]) -> None:
        loaded = sample.get("loadedAt")
        horizon = None if loaded is None else loaded + TIMER_HORIZON_S * 1000
        due = sample.get("timers") or []
        if horizon is not None and not any(at <= horizon for at in due):
            self.quiet_in_a_row += 1
        else:
            self.quiet_in_a_row = 0

    def _overlay(self, sample: dict[str, Any], now: float) -> None:
        current = self.overlays[-1] if self.overlays else None
        showing = current is not None and current["until"] is None
        if sample["fatal"]:
            if not showing or current is None or current["text"] != sample["overlay"]:
                if showing and current is not None:
                    current["until"] = now
                ids = sample.get("overlayIds", [])
                self.overlays.append(
                    {"text": sample["overlay"], "ids": ids, "at": now, "until": None}
                )
        elif showing and current is not None:
            current["until"] = now

    def _canvas(self, canvas: dict[str, Any], now: float) -> str:
        """One canvas's state in one sample: tiny, webgl, blank, waiting or drawn."""
        state = self._canvas_state(canvas, now)
        self.canvas_states[canvas.get("id")] = state
        return state

    def _canvas_state(self, canvas: dict[str, Any], now: float) -> str:
        key = canvas.get("id")
        self.canvas_names[key] = canvas.get("name") or "canvas"
        if key is not None:
            bad = int(canvas.get("badDraws") or 0)
            fresh = bad > self.bad_seen.get(key, 0)
            self.bad_seen[key] = bad
            if bad:
                first = self.bad_draws.get(key, (0, now))[1]
                self.bad_draws[key] = (bad, first)
            lost_at = self.page_time(canvas.get("lostAt"))
            if lost_at is not None:
                self.lost.setdefault(key, lost_at)
        else:
            bad, fresh = 0, False
        if _collapsed(canvas):
            # No CSS size: a canvas to measure text shows nothing and is not judged; one the
            # page renders into (a context, draw calls) is a failure (its box collapsed).
            if canvas.get("context") is not None and canvas.get("draws"):
                return "tiny" if _tiny(canvas) else "blank"
            return "unseen"
        if _out_of_sight(canvas):
            return "unseen"  # no part of it can show: not judged (a canvas off the document)
        if _tiny(canvas):
            return "tiny"
        if canvas.get("context") is None:
            return "waiting"  # no context yet: what shows is the page behind it
        if bad and (fresh or not canvas.get("programDraws")):
            return "webgl"
        if canvas.get("failedShaders") and not canvas.get("programDraws"):
            return "webgl"  # a shader did not compile and no program has drawn
        if not _screen_judged(canvas) and not canvas.get("draws"):
            if canvas["frame"] is not None and canvas["frame"].get("lost"):
                return "blank"
            return "waiting"  # a context, and nothing drawn into it yet
        if _unsized(canvas):
            return "blank"  # its scene drawn for the window, outside a canvas never sized
        frame = canvas["frame"]
        whole = canvas.get("own")
        if whole is not None and whole.get("blank"):
            # Its own buffer, read whole where it holds the picture shown: transparent or one
            # flat dark colour all over, whatever shows through or over it on the screen.
            return "blank"
        if whole is not None and whole.get("faint"):
            # Over what shows behind it, a dim texture with no shape: blank unless the page
            # shows content of its own beside it (judged per sample).
            return "faint"
        if frame is not None and frame.get("empty"):
            return "blank"  # a 2D canvas transparent all over: nothing it drew shows
        if frame is not None and not _dark(frame):
            return "drawn"
        if whole is not None:
            return "drawn"  # dark at its centre, something of its own elsewhere
        shot = canvas.get("shot")
        if frame is not None and frame.get("lost"):
            return "blank"
        if shot is not None and _dark(shot):
            return "blank"
        if shot is None and canvas.get("shotFailed"):
            # The screenshot did not come in time (a busy machine): this sample cannot tell,
            # so the canvas stays as the last sample that could saw it, its shot the evidence.
            canvas["shot"] = self.canvas_shots.get(key)
            return self.canvas_states.get(key, "waiting")
        if shot is not None:
            self.canvas_shots[key] = shot
        # Drew, but a later frame reads dark: the screenshot shows the drawing (drew once),
        # or no part of the canvas on top is in the viewport (nothing to read).
        return "drawn"


def _merge_frame(
    sample: dict[str, Any], inner: dict[str, Any], index: int, x: float, y: float
) -> None:
    """Add a frame's sample `inner` to the page's `sample`: its canvases placed where the
    frame is (at `x`, `y`) with ids of their own, its times on the page's clock."""
    shift = (sample.get("now") or 0) - (inner.get("now") or 0)
    base = index * FRAME_IDS

    def moved(at: Any) -> Any:
        return None if at is None else at + shift

    if inner.get("overlay"):
        sample["overlay"] = "\n".join(filter(None, [sample.get("overlay"), inner["overlay"]]))
        sample["overlayIds"] = [*sample.get("overlayIds", []), *inner.get("overlayIds", [])]
    sample["fatal"] = bool(sample.get("fatal") or inner.get("fatal"))
    sample["parseErrors"] = [*sample.get("parseErrors", []), *inner.get("parseErrors", [])]
    for canvas in inner.get("canvases", []):
        bx, by, bw, bh = canvas["box"]
        canvas["box"] = [bx + x, by + y, bw, bh]
        if canvas.get("spot"):
            sx, sy, sw, sh = canvas["spot"]
            canvas["spot"] = [sx + x, sy + y, sw, sh]
        if canvas.get("id") is not None:
            canvas["id"] += base
        canvas["lostAt"] = moved(canvas.get("lostAt"))
        sample["canvases"].append(canvas)
    for key in ("failures", "fetchFailures", "failedScripts", "cancelled", "handled"):
        for entry in inner.get(key, []):
            entry["at"] = moved(entry.get("at"))
            if entry.get("context") is not None:
                entry["context"] += base
            sample.setdefault(key, []).append(entry)
    sample["timers"] = sorted([*sample.get("timers", []), *map(moved, inner.get("timers", []))])


def _collapsed(canvas: dict[str, Any]) -> bool:
    """A canvas with no CSS size in some direction."""
    _, _, w, h = canvas["box"]
    return bool(w < 1 or h < 1)


def _out_of_sight(canvas: dict[str, Any]) -> bool:
    """A canvas no part of which can ever show: no CSS size, or wholly left of or above the
    document (where no scrolling reaches)."""
    x, y, w, h = canvas["box"]
    return bool(w < 1 or h < 1 or x + w <= 0 or y + h <= 0)


def _unsized(canvas: dict[str, Any]) -> bool:
    """A 2D canvas never sized (the default 300×150 backing store) stretched by CSS, whose
    draws land outside its backing store: the page draws for the window's size, and only what
    it draws in a corner (an FPS box) shows."""
    placed = int(canvas.get("placed") or 0)
    return (
        (canvas["width"], canvas["height"]) == DEFAULT_CANVAS
        and canvas["cssWidth"] >= STRETCHED * DEFAULT_CANVAS[0]
        and canvas["cssHeight"] >= STRETCHED * DEFAULT_CANVAS[1]
        and placed >= MIN_PLACED
        and int(canvas.get("outside") or 0) >= OUTSIDE_SHARE * placed
    )


def _screen_judged(canvas: dict[str, Any]) -> bool:
    """A canvas whose drawing the init script cannot count (drawn by a worker, or a context
    type it does not wrap): judged by what the screenshot shows at its place."""
    return canvas.get("context") not in (None, "2d", "webgl", "webgl2", "experimental-webgl",
                                         "bitmaprenderer")  # fmt: skip


def _canvas_problem(canvas: dict[str, Any], track: _Track) -> str | None:
    """What is wrong with a canvas in the last sample, for people (None: nothing)."""
    size = f"{canvas['width']}×{canvas['height']} (CSS {canvas['cssWidth']}×{canvas['cssHeight']})"
    drawing = canvas.get("context") is not None and canvas.get("draws")
    if _collapsed(canvas) and drawing and not _tiny(canvas):
        return f"{size}, {canvas['context']}: drawn into, but its CSS box collapsed: shows nothing"
    if _out_of_sight(canvas) and not (_collapsed(canvas) and drawing):
        return None
    if _tiny(canvas):
        return f"backing store {size}: shows nothing"
    if canvas.get("context") is None:
        return f"{size}: never got a drawing context"
    frame, shot = canvas["frame"], canvas.get("shot")
    if frame is not None and frame.get("lost"):
        return f"{size}, {canvas['context']}: context lost, nothing shown"
    if not _screen_judged(canvas) and not canvas.get("draws"):
        return f"{size}, {canvas['context']}: not one draw call"
    if _unsized(canvas):
        return (
            f"{size}, {canvas['context']}: never sized, yet {canvas['outside']} of "
            f"{canvas['placed']} draw calls placed landed outside its backing store: the scene "
            "is drawn for a larger canvas and does not show"
        )
    whole = canvas.get("own")
    if whole is not None and whole.get("blank"):
        if not whole.get("alpha"):
            return f"{size}, {canvas['context']}: its own pixels are transparent all over"
        return (
            f"{size}, {canvas['context']}: its own pixels are one dark colour all over "
            f"(mean {whole['mean']:g}, max {whole['max']}), whatever shows on screen"
        )
    if whole is not None and whole.get("faint") and track.faint:
        how = (
            f"a dim texture: nothing lit beyond a dim shade (brightest luminance "
            f"{whole['light']:g}, under {probe.DIM_LUMINANCE:g}) and no shape (its blocks "
            f"{whole['spread']:.0%} apart at most)"
        )
        return (
            f"{size}, {canvas['context']}: its own pixels, over what is behind it, are {how}; "
            "beside it the page shows only a small overlay: its scene never showed"
        )
    if frame is not None and frame.get("empty"):
        return f"{size}, {canvas['context']}: drawn into, yet transparent all over"
    if (frame is None or _dark(frame)) and shot is not None and _dark(shot):
        pixel = frame or shot
        return (
            f"{size}, {canvas['context']}: black in the frame and on screen "
            f"(mean {pixel['mean']:g}, max {pixel['max']})"
        )
    return None


def _tiny(canvas: dict[str, Any]) -> bool:
    return bool(canvas["width"] <= TINY_CANVAS or canvas["height"] <= TINY_CANVAS)


def _dark(pixels: dict[str, Any]) -> bool:
    return bool(pixels.get("lost")) or (pixels["mean"] < BLANK_MEAN and pixels["max"] < BLANK_MAX)


def _canvas_json(canvas: dict[str, Any], track: _Track) -> dict[str, Any]:
    frame = canvas["frame"]
    lost = track.lost.get(canvas.get("id"))  # type: ignore[arg-type]
    return {
        "width": canvas["width"],
        "height": canvas["height"],
        "cssWidth": canvas["cssWidth"],
        "cssHeight": canvas["cssHeight"],
        "context": canvas["context"],
        "framePixel": None
        if frame is None
        else {k: v if isinstance(v, bool) else round(v, 2) for k, v in frame.items()},
        "screenshotPixel": canvas.get("shot"),
        "ownPixels": canvas.get("own"),  # the whole buffer, read where it holds the picture
        "name": canvas.get("name"),
        "drawCalls": canvas.get("draws", 0),
        # Of the 2D draw calls placed (one in probe.PLACE_EVERY), those wholly outside it.
        "placedDrawCalls": canvas.get("placed", 0),
        "outsideDrawCalls": canvas.get("outside", 0),
        "invalidDrawCalls": canvas.get("badDraws", 0),
        "contextLostMs": None if lost is None else max(0, _ms(lost - track.start)),
    }


def _error_text(error: Any, root: Path) -> tuple[str, str | None]:
    """An uncaught error's text (its stack's first frames kept for the agent to find) and
    where it was thrown."""
    stack = getattr(error, "stack", "") or ""
    message = getattr(error, "message", "") or str(error)
    lines = stack.splitlines()
    text = "\n".join(lines[:4]) if message in stack else message
    where = None
    for line in lines[1:]:
        found = _STACK_PLACE.search(line.strip())
        if found:
            where = _short_place(_place(found[1], found[2], found[3]), root)
            break
    return _clip(f"uncaught {text}"), where


def _place(url: str, line: Any, column: Any) -> str:
    if not url:
        return ""
    return f"{url}:{line}:{column}" if line is not None and column is not None else url


def _short_place(place: str, root: Path) -> str | None:
    """A place as people read it: a file of the page's directory by its name there."""
    if not place:
        return None
    parts = urlsplit(place)
    if parts.scheme == "file":
        with contextlib.suppress(ValueError):
            return str(Path(unquote(parts.path)).relative_to(root))
    return _short_url(place)


def _short_url(url: str) -> str:
    return url if len(url) <= 120 else url[:120] + "…"


def _clip(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text)} characters in all)"


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def png_stats(png: bytes) -> tuple[float, int]:
    """Mean and max over the RGB channels of an 8-bit, non-interlaced RGB or RGBA PNG (what
    Chromium's screenshots are)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, data = 8, bytearray()
    width = height = channels = 0
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, body = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace or color not in (2, 6):
                raise ValueError(f"unsupported PNG (depth {depth}, colour type {color})")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            data += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(bytes(data))
    stride = width * channels
    previous = bytearray(stride)
    total = peak = 0
    for row in range(height):
        line = bytearray(raw[row * (stride + 1) + 1 : (row + 1) * (stride + 1)])
        _unfilter(raw[row * (stride + 1)], line, previous, channels)
        for i in range(0, stride, channels):
            r, g, b = line[i], line[i + 1], line[i + 2]
            total += r + g + b
            peak = max(peak, r, g, b)
        previous = line
    return total / max(1, width * height * 3), peak


def _unfilter(kind: int, line: bytearray, previous: bytearray, bpp: int) -> None:
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b = previous[i]
        if kind == 1:
            line[i] = (line[i] + a) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + b) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (a + b) // 2) & 0xFF
        elif kind == 4:
            c = previous[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[i] = (line[i] + predictor) & 0xFF
