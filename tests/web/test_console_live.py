"""The console follows the store live: one authenticated event stream (`GET /api/events`) that
changes nothing, a scan made by another process shown without a reload, the "last scan"
indicator; and a regeneration whose service stopped says so instead of waiting forever.

Real Chromium against a real `dshkit serve` (tests/support/browser_console.py). The test that
stops the service runs last.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dshkit import chromium

from ..support.browser_console import Console, serving, watched
from ..support.console import build_world
from ..support.corpus import Corpus
from ..support.fakes import Reply

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed"),
]


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    base = tmp_path_factory.mktemp("live")
    state_dir, root = base / "state", base / "sessions"
    Corpus(root, seed=11).generate(sessions=2, frames=120)
    world = build_world(state_dir, root)
    world["root"] = root
    world["base"] = base
    with serving(base, state_dir, [root], world) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)


def test_a_regeneration_whose_service_stopped_says_so(console: Console, page: Any) -> None:
    console.fake.replies.append(Reply(deltas=['{"entries": ['], keepalive_s=0.5))
    console.open("profile")
    page.click("#regenerate")
    page.wait_for_selector('#regen-progress li[data-stage="generating"]', timeout=30_000)
    assert console.serve is not None
    console.serve.kill()
    console.serve.wait(timeout=20)
    page.wait_for_selector('#regen-progress li[data-stage="lost"]', timeout=30_000)
    assert "Lost contact with the service" in page.text_content("#regen-progress")
    assert "Lost contact" in page.text_content("#notice")
    assert not page.is_disabled("#regenerate")
    console.errors.clear()  # the requests to a stopped service fail, as they should
