"""What the real Claude Code starts dshkit for, offline against a fake Anthropic API: the
matchers and per-handler conditions `install-hooks` writes (`hookspec`), each call of a
scripted session counted where the harness starts the hook.

- The conditions hookspec writes for the gate's write hook (`Write(*.html)`, …) start it for
  an HTML write in any folder or case and never for another file or tool, once per call.
- The real install starts PreToolUse for the tools the guard judges (Read, Bash, Write), not
  for a tool no handler looks at (ToolSearch, ListAgents: 2.1.332 offers no Grep or Glob),
  while no handoff ever began."""

from __future__ import annotations

import json
import shlex
from collections import Counter
from pathlib import Path

import pytest

from dshkit import harnesses, hookspec
from dshkit.install import hook_settings

from ..support.fakes import RefusingProxy, fake_anthropic
from ..support.real import World, run_claude_raw

pytestmark = [pytest.mark.real]

# Counts a hook as it starts, then runs the installed command with the same payload.
_WRAPPER = """import subprocess, sys
payload = sys.stdin.buffer.read()
with open(sys.argv[1], "a") as log:
    subprocess.run([sys.executable, "-c", sys.argv[2]], input=payload, stdout=log, check=False)
done = subprocess.run(sys.argv[3], shell=True, input=payload, capture_output=True)
sys.stdout.buffer.write(done.stdout)
sys.stderr.buffer.write(done.stderr)
sys.exit(done.returncode)
"""
_LOGGER = (
    "import json,sys; d=json.load(sys.stdin); "
    "print(d['hook_event_name'], d.get('tool_name'), "
    "(d.get('tool_input') or {}).get('file_path', ''))"
)


def counted(log: Path) -> Counter[str]:
    spawns: Counter[str] = Counter()
    for line in log.read_text().splitlines() if log.exists() else ():
        event, tool, path = [*line.split(" ", 2), "", ""][:3]
        spawns[f"{event} {tool} {Path(path).name}".strip()] += 1
    return spawns


def test_the_gates_write_conditions_start_it_only_for_a_web_page(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    world = World(tmp_path, "claude")
    claude = harnesses.get("claude")
    gate = tuple(e for e in hookspec.HANDLERS if e.handler.startswith("dshkit.gate.hook:on_"))
    log = tmp_path / "spawns.log"
    settings = world.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    base = '{"permissions": {"defaultMode": "acceptEdits", "allow": ["Read", "Write", "Bash"]}}'
    line = f"python3 -c {shlex.quote(_LOGGER)} >> {shlex.quote(str(log))}"
    text = hook_settings.with_hooks(
        settings,
        base,
        hookspec.installed_events(claude, builtin=gate),
        lambda name: line,
        hookspec.conditions(claude, builtin=gate),
    )
    assert text is not None and '"if": "Write(*.html)"' in text
    settings.write_text(text)
    (world.project / "sub").mkdir()
    p = world.project
    script = [
        {"tool": "Write", "arguments": {"file_path": str(p / "page.html"), "content": "<p>1</p>"}},
        {"tool": "Write", "arguments": {"file_path": str(p / "LOUD.HTML"), "content": "<p>2</p>"}},
        {"tool": "Write", "arguments": {"file_path": str(p / "sub" / "d.svg"), "content": "<s/>"}},
        {"tool": "Write", "arguments": {"file_path": str(p / "notes.txt"), "content": "x\n"}},
        {"tool": "Read", "arguments": {"file_path": str(p / "page.html")}},
        {
            "tool": "Edit",
            "arguments": {"file_path": str(p / "page.html"), "old_string": "1", "new_string": "3"},
        },
        {"tool": "Bash", "arguments": {"command": "true", "description": "nothing"}},
    ]
    with fake_anthropic() as fake:
        fake.script.extend(script)
        out = run_claude_raw(world, fake, proxy, "写个页面")
    assert "ok from the fake model" in out, out[-2000:]
    assert (p / "page.html").read_text() == "<p>3</p>"  # every call ran
    post = {k: v for k, v in counted(log).items() if k.startswith("PostToolUse")}
    assert post == {
        "PostToolUse Write page.html": 1,
        "PostToolUse Write LOUD.HTML": 1,
        "PostToolUse Write d.svg": 1,
        "PostToolUse Edit page.html": 1,
        "PostToolUse Bash": 1,
    }


def test_the_real_install_starts_no_hook_for_a_search(tmp_path: Path, proxy: RefusingProxy) -> None:
    world = World(tmp_path, "claude")
    settings = world.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"permissions": {"defaultMode": "acceptEdits"}}\n')
    world.install_hooks()
    log = tmp_path / "spawns.log"
    wrapper = tmp_path / "count.py"
    wrapper.write_text(_WRAPPER)
    # Each of dshkit's hooks is counted as it starts, then runs as installed.
    installed = json.loads(settings.read_text())
    for groups in installed["hooks"].values():
        for group in groups:
            for hook in group["hooks"]:
                words = [str(wrapper), str(log), _LOGGER, hook["command"]]
                hook["command"] = "python3 " + shlex.join(words)
    settings.write_text(json.dumps(installed))
    p = world.project
    script = [
        {"tool": "Read", "arguments": {"file_path": str(p / "hello.txt")}},
        {"tool": "ToolSearch", "arguments": {"query": "notebook"}},
        {"tool": "ListAgents", "arguments": {}},
        {"tool": "Bash", "arguments": {"command": "true", "description": "nothing"}},
        {"tool": "Write", "arguments": {"file_path": str(p / "notes.md"), "content": "ok\n"}},
    ]
    with fake_anthropic() as fake:
        fake.script.extend(script)
        out = run_claude_raw(world, fake, proxy, "看看项目", DSHKIT_CAPABILITY="off")
    assert "ok from the fake model" in out, out[-2000:]
    spawns = counted(log)
    assert (p / "notes.md").read_text() == "ok\n", spawns
    pre = {k: v for k, v in spawns.items() if k.startswith("PreToolUse")}
    post = {k: v for k, v in spawns.items() if k.startswith("PostToolUse")}
    assert pre == {
        "PreToolUse Read hello.txt": 1,
        "PreToolUse Bash": 1,
        "PreToolUse Write notes.md": 1,
    }
    assert sum(post.values()) == 5  # graft's watermark reads every tool's result
