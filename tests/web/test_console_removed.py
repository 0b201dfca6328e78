"""The profile view's "Removed by you" section: each entry the person removed, listed with its
category, claim and when, and a Restore button that undoes the removal; the last run's
report of what the model wrote again and was kept out. Also where the list stands when long,
in light and dark, on a phone, and when the removals change elsewhere (the event stream).

Real Chromium against a real `dshkit serve` and the fake model (tests/support/browser_console.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from dshkit import chromium
from dshkit.profile.model import CATEGORY_LABELS
from dshkit.store import Store

from ..support.browser_console import (
    ARTIFACTS,
    CONTRAST,
    SMALL_TARGETS,
    VIEWPORTS,
    Console,
    serving,
    settle,
    watched,
)
from ..support.console import build_world
from ..support.corpus import Corpus
from ..support.profile import A1, B1, answer, entry, store_version

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed"),
]

# Entries to remove many of: a list longer than the section shows open.
MANY = [entry(f"R{n}", "C", f"第{n}号条目：{'先给分析再决定改哪一项' * n}") for n in range(1, 8)]
WHEN = r"removed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d"


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    base = tmp_path_factory.mktemp("removed")
    state_dir, root = base / "state", base / "sessions"
    Corpus(root, seed=17).generate(sessions=2, frames=120)
    world = build_world(state_dir, root)
    with Store(state_dir) as store:
        store_version(store, [dict[str, object](A1), dict[str, object](B1), *MANY])
    with serving(base, state_dir, [root], world) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)
    console.page.emulate_media(color_scheme="light")


def ids(console: Console) -> list[str]:
    profile = console.api("/api/profile/state")["profile"]
    return [e["id"] for e in profile["entries"]]


def removed(console: Console) -> list[str]:
    return [r["id"] for r in console.api("/api/profile/state")["removed"]]


def act(console: Console, entry_id: str, action: str) -> httpx.Response:
    return httpx.post(
        f"{console.url}/api/profile/entries/{entry_id}/{action}",
        headers={"x-dshkit-token": console.token},
    )


def regenerate(console: Console, page: Any, written: list[dict[str, Any]]) -> None:
    """A regeneration from the page, the fake model answering `written` (the rest unchanged)."""
    others = [i for i in ids(console) if i not in {e["id"] for e in written}]
    console.fake.replies.append(answer({"entries": written, "unchangedIds": others}))
    page.evaluate("() => document.getElementById('regen-progress').replaceChildren()")
    page.click("#regenerate")
    page.wait_for_selector('#regen-progress li[data-stage="end"]', timeout=60_000)
    page.wait_for_selector("#regenerate:not([disabled])", timeout=30_000)


def test_remove_an_entry_see_it_listed_kept_out_and_restore_it(console: Console, page: Any) -> None:
    console.open("profile")
    assert page.text_content("#removed-none").startswith("None.")
    page.once("dialog", lambda dialog: dialog.accept())
    box = page.locator('li[data-entry="B1"] details.entry-edit')
    box.locator("summary").click()
    box.locator('button[data-entry-act="remove"]').click()
    item = page.locator('#removed-list li[data-removed="B1"]')
    item.wait_for(timeout=30_000)
    shown = item.text_content()
    english, chinese = CATEGORY_LABELS["B"][1], CATEGORY_LABELS["B"][0]
    assert B1["claim"] in shown and f"B · {english}" in shown and chinese in shown
    assert re.search(WHEN, shown), shown
    assert "next regeneration may write it again" in page.text_content("#removed")
    assert removed(console) == ["B1"] and "B1" not in ids(console)

    # The model writes it again: it is kept out, and the last run says so in words.
    regenerate(console, page, [dict(B1)])
    page.wait_for_selector('#last-run-removed li[data-dropped="B1"]', timeout=30_000)
    said = page.text_content('#last-run-removed li[data-dropped="B1"]')
    assert said.startswith("The model wrote B1") and B1["claim"] in said, said
    assert "not added back, as you removed it: it has the id of the removed entry 'B1'" in said
    assert "dropped: the person removed it" not in page.text_content("main")  # said once
    assert console.api("/api/profile/state")["lastRun"]["droppedAsRemoved"][0]["id"] == "B1"
    assert "B1" not in ids(console)

    # Restore from the keyboard: the line goes, the keyboard stays in the section.
    page.focus('button[data-restore="B1"]')
    page.keyboard.press("Enter")
    page.wait_for_selector('li[data-removed="B1"]', state="detached", timeout=30_000)
    assert removed(console) == []
    # (the notice is written after the list is drawn again: under load, a moment later)
    page.wait_for_function(
        "() => document.querySelector('#notice')?.textContent.includes('Entry B1: removal undone')",
        timeout=30_000,
    )
    page.wait_for_function("() => document.activeElement?.id === 'removed-title'")
    assert "B1" not in ids(console)  # restoring puts nothing back by itself
    # The next regeneration may write it again, and does.
    regenerate(console, page, [dict(B1)])
    page.wait_for_selector('li[data-entry="B1"]', timeout=30_000)
    assert "B1" in ids(console)
    assert page.locator("#last-run-removed").count() == 0


def test_restore_needs_the_owner_and_a_removal(console: Console) -> None:
    url = f"{console.url}/api/profile/entries/A1/restore"
    assert httpx.post(url).status_code == 401
    missing = act(console, "A1", "restore")
    assert missing.status_code == 404 and "A1" in missing.text


def test_removals_made_elsewhere_show_without_a_reload(console: Console, page: Any) -> None:
    console.open("profile")
    page.evaluate("() => { window.sameDocument = true; }")
    assert act(console, "A1", "remove").status_code == 200
    page.wait_for_selector('#removed-list li[data-removed="A1"]', timeout=30_000)
    # A restore stores no version: the stream still tells the page.
    assert act(console, "A1", "restore").status_code == 200
    page.wait_for_selector('li[data-removed="A1"]', state="detached", timeout=30_000)
    assert page.evaluate("() => window.sameDocument") is True
    assert page.text_content("#removed-none").startswith("None.")


def test_a_long_list_is_folded_readable_and_fits_a_phone(console: Console, page: Any) -> None:
    for e in MANY:
        assert act(console, str(e["id"]), "remove").status_code == 200
    console.open("profile")
    regenerate(console, page, [dict(MANY[0])])  # the oldest removal, written again
    page.wait_for_selector('#last-run-removed li[data-dropped="R1"]', timeout=30_000)
    assert page.text_content("#removed-title") == f"Removed by you ({len(MANY)})"
    newest = page.locator("#removed-list li[data-removed]")
    assert newest.count() == 5 and newest.first.get_attribute("data-removed") == "R7"
    older = page.locator("#removed-older")
    assert older.evaluate("d => d.open") is False
    assert older.locator("summary").text_content() == "2 older removals"
    older.locator("summary").click()
    assert older.locator("li[data-removed]").count() == 2
    # What is announced stays what changes: nothing in the new parts.
    assert page.locator("#removed [aria-live], #last-run-removed [aria-live]").count() == 0
    assert page.get_attribute("#removed", "aria-live") is None

    # A restore inside the folded part keeps it open, the page where it was.
    settle(page)
    at = page.evaluate(
        "() => { document.querySelector('button[data-restore=\"R1\"]')"
        ".scrollIntoView({ block: 'center' }); return window.scrollY; }"
    )
    assert at > 0
    older.locator('button[data-restore="R1"]').click()
    page.wait_for_selector('li[data-removed="R1"]', state="detached", timeout=30_000)
    assert page.locator("#removed-older").evaluate("d => d.open") is True
    assert abs(page.evaluate("() => window.scrollY") - at) <= 2
    page.wait_for_function("() => document.activeElement?.dataset.restore === 'R2'")

    settle(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert page.evaluate(CONTRAST) == [], scheme
    page.emulate_media(color_scheme="light")
    for viewport, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        page.locator("#removed").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"profile-removed-{viewport}.png"), full_page=True)
        # The two new parts on their own, to be looked at closely.
        page.locator("#removed").screenshot(path=str(ARTIFACTS / f"removed-{viewport}.png"))
        last = page.locator("section.card", has=page.locator("#last-run-removed"))
        last.screenshot(path=str(ARTIFACTS / f"removed-last-run-{viewport}.png"))
        width_used = page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
        assert width_used[0] <= width_used[1], (viewport, width_used)
    assert page.evaluate(SMALL_TARGETS) == []  # at 390 px, the last size

    for e in MANY[1:]:
        assert act(console, str(e["id"]), "restore").status_code == 200
    page.wait_for_selector("#removed-none", timeout=30_000)
