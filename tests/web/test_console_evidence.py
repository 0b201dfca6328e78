"""The profile view and verified evidence (issue 30): entries never injected (no evidence from
the person's own words, or a claim another entry says) shown dimmed with why; each evidence
quote with where it was said, linked to that message; the last run's refusals, the material
its budget left out, and the wait of the hooks' refreshes after a failed run. Also in light
and dark, and on a phone.

Real Chromium against a real `dshkit serve` and the fake model (tests/support/browser_console.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from dshkit import chromium
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
from ..support.fakes import Reply
from ..support.logs import Log, session_dir, write_log
from ..support.profile import answer, store_version

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed"),
]

SESSION = "evidence-1"
# The person's messages: long enough that a 4,000-token prompt lists only some of them.
TOPICS = (
    "我希望你先把分析写出来，再决定改哪一项，不要直接动手改代码。",
    "不要在我没要求的时候升级依赖，锁文件里的版本就是线上的版本。",
    "改完之后把完整的测试跑一遍再告诉我好了，不要只说应该没问题。",
    "提交信息第一行不超过七十二个字符，正文写清楚为什么要改。",
    "日志里不要打印用户说的原话，打个长度就够了，这是隐私问题。",
    "先写一个能复现问题的测试，确认它在现在的代码上失败，再修。",
    "性能问题先测量再说，别一上来就加缓存，缓存失效更难查。",
)
SAID = [f"第{n}条：" + TOPICS[n % len(TOPICS)] * 10 for n in range(14)]
CLAIM = "先给分析，再决定改哪一项"
LEGACY = "习惯一句话下达任务"  # kept from before evidence was checked: its evidence a bare number


def person_session(root: Any) -> list[tuple[int, int]]:
    """A DSH session of the person's SAID; the (seq, time) of each message."""
    log = Log()
    placed = []
    for text in SAID:
        log.turn_start()
        log.human(text)
        placed.append((log.events[-1]["seq"], log.events[-1]["time"]))
        log.say("好的。")
    path = session_dir(root, SESSION, "/home/dev/evidence") / "session.v4.jsonl.zstd"
    write_log(path, [[e] for e in log.events], session_id=SESSION, cwd="/home/dev/evidence")
    return placed


def source(index: int, placed: list[tuple[int, int]]) -> dict[str, object]:
    seq, at = placed[index]
    return {"quote": SAID[index][:40], "harness": "dsh", "session": SESSION, "seq": seq, "at": at}


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    base = tmp_path_factory.mktemp("evidence")
    state_dir, root = base / "state", base / "sessions"
    placed = person_session(root)
    world = build_world(state_dir, root)
    (state_dir / "config.toml").write_text("[profile]\nprompt_tokens = 4000\n")
    entries: list[dict[str, object]] = [
        {"id": "A1", "category": "A", "claim": CLAIM, "evidence": ["x", "y"]},
        {"id": "A9", "category": "C", "claim": CLAIM, "evidence": ["z"]},
        {"id": "L1", "category": "A", "claim": LEGACY, "evidence": ["[3]", "[7]"]},
    ]
    entries = [{**e, "confidence": "high"} for e in entries]
    with Store(state_dir) as store:
        store_version(store, entries)
        # As a generation stores them: A1's and A9's quotes traced to the session above; L1
        # from before evidence was checked (no sources, bare numbers no one can trace).
        row = store.db.execute("SELECT entries FROM profile_versions").fetchone()
        stored = orjson.loads(row[0])
        traced = {"A1": [source(0, placed), source(7, placed)], "A9": [source(0, placed)]}
        for e in stored:
            if e["id"] in traced:
                e["sources"] = traced[e["id"]]
                e["evidence"] = [s["quote"] for s in traced[e["id"]]]
            else:
                e.pop("sources", None)
                e.pop("evidenceQuoteCount", None)
        with store.transaction() as db:
            db.execute("UPDATE profile_versions SET entries = ?", (orjson.dumps(stored).decode(),))
    with serving(base, state_dir, [root], {**world, "placed": placed}) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)
    console.page.emulate_media(color_scheme="light")


def regenerate(console: Console, page: Any, reply: Reply) -> None:
    """A regeneration from the page, the fake model answering `reply`."""
    console.fake.replies.append(reply)
    page.evaluate("() => document.getElementById('regen-progress').replaceChildren()")
    page.click("#regenerate")
    page.wait_for_selector('#regen-progress li[data-stage="end"]', timeout=60_000)
    page.wait_for_selector("#regenerate:not([disabled])", timeout=30_000)


def test_entries_not_injected_are_dimmed_with_why_and_quotes_say_where(
    console: Console, page: Any
) -> None:
    unsupported = console.api("/api/profile/state")["profile"]["unsupported"]
    assert unsupported == ["A9", "L1"]
    console.open("profile")
    assert "A9, L1" in page.text_content("#not-injected")
    legacy = page.locator('li[data-entry="L1"]')
    assert legacy.get_attribute("data-injected") == "0"
    why = legacy.locator(".not-injected-why").text_content()
    assert why.startswith("not injected: no evidence from the person's own words"), why
    assert "None of its evidence is traced to your own messages" in why
    twin = page.locator('li[data-entry="A9"]')
    assert twin.get_attribute("data-injected") == "0"
    said = twin.locator(".not-injected-why").text_content()
    assert "not injected: the same claim as another entry" in said and "A1 says the same" in said
    kept = page.locator('li[data-entry="A1"]')
    assert kept.get_attribute("data-injected") == "1"
    assert kept.locator(".not-injected-why").count() == 0
    # Dimmed: the claim in the muted colour, the injected one not.
    colour = "el => getComputedStyle(el).color"
    muted = page.locator("p.muted").first.evaluate(colour)
    assert legacy.locator(".claim").evaluate(colour) == muted
    assert kept.locator(".claim").evaluate(colour) != muted
    assert LEGACY not in page.text_content("#effective-text")

    # Each quote of A1 with where it was said, linked to that message; named once opened.
    seq, _ = console.world["placed"][7]
    evidence = kept.locator("details:not(.entry-edit)")
    assert "with where you said it" in evidence.locator("summary").text_content()
    evidence.locator("summary").click()
    item = evidence.locator(f'li[data-source="dsh:{SESSION}:{seq}"]')
    text = item.text_content()
    assert text.startswith(SAID[7][:40] + " — said in "), text
    assert re.search(rf"\(dsh, message {seq} · \d{{4}}-\d\d-\d\d \d\d:\d\d\)$", text), text
    link = item.locator("a")
    assert link.get_attribute("href") == f"#session/dsh/{SESSION}?around={seq}"
    page.wait_for_function(
        "a => a.textContent.startsWith('evidence · 第0条：')",
        arg=link.element_handle(),
        timeout=30_000,
    )
    # An entry from before: its numbers are looked up, and found nowhere.
    old = legacy.locator("details:not(.entry-edit)")
    old.locator("summary").click()
    page.wait_for_selector('li[data-entry="L1"] li[data-quote="[3]"] span.muted', timeout=30_000)
    assert "no kept message contains it" in old.locator('li[data-quote="[3]"]').text_content()

    settle(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert page.evaluate(CONTRAST) == [], scheme
    page.emulate_media(color_scheme="light")
    for viewport, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        legacy.scroll_into_view_if_needed()
        section = page.locator("section.card", has=page.locator('li[data-entry="L1"]'))
        section.screenshot(path=str(ARTIFACTS / f"profile-evidence-{viewport}.png"))
        width_used = page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
        assert width_used[0] <= width_used[1], (viewport, width_used)
    assert page.evaluate(SMALL_TARGETS) == []

    link.click()
    page.wait_for_selector("h2:has-text('Session')", timeout=30_000)


def test_the_last_run_names_what_it_refused_and_left_out(console: Console, page: Any) -> None:
    ids = [e["id"] for e in console.api("/api/profile/state")["profile"]["entries"]]
    # A rewrite of A1 citing words never said: refused, A1 kept; a new entry too long.
    written = [
        {"id": "A1", "category": "A", "claim": CLAIM + "，再动手", "evidence": ["我说过这句"]},
        {"id": "new1", "category": "B", "claim": "周五下午从不部署" * 15, "evidence": ["[1]"]},
        {"id": "new2", "category": "C", "claim": "改完要跑完整的测试", "evidence": [SAID[2][:30]]},
    ]
    written = [{**e, "confidence": "high"} for e in written]
    others = [i for i in ids if i != "A1"]
    console.open("profile")
    regenerate(console, page, answer({"entries": written, "unchangedIds": others}))
    page.wait_for_selector('#last-run-refused li[data-refused="new1"]', timeout=30_000)
    run = console.api("/api/profile/state")["lastRun"]
    assert {r["id"]: r["kind"] for r in run["refused"]} == {"A1": "unsupported", "new1": "invalid"}

    unsupported = page.locator('#last-run-refused li[data-refused="A1"]')
    assert unsupported.get_attribute("data-kind") == "unsupported"
    said = unsupported.text_content()
    assert said.startswith(f"unsupported A1 “{CLAIM}，再动手”: no evidence traced"), said
    assert "the person never said this" in said
    assert unsupported.locator(".kept").text_content() == " — kept A1 as it was"
    invalid = page.text_content('#last-run-refused li[data-refused="new1"]')
    assert invalid.startswith("invalid new1 “周五下午从不部署") and "at most 100" in invalid
    assert "kept" not in invalid
    assert "refused (unsupported)" not in page.text_content("main")  # nor among the warnings
    assert run["materialLeftOut"] > 0 and run["materialMessages"] > 0
    left = page.text_content("#last-run-left-out")
    assert (
        f"your {run['materialMessages']} newest messages were sent" in left
        and f"{run['materialLeftOut']} older ones were left out to fit [profile] prompt_tokens"
        in left
    ), left
    assert page.locator("#last-run-retry").count() == 0  # a good run: no wait
    assert page.locator('li[data-entry="A1"]').get_attribute("data-injected") == "1"

    settle(page)  # the regeneration's re-renders swap the nodes
    section = page.locator("section.card", has=page.locator("#last-run-refused"))
    section.screenshot(path=str(ARTIFACTS / "profile-last-run-refused.png"))


def test_a_failed_run_shows_the_hooks_wait(console: Console, page: Any) -> None:
    console.open("profile")
    regenerate(console, page, Reply(status=500, error_body={"error": {"message": "boom"}}))
    page.wait_for_selector("#last-run-retry", timeout=30_000)
    retry = console.api("/api/profile/state")["retry"]
    assert retry is not None and retry["failures"] >= 1
    wait = page.text_content("#last-run-retry")
    assert "failed run" in wait and "next automatic try after " in wait, wait
    assert "or when you say something new" in wait
    assert re.search(r"after \d{4}-\d\d-\d\d \d\d:\d\d,", wait), wait
