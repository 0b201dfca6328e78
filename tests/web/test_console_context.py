"""The console's pictures of one session and of the signals, in real Chromium against a real
`dshkit serve`: a session's context use over its turns with its warning and forced lines and
the handoff's cut; its timeline with the profile's quotes, the signal hits and the cut marked;
the signal charts of one harness or one project, a bar or a count listing the sessions it
stands for. Each picture is also checked for contrast, width and targets, and saved at
1440×900 and 390×844 (light and dark) under test-artifacts/console/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from dshkit import chromium
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

from ..support.browser_console import (
    ARTIFACTS,
    CONTRAST,
    SMALL_TARGETS,
    WCAG_JS,
    Console,
    serving,
    watched,
)
from ..support.console import SESSION, friction_session
from ..support.context_session import (
    CONTEXT_SESSION,
    QUOTE_ENTRY,
    ContextWorld,
    cut_and_quote,
    write_context_session,
)
from ..support.corpus import Corpus
from ..support.profile import PROFILE

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed"),
]

SHOTS = {"desktop": (1440, 900), "phone": (390, 844)}
VIEW = f"session/dsh/{CONTEXT_SESSION}"

# What the pictures draw, against the card they sit on: each mark needs 3:1 (WCAG's
# non-text contrast), in the colour it is painted with (a line's stroke, a shape's fill).
GRAPHICS = (
    """() => {
"""
    + WCAG_JS
    + """  const marks = [
    ["#context-chart .use", "stroke"], ["#context-chart .warning-line", "stroke"],
    ["#context-chart .forced-line", "stroke"], ["#context-chart .boundary", "stroke"],
    ["#context-chart .point", "fill"], ["#context-chart .point.warned", "fill"],
    ["svg.trace .quote", "stroke"], ["svg.trace .signal-hit", "fill"],
    ["svg.trace .turn", "fill"], ["svg.trace .boundary", "stroke"],
  ];
  return marks.map(([selector, paint]) => {
    const el = document.querySelector(selector);
    if (!el) return [selector, 0];
    const card = getComputedStyle(el.closest("section")).backgroundColor;
    return [selector, ratio(parse(getComputedStyle(el)[paint]), parse(card))];
  });
}"""
)


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    base = tmp_path_factory.mktemp("context")
    state_dir, root = base / "state", base / "sessions"
    Corpus(root, seed=7).generate(sessions=2, frames=60)
    boundary, quoted, long_call = write_context_session(root)
    friction_session(root)
    with Store(state_dir) as store:
        Scanner(store).scan([Source("dsh", root)])
        txn = cut_and_quote(store, root, boundary, PROFILE)
    world = {"context": ContextWorld(boundary, quoted, long_call, txn)}
    with serving(base, state_dir, [root], world) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)
    console.page.emulate_media(color_scheme="light")


def steps(d: str) -> list[float]:
    """The heights of a watermark line drawn as steps (`M x y H x V y H x …`), turn by turn."""
    return [float(y) for y in re.findall(r"(?:M[\d.]+ |V)([\d.]+)", d)]


def test_the_context_chart_draws_the_use_its_lines_and_the_cut(console: Console, page: Any) -> None:
    world: ContextWorld = console.world["context"]
    console.open(VIEW)
    chart = page.locator("#context-chart")
    points = chart.locator("circle.point")
    assert points.count() == 5
    heights = [float(points.nth(i).get_attribute("cy")) for i in range(5)]
    assert heights == sorted(heights, reverse=True)  # the use climbs turn by turn
    warning = steps(chart.locator("path.warning-line").get_attribute("d"))
    forced = steps(chart.locator("path.forced-line").get_attribute("d"))
    assert len(warning) == len(forced) == 5
    # A smaller y is higher: every forced line above its warning line, each turn's point below
    # its warning line but turn 4's, which is between the two.
    assert all(f < w for f, w in zip(forced, warning, strict=True))
    for turn, (cy, w, f) in enumerate(zip(heights, warning, forced, strict=True), start=1):
        assert (f < cy < w) if turn == 4 else (cy > w), (turn, cy, w, f)
    assert warning[1] == warning[2] and warning[0] < warning[1]  # the line moved, then held
    assert "warned" in (points.nth(3).get_attribute("class") or "")
    assert chart.locator("circle.point.warned").count() == 1
    assert chart.locator("circle.point.forced").count() == 0
    # The cut: after turn 3's point, before turn 4's.
    cut = chart.locator(f'line.boundary[data-txn="{world.txn.id}"]')
    at = float(cut.get_attribute("x1"))
    assert float(points.nth(2).get_attribute("cx")) < at < float(points.nth(3).get_attribute("cx"))
    said = page.text_content("#context-said") or ""
    assert "in the warning band from turn 4" in said and "never at the forced line" in said
    assert f"handoff #{world.txn.id} cut it after turn 3" in said
    assert chart.get_attribute("aria-label") == said
    page.click("#context-use summary")
    row = page.locator('#context-figures tr[data-turn="4"]').text_content() or ""
    assert "57,000" in row and "100,000" in row and "57.0%56.0%61.0%" in row


def test_the_timeline_marks_the_quotes_the_signal_hits_and_the_cut(
    console: Console, page: Any
) -> None:
    world: ContextWorld = console.world["context"]
    console.open(VIEW)
    trace = page.locator("#timeline svg.trace")
    turns = trace.locator("rect.turn")
    assert turns.count() == 5
    quote = trace.locator(f'circle.quote[data-quote="{QUOTE_ENTRY}"]')
    assert quote.count() == 1 and quote.get_attribute("data-seq") == str(world.quoted_seq)
    hit = trace.locator('path.signal-hit[data-signal="longTools"]')
    assert hit.count() == 1 and hit.get_attribute("data-seq") == str(world.long_call_seq)
    # The hit sits where its call starts; the cut where turn 3 ended.
    span = trace.locator(f'rect.span[data-seq="{world.long_call_seq}"]')
    tip = float(re.match(r"M([\d.]+)", hit.get_attribute("d") or "").group(1))  # type: ignore[union-attr]
    assert abs(tip - float(span.get_attribute("x"))) < 0.5
    third = turns.nth(2)
    ended = float(third.get_attribute("x")) + float(third.get_attribute("width"))
    cut = trace.locator(f'line.boundary[data-txn="{world.txn.id}"]')
    assert abs(float(cut.get_attribute("x1")) - ended) < 0.5
    assert float(cut.get_attribute("x1")) < float(turns.nth(3).get_attribute("x"))
    # The same marks as words, each a link to its place.
    listed = page.locator("#timeline-marks li")
    assert [listed.nth(i).get_attribute("data-mark") for i in range(listed.count())] == [
        "quote",
        "signal",
        "boundary",
    ]
    assert "把图表的预警线画出来" in (listed.nth(0).text_content() or "")
    assert "longTools at turn 2 (bash)" in (listed.nth(1).text_content() or "")
    assert f"Handoff #{world.txn.id} (PENDING)" in (listed.nth(2).text_content() or "")
    listed.nth(0).locator("a").click()
    page.wait_for_selector(f'ol.messages li.hit[data-seq="{world.quoted_seq}"]')
    # A click on a mark opens the call it stands for.
    console.open(VIEW)
    page.locator('#timeline path.signal-hit[data-signal="longTools"]').dispatch_event("click")
    page.wait_for_selector(f'details[data-seq="{world.long_call_seq}"][open]')


def test_a_session_without_usage_says_so(console: Console, page: Any) -> None:
    console.open(f"session/dsh/{SESSION}")
    assert "No request of this session reported its token usage" in (
        page.text_content("#context-use") or ""
    )
    # Its signal hits are on its timeline all the same.
    assert page.locator('#timeline path.signal-hit[data-signal="repeatFailures"]').count() == 1


def test_a_project_picked_and_a_bar_clicked_list_the_sessions_it_stands_for(
    console: Console, page: Any
) -> None:
    rows = console.api("/api/signals/sessions")["sessions"]
    mine = next(r for r in rows if r["sessionId"] == CONTEXT_SESSION)
    other = next(r for r in rows if r["sessionId"] == SESSION)
    assert mine["project"] != other["project"]
    console.open("signals")
    projects = page.locator("#per-project tbody tr")
    assert projects.count() == len({r["project"] for r in rows}) >= 2
    page.select_option("#signal-project", mine["project"])
    page.wait_for_function(
        "p => location.hash.includes('project=') && document.querySelector("
        '\'[data-view="signals"][data-ready="1"] #signal-project\')?.value === p',
        arg=mine["project"],
    )
    long_tools = page.locator('[data-signal-chart="longTools"]')
    assert (long_tools.locator("figcaption").text_content() or "").strip() == "longTools 1"
    assert (
        page.locator('[data-signal-chart="repeatFailures"] figcaption').text_content() or ""
    ).strip() == "repeatFailures 0"
    long_tools.locator("rect[data-day]").first.dispatch_event("click")
    page.wait_for_selector("#signal-sessions table.signal-sessions tbody tr")
    listed = page.locator("#signal-sessions tbody tr")
    assert listed.count() == 1 and listed.get_attribute("data-session") == CONTEXT_SESSION
    assert page.locator("table.hits tbody tr").count() == 1
    # All projects again: the same bar stands for every session with a long tool that day.
    page.select_option("#signal-project", "")
    page.wait_for_function("() => !location.hash.includes('project=')")
    page.wait_for_selector('[data-view="signals"][data-ready="1"]')
    day = mine["day"]
    bar = page.locator(f'[data-signal-chart="longTools"] rect[data-day="{day}"]')
    bar.dispatch_event("click")
    page.wait_for_selector(f'#signal-sessions h3:has-text("on {day}")')
    shown = page.locator("#signal-sessions tbody tr")
    expected = {r["sessionId"] for r in rows if r["day"] == day and r["totals"]["longTools"]}
    assert {shown.nth(i).get_attribute("data-session") for i in range(shown.count())} == expected
    assert {CONTEXT_SESSION, SESSION} <= expected
    # A count in the per-project table lists that project's sessions.
    page.locator(
        f'#per-project tr[data-project="{other["project"]}"] button[data-signal="repeatFailures"]'
    ).click()
    page.wait_for_selector('#signal-sessions[data-signal="repeatFailures"]')
    shown = page.locator("#signal-sessions tbody tr")
    assert SESSION in {shown.nth(i).get_attribute("data-session") for i in range(shown.count())}
    assert CONTEXT_SESSION not in (page.text_content("#signal-sessions") or "")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_pictures_are_legible_fit_a_phone_and_are_saved(
    console: Console, page: Any, scheme: str
) -> None:
    page.emulate_media(color_scheme=scheme)
    project = next(
        r["project"]
        for r in console.api("/api/signals/sessions")["sessions"]
        if r["sessionId"] == CONTEXT_SESSION
    )
    views = {"session-context": VIEW, "signals-project": f"signals?project={project}"}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name, view in views.items():
        page.set_viewport_size({"width": 1440, "height": 900})
        console.open(view)
        page.evaluate(
            "() => document.querySelectorAll('main details').forEach((d) => d.open = true)"
        )
        assert page.evaluate(CONTRAST) == [], (view, scheme)
        if name == "session-context":
            weak = [(s, r) for s, r in page.evaluate(GRAPHICS) if r < 3]
            assert weak == [], (scheme, weak)
        for size, (width, height) in SHOTS.items():
            page.set_viewport_size({"width": width, "height": height})
            console.open(view)
            if name == "signals-project":  # a bar clicked: the sessions it stands for shown
                page.locator('[data-signal-chart="longTools"] rect[data-day]').first.dispatch_event(
                    "click"
                )
                page.wait_for_selector("#signal-sessions tbody tr")
            suffix = "" if scheme == "light" else "-dark"
            page.screenshot(path=str(ARTIFACTS / f"{name}-{size}{suffix}.png"), full_page=True)
            if size == "phone":
                assert page.evaluate(SMALL_TARGETS) == [], (view, scheme)
                width_now = page.evaluate(
                    "() => [document.scrollingElement.scrollWidth, innerWidth]"
                )
                assert width_now[0] <= width_now[1], (view, width_now)
