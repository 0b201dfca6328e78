"""dshkit as a Claude Code plugin, with the real Claude Code offline in a fresh home: the
checkout validates as a marketplace, installs from it, and its hooks run in a real `claude -p`
against a fake model on 127.0.0.1 (the profile reaches the model at the start, a destructive
command is denied by the guard); with no `dshkit` to be found, the start says how to install
it and the guard still denies.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..support.cli import SCRIPT
from ..support.fakes import RefusingProxy, fake_anthropic
from ..support.paths import REPO
from ..support.real import World, binary, claude_env, texts

pytestmark = pytest.mark.real

INSTALL = "make install-user"  # in the launcher's message when dshkit is missing


def claude(world: World, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [binary("claude", "node_modules", ".bin", "claude"), *args],
        env=env,
        cwd=world.project,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout + done.stderr


def installed_world(tmp_path: Path, proxy: RefusingProxy) -> World:
    """A fresh home with dshkit's profile and the plugin installed from this checkout."""
    world = World(tmp_path, "claude")
    env = claude_env(world, _NoModel(), proxy)
    assert "Validation passed" in claude(world, env, "plugin", "validate", str(REPO))
    claude(world, env, "plugin", "marketplace", "add", str(REPO))
    said = claude(world, env, "plugin", "install", "dshkit@dshkit")
    assert "Successfully installed plugin: dshkit@dshkit" in said
    assert not (world.home / ".claude" / "settings.json").read_text().count('"hooks"')
    doctor_sees_only_the_plugin(world)
    return world


class _NoModel:
    base_url = "http://127.0.0.1:9"  # plugin commands call no model


def conversation(fake: Any) -> list[str]:
    bodies = [r.body for r in fake.requests if r.path.startswith("/v1/messages")]
    return [texts(b) for b in bodies if "title" not in texts(b)[:400].lower()]


def run_destructive(world: World, proxy: RefusingProxy, path: str) -> tuple[list[str], Path]:
    """`claude -p` whose model runs `rm -rf` on a directory of the (temporary) home, outside
    the project, Bash allowed (only a hook can stop it); what the model was sent, and the
    directory."""
    victim = world.home / "victim"
    victim.mkdir(exist_ok=True)
    (victim / "keep.txt").write_text("still here\n")
    with fake_anthropic() as fake:
        fake.script.append({"tool": "Bash", "arguments": {"command": "rm -rf ~/victim"}})
        env = claude_env(world, fake, proxy, PATH=path)
        claude(world, env, "-p", "clean up", "--output-format", "json", "--allowedTools", "Bash")
        return conversation(fake), victim


def test_the_plugin_installs_from_the_checkout_and_its_hooks_run(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    world = installed_world(tmp_path, proxy)
    bin_dir = tmp_path / "bin"  # dshkit on the PATH Claude Code runs hooks with
    bin_dir.mkdir()
    (bin_dir / "dshkit").symlink_to(SCRIPT)
    path = f"{bin_dir}:{world.env['PATH']}"
    servers = claude(world, claude_env(world, _NoModel(), proxy, PATH=path), "mcp", "list")
    assert "plugin:dshkit:dshkit:" in servers and "mcp --harness claude" in servers
    assert "Connected" in servers.split("plugin:dshkit:dshkit:")[1].splitlines()[0]
    sent, victim = run_destructive(world, proxy, path)
    assert len(sent) >= 2, "the model was not asked again after the tool call"
    assert world.text in sent[0]  # the SessionStart context, before the first answer
    assert "recursive delete" in sent[-1] and "dshkit" in sent[-1]  # the guard's reason
    assert (victim / "keep.txt").exists()


def test_without_dshkit_the_plugin_says_how_to_install_and_denies(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    world = installed_world(tmp_path, proxy)
    sent, victim = run_destructive(world, proxy, world.env["PATH"])  # no dshkit anywhere
    assert INSTALL in sent[0]  # said at the start
    assert world.text not in sent[0]
    assert sent[-1].count(INSTALL) >= 2 and "PreToolUse" in sent[-1]  # and as the denial
    assert (victim / "keep.txt").exists()


def seen_options(hook: Any) -> None:
    """A SessionStart handler of this test's own (`DSHKIT_HOOK_HANDLERS`): writes what the
    plugin's options made of dshkit's environment and state directory."""
    seen = {
        "key": os.environ.get("DSHKIT_LLM_API_KEY"),
        "mode": os.environ.get("DSHKIT_GUARD_MODE"),
        "state": hook.directory,
    }
    Path(os.environ["DSHKIT_TEST_SEEN"]).write_text(json.dumps(seen))


def test_the_plugin_options_reach_dshkit(tmp_path: Path, proxy: RefusingProxy) -> None:
    world = installed_world(tmp_path, proxy)
    env = claude_env(world, _NoModel(), proxy)
    other = tmp_path / "other-state"
    configure = ["plugin", "configure", "dshkit@dshkit", "--values-stdin"]
    done = subprocess.run(
        [binary("claude", "node_modules", ".bin", "claude"), *configure],
        input=json.dumps(
            {"llm_api_key": "sk-plugin-secret", "guard_mode": "strict", "state_dir": str(other)}
        ),
        env=env,
        cwd=world.project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    settings = (world.home / ".claude" / "settings.json").read_text()
    assert "sk-plugin-secret" not in settings and "strict" in settings  # the key kept apart
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dshkit").symlink_to(SCRIPT)
    seen = tmp_path / "seen.json"
    with fake_anthropic() as fake:
        extra = {
            "PATH": f"{bin_dir}:{world.env['PATH']}",
            "DSHKIT_HOOK_HANDLERS": f"SessionStart={__name__}:seen_options",
            "DSHKIT_TEST_SEEN": str(seen),
        }
        claude(world, claude_env(world, fake, proxy, **extra), "-p", "hi")
        assert world.text not in conversation(fake)[0]  # the profile is in the other state dir
    assert json.loads(seen.read_text()) == {
        "key": "sk-plugin-secret",
        "mode": "strict",
        "state": str(other),
    }


def doctor_sees_only_the_plugin(world: World) -> None:
    """What the real CLI recorded is what doctor reads: the plugin is this harness's one
    route, and install-hooks refuses to add the settings route beside it."""
    env = {**world.env, "PATH": f"{Path(SCRIPT).parent}:{world.env['PATH']}"}
    done = subprocess.run(
        [SCRIPT, "doctor", "--json", "--port", "1"], env=env, capture_output=True, text=True
    )
    report = json.loads(done.stdout)["harnesses"]["claude"]
    assert [route["route"] for route in report["routes"]] == ["plugin"], report["routes"]
    assert report["plugins"][0]["plugin"] == "dshkit@dshkit" and report["doubled"] == []
    refused = subprocess.run(
        [SCRIPT, "install-hooks", "--harness", "claude"], env=env, capture_output=True, text=True
    )
    assert refused.returncode == 1 and "would run each twice" in refused.stderr
