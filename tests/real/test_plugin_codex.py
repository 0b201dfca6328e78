"""dshkit as a Codex plugin, with the real Codex offline in a fresh home: `codex plugin
marketplace add <checkout>` (a local marketplace: Codex reads the checkout's
`.claude-plugin/marketplace.json`) and `codex plugin add dshkit@dshkit` install it, and its
hooks run in a real `codex exec` against a fake model on 127.0.0.1 (the profile reaches the
model, a destructive command is blocked by the guard); with no `dshkit` to be found, the start
says how to install it and the guard still blocks.

Codex runs a plugin's hooks once they are trusted (a person reviews them in the TUI's
/hooks); `--dangerously-bypass-hook-trust` stands for that review here, as in
tests/real/test_harnesses.py.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..support.cli import SCRIPT
from ..support.fakes import RefusingProxy, fake_responses
from ..support.paths import REPO
from ..support.real import World, binary, codex_config, codex_env, run_codex_exec, texts

pytestmark = pytest.mark.real

INSTALL = "make install-user"
# With plugins on, Codex 0.171.0 tries at every `codex exec` to refresh its curated plugin
# marketplace (a git fetch from GitHub) and OpenAI's remote plugin catalog; no setting we
# found turns that off (docs/hooks.md lists what was tried). Offline the attempts are refused
# and the local marketplace's plugin loads all the same: those hosts, and only those, may
# be asked for here (the proxy refuses them too).
PLUGIN_SYNC = {"CONNECT github.com:443", "CONNECT api.github.com:443", "CONNECT chatgpt.com:443"}


@pytest.fixture
def proxy() -> Iterator[RefusingProxy]:
    """The refusing proxy, allowing Codex's plugin sync to knock (and be refused)."""
    with RefusingProxy() as refusing:
        yield refusing
    others = [attempt for attempt in refusing.attempts if attempt not in PLUGIN_SYNC]
    assert others == [], f"a harness tried to leave 127.0.0.1: {others}"


def codex(world: World, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [binary("codex", "node_modules", ".bin", "codex"), *args],
        env=env,
        cwd=world.project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout + done.stderr


def installed_world(tmp_path: Path, proxy: RefusingProxy, base_url: str) -> World:
    world = World(tmp_path, "codex")
    codex_config(world, base_url)
    config = world.home / ".codex" / "config.toml"
    config.write_text(config.read_text().replace("plugins = false", "plugins = true"))
    env = codex_env(world, proxy)
    said = codex(world, env, "plugin", "marketplace", "add", str(REPO))
    assert "Added marketplace `dshkit`" in said
    said = codex(world, env, "plugin", "add", "dshkit@dshkit")
    assert "Added plugin `dshkit`" in said
    assert "dshkit@dshkit  installed, enabled" in codex(world, env, "plugin", "list")
    assert not (world.home / ".codex" / "hooks.json").exists()  # no settings route
    doctor_sees_only_the_plugin(world)
    return world


def run_destructive(
    world: World, fake: Any, proxy: RefusingProxy, path: str
) -> tuple[list[str], str, Path]:
    victim = world.home / "victim"
    victim.mkdir(exist_ok=True)
    (victim / "keep.txt").write_text("still here\n")
    fake.script.append({"tool": "exec_command", "arguments": {"cmd": "rm -rf ~/victim"}})
    done = run_codex_exec(world, proxy, "clean up", PATH=path)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    said = done.stdout + done.stderr
    sent = [texts(r.body) for r in fake.requests if r.path.endswith("/responses")]
    return sent, said, victim


def test_the_codex_plugin_installs_from_the_checkout_and_its_hooks_run(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    with fake_responses() as fake:
        world = installed_world(tmp_path, proxy, fake.base_url)
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "dshkit").symlink_to(SCRIPT)
        sent, said, victim = run_destructive(world, fake, proxy, f"{bin_dir}:{world.env['PATH']}")
    assert len(sent) >= 2 and world.text in sent[0]
    assert "Command blocked by PreToolUse hook" in sent[-1] and "recursive delete" in sent[-1]
    assert "hook: PreToolUse Blocked" in said
    assert (victim / "keep.txt").exists()


def test_without_dshkit_the_codex_plugin_says_how_to_install_and_blocks(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    with fake_responses() as fake:
        world = installed_world(tmp_path, proxy, fake.base_url)
        sent, said, victim = run_destructive(world, fake, proxy, world.env["PATH"])
    assert INSTALL in sent[0] and world.text not in sent[0]
    assert (
        "Command blocked by PreToolUse hook" in sent[-1]
        and INSTALL in sent[-1].split("Command blocked by PreToolUse hook")[-1]
    )
    assert "hook: PreToolUse Blocked" in said
    assert (victim / "keep.txt").exists()


def doctor_sees_only_the_plugin(world: World) -> None:
    """What the real CLI recorded is what doctor reads: the plugin is this harness's one
    route, and install-hooks refuses to add the settings route beside it."""
    env = {**world.env, "PATH": f"{Path(SCRIPT).parent}:{world.env['PATH']}"}
    done = subprocess.run(
        [SCRIPT, "doctor", "--json", "--port", "1"], env=env, capture_output=True, text=True
    )
    report = json.loads(done.stdout)["harnesses"]["codex"]
    assert [route["route"] for route in report["routes"]] == ["plugin"], report["routes"]
    assert report["plugins"][0]["plugin"] == "dshkit@dshkit" and report["doubled"] == []
    refused = subprocess.run(
        [SCRIPT, "install-hooks", "--harness", "codex"], env=env, capture_output=True, text=True
    )
    assert refused.returncode == 1 and "would run each twice" in refused.stderr
