"""The console follows the store live: one authenticated event stream (`GET /api/events`) that
changes nothing, a scan made by another process shown without a reload, the "last scan"
indicator; and a regeneration whose service stopped says so instead of waiting forever.

Real Chromium against a real `dshkit serve` (tests/support/browser_console.py). The test that
stops the service runs last.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dshkit import chromium

from ..support.browser_console import Console, serving, watched
from ..support.cli import COMMAND, environment
from ..support.console import build_world, friction_session
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


def test_the_event_stream_needs_the_owner_and_a_get_answers_the_figures_once(
    console: Console,
) -> None:
    import httpx

    assert httpx.get(f"{console.url}/api/events").status_code == 401
    once = console.api("/api/events")
    assert set(once["counters"]) == {"sessions", "optimizer", "gate", "graft", "memory", "profile"}
    assert once["scanning"] is False


def test_a_scan_in_another_process_appears_without_a_reload(console: Console, page: Any) -> None:
    console.open("sessions")
    page.wait_for_selector("#live.on")
    page.evaluate("window.notReloaded = true")
    assert page.locator('tr[data-session="console-live-2"]').count() == 0
    friction_session(console.world["root"], "console-live-2")
    home = console.world["base"] / "scan-home"
    home.mkdir()
    scan = [*COMMAND, "scan", f"--root={console.world['root']}", "--state-dir"]
    subprocess.run([*scan, str(console.state_dir)], env=environment(home), check=True)
    page.wait_for_selector('tr[data-session="console-live-2"]', timeout=30_000)
    assert page.evaluate("window.notReloaded") is True
    row = page.text_content('tr[data-session="console-live-2"]')
    assert "帮我把构建修好" in row  # named by the first request, not by its id
    page.wait_for_function(
        "() => /last scan \\d+ s ago/.test(document.querySelector('#live').textContent)"
    )
    assert re.search(r"last scan \d+ s ago", page.text_content("#live"))


def test_the_stream_stays_open_across_a_change(console: Console, page: Any) -> None:
    """One stream carries a change and the beats after it: never cut by the service, never
    opened again by the page (a stream cut shows as a second `ready` or a second opening)."""
    console.open("sessions")
    page.wait_for_selector("#live.on")
    page.wait_for_function("() => Number(document.body.dataset.liveReadies) >= 1")
    opened = page.evaluate("document.body.dataset.liveOpened")
    readies = page.evaluate("document.body.dataset.liveReadies")
    friction_session(console.world["root"], "console-live-kept")
    home = console.world["base"] / "kept-home"
    home.mkdir()
    scan = [*COMMAND, "scan", f"--root={console.world['root']}", "--state-dir"]
    subprocess.run([*scan, str(console.state_dir)], env=environment(home), check=True)
    page.wait_for_selector('tr[data-session="console-live-kept"]', timeout=60_000)
    heard = int(page.evaluate("document.body.dataset.liveHeard"))
    # Three more events (beats, every few seconds) on the same stream after the change.
    page.wait_for_function(
        "n => Number(document.body.dataset.liveHeard) >= n", arg=heard + 3, timeout=90_000
    )
    assert page.evaluate("document.body.dataset.liveOpened") == opened
    assert page.evaluate("document.body.dataset.liveReadies") == readies


def test_the_first_screen_says_what_is_off_and_what_to_do(console: Console, page: Any) -> None:
    console.open("overview")
    steps = page.text_content("#next-steps")
    assert "not installed" in steps and "dshkit install-hooks --harness claude" in steps
    copy = page.locator('#next-steps button[data-copy="dshkit install-hooks --harness claude"]')
    copy.click()
    assert (
        page.evaluate("navigator.clipboard.readText()") == "dshkit install-hooks --harness claude"
    )
    checklist = page.locator("#checklist li")
    assert checklist.count() == 5
    assert page.locator('#checklist li[data-done="1"]', has_text="Sessions have been read").count()
    assert page.locator('#checklist li[data-done="0"]', has_text="hooks are installed").count()
    assert page.text_content("#gate-failures") == "1"  # the blank canvas of build_world
    assert page.text_content("#optimizer-week") == "2"
    week = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 7 * 86400))
    days = console.api("/api/signals")["days"]
    expected = sum(sum(d["totals"].values()) for d in days if not d["day"] or d["day"] >= week)
    assert page.text_content("#friction-week") == str(expected)


def test_scan_now_reads_new_logs(console: Console, page: Any) -> None:
    console.open("overview")
    friction_session(console.world["root"], "console-live-3")
    page.click("#scan-now")
    page.wait_for_function(
        "() => document.querySelector('#notice').textContent.includes('Scanned')"
    )
    assert any(s["id"] == "console-live-3" for s in console.api("/api/sessions")["sessions"])


def test_optimize_a_prompt_shows_raw_beside_refined(console: Console, page: Any) -> None:
    refined = "修复 src/login.py 中的登录失败，完成后运行测试。"
    console.fake.replies.append(Reply(deltas=[refined]))
    console.open("optimizer")
    page.fill("#optimize-raw", "修一下登录")
    page.select_option("#optimize-tier", "basic")
    page.click("#optimize-go")
    page.wait_for_selector("#optimize-result pre.diff.optimized", timeout=60_000)
    assert page.text_content("#optimize-result pre.diff.raw") == "修一下登录"
    shown = page.text_content("#optimize-result pre.diff.optimized")
    assert shown  # the refined words, or the raw words passed on (then said why)
    if shown != "修一下登录":
        assert page.locator("#optimize-result pre.diff.optimized ins").count() >= 1
    page.wait_for_selector("#optimize-go:not([disabled])")
    # Its sentences, coloured by the audit's verdict, in the run's details.
    newest = console.api("/api/optimizer/runs?limit=1")["runs"][0]
    detail = console.api(f"/api/optimizer/runs/{newest['runId']}")
    page.wait_for_selector(f'[data-run-detail="{newest["runId"]}"]')  # listed live
    page.click(f'[data-run-detail="{newest["runId"]}"] summary')
    page.wait_for_selector(f'[data-run-detail="{newest["runId"]}"] dl.facts')
    sentences = page.locator(f'[data-run-detail="{newest["runId"]}"] .audited .sentence')
    assert sentences.count() == len(detail["sentences"])
    kinds = [s["kind"] for s in detail["sentences"]]
    assert [sentences.nth(i).get_attribute("data-kind") for i in range(len(kinds))] == kinds
    if kinds:
        assert sentences.first.get_attribute("title")  # its reason, on hover


def test_judge_a_file_from_the_gate_view(console: Console, page: Any) -> None:
    target = console.world["base"] / "deliverable" / "page.html"
    target.parent.mkdir()
    target.write_text("<!doctype html><title>ok</title><h1>它能打开</h1>", encoding="utf-8")
    console.open("gate")
    page.fill("#judge-path", str(target))
    page.click("#judge-go")
    page.wait_for_selector("#judge-result .evidence, #judge-result .bad", timeout=90_000)
    assert "The page loaded" in page.text_content("#judge-result"), page.text_content("main")
    page.wait_for_function(
        "path => document.querySelector('main').textContent.includes(path)",
        arg=str(target),
        timeout=30_000,
    )  # the new verdict arrives in the list without a reload


def test_switch_a_sessions_rework(console: Console, page: Any) -> None:
    session = console.world["corpus"]
    console.open("gate")
    page.fill("#rework-session", session)
    page.click('button[data-rework="off"]')
    page.wait_for_function(
        "() => document.querySelector('#rework-state').textContent.includes('rework off')"
    )
    assert "this session's own choice" in page.text_content("#rework-state")
    assert console.api(f"/api/gate/rework?session={session}")["rework"] is False
    page.click('button[data-rework="config"]')
    page.wait_for_function(
        "() => document.querySelector('#rework-state').textContent.includes('as config.toml')"
    )


def test_cancel_a_pending_handoff(console: Console, page: Any) -> None:
    txn = console.world["txn"]
    console.open("handoffs")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f'button.cancel-handoff[data-txn="{txn}"]').first.click()
    page.wait_for_function(
        "() => document.querySelector('#notice').textContent.includes('cancelled')"
    )
    assert "PENDING" not in page.locator(f'tr[data-txn="{txn}"]').first.text_content()


def test_a_kept_box_still_answers_clicks_after_a_live_re_render(
    console: Console, page: Any
) -> None:
    # A re-render keeps the shown [data-keep] box (the signal hits, the gate's screenshot) and
    # drops its fresh twin: the fresh view's buttons must write into the one on screen.
    console.open("signals")
    page.wait_for_selector("#live.on")
    before = int(page.evaluate("Number(document.body.dataset.liveRefreshes) || 0"))
    friction_session(console.world["root"], "console-live-rerender")
    home = console.world["base"] / "rerender-home"
    home.mkdir()
    scan = [*COMMAND, "scan", f"--root={console.world['root']}", "--state-dir"]
    subprocess.run([*scan, str(console.state_dir)], env=environment(home), check=True)
    page.wait_for_function(
        f"() => (Number(document.body.dataset.liveRefreshes) || 0) > {before}", timeout=30_000
    )
    page.click('button[data-signal="repeatFailures"][aria-label$="in dsh"]')
    page.wait_for_selector("#hits table.hits tbody tr", timeout=30_000)


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
    page.wait_for_selector("#regenerate:not([disabled])", timeout=30_000)
    console.errors.clear()  # the requests to a stopped service fail, as they should
