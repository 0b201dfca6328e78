"""The guard on a file tool in a real Claude Code session, offline against a fake Anthropic
API: the fake model tries to add ~/.ssh/authorized_keys with its Write tool; the PreToolUse
hook denies it (the payload as Claude Code really sends it), the file is never made, and the
next model request carries the reason, naming the rule. And the same in a real Codex session, whose
patch comes through its shell tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support.fakes import RefusingProxy, fake_anthropic, fake_responses
from ..support.real import (
    World,
    codex_config,
    run_claude_raw,
    run_codex_exec,
    texts,
)

pytestmark = [pytest.mark.real]


def test_claude_code_cannot_write_an_ssh_key_in(tmp_path: Path, proxy: RefusingProxy) -> None:
    world = World(tmp_path, "claude")
    settings = world.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"permissions": {"defaultMode": "acceptEdits"}}\n')  # Write allowed
    world.install_hooks()
    # (a new file: Claude Code refuses a write over a file it has not read before any hook)
    keys = world.home / ".ssh" / "authorized_keys"
    write = {
        "tool": "Write",
        "arguments": {"file_path": str(keys), "content": "ssh-ed25519 AAAA attacker\n"},
    }
    inside = {
        "tool": "Write",
        "arguments": {"file_path": str(world.project / "notes.md"), "content": "ok\n"},
    }
    with fake_anthropic() as fake:
        fake.script.extend([write, inside])
        out = run_claude_raw(world, fake, proxy, "整理一下环境", DSHKIT_CAPABILITY="off")
        bodies = [r.body for r in fake.requests if r.path.startswith("/v1/messages")]
    assert "ok from the fake model" in out, out[-2000:]
    assert not keys.exists(), world.hook_log()
    assert (world.project / "notes.md").read_text() == "ok\n"
    said = texts(bodies[1])
    assert "拒绝这次写入" in said and "file-config" in said, said[-3000:]
    world.uninstall_hooks_leaves_no_trace()


def test_codex_cannot_patch_an_ssh_key_in(tmp_path: Path, proxy: RefusingProxy) -> None:
    # Codex's instructions run apply_patch through its shell tool: judged as the patch it is.
    world = World(tmp_path, "codex")
    keys = world.home / ".ssh" / "authorized_keys"
    patch = f"*** Begin Patch\n*** Add File: {keys}\n+ssh-ed25519 AAAA attacker\n*** End Patch"
    command = {"tool": "exec_command", "arguments": {"cmd": f"apply_patch <<'EOF'\n{patch}\nEOF"}}
    with fake_responses() as fake:
        codex_config(world, fake.base_url)
        world.install_hooks()
        fake.script.append(command)
        done = run_codex_exec(world, proxy, "整理一下环境", DSHKIT_CAPABILITY="off")
        bodies = [r.body for r in fake.requests if r.path.endswith("/responses")]
    assert done.returncode == 0, (done.stdout[-1500:], done.stderr[-2000:])
    assert not keys.exists(), world.hook_log()
    assert "file-config" in texts(bodies[-1]), texts(bodies[-1])[-3000:]
    world.uninstall_hooks_leaves_no_trace()
