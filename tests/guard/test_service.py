"""The guard's mode as a person chooses it (guard.service `set_mode`, `mode_state`): it wins
over config.toml's `[guard] mode`, yields to DSHKIT_GUARD_MODE, leaves config.toml alone, and
reaches the hook that judges every shell command; settings that cannot be read are strict
over everything, and the hook, the CLI and the console say the same."""

from __future__ import annotations

import stat
from pathlib import Path

import orjson
import pytest

from dshkit.app import App
from dshkit.errors import Invalid
from dshkit.guard.service import MODE_FILE, chosen_mode, mode_state, set_mode
from dshkit.web.app import create_app, new_token

from ..support.cli import invoke
from ..support.guard import claude, decision
from ..support.hooks import hook
from ..support.web import call

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
    shown = mode_state(tmp_path, {})
    assert (shown.mode, shown.source) == ("strict", "chosen") and "'lenient'" in shown.problem
    (tmp_path / MODE_FILE).unlink()
    (tmp_path / MODE_FILE).mkdir()  # not a file
    assert chosen_mode(str(tmp_path)) == "strict"


def test_an_unreadable_config_is_strict_on_every_surface_with_the_choice_kept(
    tmp_path: Path,
) -> None:
    work = tmp_path / "proj"
    work.mkdir()
    state = state_of(tmp_path)
    set_mode(state, "autonomous", {})
    (state / "config.toml").write_text('[guard]\nmode = "lax"\n')
    # The hook enforces strict and says why.
    found = decision(hook(tmp_path, "PreToolUse", claude(work, OPAQUE))[0])
    assert found is not None and found[0] == "deny"
    assert "（strict）" in found[1] and "配置无法读取，按 strict 处理" in found[1]
    assert "'lax'" in found[1]
    # The CLI reports what the hook enforces, why, and the choice that is not in force.
    shown = orjson.loads(invoke("guard", "mode", "--json", home=tmp_path).stdout)
    assert (shown["mode"], shown["source"]) == ("strict", "unreadable")
    assert shown["chosen"] == "autonomous" and shown["configMode"] is None
    assert "'lax'" in shown["problem"]
    said = invoke("guard", "mode", home=tmp_path).stdout
    assert "guard mode: strict (the settings cannot be read" in said and "'lax'" in said
    assert "your choice, autonomous, is kept but not in force" in said
    # Choosing again keeps the choice and still says strict.
    again = orjson.loads(invoke("guard", "mode", "balanced", "--json", home=tmp_path).stdout)
    assert (again["mode"], again["source"], again["chosen"]) == ("strict", "unreadable", "balanced")
    # The console's state (GET /api/guard/mode) is the CLI's, word for word.
    app = create_app(App(state), new_token(state), mount=["guard"])
    token = {"x-dshkit-token": (state / "token").read_text().strip()}
    status, answer = call(app, ("127.0.0.1", 50123), path="/api/guard/mode", headers=token)
    assert status == 200 and answer == again
    # Fixed, the choice is in force again.
    (state / "config.toml").write_text('[guard]\nmode = "strict"\n')
    assert mode_state(state, {}).as_json() == {
        "mode": "balanced",
        "source": "chosen",
        "problem": None,
        "configMode": "strict",
        "chosen": "balanced",
        "modes": ["strict", "balanced", "autonomous"],
    }
    assert verdict(tmp_path, work) == "ask"


def test_an_override_that_does_not_fit_is_strict_too(tmp_path: Path) -> None:
    set_mode(tmp_path, "autonomous", {})
    bad = mode_state(tmp_path, {"DSHKIT_GUARD_MODE": "lax"})
    assert (bad.mode, bad.source, bad.chosen) == ("strict", "unreadable", "autonomous")
    assert bad.config_mode == "balanced" and "DSHKIT_GUARD_MODE='lax'" in bad.problem
    over = mode_state(tmp_path, {"DSHKIT_GUARD_MODE": "strict"})
    assert (over.mode, over.source, over.chosen) == ("strict", "env", "autonomous")
