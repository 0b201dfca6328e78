"""The console as its browser tests drive it: a real `dshkit serve` over a state directory
and roots, asking the fake LLM, and a headless Chromium signed in through its login link."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
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

    def api(self, path: str) -> Any:
        return httpx.get(f"{self.url}{path}", headers={"x-dshkit-token": self.token}).json()

    def open(self, view: str) -> Any:
        """Go to a view and wait until it has rendered."""
        name = view.split("/")[0].split("?")[0]
        self.page.goto(f"{self.url}/#{view}")
        self.page.wait_for_selector(f'[data-view="{name}"][data-ready="1"]', timeout=30_000)
        shown = self.page.text_content("main")
        assert "Could not load" not in shown, shown
        return self.page


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
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx.get(f"{url}/api/status")
                    break
                except httpx.TransportError:
                    if serve.poll() is not None:
                        pytest.fail(f"dshkit serve exited: {serve.communicate()[1][-2000:]}")
                    assert time.monotonic() < deadline, "no service"
                    time.sleep(0.1)
            link = _login_link(serve)
            with Browser(loopback=True) as browser:  # it drives the local service
                endpoint = asyncio.run(browser.ready())  # before Playwright runs its own loop
                for console in _drive(url, link, endpoint, state_dir, fake, world):
                    console.serve = serve
                    yield console
        finally:
            serve.terminate()
            serve.communicate(timeout=20)


def _login_link(serve: subprocess.Popen[str]) -> str:
    """The login link among the lines `dshkit serve` printed when it started."""
    assert serve.stderr is not None
    for _ in range(10):
        found = re.search(r"open the console: (http://\S+\?token=\S+)", serve.stderr.readline())
        if found:
            return found.group(1)
    pytest.fail("dshkit serve printed no login link")


def _drive(
    url: str,
    link: str,
    endpoint: str,
    state_dir: Path,
    fake: FakeOpenAI,
    world: dict[str, Any],
) -> Iterator[Console]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        connected = playwright.chromium.connect_over_cdp(endpoint)
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
        # Signed in as the person is: the link, then the same page without the token.
        page.goto(link)
        assert page.url == f"{url}/" and token not in page.content()
        (cookie,) = context.cookies(url)
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["value"] != token
        yield Console(url, token, state_dir, fake, world, page, errors)
        context.close()
        connected.close()


def watched(console: Console) -> Iterator[Any]:
    """The console's page at the desktop size, and after the test: no script error and no
    failed request."""
    console.page.set_viewport_size({"width": 1280, "height": 800})
    yield console.page
    assert console.errors == [], console.errors
    console.errors.clear()
