"""dshkit's prompt prefix against what each harness's own input gives a meaning to."""

from __future__ import annotations

import pytest

from dshkit import harnesses
from dshkit.config import SECTIONS
from dshkit.harnesses.prompt_input import (
    DEFAULT_PREFIX,
    collision,
    is_harness_command,
    reserved,
    safe_prefix,
)


def test_every_harness_is_known_and_the_default_is_safe_in_all() -> None:
    for name in harnesses.NAMES:
        assert reserved(name) == harnesses.get(name).prompt_prefixes
        assert collision(DEFAULT_PREFIX, name) is None
    assert set(reserved(None)) == {p for h in harnesses.all_harnesses() for p in h.prompt_prefixes}


@pytest.mark.parametrize(
    ("prefix", "harness"),
    [("!", "claude"), ("!!", "claude"), ("#", "claude"), ("@", "dsh"), ("/", "codex"),
     ("$", "codex"), ("!", None), ("", "claude"), (" 》", "claude")],
)  # fmt: skip
def test_a_prefix_that_a_harness_uses_collides(prefix: str, harness: str | None) -> None:
    assert collision(prefix, harness) is not None
    assert not safe_prefix(prefix) or prefix == ""


def test_claude_codes_shell_mode_is_named_in_the_refusal() -> None:
    assert collision("!", "claude") == "'!' is the harness's own prefix (shell mode)"


def test_the_configs_rule_names_every_reserved_prefix() -> None:
    rule = SECTIONS["optimizer"]["skip_prefix"].rule
    for own, _, _ in reserved(None):
        assert own in rule


def test_commands_to_the_harness_are_not_words_for_the_agent() -> None:
    assert is_harness_command("/compact", "claude") and is_harness_command("!ls", "codex")
    assert not is_harness_command("@src/app.py 修一下", "claude")
    assert not is_harness_command("!ls", "dsh")  # DSH gives `!` no meaning
