"""Supersession by topic, through the harvest into the store: a fact restating a subject with a
new value closes the stale one (no longer injected); a fact of another subject closes nothing,
however it was asked to be remembered."""

from __future__ import annotations

from dshkit.memory import records as rec
from dshkit.memory.harvest import Harvester
from dshkit.memory.inject import choose
from dshkit.memory.records import FACT, PERSON
from dshkit.memory.workspace import Workspace
from dshkit.store import Store

from ..support.logs import Log

WS = Workspace("/w/app", None)


def harvest_into(store: Store, session: str, *said: str) -> None:
    log = Log()
    for text in said:
        log.human(text)
    drafts = [d for d in Harvester("dsh").feed_all(log.events).finish() if d.kind == FACT]
    with store.transaction():
        for draft in drafts:
            rec.add(store, WS, ("dsh", session), draft)


def current(store: Store) -> list[str]:
    return sorted(r.text for r in rec.select(store, WS, kinds=(FACT,)))


def injected(store: Store) -> str:
    return choose(store, WS, budget=10_000).text


def test_facts_remembered_alike_about_different_things_all_stand(store: Store) -> None:
    harvest_into(
        store,
        "s-1",
        "remember for this project: the deploy command is make deploy",
        "remember for this project: the staging host is staging.internal",
        "记住：这个项目的 API 前缀是 /v2",
    )
    assert current(store) == [
        "API 前缀是 /v2",
        "the deploy command is make deploy",
        "the staging host is staging.internal",
    ]
    assert all(r.grade == PERSON for r in rec.select(store, WS))


def test_a_new_value_said_plainly_supersedes_the_stale_one(store: Store) -> None:
    harvest_into(
        store,
        "s-1",
        "remember for this project: the deploy command is make deploy",
        "remember for this project: the staging host is staging.internal",
    )
    harvest_into(store, "s-2", "the deploy command is now ./scripts/deploy.sh")
    assert current(store) == [
        "the deploy command is now ./scripts/deploy.sh",
        "the staging host is staging.internal",
    ]
    assert "make deploy" not in injected(store)
    stale = next(r for r in rec.select(store, WS, current_only=False) if "make" in r.text)
    assert stale.superseded_by is not None and stale.valid_to is not None


def test_chinese_changes_supersede_too(store: Store) -> None:
    harvest_into(store, "s-1", "记住：部署端口是 8080", "记住：我们用 yarn 装依赖")
    harvest_into(store, "s-2", "部署端口改成 9090 了", "不再用 yarn，换成 pnpm")
    assert current(store) == ["不再用 yarn，换成 pnpm", "部署端口改成 9090 了"]
    assert "8080" not in injected(store) and "yarn 装依赖" not in injected(store)


def test_a_change_in_the_same_session_supersedes_the_earlier_value(store: Store) -> None:
    harvest_into(store, "s-1", "remember: the API port is 8080", "we moved the API port to 9090")
    assert current(store) == ["we moved the API port to 9090"]


def test_talk_that_is_no_change_of_the_project_records_nothing(store: Store) -> None:
    harvest_into(store, "s-1", "remember: the API port is 8080")
    harvest_into(store, "s-2", "the build is now green", "以后再说", "is the port now 9090?")
    assert current(store) == ["the API port is 8080"]


def test_a_fact_with_no_telling_subject_closes_nothing(store: Store) -> None:
    harvest_into(store, "s-1", "remember: be careful with migrations")
    harvest_into(store, "s-2", "remember: always run the linter before pushing")
    assert len(current(store)) == 2


# (remembered first, said plainly later): each a way of saying the value changed.
CORRECTIONS = [
    ("remember: the API port is 8080", "Actually, the API port is 8081"),
    ("remember: the API port is 8080", "The API port changed to 9090"),
    (
        "remember: the staging host is stg1.internal",
        "Going forward, the staging host is stg3.internal",
    ),
    (
        "remember: the deploy script is make deploy",
        "The deploy script is deploy.sh now, not make deploy",
    ),
    ("remember: we use yarn", "We replaced yarn with pnpm"),
    ("记住：端口是 8080", "更正一下：端口是 9091"),
    ("记住：数据库用 MySQL", "把数据库换成 Postgres 了"),
    ("记住：部署用 fabric", "部署不再用 fabric，改成 ansible"),
    ("记住：端口是 8080", "端口现在是 9090"),
]


def test_corrections_and_changes_without_a_from_supersede(store: Store) -> None:
    for number, (first, then) in enumerate(CORRECTIONS):
        ws = Workspace(f"/w/app{number}", None)
        for session, text in ((f"s-{number}a", first), (f"s-{number}b", then)):
            log = Log()
            log.human(text)
            drafts = [d for d in Harvester("dsh").feed_all(log.events).finish() if d.kind == FACT]
            assert drafts, text
            with store.transaction():
                for draft in drafts:
                    rec.add(store, ws, ("dsh", session), draft)
        standing = sorted(r.text for r in rec.select(store, ws, kinds=(FACT,)))
        assert standing == [then], (first, then, standing)
