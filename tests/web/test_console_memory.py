"""The console's memory view in real Chromium against a real `dshkit serve`: every workspace
with its counts (a link narrows the view to one), the supersession timeline with its times,
skill proposals accepted (SKILL.md and its evals written where the harness reads them) or
rejected, and the records waiting for review accepted or rejected by click."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dshkit import chromium
from dshkit.memory import Workspace
from dshkit.memory.records import Draft, add
from dshkit.memory.service import MemoryService
from dshkit.memory.skills import draft_skill
from dshkit.store import Store

from ..support.browser_console import Console, serving, watched
from ..support.memory import make_repo

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium.find() is None, reason="no Chromium installed"),
]

HOUR = 3_600_000
T0 = 1_790_000_000_000


def _skill(store: Store, where: Workspace, session: str, request: str, commands: list[str]) -> int:
    made = draft_skill(commands, request=request)
    found = add(
        store,
        where,
        ("dsh", session),
        Draft(
            "skill",
            made.summary,
            grade="tool",
            seq=3,
            valid_from=T0,
            subject="skill:" + made.name,
            detail={
                "name": made.name,
                "draft": made.text,
                "commands": made.commands,
                "evals": made.evals,
            },
        ),
        state="proposed",
    )
    assert found is not None
    return found


def _world(base: Path) -> tuple[Path, dict[str, Any]]:
    state_dir = base / "state"
    one, two = base / "work" / "one", base / "work" / "two"
    one.mkdir(parents=True)
    make_repo(two, "https://example.com/me/two.git")
    a, b = Workspace(str(one), None), MemoryService(state_dir).workspace(root=str(two))
    assert b.remote is not None
    world: dict[str, Any] = {"one": str(one), "two": str(two)}
    with Store(state_dir) as store, store.transaction():
        world["old"] = add(
            store,
            a,
            ("dsh", "s-1"),
            Draft(
                "fact",
                "部署命令是 make deploy",
                grade="person",
                seq=1,
                valid_from=T0,
                subject="said:部署命令",
            ),
        )
        world["new"] = add(
            store,
            a,
            ("dsh", "s-2"),
            Draft(
                "fact",
                "部署命令是 make ship",
                grade="person",
                seq=1,
                valid_from=T0 + HOUR,
                subject="said:部署命令",
            ),
        )
        world["waiting"] = add(
            store,
            a,
            ("dsh", "s-2"),
            Draft(
                "negative",
                "`make ship` failed with E1; fixed by `ssh-add`",
                grade="tool",
                seq=4,
                valid_from=T0 + HOUR,
                # What injection says a negative path from (never its text: external words).
                detail={"failed": "make ship", "error": "E1", "fix": "make ship"},
            ),
            state="pending",
        )
        world["doubtful"] = add(
            store,
            a,
            ("dsh", "s-2"),
            Draft("experience", "a lesson nobody wants", grade="tool", seq=5, valid_from=T0 + HOUR),
            state="pending",
        )
        world["there"] = add(
            store,
            b,
            ("dsh", "s-3"),
            Draft("fact", "two 用 cargo test", grade="person", seq=1, valid_from=T0),
        )
        world["skill"] = _skill(store, a, "s-2", "Deploy the app to staging", ["make ship"])
        world["unwanted"] = _skill(store, a, "s-2", "发布第 2 版", ["make lint", "make test"])
    return state_dir, world


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    base = tmp_path_factory.mktemp("memory")
    state_dir, world = _world(base)
    (base / "sessions").mkdir()
    with serving(base, state_dir, [base / "sessions"], world) as running:
        yield running


@pytest.fixture
def page(console: Console) -> Iterator[Any]:
    yield from watched(console)


def test_workspaces_with_counts_and_the_timeline(console: Console, page: Any) -> None:
    one, two = console.world["one"], console.world["two"]
    console.open("memory")
    rows = page.locator("#memory-workspaces tbody tr")
    assert rows.count() == 2
    mine = page.locator(f'#memory-workspaces tr[data-workspace="{one}"]')
    assert mine.locator('td[data-count="fact"]').text_content() == "1"
    assert mine.locator('td[data-count="skill"]').text_content() == "2"
    assert mine.locator('td[data-count="pending"]').text_content() == "2"
    groups = page.locator("section.memory-group")
    assert {groups.nth(i).get_attribute("data-workspace") for i in range(groups.count())} == {
        one,
        two,
    }
    chain = page.locator("#memory-timeline li.memory-chain")
    assert chain.count() == 1
    old = chain.locator(f'li[data-record="{console.world["old"]}"]').text_content()
    new = chain.locator(f'li[data-record="{console.world["new"]}"]').text_content()
    assert "make deploy" in old and f"superseded by #{console.world['new']}" in old
    assert "closed" in old and "→ now" not in old
    assert "make ship" in new and "stands" in new and "→ now" in new

    page.locator(
        f'#memory-workspaces a[href="#memory?workspace={two.replace("/", "%2F")}"]'
    ).click()
    page.wait_for_selector(f'section.memory-group[data-workspace="{two}"]')
    page.wait_for_function("() => document.querySelectorAll('section.memory-group').length === 1")
    assert page.locator("#memory-timeline").count() == 0  # two has no supersession
    assert page.locator("#memory-skills").count() == 0


def test_pending_records_are_accepted_or_rejected(console: Console, page: Any) -> None:
    waiting, doubtful = console.world["waiting"], console.world["doubtful"]
    console.open("memory")
    item = page.locator(f'#memory-pending li[data-record="{waiting}"]')
    assert "make ship" in item.text_content()
    item.locator('button[data-act="review-accept"]').click()
    page.wait_for_selector(f'#memory-pending li[data-record="{waiting}"]', state="detached")
    assert console.api(f"/api/memory/records/{waiting}")["state"] == "accepted"
    page.locator(
        f'#memory-pending li[data-record="{doubtful}"] button[data-act="review-reject"]'
    ).click()
    page.wait_for_selector(f'#memory-rejected li[data-record="{doubtful}"]', state="attached")
    assert console.api(f"/api/memory/records/{doubtful}")["state"] == "rejected"
    given = console.api(f"/api/memory/inject?workspace={console.world['one']}")["text"]
    assert f"M{waiting}" in given and f"M{doubtful}" not in given


def test_skill_proposals_are_accepted_or_rejected(console: Console, page: Any) -> None:
    skill, unwanted = console.world["skill"], console.world["unwanted"]
    console.open("memory")
    item = page.locator(f'#memory-skills li[data-record="{skill}"]')
    assert "deploy-app-staging" in item.text_content()
    item.locator("select").select_option("claude")
    item.locator('button[data-act="skill-accept"]').click()
    page.wait_for_selector(f'#memory-skills li[data-record="{skill}"]', state="detached")
    written = Path(console.world["one"]) / ".claude" / "skills" / "deploy-app-staging"
    assert (written / "SKILL.md").is_file() and (written / "evals" / "evals.json").is_file()
    page.locator(
        f'#memory-skills li[data-record="{unwanted}"] button[data-act="skill-reject"]'
    ).click()
    page.wait_for_selector("#memory-skills", state="detached")
    assert console.api(f"/api/memory/records/{unwanted}")["state"] == "rejected"
    assert not (
        Path(console.world["one"]) / ".claude" / "skills" / "release-make-lint-test"
    ).exists()


def test_status_and_a_moved_folders_memory_moved_by_the_form(console: Console, page: Any) -> None:
    # (Last: it moves `one`'s records into `two`.)
    one, two = console.world["one"], console.world["two"]
    console.open("memory")
    counts = page.locator("#memory-status-counts").text_content() or ""
    assert "skills standing" in counts
    dropped = page.locator("#memory-status-dropped").text_content()
    assert dropped == "No harvest dropped a record over its caps."
    ids = {w["root"]: w["id"] for w in console.api("/api/memory/status")["workspaces"]}
    page.locator("#memory-rekey-old").select_option(ids[one])
    page.locator("#memory-rekey-new").fill(two)
    asked: list[str] = []

    def accept(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.locator("#memory-rekey button[type=submit]").click()
    page.wait_for_function(
        "() => document.querySelectorAll('#memory-workspaces tbody tr').length === 1"
    )
    assert asked == [f"Move the memory of {ids[one]} to {two}?"]
    (left,) = console.api("/api/memory/workspaces")["workspaces"]
    assert left["root"] == two and left["kinds"]["skill"] >= 1
    assert console.api(f"/api/memory/records?workspace={one}")["records"] == []
