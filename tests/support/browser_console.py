"""The console as its browser tests drive it: a real `dshkit serve` over a state directory
and roots, asking the fake LLM, and a headless Chromium signed in through its login link."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from dshkit.gate.browser import Browser

from .cli import COMMAND, environment
from .fakes import FakeOpenAI
from .paths import REPO

ARTIFACTS = REPO / "test-artifacts" / "console"
VIEWPORTS = {"desktop": (1440, 900), "phone": (390, 844)}
VIEWS = (
    "overview",
    "profile",
    "signals",
    "optimizer",
    "gate",
    "handoffs",
    "sessions",
    "memory",
    "llm",
)
CUSTOM = "请始终用中文回答。\nAlways run the tests before saying a change is done."
CLAIM = "偏好先写测试再改代码"


@dataclass
class Console:
    url: str
    token: str
    state_dir: Path
    fake: FakeOpenAI
    world: dict[str, Any]
    page: Any
    errors: list[str]
    serve: subprocess.Popen[str] | None = None  # the service's process, for a test to stop
    log: ServiceLog | None = None  # what the service has written to stderr so far

    def api(self, path: str) -> Any:
        return httpx.get(f"{self.url}{path}", headers={"x-dshkit-token": self.token}).json()

    def open(self, view: str) -> Any:
        """Go to a view and wait until it has rendered."""
        name = view.split("/")[0].split("?")[0]
        # The view shown now is marked, so that the wait is for the one this opens, not the
        # one still shown (the address already shown stays as it is: nothing to wait for).
        target = f"{self.url}/#{view}"
        if self.page.url != target:
            self.page.evaluate(
                "() => document.getElementById('view')?.firstElementChild"
                "?.setAttribute('data-left', '1')"
            )
            self.page.goto(target)
        self.page.wait_for_selector(
            f'[data-view="{name}"][data-ready="1"]:not([data-left])', timeout=30_000
        )
        shown = self.page.text_content("main")
        assert "Could not load" not in shown, shown
        return self.page


def settle(page: Any) -> None:
    """Until the event stream's re-renders have stopped: one swaps the nodes a step holds."""
    last = None
    for _ in range(30):
        now = page.evaluate("() => document.body.dataset.liveRefreshes || '0'")
        if now == last:
            return
        last = now
        page.wait_for_timeout(1_000)


class ServiceLog:
    """`dshkit serve`'s stderr, read as it comes by a thread of its own: a service that talks
    would otherwise fill the pipe and block on its next write. Kept to be shown on failure."""

    def __init__(self, serve: subprocess.Popen[str]) -> None:
        assert serve.stderr is not None
        self._stream = serve.stderr
        self._lines: list[str] = []
        self._lock = threading.Condition()
        self._done = False
        self._thread = threading.Thread(target=self._read, name="serve-stderr", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self._stream:
            with self._lock:
                self._lines.append(line)
                self._lock.notify_all()
        with self._lock:
            self._done = True
            self._lock.notify_all()

    def lines(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def tail(self, start: int = 0, limit: int = 60) -> str:
        return "".join(self.lines()[start:][-limit:])

    def wait_for(self, pattern: str, timeout: float = 30.0) -> re.Match[str] | None:
        """The first line matching `pattern`, waiting for it; None once the stream ended or
        `timeout` seconds passed without it."""
        deadline = time.monotonic() + timeout
        seen = 0
        with self._lock:
            while True:
                for line in self._lines[seen:]:
                    found = re.search(pattern, line)
                    if found:
                        return found
                seen = len(self._lines)
                left = deadline - time.monotonic()
                if self._done or left <= 0:
                    return None
                self._lock.wait(left)

    def close(self) -> None:
        self._thread.join(timeout=20)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(
    base: Path, state_dir: Path, roots: list[Path], world: dict[str, Any]
) -> Iterator[Console]:
    """A real `dshkit serve` over `state_dir` (reading `roots`, asking the fake LLM) and a
    headless Chromium signed in through its login link, until the block ends."""
    home = base / "home"
    home.mkdir()
    port = _free_port()
    with FakeOpenAI() as fake:
        env = {
            "DSHKIT_LLM_BASE_URL": fake.base_url,
            "DSHKIT_LLM_API_KEY": "sk-console-test",
        }
        command = [*COMMAND, "serve", "--port", str(port)]
        command += [f"--root={root}" for root in roots]
        serve = subprocess.Popen(
            [*command, "--state-dir", str(state_dir)],
            env=environment(home, env),
            stderr=subprocess.PIPE,
            text=True,
        )
        log = ServiceLog(serve)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx.get(f"{url}/api/status")
                    break
                except httpx.TransportError:
                    if serve.poll() is not None:
                        log.close()
                        pytest.fail(f"dshkit serve exited: {log.tail()}")
                    assert time.monotonic() < deadline, f"no service: {log.tail()}"
                    time.sleep(0.1)
            link = _login_link(log)
            with Browser(loopback=True) as browser:  # it drives the local service
                endpoint = asyncio.run(browser.ready())  # before Playwright runs its own loop
                drive = _drive(url, link, endpoint, browser.artifacts, state_dir, fake, world)
                for console in drive:
                    console.serve = serve
                    console.log = log
                    yield console
        finally:
            serve.terminate()
            serve.wait(timeout=20)
            log.close()


def _login_link(log: ServiceLog) -> str:
    """The login link among the lines `dshkit serve` printed when it started."""
    found = log.wait_for(r"open the console: (http://\S+\?login=\S+)")
    if found is None:
        pytest.fail(f"dshkit serve printed no login link: {log.tail()}")
    return found.group(1)


def _drive(
    url: str,
    link: str,
    endpoint: str,
    artifacts: Path,
    state_dir: Path,
    fake: FakeOpenAI,
    world: dict[str, Any],
) -> Iterator[Console]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        connected = playwright.chromium.connect_over_cdp(endpoint, artifacts_dir=artifacts)
        context = connected.new_context(viewport={"width": 1280, "height": 800})
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on(
            "console",
            lambda message: (
                errors.append(f"{message.text} {message.location.get('url')}")
                if message.type == "error"
                else None
            ),
        )
        token = (state_dir / "token").read_text().strip()
        # Signed in as the person is: the one-time link, then the same page without its code
        # and with the tab's credential kept where no other origin reaches it.
        page.goto(link)
        page.wait_for_function("() => !location.search.includes('login=')")
        assert page.url == f"{url}/" and token not in page.content()
        assert 'name="dshkit-console"' not in page.content()
        assert page.evaluate("() => sessionStorage.getItem('dshkit-console')")
        (cookie,) = context.cookies(url)
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["value"] != token
        yield Console(url, token, state_dir, fake, world, page, errors)
        context.close()
        connected.close()


@contextmanager
def corpus_console(base: Path, seed: int, sessions: int, frames: int) -> Iterator[Console]:
    """`serving` over a generated corpus of DSH sessions (`seed`, `sessions`, `frames`) and
    the console world built from it, its state and sessions under `base`."""
    from .console import build_world
    from .corpus import Corpus

    state_dir, root = base / "state", base / "sessions"
    Corpus(root, seed=seed).generate(sessions=sessions, frames=frames)
    with serving(base, state_dir, [root], build_world(state_dir, root)) as running:
        yield running


def watched(console: Console) -> Iterator[Any]:
    """The console's page at the desktop size, and after the test: no script error and no
    failed request. What the service wrote meanwhile is printed (pytest shows it on failure)."""
    console.page.set_viewport_size({"width": 1280, "height": 800})
    start = len(console.log.lines()) if console.log else 0
    yield console.page
    if console.log is not None:
        print(f"dshkit serve's stderr during the test:\n{console.log.tail(start)}")
    assert console.errors == [], console.errors
    console.errors.clear()


# WCAG's colour parsing (rgb/rgba as computed styles give it), relative luminance and
# contrast ratio, as JavaScript: the start of a function body CONTRAST and the console's other
# contrast checks share.
WCAG_JS = """  const parse = (c) => {
    const m = c && c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const lum = ({ r, g, b }) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
"""

# WCAG's relative luminance and contrast ratio, over what the page rendered: every visible
# element holding text against the first opaque background behind it, every control's border
# against the background it sits on. Disabled controls are exempt, as WCAG has it.
CONTRAST = (
    """() => {
"""
    + WCAG_JS
    + """  const behind = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0.5) return c;
    }
    return { r: 255, g: 255, b: 255, a: 1 };
  };
  const shown = (el) => el.getClientRects().length > 0
    && getComputedStyle(el).visibility !== "hidden"
    && !el.closest("svg, .sr-only, .skip, [disabled], noscript");
  const name = (el) => `<${el.tagName.toLowerCase()} id="${el.id}" class="${el.className}">`;
  const bad = [];
  for (const el of document.querySelectorAll("body *")) {
    if (!shown(el)) continue;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const style = getComputedStyle(el);
    if (own) {
      const size = parseFloat(style.fontSize), heavy = Number(style.fontWeight) >= 700;
      const need = size >= 24 || (heavy && size >= 18.66) ? 3 : 4.5;
      const got = ratio(parse(style.color), behind(el));
      const text = el.textContent.trim().slice(0, 30);
      if (got < need) bad.push(`text ${got.toFixed(2)} < ${need}: ${name(el)} ${text}`);
    }
    if (el.matches("input, select, textarea, button") && parseFloat(style.borderTopWidth) > 0) {
      const got = ratio(parse(style.borderTopColor), behind(el.parentElement));
      if (got < 3) bad.push(`border ${got.toFixed(2)} < 3: ${name(el)}`);
    }
  }
  return bad;
}"""
)

# Controls a finger must hit: buttons, fields, the views' links and chips (links inside a
# sentence are exempt, as WCAG has it).
SMALL_TARGETS = """() => [...document.querySelectorAll(
    "button, select, input, textarea, nav a, a.chip, summary")]
  .filter((el) => el.getClientRects().length && !el.closest(".sr-only, .skip"))
  .map((el) => [el, el.getBoundingClientRect()])
  .filter(([, r]) => r.width < 24 || r.height < 24)
  .map(([el, r]) => `${el.tagName.toLowerCase()}#${el.id}.${el.className} `
    + `${r.width.toFixed(0)}x${r.height.toFixed(0)}`)"""
