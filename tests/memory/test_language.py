"""Records in the session's language: what a harvest writes in dshkit's own templates (a
negative path, a proven command, an experience) is in the language of the person's words in
the session it came from, with the same meaning in both, and no sentence ends twice; the
injection says each record from its parts in the language of the session given it, never by
translating the stored text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dshkit.memory import Workspace
from dshkit.memory.harvest import Harvester
from dshkit.memory.inject import choose, render
from dshkit.memory.records import EXPERIENCE, FACT, NEGATIVE, TOOL, Draft, add, get
from dshkit.memory.templates import EN, ZH, Tally, bare, negative, proven
from dshkit.store import Store

from ..support.logs import Log

WS = Workspace("/w/app", None)
# Two punctuation marks of a sentence's end side by side, in either language.
DOUBLED = re.compile(r"[.。;；:：,，][.。;；,，]")


def _session(request: str, error: str) -> Log:
    log = Log()
    log.turn_start()
    log.human(request)
    log.call("bash", "c1", {"command": "make deploy"})
    log.result("c1", 300, failed=True, text=error)
    log.call("bash", "c2", {"command": "ssh-add ~/.ssh/deploy_ed25519"})
    log.result("c2", 100, text="Identity added")
    log.call("bash", "c3", {"command": "make deploy"})
    log.result("c3", 300, text="deployed")
    log.call("bash", "c4", {"command": "pytest -q"})
    log.result("c4", 300, text="12 passed in 0.3s")
    log.call("bash", "c5", {"command": "git commit -am 'deploy key'"})
    log.result("c5", 100, text="[main 1a2b3c4] deploy key\n 1 file changed")
    return log


ERROR = "deploy@prod: Permission denied (publickey).\nmake: *** [Makefile:12: deploy] Error 255"


def _drafts(log: Log) -> dict[str, Draft]:
    return {d.kind: d for d in Harvester("dsh").feed_all(log.events).finish()}


def test_an_english_session_leaves_english_records() -> None:
    found = _drafts(_session("Deploy the app to production, please.", ERROR))
    negative_text = found[NEGATIVE].text
    assert negative_text == (
        "`make deploy` failed with Permission denied (publickey); fixed by "
        "`ssh-add ~/.ssh/deploy_ed25519`, then `make deploy` succeeded (seq 7)."
    )
    assert found[FACT].text == "This workspace's test command: `pytest -q` (12 passed at seq 9)"
    assert found[EXPERIENCE].text == (
        'In a task like "Deploy the app to production, please": 12 tests passed (`pytest -q`), '
        "git commit 1a2b3c4 (main); commands used: `make deploy`, `pytest -q`, "
        "`git commit -am 'deploy key'`"
    )
    for draft in found.values():
        assert draft.detail["language"] == EN
        assert not re.search(r"[\u4e00-\u9fff（）「」：；]", draft.text), draft.text
        assert not DOUBLED.search(draft.text), draft.text


def test_a_chinese_session_leaves_chinese_records_of_the_same_meaning() -> None:
    found = _drafts(_session("把应用部署到生产环境。", ERROR))
    assert found[NEGATIVE].text == (
        "`make deploy` 曾失败：Permission denied (publickey)。之后"
        "`ssh-add ~/.ssh/deploy_ed25519`，`make deploy` 成功（seq 7）。"
    )
    assert found[FACT].text == "本工作区的测试命令：`pytest -q`（seq 9 时 12 个通过）"
    assert found[EXPERIENCE].text == (
        "在「把应用部署到生产环境」这类任务中：测试 12 个通过（`pytest -q`），"
        "git commit 1a2b3c4（main）；用到的命令：`make deploy`、`pytest -q`、"
        "`git commit -am 'deploy key'`"
    )
    for draft in found.values():
        assert draft.detail["language"] == ZH
        assert not DOUBLED.search(draft.text), draft.text


def test_the_language_is_the_persons_not_the_tools() -> None:
    # The outputs are English, the commands too: the person's words decide.
    chinese = _drafts(_session("部署一下", "Error: the deploy key was refused.\nexit status 1"))
    assert chinese[NEGATIVE].detail["language"] == ZH
    assert "曾失败：Error: the deploy key was refused。之后" in chinese[NEGATIVE].text
    assert "refused.。" not in chinese[NEGATIVE].text  # the error's own period dropped


def test_a_session_with_no_words_of_the_person_is_chinese() -> None:
    tally = Tally()
    assert tally.language == ZH
    tally.add("修复解析的测试")
    assert tally.language == ZH
    english = Tally()
    english.add("fix the parser tests, then commit")
    assert english.language == EN


@pytest.mark.parametrize(
    ("error", "remedy"),
    [
        ("ModuleNotFoundError: No module named 'yaml'.", []),
        ("E: Unable to locate package foo;", [("command", "`apt-get update`")]),
        ("permission denied:", [("edit", "src/app.py")]),
        ("", []),
    ],
)
def test_no_template_ends_a_sentence_twice(error: str, remedy: list[tuple[str, str]]) -> None:
    for language in (ZH, EN):
        text = negative("`make`", error, remedy, "`make`", 3, language)
        assert not DOUBLED.search(text), text
        assert bare(error) in text
    assert proven("command:lint", "`ruff check`", 4, None, EN) == (
        "This workspace's check command: `ruff check` (succeeded at seq 4)"
    )


def _stored(tmp_path: Path, draft: Draft) -> tuple[Store, int]:
    store = Store(tmp_path)
    with store.transaction():
        new = add(store, WS, ("dsh", "s-1"), draft)
    assert new is not None
    return store, new


def test_an_english_experience_is_given_to_a_chinese_session_in_chinese(tmp_path: Path) -> None:
    (experience,) = [
        d
        for d in Harvester("dsh").feed_all(_session("Deploy the app.", ERROR).events).finish()
        if d.kind == EXPERIENCE
    ]
    store, new = _stored(tmp_path, experience)
    with store:
        record = get(store, new)
        assert record is not None
        said = render(record, ZH)
        assert said is not None
        assert "在「Deploy the app」这类任务中：测试 12 个通过（`pytest -q`），git commit" in said
        told = render(record, EN)
        assert told is not None and 'In a task like "Deploy the app": 12 tests passed' in told


def test_an_experience_stored_before_its_parts_were_kept_is_read_back_not_translated(
    tmp_path: Path,
) -> None:
    # The old shape: the Chinese template as its text, its proofs as that template's phrases.
    old = Draft(
        EXPERIENCE,
        "在「修复解析的测试」这类任务中：git commit 1a2b3c4（main），测试 3 个通过（`pytest -q`）"
        "；用到的命令：`pytest -q`",
        grade=TOOL,
        seq=4,
        valid_from=1_000,
        detail={"requestSeq": 1, "proofs": ["git commit 1a2b3c4（main）", "测试 3 个通过"]},
    )
    store, new = _stored(tmp_path, old)
    with store:
        record = get(store, new)
        assert record is not None
        told = render(record, EN)
        assert told is not None
        assert told.endswith(
            'In a task like "修复解析的测试": git commit 1a2b3c4 (main), 3 tests passed '
            "(`pytest -q`); commands used: `pytest -q`"
        )
        chosen = choose(store, WS, "fix the parser")
        assert "3 tests passed" in chosen.text and "个通过" not in chosen.text
