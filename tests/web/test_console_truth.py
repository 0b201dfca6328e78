"""The console says what is true: the profile's category names are the agent's, a custom mode
with no text says nothing reaches the agent, a version from a cut-off reply that lowered an
entry's confidence is not a green "ok", evidence is in words (the errors listed and their count
agree), a click keeps the page as it was (scroll, focus, open sections), and a regeneration
whose service stopped says so instead of waiting forever.

Real Chromium against a real `dshkit serve` and the fake LLM (tests/support/browser_console.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import chromium
from dshkit.gate.judge import Verdict
from dshkit.gate.verdicts import save_verdict
from dshkit.memory import Workspace
from dshkit.memory.records import Draft, add
from dshkit.profile import CATEGORY_LABELS
from dshkit.profile.prompt import build_messages
from dshkit.profile.state import render_profile
from dshkit.store import Store

from ..support.browser_console import Console, serving, settle, watched
from ..support.console import build_world
from ..support.corpus import Corpus
from ..support.fakes import Reply

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed"),
]

SHADER_ERRORS = [f"WebGL: ERROR: 0:{n}: 'vec5' : no matching overloaded function" for n in range(7)]
B1 = {"id": "B1", "category": "B", "claim": "不要未经确认就改代码", "evidence": ["[1]"]}


def _world(base: Path) -> tuple[Path, Path, dict[str, Any]]:
    state_dir, root = base / "state", base / "sessions"
    Corpus(root, seed=7).generate(sessions=2, frames=120)
    world = build_world(state_dir, root)
    with Store(state_dir) as store:
        overlay = save_verdict(
            store,
            Verdict(
                path="/home/dev/work/shader.html",
                sha256="1" * 64,
                verdict="fatal-overlay",
                recovered=False,
                elapsed_ms=3000,
                screenshot=None,
                canvas=[{"width": 800, "height": 600}],
                errors=SHADER_ERRORS,
                overlay_text="着色器编译失败（7 处错误）",
                error_count=0,
            ),
        )
        with store.transaction():
            kept = add(
                store,
                Workspace("/home/dev/work", None),
                ("dsh", "console-friction-1"),
                Draft(
                    "fact", "构建用 make test 验证", grade="A", seq=1, valid_from=1, subject="构建"
                ),
            )
    world["overlay"] = overlay.id
    world["memory"] = kept
    return state_dir, root, world


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    base = tmp_path_factory.mktemp("truth")
    state_dir, root, world = _world(base)
    with serving(base, state_dir, [root], world) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)


def _regenerate(console: Console, page: Any, reply: Reply) -> None:
    console.fake.replies.append(reply)
    console.open("profile")
    page.click("#regenerate")
    page.wait_for_selector('#regen-progress li[data-stage="end"]', timeout=60_000)
    page.wait_for_selector("#regenerate:not([disabled])", timeout=30_000)


def with_b1(console: Console, page: Any) -> None:
    """A version holding B1, generated here when no test before this one on its worker made
    it (xdist spreads the module's tests over workers, each with its own service)."""
    profile = console.api("/api/profile/state")["profile"]
    if not any(e["id"] == "B1" for e in (profile or {}).get("entries", [])):
        answer = orjson.dumps({"entries": [{**B1, "confidence": "high"}]}).decode()
        _regenerate(console, page, Reply(deltas=[answer]))


def test_the_category_names_are_those_the_agent_is_told() -> None:
    """One source: the prompt asks for each category by the name the injected text heads it
    with (both from CATEGORY_LABELS)."""
    entries = [
        {**B1, "category": key, "id": f"{key}1", "confidence": "high"} for key in CATEGORY_LABELS
    ]
    prompt = build_messages(None, None, [], {"humanMessages": 0, "sessions": 0}, None)[1]["content"]
    text = render_profile(entries)
    for key, (chinese, _) in CATEGORY_LABELS.items():
        assert f"{key}）{chinese}：" in prompt
        assert f"【{chinese}" in text


def test_the_profile_view_names_categories_as_the_service_does(console: Console, page: Any) -> None:
    answer = orjson.dumps({"entries": [{**B1, "confidence": "high"}]}).decode()
    _regenerate(console, page, Reply(deltas=[answer]))
    state = console.api("/api/profile/state")
    served = {c["key"]: (c["labelZh"], c["label"]) for c in state["categories"]}
    assert served == CATEGORY_LABELS
    page.wait_for_selector('h4[data-category="B"]')
    heading = page.text_content('h4[data-category="B"]')
    chinese, english = CATEGORY_LABELS["B"]
    assert english in heading and chinese in heading
    assert "how I work" not in page.text_content("main")
    assert f"【{chinese}】" in page.text_content("#effective-text")


def test_a_cut_off_reply_that_lowered_confidence_is_not_ok(console: Console, page: Any) -> None:
    first = orjson.dumps({"entries": [{**B1, "confidence": "high"}]}).decode()
    _regenerate(console, page, Reply(deltas=[first]))
    lowered = orjson.dumps({**B1, "confidence": "low"}).decode()
    cut = Reply(deltas=['{"entries": [' + lowered + ', {"id": "n2", "cat'], finish="length")
    _regenerate(console, page, cut)
    page.wait_for_selector("#last-run-caveats")
    caveats = page.text_content("#last-run-caveats")
    assert "cut off" in caveats
    assert "B1 dropped from high to low confidence" in caveats
    assert "ok" not in (page.get_attribute("#last-outcome", "class") or "").split()
    newest = page.locator("details.version").first
    assert "from a cut-off reply" in newest.locator("summary").text_content()
    newest.locator("summary").click()
    assert "B1 confidence high → low" in newest.locator('[data-confidence="B1"]').text_content()


def test_custom_mode_with_no_text_says_nothing_reaches_the_agent(
    console: Console, page: Any
) -> None:
    console.open("profile")
    page.fill("#custom-text", "")
    page.click("#save-custom")
    page.wait_for_function("() => document.querySelector('#notice').textContent.length > 0")
    assert page.locator("#custom-empty").count() == 0  # auto mode: the profile is injected
    page.click('button[data-mode="custom"]')
    page.wait_for_selector("#custom-empty")
    assert "nothing reaches the agent" in page.text_content("#custom-empty")
    page.click('button[data-mode="auto"]')
    page.wait_for_selector('button[data-mode="auto"][aria-pressed="true"]')
    assert page.locator("#custom-empty").count() == 0


def test_a_verdicts_listed_errors_and_their_count_agree(console: Console, page: Any) -> None:
    console.open("gate")
    evidence = page.locator(f'[data-verdict-evidence="{console.world["overlay"]}"]')
    assert evidence.locator(".error-count").text_content() == "7 errors"
    assert evidence.locator("ol.errors li").count() == 7
    assert "covered itself with an error message" in evidence.text_content()
    assert "着色器编译失败" in evidence.text_content()
    raw = evidence.locator("details.raw")
    raw.locator("summary").click()
    assert '"verdict": "fatal-overlay"' in raw.locator("pre").text_content()


def test_optimizer_steps_are_words_not_json(console: Console, page: Any) -> None:
    run = console.world["runs"][1]
    console.open("optimizer")
    page.click(f'[data-run-detail="{run}"] summary')
    page.wait_for_selector(f'[data-run-detail="{run}"] dl.facts')
    assert '"error": null' not in page.text_content("main")


def test_a_click_keeps_scroll_focus_and_open_sections(console: Console, page: Any) -> None:
    with_b1(console, page)  # a version to open
    page.set_viewport_size({"width": 1280, "height": 500})
    console.open("profile")
    page.locator("details.version").first.locator("summary").click()
    page.evaluate("window.scrollTo(0, 300)")
    custom = page.locator('button[data-mode="custom"]')
    custom.focus()
    before = page.evaluate("window.scrollY")
    page.keyboard.press("Enter")
    page.wait_for_selector('button[data-mode="custom"][aria-pressed="true"]')
    page.wait_for_function("() => document.querySelector('#notice').textContent.length > 0")
    assert page.evaluate("window.scrollY") == before
    assert page.evaluate("document.activeElement.dataset.mode") == "custom"
    assert page.locator("details.version").first.get_attribute("open") is not None
    # An unsaved edit survives the next click too.
    page.fill("#custom-text", "还没保存的字")
    page.click('button[data-mode="auto"]')
    page.wait_for_selector('button[data-mode="auto"][aria-pressed="true"]')
    page.wait_for_function("() => document.querySelector('#notice').textContent.includes('auto')")
    assert page.input_value("#custom-text") == "还没保存的字"


def test_every_signal_has_its_chart_and_a_bar_opens_its_hits(console: Console, page: Any) -> None:
    console.open("signals")
    signals = console.api("/api/signals")["signals"]
    assert page.locator("[data-signal-chart]").count() == len(signals) == 7
    chart = page.locator('[data-signal-chart="repeatFailures"]')
    assert "repeatFailures 1" in chart.locator("figcaption").text_content()
    chart.locator("rect[data-day]").first.dispatch_event("click")
    page.wait_for_selector("table.hits tbody tr")
    assert "E_WRITE" in page.text_content("table.hits")
    page.click('a.chip[href="#signals?harness=dsh"]')
    page.wait_for_selector('a.chip[aria-current="true"][href="#signals?harness=dsh"]')


def test_gate_thumbnails_by_verdict_and_tier_rates_with_their_n(
    console: Console, page: Any
) -> None:
    console.open("gate")
    thumb = page.locator(f'button.thumb[data-thumb="{console.world["verdict"]}"]')
    assert "tank.html" in thumb.text_content()
    thumb.click()
    page.wait_for_function(
        "() => { const i = document.querySelector('#shot img'); "
        "return i && i.complete && i.naturalWidth === 1; }"
    )
    console.open("optimizer")
    bar = page.locator('tr[data-tier="advanced"] .rate-bar')
    assert "n=0" in bar.text_content()  # no outcome recorded in this world
    assert bar.locator("svg").get_attribute("aria-label") == "no judged runs"


def test_search_sessions_messages_and_profile_entries(console: Console, page: Any) -> None:
    with_b1(console, page)
    console.open("sessions")
    everything = page.locator("table#sessions tbody tr").count()
    page.fill("#search", "构建修好")
    page.press("#search", "Enter")
    page.wait_for_selector("#search-results")
    page.wait_for_selector('[data-view="sessions"][data-ready="1"]')
    found = page.locator("#found-messages li")
    assert found.count() == 1 and "帮我把构建修好" in found.text_content()
    assert page.locator("table#sessions tbody tr").count() == 1 < everything
    assert "console-friction-1" in page.text_content("table#sessions")
    page.fill("#search", "未经确认")
    page.press("#search", "Enter")
    page.wait_for_selector("#found-entries li")  # B1
    assert "不要未经确认就改代码" in page.text_content("#found-entries")
    page.fill("#since", "2099-01-01")
    page.press("#search", "Enter")
    page.wait_for_function("() => location.hash.includes('since=2099-01-01')")
    page.wait_for_selector('[data-view="sessions"][data-ready="1"]')
    assert page.locator("table#sessions tbody tr").count() == 0


def test_a_sessions_timeline_shows_its_calls_as_spans(console: Console, page: Any) -> None:
    console.open("session/dsh/console-friction-1")
    trace = page.locator("svg.trace")
    assert trace.locator("rect.span").count() == 4  # three writes and make test
    assert trace.locator("rect.span.failed").count() == 3
    assert trace.locator("path.said").count() == 2
    assert "3 failed" in (trace.get_attribute("aria-label") or "")
    seq = trace.locator("rect.span:not(.failed)").get_attribute("data-seq")
    trace.locator("rect.span:not(.failed)").dispatch_event("click")
    page.wait_for_selector(f'details[data-seq="{seq}"][open]')
    assert "make test" in page.text_content(f'details[data-seq="{seq}"]')


def test_llm_calls_show_prompt_reply_tokens_and_latency(console: Console, page: Any) -> None:
    answer = orjson.dumps({"entries": [{**B1, "confidence": "high"}]}).decode()
    _regenerate(console, page, Reply(deltas=[answer]))
    settle(page)  # a late re-render would close the call's loaded prompt again
    calls = console.api("/api/status/llm-calls")
    assert calls["total"] >= 1
    newest = calls["calls"][0]
    console.open("llm")
    call = page.locator(f'details.llm-call[data-call="{newest["id"]}"]')
    summary = call.locator("summary").text_content()
    assert newest["purpose"] in summary and "10 in / 2 out" in summary  # the fake's usage
    call.locator("summary").click()
    page.wait_for_selector(f'details.llm-call[data-call="{newest["id"]}"] pre')
    shown = call.text_content()
    assert "── system ──" in shown and "── user ──" in shown
    assert CATEGORY_LABELS["B"][0] in shown  # the prompt, whole
    assert "不要未经确认就改代码" in shown  # the reply
    assert console.api("/api/status/llm-calls/999999")["kind"] == "not-found"


def test_memory_records_are_shown_and_can_be_set_aside(console: Console, page: Any) -> None:
    record = console.world["memory"]
    console.open("memory")
    item = page.locator(f'li.memory-record[data-record="{record}"]')
    assert "构建用 make test 验证" in item.text_content()
    assert "帮我把构建修好" in item.locator(".session-name").text_content()  # named, not an id
    item.locator('button[data-act="quarantine"]').click()
    page.wait_for_selector(f'li.memory-record[data-record="{record}"] button[data-act="release"]')
    assert "set aside" in page.locator(f'li.memory-record[data-record="{record}"]').text_content()
    page.locator(f'li.memory-record[data-record="{record}"] button[data-act="release"]').click()
    page.wait_for_selector(
        f'li.memory-record[data-record="{record}"] button[data-act="quarantine"]'
    )
    page.fill("#memory-search", "make")
    page.press("#memory-search", "Enter")
    page.wait_for_function("() => location.hash === '#memory?q=make'")
    page.wait_for_selector(f'li.memory-record[data-record="{record}"]')
