"""Judging a web deliverable in headless Chromium: sample it until it is clearly good or the
budget is spent, and give a verdict with the measured evidence.

What one sample sees (seed 000 §0⁵): the page's fatal overlay (elements with an id starting
`fatal`, visible, with failure wording), errors (uncaught exceptions, unhandled rejections,
`console.error`), each canvas's backing-store size, and the centre of each canvas read inside
a frame through the page's own context, with the screenshot as the fallback for a page that
drew once. A sample is bounded by a timeout: a stuck main thread is `unresponsive`, never a
hung gate. Sampling stops early only when good (≥ 1 s after `load`, two good samples in a
row); otherwise it uses the whole budget and judges by the last sample, because a page may
show a failure and then recover. Real time only: virtual time would fire the page's own
watchdogs early.

The page is untrusted (`confinement`): it loads only files under its own directory, reaches no
network, runs no service worker, and each load refused is listed in the evidence.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import struct
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import Invalid
from ..paths import private_dir, private_opener
from . import probe
from .browser import Browser

DELIVERABLE_SUFFIXES = (".html", ".htm", ".xhtml", ".svg")
DEFAULT_BUDGET_S = 20.0
MIN_BUDGET_S = 1.0
MAX_BUDGET_S = 300.0

OK = "ok"
FATAL_OVERLAY = "fatal-overlay"
PAGE_ERROR = "page-error"
BLANK_CANVAS_0 = "blank-canvas-0"
BLANK_CANVAS = "blank-canvas"
UNRESPONSIVE = "unresponsive"
VERDICTS = (OK, FATAL_OVERLAY, PAGE_ERROR, BLANK_CANVAS_0, BLANK_CANVAS, UNRESPONSIVE)
HARD_FAILURES = frozenset(VERDICTS) - {OK}

# The overlay's failure wording (Chinese per the seed, and its English equivalents).
FAILURE_WORDS = (
    "失败|错误|无法|异常|超时|不支持|丢失"
    "|fail|error|unable|cannot|can't|exception|timed? ?out|not supported|unsupported|lost"
)
TINY_CANVAS = 8  # a backing store this small in either dimension shows nothing
BLANK_MEAN, BLANK_MAX = 2.0, 8  # mean < 2 and max < 8 (RGB) is a blank picture
SETTLE_S = 1.0  # after `load`, before an early stop: an exception can come 300 ms later
GOOD_IN_A_ROW = 2
INTERVAL_S = 0.25
SAMPLE_TIMEOUT_S = 2.0
MIN_SAMPLE_S = 0.5  # the least a sample is given, the last one too (a healthy page needs less)
SHOT_REGION = 64  # CSS pixels of a canvas's centre checked in the screenshot
SHOT_TIMEOUT_S = 1.0
STUCK_SHOT_TIMEOUT_S = 0.3  # the screenshot of a stuck page rarely comes: do not overshoot
VIEWPORT = {"width": 1280, "height": 720}
MAX_ERRORS = 50  # distinct messages kept; the total count is kept too
MAX_ERROR_CHARS = 2000
_FAILING = re.compile(FAILURE_WORDS, re.IGNORECASE)


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
    id: int | None = None  # once stored

    @property
    def failed(self) -> bool:
        return self.verdict in HARD_FAILURES

    def summary(self) -> dict[str, Any]:
        """Exactly what `dshkit gate --json` prints."""
        return {
            "verdict": self.verdict,
            "recovered": self.recovered,
            "elapsedMs": self.elapsed_ms,
            "screenshot": self.screenshot,
            "canvas": self.canvas,
            "errors": self.errors,
            "overlayText": self.overlay_text,
        }

    def evidence(self) -> dict[str, Any]:
        """Everything measured, as stored."""
        return self.summary() | {
            "path": self.path,
            "sha256": self.sha256,
            "timings": self.timings,
            "history": self.history,
            "errorCount": self.error_count,
            "blocked": self.blocked,
            "blockedMore": self.blocked_more,
        }


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


def judge_files(paths: list[Path], budget: float, shots: Path) -> list[Verdict]:
    """Judge each file in turn with one browser (each page in a fresh context), a screenshot
    of each verdict written under `shots`. The browser's process group is killed and its
    profile removed however this ends."""
    files = [check_deliverable(Path(p)) for p in paths]
    check_budget(budget)
    started = time.monotonic()
    with Browser() as browser:
        return asyncio.run(_judge_all(browser, files, budget, shots, started))


async def _judge_all(
    browser: Browser, files: list[Path], budget: float, shots: Path, started: float
) -> list[Verdict]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = await playwright.chromium.connect_over_cdp(await browser.ready())
        browser_ms = _ms(time.monotonic() - started)
        verdicts = []
        for file in files:
            context = await chromium.new_context(
                viewport=VIEWPORT,  # type: ignore[arg-type]
                service_workers="block",
                accept_downloads=False,
            )
            try:
                verdict = await _Judge(context, file, budget, shots).run()
            finally:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(context.close(), SHOT_TIMEOUT_S)
            verdict.timings["browserStartMs"] = browser_ms
            verdicts.append(verdict)
        return verdicts


class _Judge:
    """The sampling of one page."""

    def __init__(self, context: Any, file: Path, budget: float, shots: Path) -> None:
        self.context = context
        self.file = file
        self.budget = budget
        self.shots = shots
        self.errors: list[str] = []  # in arrival order
        self.loaded_at: float | None = None
        # Imported here: the hook imports this module after every write, judging is rarer.
        from .confinement import Confinement

        self.confinement = Confinement(file.parent)

    async def run(self) -> Verdict:
        content = self.file.read_bytes()
        sha = hashlib.sha256(content).hexdigest()
        await self.context.route("**/*", self.confinement.route)
        await self.context.route_web_socket("**/*", self.confinement.web_socket)
        await self.context.add_init_script(script=probe.INIT)
        page = await self.context.new_page()
        page.on("pageerror", lambda error: self.errors.append(_error_text(error)))
        page.on("console", self._console)
        # WebSockets the route did not mock (a worker's): the confined network refuses them.
        page.on("websocket", lambda socket: self.confinement.refused_below(socket.url, "websocket"))
        page.on("load", lambda _page: self._loaded())
        start = time.monotonic()
        deadline = start + self.budget
        with contextlib.suppress(Exception):  # a page that never commits is judged by samples
            await asyncio.wait_for(page.goto(self.file.as_uri(), wait_until="commit"), self.budget)
        history: list[str] = []
        last: dict[str, Any] | None = None
        seen_errors = 0
        good_in_a_row = 0
        stopped_early = False
        first_good: float | None = None
        while True:
            left = deadline - time.monotonic()
            sample = await self._sample(page, min(SAMPLE_TIMEOUT_S, max(left, MIN_SAMPLE_S)))
            fresh = len(self.errors) > seen_errors
            seen_errors = len(self.errors)
            state = _state(sample, fresh, bool(self.errors))
            history.append(state)
            last = sample
            now = time.monotonic()
            if state == OK:
                good_in_a_row += 1
                first_good = first_good or now
            else:
                good_in_a_row = 0
            settled = self.loaded_at is not None and now - self.loaded_at >= SETTLE_S
            if settled and good_in_a_row >= GOOD_IN_A_ROW:
                stopped_early = True
                break
            now = time.monotonic()
            if deadline - now <= 0:
                break  # the budget's last sample
            pause = min(INTERVAL_S, deadline - now)
            if self.loaded_at is not None and not settled and good_in_a_row:
                # Good so far: sample again right when an early stop becomes allowed.
                pause = min(pause, max(0.0, self.loaded_at + SETTLE_S - now))
            await asyncio.sleep(pause)
        verdict = history[-1]
        shot = await self._screenshot(page, sha, verdict)
        elapsed = time.monotonic() - start
        recovered = any(
            s in (FATAL_OVERLAY, PAGE_ERROR, UNRESPONSIVE) and s != verdict for s in history[:-1]
        )
        counts = Counter(self.errors)
        blocked, blocked_more = self.confinement.evidence()
        return Verdict(
            path=str(self.file),
            sha256=sha,
            verdict=verdict,
            recovered=recovered,
            elapsed_ms=_ms(elapsed),
            screenshot=shot,
            canvas=[_canvas_json(c) for c in (last or {}).get("canvases", [])],
            errors=[
                text if n == 1 else f"{text} (×{n})" for text, n in counts.most_common(MAX_ERRORS)
            ],
            overlay_text=(last or {}).get("overlay") or None,
            timings={
                "budgetMs": _ms(self.budget),
                "loadMs": None if self.loaded_at is None else _ms(self.loaded_at - start),
                "firstGoodMs": None if first_good is None else _ms(first_good - start),
                "samples": len(history),
                "stoppedEarly": stopped_early,
            },
            history=history,
            error_count=len(self.errors),
            blocked=blocked,
            blocked_more=blocked_more,
        )

    def _console(self, message: Any) -> None:
        # Only errors: the gate's own readPixels makes the browser log warnings (pitfall 7).
        # A load the gate refused is listed as blocked, not held against the page.
        if message.type != "error":
            return
        where = (message.location or {}).get("url", "")
        if not self.confinement.refused_in_console(message.text, where):
            self.errors.append(_clip(f"console.error: {message.text}"))

    def _loaded(self) -> None:
        self.loaded_at = self.loaded_at or time.monotonic()

    async def _sample(self, page: Any, timeout: float) -> dict[str, Any] | None:
        """One sample, or None when the page did not answer within `timeout`."""
        started = time.monotonic()
        try:
            sample: dict[str, Any] = await asyncio.wait_for(
                page.evaluate(probe.SAMPLE, FAILURE_WORDS), timeout
            )
        except TimeoutError:
            return None
        except Exception as exc:  # navigating, or the page crashed: nothing seen this time
            if "crash" in str(exc).lower():
                self.errors.append(_clip(f"page crashed: {exc}"))
            return {"overlay": "", "fatal": False, "canvases": [], "viewport": [0, 0]}
        for canvas in sample["canvases"]:
            if _tiny(canvas):
                continue
            frame = canvas["frame"]
            if frame is None or _dark(frame):
                left = timeout - (time.monotonic() - started)
                canvas["shot"] = await self._region(page, canvas, sample["viewport"], left)
        return sample

    async def _region(
        self, page: Any, canvas: dict[str, Any], viewport: list[float], timeout: float
    ) -> dict[str, float] | None:
        """Mean and max (RGB) of the canvas's centre in a screenshot; None if off screen."""
        x, y, w, h = canvas["box"]
        side_w, side_h = min(SHOT_REGION, w), min(SHOT_REGION, h)
        left, top = max(0.0, x + (w - side_w) / 2), max(0.0, y + (h - side_h) / 2)
        right = min(viewport[0], left + side_w)
        bottom = min(viewport[1], top + side_h)
        if right - left < 1 or bottom - top < 1 or timeout <= 0:
            return None
        clip = {"x": left, "y": top, "width": right - left, "height": bottom - top}
        try:
            png = await asyncio.wait_for(page.screenshot(clip=clip, animations="allow"), timeout)
        except Exception:
            return None
        mean, peak = png_stats(png)
        return {"mean": round(mean, 2), "max": peak}

    async def _screenshot(self, page: Any, sha: str, verdict: str) -> str | None:
        """The whole viewport as the verdict's screenshot (0600 under `shots`); None when the
        page cannot paint one in time."""
        timeout = STUCK_SHOT_TIMEOUT_S if verdict == UNRESPONSIVE else SHOT_TIMEOUT_S
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


def _state(sample: dict[str, Any] | None, fresh_errors: bool, any_errors: bool) -> str:
    """What one sample shows, worst first (the seed's order)."""
    if sample is None:
        return UNRESPONSIVE
    if sample["fatal"]:
        return FATAL_OVERLAY
    if fresh_errors:
        return PAGE_ERROR
    canvases = sample["canvases"]
    if any(_tiny(c) for c in canvases):
        return BLANK_CANVAS_0
    if any(_blank(c) for c in canvases):
        return BLANK_CANVAS
    # Errors earlier and nothing drawn since: the page died. A page whose canvas now draws
    # got past its error (a retry that worked).
    if any_errors and not any(_drawn(c) for c in canvases):
        return PAGE_ERROR
    return OK


def _tiny(canvas: dict[str, Any]) -> bool:
    return bool(canvas["width"] <= TINY_CANVAS or canvas["height"] <= TINY_CANVAS)


def _dark(pixels: dict[str, Any]) -> bool:
    return bool(pixels.get("lost")) or (pixels["mean"] < BLANK_MEAN and pixels["max"] < BLANK_MAX)


def _blank(canvas: dict[str, Any]) -> bool:
    """Dark inside the frame (or unreadable) and dark in the screenshot too (a page that
    drew once reads zeros inside a frame, while its screenshot shows the drawing)."""
    frame, shot = canvas["frame"], canvas.get("shot")
    return (frame is None or _dark(frame)) and shot is not None and _dark(shot)


def _drawn(canvas: dict[str, Any]) -> bool:
    frame, shot = canvas["frame"], canvas.get("shot")
    return (frame is not None and not _dark(frame)) or (shot is not None and not _dark(shot))


def _canvas_json(canvas: dict[str, Any]) -> dict[str, Any]:
    frame = canvas["frame"]
    return {
        "width": canvas["width"],
        "height": canvas["height"],
        "cssWidth": canvas["cssWidth"],
        "cssHeight": canvas["cssHeight"],
        "context": canvas["context"],
        "framePixel": None if frame is None else {k: round(v, 2) for k, v in frame.items()},
        "screenshotPixel": canvas.get("shot"),
    }


def _error_text(error: Any) -> str:
    stack = getattr(error, "stack", "") or ""
    message = getattr(error, "message", "") or str(error)
    # The stack starts with "Name: message"; keep its first frames for the agent to find.
    text = "\n".join(stack.splitlines()[:4]) if message in stack else message
    return _clip(f"uncaught {text}")


def _clip(text: str) -> str:
    if len(text) <= MAX_ERROR_CHARS:
        return text
    return text[:MAX_ERROR_CHARS] + f"… ({len(text)} characters in all)"


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
