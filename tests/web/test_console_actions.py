"""The console's actions on one profile entry (edit, pin, unpin, remove) and what a
regeneration does with them; the endpoints behind them, which need the owner.

Real Chromium against a real `dshkit serve` and the fake model (tests/support/browser_console.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from dshkit import chromium
from dshkit.optimizer.runs import Run, save_run
from dshkit.store import Store

from ..support.browser_console import Console, serving, watched
from ..support.console import build_world, friction_session
from ..support.corpus import Corpus
from ..support.profile import A1, B1, answer, store_version

HANDOFF = "console-handoff-1"
# A read the workspace refused, as the optimizer's run keeps it.
REFUSED_STEP = {
    "step": 1,
    "tool": "read",
    "arguments": {"path": "../../etc/passwd"},
    "resultBytes": 60,
    "shownBytes": 60,
    "truncated": False,
    "error": None,
    "refused": True,
    "refusal": "路径不得含 ..（不能离开工作目录）",
}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed"),
]


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    base = tmp_path_factory.mktemp("actions")
    state_dir, root = base / "state", base / "sessions"
    Corpus(root, seed=13).generate(sessions=2, frames=120)
    work = base / "work"  # a session that can be handed off works in a directory that exists
    work.mkdir()
    friction_session(root, HANDOFF, str(work))
    world = build_world(state_dir, root)
    with Store(state_dir) as store:
        store_version(store, [dict[str, object](A1), dict[str, object](B1)])
        world["refused_run"] = save_run(
            store,
            Run(
                tier="advanced",
                form="ptc",
                raw="读一下密码文件",
                output="读一下密码文件",
                steps=[REFUSED_STEP],
            ),
        ).id
    with serving(base, state_dir, [root], world) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)


def change(page: Any, entry_id: str) -> Any:
    """The entry's controls, opened (a view read anew keeps them open)."""
    box = page.locator(f'li[data-entry="{entry_id}"] details.entry-edit')
    if not box.evaluate("d => d.open"):
        box.locator("summary").click()
    return box


def entries(console: Console) -> dict[str, dict[str, Any]]:
    state = console.api("/api/profile/state")
    return {e["id"]: e for e in state["profile"]["entries"]}


def test_entry_changes_need_the_owner_and_the_consoles_mark(console: Console) -> None:
    url = f"{console.url}/api/profile/entries/A1/pin"
    assert httpx.post(url).status_code == 401
    missing = httpx.post(
        f"{console.url}/api/profile/entries/Z9/pin", headers={"x-dshkit-token": console.token}
    )
    assert missing.status_code == 404 and "Z9" in missing.text
    bad = httpx.post(
        f"{console.url}/api/profile/entries/A1/rewrite", headers={"x-dshkit-token": console.token}
    )
    assert bad.status_code == 400
    long = httpx.post(
        f"{console.url}/api/profile/entries/A1/edit",
        headers={"x-dshkit-token": console.token},
        json={"claim": "长" * 101},
    )
    assert long.status_code == 413 and "100" in long.text
    assert "pinned" not in entries(console)["A1"]  # nothing refused changed anything


def test_edit_an_entry_from_the_page_and_a_regeneration_keeps_it(
    console: Console, page: Any
) -> None:
    console.open("profile")
    change(page, "A1")
    page.fill("#entry-claim-A1", "只用中文回答，代码注释也用中文")
    change(page, "A1").locator('button[data-entry-act="edit"]').click()
    page.wait_for_selector('li[data-entry="A1"][data-pinned="1"]', timeout=30_000)
    assert re.search(r"Entry A1: saved and pinned \(profile v\d+\)", page.text_content("#notice"))
    assert "只用中文回答，代码注释也用中文" in page.text_content('li[data-entry="A1"] .claim')
    assert entries(console)["A1"]["pinned"] is True
    # The model rewrites the pinned entry: the person's words stay, on the page too.
    console.fake.replies.append(
        answer({"entries": [{**A1, "claim": "用英文交流"}], "unchangedIds": ["B1"]})
    )
    page.click("#regenerate")
    page.wait_for_selector('#regen-progress li[data-stage="end"]', timeout=60_000)
    page.wait_for_selector("#regenerate:not([disabled])", timeout=30_000)
    assert entries(console)["A1"]["claim"] == "只用中文回答，代码注释也用中文"
    page.wait_for_function(
        "() => document.querySelector('li[data-entry=\"A1\"] .claim')?.textContent"
        " === '只用中文回答，代码注释也用中文'",
        timeout=30_000,
    )
    assert "用英文交流" not in page.text_content("main")


def test_pin_unpin_and_remove_from_the_page(console: Console, page: Any) -> None:
    console.open("profile")
    change(page, "B1").locator('button[data-entry-act="pin"]').click()
    page.wait_for_selector('li[data-entry="B1"][data-pinned="1"]', timeout=30_000)
    assert entries(console)["B1"]["pinned"] is True
    change(page, "B1").locator('button[data-entry-act="unpin"]').click()
    page.wait_for_selector('li[data-entry="B1"][data-pinned="0"]', timeout=30_000)
    assert "pinned" not in entries(console)["B1"]
    page.once("dialog", lambda dialog: dialog.accept())
    change(page, "B1").locator('button[data-entry-act="remove"]').click()
    page.wait_for_selector('li[data-entry="B1"]', state="detached", timeout=30_000)
    assert "B1" not in entries(console)
    # (the list may be drawn anew, from the change it follows, before the notice is written)
    page.wait_for_function(
        "() => document.querySelector('#notice')?.textContent.includes('removed')",
        timeout=30_000,
    )


def test_switch_the_guard_mode_from_the_first_screen(console: Console, page: Any) -> None:
    assert httpx.get(f"{console.url}/api/guard/mode").status_code == 401
    console.open("overview")
    assert "balanced" in page.text_content("#guard-state")
    page.select_option("#guard-mode", "strict")
    page.click("#guard-set")  # stricter: no question asked
    page.wait_for_function(
        "() => document.querySelector('#guard-state').textContent.includes('chosen here')"
    )
    # (the notice goes after 6 s: looked for as the page shows it, not after the API call)
    page.wait_for_function(
        "() => document.querySelector('#notice').textContent"
        ".includes('Guard mode: strict (chosen here)')"
    )
    assert console.api("/api/guard/mode")["mode"] == "strict"
    assert (console.state_dir / "guard-mode").read_text() == "strict\n"
    asked: list[str] = []

    def accept(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.select_option("#guard-mode", "autonomous")
    page.click("#guard-set")  # looser: confirmed first
    page.wait_for_function(
        "() => document.querySelector('#guard-state b').textContent === 'autonomous'"
    )
    assert asked and "autonomous" in asked[0]
    page.click("#guard-config")
    page.wait_for_function(
        "() => document.querySelector('#guard-state').textContent.includes('the default')"
    )
    assert not (console.state_dir / "guard-mode").exists()
    refused = httpx.post(
        f"{console.url}/api/guard/mode",
        headers={"x-dshkit-token": console.token},
        json={"mode": "lenient"},
    )
    assert refused.status_code == 400 and "lenient" in refused.text


def test_see_what_the_guard_stopped_and_allow_it(console: Console, page: Any) -> None:
    from dshkit.guard import audit

    assert httpx.get(f"{console.url}/api/guard/log").status_code == 401
    work = str(console.state_dir.parent / "guarded")
    with Store(console.state_dir) as store:
        audit.record(store, audit.BLOCKED, harness="claude", session_id="s1",
                     command="rm -rf /srv/cache", workspace=work, risk="destructive",
                     mode="balanced", reason="rm: recursive delete of /srv/cache outside the "
                     "workspace", builtin="delete", words=["rm", "-rf", "/srv/cache"])  # fmt: skip
    entry = console.api("/api/guard/log")["entries"][0]
    assert entry["suggested"] == "rm -rf /srv/cache" and entry["rule"] == "delete"
    console.open("overview")
    page.wait_for_selector(f'li[data-guard-entry="{entry["id"]}"]', timeout=30_000)
    assert "outside the workspace" in page.text_content("#guard-log")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click(f'button[data-guard-allow="{entry["id"]}"]')
    page.wait_for_function(
        "() => document.querySelector('#notice').textContent.includes('Allowed')", timeout=30_000
    )
    text = (console.state_dir / "config.toml").read_text()
    assert f'[guard.projects."{work}"]\nallow = ["rm -rf /srv/cache"]' in text
    refused = httpx.post(
        f"{console.url}/api/guard/rules",
        headers={"x-dshkit-token": console.token},
        json={"pattern": "* all", "kind": "allow", "project": None},
    )
    assert refused.status_code == 400 and "command name" in refused.text


def test_preview_a_sessions_handoff_card_and_hand_it_off_now(console: Console, page: Any) -> None:
    session = HANDOFF
    preview = f"{console.url}/api/graft/preview?session={session}"
    assert httpx.get(preview).status_code == 401
    card = httpx.get(preview, headers={"x-dshkit-token": console.token}).json()["card"]
    assert "帮我把构建修好" in card
    console.open(f"session/dsh/{session}")
    page.click("#handoff-preview-go")
    page.wait_for_selector("#handoff-preview pre.handoff-card", timeout=30_000)
    assert page.text_content("#handoff-preview pre.handoff-card") == card
    asked: list[str] = []

    def dismiss(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    page.click("#handoff-now")
    assert asked and "Hand this session off now" in asked[0]
    assert "Handoff #" not in page.text_content("#notice")  # dismissed: nothing begun
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#handoff-now")
    page.wait_for_function(
        "() => document.querySelector('#notice').textContent.trim() !== ''", timeout=60_000
    )
    assert re.search(r"Handoff #\d+ begun", page.text_content("#notice")), page.text_content(
        "#notice"
    )
    bad = httpx.post(
        f"{console.url}/api/graft/slice",
        headers={"x-dshkit-token": console.token},
        json={"session": session, "drive": "now"},
    )
    assert bad.status_code == 400 and "drive" in bad.text


def test_a_refused_read_in_a_runs_steps_says_refused_and_why(console: Console, page: Any) -> None:
    run = console.world["refused_run"]
    console.open("optimizer")
    page.click(f'[data-run-detail="{run}"] summary')
    step = page.locator(f'[data-run-detail="{run}"] li[data-step="1"]')
    step.wait_for(timeout=30_000)
    shown = step.text_content()
    assert "refused: 路径不得含 ..（不能离开工作目录）" in shown and "error: null" not in shown
    assert step.get_attribute("class") == "failed"
