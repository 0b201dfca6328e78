"""What a person typed may hold no break at all (a path, a URL, a run of one character): the
Sessions table keeps its columns on the screen with such a title, at 1280 and at 390 px."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dshkit import chromium
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

from ..support.browser_console import Console, serving, watched
from ..support.corpus import Corpus
from ..support.logs import human, session_dir, write_log

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed"),
]

UNBROKEN = "构建失败" + "x" * 96 + "/very/long/path/" + "y" * 100  # 200+ characters, no space


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    base = tmp_path_factory.mktemp("titles")
    state_dir, root = base / "state", base / "sessions"
    Corpus(root, seed=37).generate(sessions=2, frames=60)
    write_log(session_dir(root, "s-long") / "session.v4.jsonl.zstd", [[human(1, UNBROKEN)]])
    with Store(state_dir) as store:
        Scanner(store).scan([Source("dsh", root)])
    with serving(base, state_dir, [root], {}) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)


@pytest.mark.parametrize("width", [1280, 390])
def test_a_title_without_breaks_keeps_the_columns_on_screen(
    console: Console, page: Any, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    console.open("sessions")
    page.wait_for_selector('tr[data-session="s-long"]')
    overflow = page.evaluate(
        """() => {
        const table = document.getElementById("sessions");
        const row = document.querySelector('tr[data-session="s-long"]');
        const cells = [...row.cells].filter((c) => c.getClientRects().length);
        return {
          page: document.scrollingElement.scrollWidth - innerWidth,
          table: table.getBoundingClientRect().right - innerWidth,
          cells: cells.map((c) => c.getBoundingClientRect().right - innerWidth),
          shown: row.cells[0].textContent,
        };
      }"""
    )
    assert overflow["page"] <= 0 and overflow["table"] <= 1, overflow
    assert all(right <= 1 for right in overflow["cells"]), overflow
    # Wrapped, not cut by the layout (the title itself is the session's first request, as
    # long as the session layer keeps it).
    shown = overflow["shown"].rstrip("…")
    assert len(shown) >= 150 and UNBROKEN.startswith(shown), shown
