"""SKILL.md drafts against the Agent Skills format, and writing one only where asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dshkit.errors import Invalid, Refused
from dshkit.memory.harvest import Harvester
from dshkit.memory.records import SKILL, Draft
from dshkit.memory.skills import (
    draft_skill,
    parse_front_matter,
    skill_name,
    validate,
    write_skill,
)

from ..support.logs import Log

GOOD = "---\nname: release-steps\ndescription: 发布时使用。\n---\n\n# Release\n\n1. make test\n"


def test_a_draft_with_no_request_is_named_from_its_commands() -> None:
    draft = draft_skill(["make lint", "./scripts/Deploy.SH --prod", "git push"])
    assert draft.name == "run-make-lint-deploy-sh-git"
    assert validate(draft.text, draft.name) == []


@pytest.mark.parametrize(
    ("request_text", "commands", "name", "said"),
    [
        (
            "Deploy the frontend to staging",
            ["npm run build", "make deploy"],
            "deploy-frontend-staging",
            "Steps to Deploy the frontend to staging",
        ),
        (
            "please release a new version, then save these steps as a skill",
            ["make test", "make release"],
            "release-version",
            "Use when asked to please release a new version",
        ),
        (
            "把前端部署到预发环境",
            ["npm run build", "make deploy"],
            "deploy-staging",
            "完成「把前端部署到预发环境」",
        ),
        ("帮我跑一下那个流程", ["make deploy"], "run-make-deploy", "依次运行 `make deploy`"),
        (
            "发布第 2 版",
            ["make lint", "make test"],
            "release-make-lint-test",
            "再次需要「发布第 2 版」时使用",
        ),
    ],
)
def test_a_draft_is_named_and_described_from_the_request_it_serves(
    request_text: str, commands: list[str], name: str, said: str
) -> None:
    draft = draft_skill(commands, request=request_text)
    assert draft.name == name
    assert "workspace" not in draft.name
    assert validate(draft.text, draft.name) == []
    fields, _ = parse_front_matter(draft.text)
    assert said in str(fields["description"])
    chinese = any("\u4e00" <= c <= "\u9fff" for c in request_text)
    assert any("\u4e00" <= c <= "\u9fff" for c in str(fields["description"])) is chinese


def test_a_draft_carries_evals_in_the_skill_creator_shape() -> None:
    draft = draft_skill(["make test", "make deploy"], request="Deploy the app to production")
    evals = draft.evals
    assert evals["skill_name"] == draft.name
    (case,) = evals["evals"]
    assert case["id"] == 1 and case["prompt"] == "Deploy the app to production"
    assert case["files"] == [] and isinstance(case["expected_output"], str)
    assert any("`make deploy`" in e for e in case["expectations"])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\n", "front matter"),
        ("---\nname: x\ndescription: d\n", "not closed"),
        ("---\ndescription: d\n---\nbody\n", "'name' is required"),
        ("---\nname: Bad_Name\ndescription: d\n---\nbody\n", "lowercase"),
        ("---\nname: -bad\ndescription: d\n---\nbody\n", "lowercase"),
        ("---\nname: a--b\ndescription: d\n---\nbody\n", "lowercase"),
        ("---\nname: " + "a" * 65 + "\ndescription: d\n---\nbody\n", "longer than 64"),
        ("---\nname: ok\n---\nbody\n", "'description' is required"),
        ("---\nname: ok\ndescription: " + "d" * 1025 + "\n---\nbody\n", "longer than 1024"),
        ("---\nname: ok\ndescription: d\nversion: 1\n---\nbody\n", "unknown front matter"),
        ("---\nname: ok\ndescription: d\n---\n\n", "instructions"),
        ("---\nname: ok\ndescription: d\nmetadata: flat\n---\nbody\n", "'metadata'"),
    ],
)
def test_what_the_validator_refuses(text: str, problem: str) -> None:
    assert any(problem in p for p in validate(text)), validate(text)


def test_metadata_and_the_folder_name() -> None:
    text = GOOD.replace("---\n\n", "metadata:\n  author: me\n---\n\n", 1)
    assert validate(text, "release-steps") == []
    assert any("folder" in p for p in validate(GOOD, "other"))


def test_names_are_always_valid() -> None:
    for commands in ([], ["---"], ["ÄÖÜ"], ["x" * 200, "y" * 200]):
        name = skill_name(commands)
        assert validate(f"---\nname: {name}\ndescription: d\n---\nb\n", name) == [], name


def test_writing_creates_the_skill_and_never_replaces_one(tmp_path: Path) -> None:
    path = write_skill(str(tmp_path / "skills"), "release-steps", GOOD)
    assert Path(path).read_text() == GOOD
    assert path == str(tmp_path / "skills" / "release-steps" / "SKILL.md")
    with pytest.raises(Refused):
        write_skill(str(tmp_path / "skills"), "release-steps", GOOD)
    with pytest.raises(Invalid):
        write_skill(str(tmp_path / "skills"), "other-name", GOOD)
    assert sorted(p.name for p in (tmp_path / "skills").iterdir()) == ["release-steps"]


def test_evals_are_written_beside_the_skill_and_never_over_a_file(tmp_path: Path) -> None:
    evals: dict[str, Any] = {"skill_name": "release-steps", "evals": [{"id": 1, "prompt": "发布"}]}
    path = write_skill(str(tmp_path / "skills"), "release-steps", GOOD, evals)
    written = Path(path).parent / "evals" / "evals.json"
    assert json.loads(written.read_text()) == evals
    assert "发布" in written.read_text()  # the person's words as they were written
    other = tmp_path / "other" / "release-steps"
    (other / "evals").mkdir(parents=True)
    (other / "evals" / "evals.json").write_text("{}")
    with pytest.raises(Refused):
        write_skill(str(tmp_path / "other"), "release-steps", GOOD, evals)
    assert (other / "evals" / "evals.json").read_text() == "{}"
    assert not (other / "SKILL.md").exists()


@pytest.mark.parametrize(
    ("command", "kept"),
    [
        ("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv", "export OPENAI_API_KEY=<redacted>"),
        ("curl -H 'token: abcdef123456' https://x", "curl -H 'token: <redacted>' https://x"),
        (
            "git push https://me:hunter22@github.com/me/app",
            "git push https://me:<redacted>@github.com/me/app",
        ),
        (
            "gh auth login --with-token ghp_abcdefghijklmnopqrstuvwx",
            "gh auth login --with-token <redacted>",
        ),
        ("deploy --password $DEPLOY_PASSWORD", "deploy --password $DEPLOY_PASSWORD"),
        ("pytest -q tests/test_tokens.py", "pytest -q tests/test_tokens.py"),
    ],
)
def test_a_draft_never_carries_a_credential(command: str, kept: str) -> None:
    draft = draft_skill([command, "make test"])
    assert draft.commands[0] == kept
    assert validate(draft.text, draft.name) == []


def _turn(log: Log, request: str, commands: tuple[str, ...], n: int) -> None:
    log.human(request)
    for i, command in enumerate(commands):
        log.call("bash", f"c{n}{i}", {"command": command})
        log.result(f"c{n}{i}", 100, text="ok")


def _skills(log: Log) -> list[Draft]:
    return [d for d in Harvester("dsh").feed_all(log.events).finish() if d.kind == SKILL]


def test_a_harvested_skill_serves_the_request_it_came_from() -> None:
    log = Log()
    _turn(log, "Deploy the docs site", ("npm run build", "make publish"), 1)
    _turn(log, "Deploy the docs site again", ("npm run build", "make publish"), 2)
    (skill,) = _skills(log)
    assert skill.detail["name"] == "deploy-docs-site"
    assert skill.detail["evals"]["evals"][0]["prompt"] == "Deploy the docs site again"
    assert "Use when asked to Deploy the docs site again" in skill.detail["draft"]


def test_a_skill_asked_for_later_is_named_from_the_work_it_keeps() -> None:
    log = Log()
    _turn(log, "把文档站部署到预发", ("npm run build", "make publish"), 1)
    log.human("把刚才的步骤保存为技能")
    (skill,) = _skills(log)
    assert skill.detail["name"] == "docs-deploy-staging"
    fields, _ = parse_front_matter(skill.detail["draft"])
    assert "把文档站部署到预发" in str(fields["description"])
    assert validate(skill.detail["draft"], skill.detail["name"]) == []
