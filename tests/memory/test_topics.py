"""Subjects from what a fact is about, and each ordinary way of saying a value changed (English
and Chinese) with its near misses."""

from __future__ import annotations

import pytest

from dshkit.memory import topics
from dshkit.memory.topics import (
    CHANGES,
    CORRECTION,
    READ_CHARS,
    STATES,
    change,
    is_project_change,
    topic,
)

from ..support.counting import CountedPattern

# (said, phrasing, subject, old, new)
CHANGED = [
    ("the API port is now 9090", "is-now", "topic:api port", "", "9090"),
    ("Now the staging host is stg2.internal", "now-is", "topic:staging host", "", "stg2.internal"),
    ("we moved the docs folder to site/docs", "we-moved", "topic:docs folder", "", "site/docs"),
    (
        "We've moved CI from Travis to GitHub Actions",
        "we-moved",
        "topic:ci",
        "Travis",
        "GitHub Actions",
    ),
    (
        "we switched from yarn to pnpm",
        "we-switched-from",
        "topic:js package manager",
        "yarn",
        "pnpm",
    ),
    ("The Node version changed from 18 to 20", "changed-from-to", "topic:node version", "18", "20"),
    ("we no longer use yarn, use pnpm", "no-longer", "topic:js package manager", "yarn", "pnpm"),
    ("No longer use fabric; we now use ansible", "no-longer", "use:fabric", "fabric", "ansible"),
    ("use uv instead of poetry", "use-instead", "topic:python packaging", "poetry", "uv"),
    ("The API port changed to 9090", "changed-to", "topic:api port", "", "9090"),
    ("Node was bumped to 22", "changed-to", "topic:node", "", "22"),
    (
        "The staging host has changed to stg2.internal",
        "changed-to",
        "topic:staging host",
        "",
        "stg2.internal",
    ),
    (
        "The default branch was renamed from master to main",
        "changed-from-to",
        "topic:default branch",
        "master",
        "main",
    ),
    ("We replaced yarn with pnpm", "replaced-with", "topic:js package manager", "yarn", "pnpm"),
    (
        "We now deploy with ansible instead of fabric",
        "do-with-instead",
        "topic:deploy",
        "fabric",
        "ansible",
    ),
    ("Switch the test runner to pytest", "switch-to", "topic:test runner", "", "pytest"),
    ("switch from yarn to pnpm", "switch-to", "topic:js package manager", "yarn", "pnpm"),
    ("Stop using yarn; use pnpm", "no-longer", "topic:js package manager", "yarn", "pnpm"),
    ("The port is 9090 now", "is-now-after", "topic:port", "", "9090"),
    (
        "The deploy script is deploy.sh now, not make deploy",
        "is-not",
        "topic:deploy script",
        "make deploy",
        "deploy.sh",
    ),
    ("Correction: the DB is Postgres, not MySQL", "is-not", "topic:db", "MySQL", "Postgres"),
    ("Actually, the API port is 8081", "correction", "topic:api port", "", "8081"),
    ("Update: DB host is db2.internal", "correction", "topic:db host", "", "db2.internal"),
    (
        "Going forward, the staging host is stg3.internal",
        "correction",
        "topic:staging host",
        "",
        "stg3.internal",
    ),
    ("From now on use pnpm", "correction", "topic:js package manager", "", "pnpm"),
    ("Use port 8080 from now on", "correction", "topic:port", "", "8080"),
    ("部署端口改成 9090 了", "zh-changed", "topic:部署端口", "", "9090"),
    ("测试命令改为 make check", "zh-changed", "command:test", "", "make check"),
    ("以后 部署用 ./deploy.sh", "zh-from-now", "topic:部署", "", "./deploy.sh"),
    ("以后数据库统一用 postgres", "zh-from-now", "topic:数据库", "", "postgres"),
    ("不再用 yarn，换成 pnpm", "zh-no-longer", "topic:js package manager", "yarn", "pnpm"),
    ("我们不再使用 fabric 了，改用 ansible", "zh-no-longer", "use:fabric", "fabric", "ansible"),
    ("数据库从 MySQL 换到 Postgres", "zh-from-to", "topic:数据库", "MySQL", "Postgres"),
    ("API 前缀由 /v1 改成 /v2 了", "zh-from-to", "topic:api 前缀", "/v1", "/v2"),
    ("默认分支从 master 改名为 main", "zh-from-to", "topic:默认分支", "master", "main"),
    (
        "我们已经把 CI 从 Travis 迁到 GitHub Actions",
        "zh-from-to",
        "topic:ci",
        "Travis",
        "GitHub Actions",
    ),
    ("把数据库换成 Postgres 了", "zh-changed", "topic:数据库", "", "Postgres"),
    ("Node 版本升到 22 了", "zh-changed", "topic:node 版本", "", "22"),
    ("部署不再用 fabric，改成 ansible", "zh-no-longer", "topic:部署", "fabric", "ansible"),
    ("端口现在是 9090", "zh-now-is", "topic:端口", "", "9090"),
    ("后端框架换了，现在用 FastAPI", "zh-changed-now", "topic:后端框架", "", "FastAPI"),
    ("更正一下：端口是 9091", "correction", "topic:端口", "", "9091"),
    ("其实端口是 8081", "correction", "topic:端口", "", "8081"),
]


@pytest.mark.parametrize(("said", "phrasing", "subject", "old", "new"), CHANGED,
                         ids=[c[0] for c in CHANGED])  # fmt: skip
def test_each_way_of_saying_a_value_changed(
    said: str, phrasing: str, subject: str, old: str, new: str
) -> None:
    found = change(said)
    assert found is not None
    assert (found.phrasing, found.subject, found.old, found.new) == (phrasing, subject, old, new)
    assert is_project_change(said) == found


def test_every_phrasing_of_the_list_is_tested() -> None:
    assert {name for name, _ in CHANGES} | {CORRECTION} == {c[1] for c in CHANGED}


NEAR_MISSES = [
    "the build is now green",
    "this is now done",
    "I think that is now fine",
    "we moved on to the next bug",
    "is the port now 9090?",
    "端口改成 9090 了吗？",
    "代码改成这样了",
    "以后再说",
    "以后会用到这个函数",
    "I no longer use vim, use whatever you like?",
    "Tests are now passing",
    "Actually, this is fine",
    "Update: the tests are passing now",
    "I switched to the other branch to check",
    "其实这个问题在于缓存",
    "这个函数不用改，用原来的就行",
    "the build is green now",
]


@pytest.mark.parametrize("said", NEAR_MISSES)
def test_near_misses_are_no_change_of_the_project(said: str) -> None:
    assert is_project_change(said) is None


# (remembered, subject)
STATED = [
    ("for this project: the deploy command is make deploy", "topic:deploy command"),
    ("for this project: the staging host is staging.internal", "topic:staging host"),
    ("in this repo: API base path: /v2", "topic:api base path"),
    ("we use pnpm for installs", "topic:js package manager"),
    ("use fabric to deploy", "topic:deploy"),
    ("always use pytest", "topic:test runner"),
    ("部署命令是 make deploy", "topic:部署命令"),
    ("这个项目里 配置文件在 conf/ 目录", "topic:配置文件"),
    ("都用 pnpm", "topic:js package manager"),
    ("the test command is pytest -q", "command:test"),
    ("DATABASE_URL=postgres://db/app", "topic:database_url"),
    ("be careful with migrations", ""),
]


@pytest.mark.parametrize(("said", "subject"), STATED, ids=[s[0] for s in STATED])
def test_the_subject_is_what_the_fact_is_about(said: str, subject: str) -> None:
    assert topic(said).subject == subject


def test_every_state_phrasing_is_tested() -> None:
    used = {topic(said).phrasing for said, _ in STATED}
    assert {name for name, _ in STATES} <= used


def test_facts_scoped_alike_but_about_different_things_have_different_subjects() -> None:
    one = topic("for this project: the deploy command is make deploy").subject
    two = topic("for this project: the staging host is staging.internal").subject
    assert one and two and one != two


def test_a_long_message_is_read_only_up_to_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    # Work, not wall-clock time: every phrasing is handed at most READ_CHARS of the text,
    # however long it is (a pattern's own backtracking is bench/ work).
    seen: list[int] = []
    for name in ("_COMPILED_CHANGES", "_COMPILED_STATES"):
        wrapped = tuple((n, CountedPattern(p, seen.append)) for n, p in getattr(topics, name))
        monkeypatch.setattr(topics, name, wrapped)
    long = "remember the " + "very " * 20_000 + "long setting is now x " * 2_000
    topic(long)
    is_project_change(long)
    change(long)
    assert seen and max(seen) <= READ_CHARS
    assert change("the API port is now 9090 " + "x" * 100_000) is not None  # its start counts
