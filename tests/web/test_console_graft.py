"""The console's handoff page as a person uses it: the ignition switch, and the sessions kept
from the forced cut. Real Chromium against a real `dshkit serve` (tests/support/browser_console.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from dshkit import chromium
from dshkit.graft import ledger
from dshkit.store import Store

from ..support.browser_console import Console, corpus_console, watched

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed"),
]


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    with corpus_console(tmp_path_factory.mktemp("graft-console"), 7, 1, 40) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)


def state_text(page: Any) -> str:
    return str(page.text_content("#ignition-state"))


def test_the_ignition_switch_turns_starting_new_sessions_off_and_back(
    console: Console, page: Any
) -> None:
    url = f"{console.url}/api/graft/ignition"
    assert httpx.post(url, json={"ignite": False}).status_code == 401  # owner only
    console.open("handoffs")
    assert state_text(page).startswith("on") and "config.toml" in state_text(page)
    page.click("#ignition-toggle")
    page.wait_for_function(
        "() => document.querySelector('#ignition-state b').textContent === 'off'"
    )
    assert "chosen here" in state_text(page)
    assert console.api("/api/graft/ignition") == {"ignite": False, "chosen": False, "config": True}
    assert "waits for the next session" in str(page.text_content("#notice"))
    page.click("#ignition-config")
    page.wait_for_function("() => document.querySelector('#ignition-state b').textContent === 'on'")
    assert console.api("/api/graft/ignition")["chosen"] is None
    with Store(console.state_dir) as store:
        switched = [r.detail for r in ledger.audit_records(store) if r.kind == "ignition-switched"]
    assert switched == [{"ignite": False, "by": "console"}, {"ignite": None, "by": "console"}]


def test_a_session_kept_from_the_forced_cut_is_listed_and_given_back(
    console: Console, page: Any
) -> None:
    with Store(console.state_dir) as store:
        ledger.set_excluded(store, "dsh", "kept-session", True, by="cli", reason="长重构")
    console.open("handoffs")
    row = page.locator('tr[data-excluded="kept-session"]')
    assert "长重构" in str(row.text_content())
    row.locator("button.include-session").click()
    page.wait_for_selector('tr[data-excluded="kept-session"]', state="detached", timeout=30_000)
    with Store(console.state_dir) as store:
        assert ledger.exclusions(store) == []
