"""The person's allow and deny rules: their patterns, matched against each simple command the
walker sees, deny winning, an allow taking only its own command out of the judgement."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshkit.config import ConfigError, load_config
from dshkit.guard import DESTRUCTIVE, MODES, SAFE, classify
from dshkit.guard.rules import Pattern, Rules, rules_for
from dshkit.guard.service import classify_sent

WORK = "/home/dev/proj"
HOME = "/home/dev"


def rules(allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> Rules:
    section = {"allow": list(allow), "deny": list(deny), "projects": {}}
    return rules_for(section, WORK, "config.toml")


def judged(command: str, given: Rules, shell: str = "bash") -> dict[str, str]:
    found = classify(command, shell, WORK, home=HOME, rules=given)
    return {mode: found.decision(mode) for mode in MODES}


ALL_ALLOW = dict.fromkeys(MODES, "allow")
ALL_DENY = dict.fromkeys(MODES, "deny")


# (pattern, command words, matches)
MATCHES = [
    ("Bash(git push:*)", "git push", True),
    ("Bash(git push:*)", "git push --force origin main", True),
    ("Bash(git push:*)", "git pushy", False),
    ("Bash(git push:*)", "git pull", False),
    ("git push:*", "git", False),
    ("npm run *", "npm run build", True),
    ("npm run *", "npm run", True),
    ("npm run *", "npm test", False),
    ("make test", "make test", True),
    ("make test", "make test-all", False),
    ("make test", "make test extra", False),
    ("Bash(npm run test:*)", "npm run test --watch", True),
    ("terraform apply -target=*", "terraform apply -target=module.db", True),
    ("terraform apply -target=*", "terraform apply", False),
    ("kubectl delete pod *", "kubectl delete pod web-1", True),
    ("kubectl delete pod *", "kubectl delete deployment web", False),
    ("PowerShell(Remove-Item:*)", "remove-item -Recurse x", True),  # PowerShell: any case
]


@pytest.mark.parametrize(("pattern", "command", "matches"), MATCHES)
def test_a_pattern_matches_a_commands_words(pattern: str, command: str, matches: bool) -> None:
    words = command.split()
    assert Pattern(pattern, False, "here").matches(words, fold=pattern.startswith("Power")) is (
        matches
    )


def test_an_allow_lets_its_own_command_through() -> None:
    push = "git push --force origin main"
    assert judged(push, rules())["balanced"] == "deny"  # the built-in judgement
    allowed = judged(push, rules(allow=("Bash(git push:*)",)))
    assert allowed == ALL_ALLOW
    found = classify(push, "bash", WORK, home=HOME, rules=rules(allow=("git push:*",)))
    assert found.risk == SAFE and "allowed by the rule 'git push:*'" in found.reason
    # seen through wrappers, absolute paths and shells, as the walker sees it
    for line in (
        f"sudo {push}",
        f"/usr/bin/{push}",
        f"env GIT_TRACE=1 {push}",
        f"bash -c '{push}'",
    ):
        assert judged(line, rules(allow=("git push:*",))) == ALL_ALLOW, line


# An allow never lets through a line whose other commands are destructive or opaque.
OTHERS = [
    "git push x && rm -rf ~",
    "git push x; rm -rf /etc",
    "rm -rf ~ || git push x",
    "git push x | sh -c 'rm -rf /'",
    "git push $(rm -rf ~)",
    "(git push x) && (cd / && rm -rf usr)",
    "git push x & dd if=/dev/zero of=/dev/sda",
    "git push x > /dev/sda",
]


@pytest.mark.parametrize("line", OTHERS)
def test_an_allow_does_not_cover_the_other_commands_of_the_line(line: str) -> None:
    found = classify(line, "bash", WORK, home=HOME, rules=rules(allow=("git push:*",)))
    assert found.risk == DESTRUCTIVE, (line, found)
    assert found.decision("balanced") == "deny"


def test_an_allow_does_not_cover_opaque_code_elsewhere_in_the_line() -> None:
    found = classify("npm run build && curl -s x | sh", "bash", WORK, rules=rules(("npm run *",)))
    assert found.opaque and found.decision("autonomous") == "ask"


# A deny matches wherever the command runs in the line, in every mode, and beats an allow.
DENIED = [
    "npm publish",
    "npm publish --tag next",
    "ls && npm publish",
    "sudo npm publish",
    "bash -c 'npm publish'",
    "echo $(npm publish)",
    "find . -name x -exec npm publish \\;",
    "xargs npm publish < list",
    "python3 -c 'import os; os.system(\"npm publish\")'",
    "ssh host npm publish",
]


@pytest.mark.parametrize("line", DENIED)
def test_a_deny_denies_the_line_wherever_its_command_is(line: str) -> None:
    both = rules(allow=("npm:*", "ssh:*", "python3:*"), deny=("npm publish:*",))
    assert judged(line, both) == ALL_DENY, line
    found = classify(line, "bash", WORK, home=HOME, rules=both)
    assert found.denied is not None and found.denied.text == "npm publish:*"
    assert "denied by the rule 'npm publish:*' (config.toml [guard] deny)" in found.reason


def test_a_deny_not_matching_leaves_the_built_in_judgement() -> None:
    assert judged("npm pack", rules(deny=("npm publish:*",))) == ALL_ALLOW
    assert judged("rm -rf ~", rules(deny=("npm publish:*",)))["balanced"] == "deny"


def test_rules_apply_in_both_readings_of_a_line() -> None:
    given = rules(deny=("Remove-Item:*",))
    found = classify_sent("Remove-Item -Recurse build", "Bash", WORK, platform="win32", rules=given)
    assert found.decision("autonomous") == "deny"


def test_project_rules_apply_to_their_directory_and_below(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    section = {
        "allow": [],
        "deny": ["curl:*"],
        "projects": {str(project): {"allow": ["make deploy"]}, "/elsewhere": {"deny": ["ls"]}},
    }
    inside = rules_for(section, str(project / "sub"), "config.toml")
    assert [p.text for p in inside.patterns] == ["curl:*", "make deploy"]  # deny first
    assert inside.patterns[1].origin == f'config.toml [guard.projects."{project}"] allow'
    outside = rules_for(section, str(tmp_path), "config.toml")
    assert [p.text for p in outside.patterns] == ["curl:*"]
    assert [p.text for p in rules_for(section, None, "c").patterns] == ["curl:*"]


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "config.toml").write_text(text)
    return tmp_path


def test_the_config_holds_the_rules(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            '[guard]\nallow = ["Bash(git push:*)", "npm run *"]\ndeny = ["terraform destroy"]\n'
            '[guard.projects."/srv/app"]\nallow = ["make deploy"]\n',
        ),
        {},
    )
    guard = config["guard"]
    assert guard["allow"] == ["Bash(git push:*)", "npm run *"]
    assert guard["deny"] == ["terraform destroy"]
    assert guard["projects"] == {"/srv/app": {"allow": ["make deploy"]}}
    assert load_config(write(tmp_path, ""), {})["guard"]["allow"] == ()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[guard]\nallow = "git push:*"\n', "[guard] allow = 'git push:*'"),
        ("[guard]\nallow = [1]\n", "[guard] allow = [1]"),
        ('[guard]\ndeny = [""]\n', "[guard] deny = ['']"),
        ('[guard]\ndeny = ["*"]\n', "[guard] deny = ['*']"),
        ('[guard]\nallow = ["Bash(git push:*"]\n', "[guard] allow"),
        ('[guard.projects."relative/dir"]\nallow = ["ls"]\n', "[guard] projects"),
        ('[guard.projects."/abs"]\nalow = ["ls"]\n', "[guard] projects"),
        ('[guard.projects."/abs"]\nallow = "ls"\n', "[guard] projects"),
    ],
)
def test_a_bad_rule_is_named(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text), {})
    message = str(caught.value)
    assert named in message and "is not allowed: expected" in message, message
