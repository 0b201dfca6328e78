"""SKILL.md drafts against the Agent Skills format, and writing one only where asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshkit.errors import Invalid, Refused
from dshkit.memory.skills import draft_skill, skill_name, validate, write_skill

GOOD = "---\nname: release-steps\ndescription: 发布时使用。\n---\n\n# Release\n\n1. make test\n"


def test_a_draft_is_valid_and_named_from_its_commands() -> None:
    draft = draft_skill(["make lint", "./scripts/Deploy.SH --prod", "git push"])
    assert draft.name == "workspace-make-deploy-sh-git"
    assert validate(draft.text, draft.name) == []


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
