"""The guard's mode as a person chooses it (guard.service `set_mode`, `mode_state`): it wins
over config.toml's `[guard] mode`, yields to DSHKIT_GUARD_MODE, leaves config.toml alone, and
reaches the hook that judges every shell command."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from dshkit.errors import Invalid
from dshkit.guard.service import MODE_FILE, chosen_mode, mode_state, set_mode

from ..support.guard import claude, decision
from ..support.hooks import hook

# strict deny, balanced ask, autonomous ask: strict tells
OPAQUE = 'eval "$X"'
# strict deny, balanced deny, autonomous ask: autonomous tells
FORCED = "git push --force"


def state_of(home: Path) -> Path:
    return home / ".dsh" / "dshkit"


def verdict(home: Path, work: Path, command: str = OPAQUE, **env: str) -> str:
    found = decision(hook(home, "PreToolUse", claude(work, command), **env)[0])
    return "allow" if found is None else found[0]


def test_a_chosen_mode_reaches_the_hook_over_config_toml(tmp_path: Path) -> None:
    work = tmp_path / "proj"
    work.mkdir()
    state = state_of(tmp_path)
    assert mode_state(state, {}).as_json()["source"] == "default"
    assert verdict(tmp_path, work) == "ask"  # balanced, the default
    assert verdict(tmp_path, work, FORCED) == "deny"
    chosen = set_mode(state, "strict", {})
    assert (chosen.mode, chosen.source) == ("strict", "chosen")
    assert verdict(tmp_path, work) == "deny"
    config = state / "config.toml"
    config.write_text('# my settings\n[guard]\nmode = "autonomous"  # mine\n')
    assert verdict(tmp_path, work) == "deny"  # the choice wins over config.toml
    assert mode_state(state, {}).config_mode == "autonomous"
    back = set_mode(state, "config", {})
    assert (back.mode, back.source) == ("autonomous", "config")
    assert verdict(tmp_path, work, FORCED) == "ask"
    assert config.read_text() == '# my settings\n[guard]\nmode = "autonomous"  # mine\n'
    set_mode(state, "strict", {})
    # The override wins over both.
    assert verdict(tmp_path, work, FORCED, DSHKIT_GUARD_MODE="autonomous") == "ask"
    assert verdict(tmp_path, work, FORCED) == "deny"
    env = mode_state(state, {"DSHKIT_GUARD_MODE": "autonomous"})
    assert (env.mode, env.source) == ("autonomous", "env")


def test_the_choice_is_private_and_whole(tmp_path: Path) -> None:
    set_mode(tmp_path, "autonomous", {})
    written = tmp_path / MODE_FILE
    assert written.read_text() == "autonomous\n"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [MODE_FILE]  # no temporary left behind
    with pytest.raises(Invalid) as bad:
        set_mode(tmp_path, "lenient", {})
    assert bad.value.field == "mode" and "strict, balanced, autonomous or config" in str(bad.value)
    assert written.read_text() == "autonomous\n"


def test_an_unreadable_choice_is_strict(tmp_path: Path) -> None:
    assert chosen_mode(str(tmp_path)) is None
    (tmp_path / MODE_FILE).write_text("lenient\n")
    assert chosen_mode(str(tmp_path)) == "strict"
    (tmp_path / MODE_FILE).unlink()
    (tmp_path / MODE_FILE).mkdir()  # not a file
    assert chosen_mode(str(tmp_path)) == "strict"
