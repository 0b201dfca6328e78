"""The console for every eye and hand: text contrast at least 4.5:1 (3:1 when large) and control
borders at least 3:1, computed from the rendered colours in light and dark mode; a dark mode
that follows the system; touch targets of at least 24 × 24 px at 390 px; nothing wider than
the phone; `aria-live` only on what changes; keys for the main views. Screenshots of every view
in dark mode too (test-artifacts/console/, ignored by git).

Real Chromium against a real `dshkit serve` (tests/support/browser_console.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dshkit import chromium

from ..support.browser_console import (
    ARTIFACTS,
    CONTRAST,
    SMALL_TARGETS,
    VIEWPORTS,
    VIEWS,
    Console,
    corpus_console,
    watched,
)
from ..support.console import SESSION

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed"),
]

ALL_VIEWS = [*VIEWS, "signals?signal=repeatFailures", f"session/dsh/{SESSION}"]


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    with corpus_console(tmp_path_factory.mktemp("access"), 5, 2, 120) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)
    console.page.emulate_media(color_scheme="light")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_and_borders_have_enough_contrast(console: Console, page: Any, scheme: str) -> None:
    page.emulate_media(color_scheme=scheme)
    found = {}
    for view in ALL_VIEWS:
        console.open(view)
        # What a section hides is read too.
        page.evaluate(
            "() => document.querySelectorAll('main details').forEach((d) => d.open = true)"
        )
        bad = page.evaluate(CONTRAST)
        if bad:
            found[view] = bad[:5]
    assert found == {}


def test_dark_mode_follows_the_system(console: Console, page: Any) -> None:
    background = "getComputedStyle(document.documentElement).backgroundColor"
    console.open("overview")
    light = page.evaluate(background)
    page.emulate_media(color_scheme="dark")
    dark = page.evaluate(background)
    assert light != dark
    channels = [int(x) for x in dark[dark.index("(") + 1 : dark.index(")")].split(",")[:3]]
    assert max(channels) < 60  # a dark page, not a light one tinted
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for viewport, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        for view in [*VIEWS, f"session/dsh/{SESSION}"]:
            console.open(view)
            name = view.split("/")[0]
            page.screenshot(path=str(ARTIFACTS / f"{name}-{viewport}-dark.png"), full_page=True)


def test_touch_targets_and_width_on_a_phone(console: Console, page: Any) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    small, wide = {}, {}
    for view in ALL_VIEWS:
        console.open(view)
        found = page.evaluate(SMALL_TARGETS)
        if found:
            small[view] = found[:5]
        width = page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
        if width[0] > width[1]:
            wide[view] = width
    assert small == {} and wide == {}


def test_only_what_changes_is_announced(console: Console, page: Any) -> None:
    console.open("overview")
    assert page.get_attribute("main", "aria-live") is None  # a view's render is not read out
    live = page.evaluate(
        "() => [...document.querySelectorAll('[aria-live]')].map((e) => e.id || e.className)"
    )
    assert live == ["notice"]  # the first screen announces only what a click did


def test_keys_open_the_main_views(console: Console, page: Any) -> None:
    console.open("overview")
    for key, view in [("s", "sessions"), ("p", "profile"), ("g", "gate"), ("o", "overview")]:
        page.keyboard.press("g")
        page.keyboard.press(key)
        page.wait_for_selector(f'[data-view="{view}"][data-ready="1"]')
        assert page.get_attribute(f'nav a[data-view="{view}"]', "aria-current") == "page"
    page.keyboard.press("?")
    assert "g s sessions" in page.text_content("#notice")
    page.keyboard.press("/")
    page.wait_for_selector('[data-view="sessions"][data-ready="1"]')
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'search'")
