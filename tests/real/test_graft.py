"""The handoff lifecycle with the real Claude Code, Codex and DSH CLIs, offline against fake APIs on
127.0.0.1, with dshkit's hooks and MCP server installed by `dshkit install-hooks`.

A fake model reports a context in the warning band: the nudge reaches it in the very next
request; it calls `graft_slice_and_inject`; dshkit's launcher starts a new real session (the
harness's own CLI) whose first request carries the identity line and the card; the source
then takes no new prompt. When the new session cannot be started, the handoff rolls back and
the source works again, told so once. With the real DSH, a forced cut's target gets the key
DSH withheld from its hooks and must answer its first turn before the source retires; a target
whose turn fails (no key) rolls the handoff back, marked. Runs as tests/real/test_harnesses.py
runs the CLIs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.graft.ledger import audit_records, retirement
from dshkit.graft.lifecycle import FAILED_MARK, ROLLBACK_NOTICE, State, Txn, transactions
from dshkit.store import Store

from ..support.cli import SCRIPT
from ..support.fakes import (
    RefusingProxy,
    fake_anthropic,
    fake_chat,
    fake_gemini,
    fake_responses,
)
from ..support.real import (
    World,
    binary,
    claude_env,
    codex_config,
    codex_env,
    gemini_sent,
    gemini_settings,
    run_codex_exec,
    run_gemini,
    texts,
)

pytestmark = pytest.mark.real

GRAFT_CONFIG = '[graft]\nmode = "fixed"\nwindow_tokens = 100000\nignite_timeout_s = {timeout}\n'
NUDGE = "当前上下文水位已达 72%"
ESCALATION = "水位告急"
BOARD = "交接任务看板"
BLOCKED = "不再接收"
# What the handoff tool tells the source's model (mcp/tools.py): stop; or, it was undone.
STOP = "请不要再调用工具"
UNDONE = "已经回滚"
# Generous bounds for what runs detached (the handoff's driver, the target's first turn) on a
# machine shared with other test runs; nothing is timed, only waited for.
DEADLINE_S = 240.0
GRAFT_TOOL = "graft_slice_and_inject"
# What the source's model is asked at the end of a forced cut's turn where the harness shows
# the person nothing a hook says (graft/live.py RELAY).
RELAY = "请把下面这段话原样转告用户"
# The person's approval of the handoff for one `codex exec` (which cannot ask), as
# `--allowedTools` gives it to `claude -p`: dshkit's registration leaves it to Codex to ask.
CODEX_APPROVES_HANDOFF = ("-c", f'mcp_servers.dshkit.tools.{GRAFT_TOOL}.approval_mode="approve"')


@pytest.fixture
def refusing() -> Iterator[RefusingProxy]:
    # The same refusing proxy as the `proxy` fixture (tests/real/conftest.py).
    with RefusingProxy() as proxy:
        yield proxy
    assert proxy.attempts == [], f"a harness tried to leave 127.0.0.1: {proxy.attempts}"


def graft_world(root: Path, harness: str, cli: str, *, timeout: float = 60.0) -> World:
    """A world whose PATH finds the harness's CLI (dshkit's launcher starts the target by its
    name, as on a user's machine), in the fixed watermark mode over a 100,000-token window."""
    world = World(root, harness)
    world.env["PATH"] = f"{Path(cli).parent}:{world.env['PATH']}"
    world.env["DSHKIT_CAPABILITY"] = "off"  # no detached browser probes from the hooks
    world.state.joinpath("config.toml").write_text(GRAFT_CONFIG.format(timeout=timeout))
    return world


def wait_for(what: str, probe: Callable[[], Any]) -> Any:
    """Poll `probe` until it returns something truthy (within DEADLINE_S)."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"waited {DEADLINE_S:g} s for {what}")
        time.sleep(0.3)


def handoff_ended(world: World, source: str) -> Txn | None:
    """The source's handoff once it reached an end (committed, rolled back or failed)."""
    with Store(world.state) as store:
        ended = transactions(store, (State.COMMITTED, State.ROLLED_BACK, State.FAILED))
    return next((txn for txn in ended if txn.plan.session_id == source), None)


def started_target(world: World, fake: Any, source: str, transcript: Callable[[str], str]) -> str:
    """The target of the source's committed handoff: a new session whose first request to
    the model carries the identity line and the card, and whose first turn ended (its
    `transcript` text holds the model's reply)."""
    txn = wait_for("the handoff to end", lambda: handoff_ended(world, source))
    assert txn.state == State.COMMITTED, txn.last_error
    target = txn.target_id
    assert target and target != source
    first = wait_for("the target's request", lambda: session_requests(fake, target))[0]
    assert txn.plan.identity.render() in texts(first)
    assert BOARD in texts(first)
    reply = fake.text
    wait_for("the target's first turn to end", lambda: reply in transcript(target))
    return target


def session_requests(fake: Any, session: str) -> list[dict[str, Any]]:
    """The model requests one session sent (both CLIs name their session in a header; side
    requests offer no tools)."""
    return [r.body for r in fake.requests if r.body.get("tools") and session in r.headers.values()]


def nudged(body: dict[str, Any]) -> bool:
    """Whether a request carries the watermark's nudge: the level, and the tool to call."""
    return re.search(f"{NUDGE}[^\n]*{GRAFT_TOOL}", texts(body)) is not None


def claude(world: World, fake: Any, proxy: RefusingProxy, *args: str) -> str:
    """The real `claude -p ARGS…` in the project, allowed to run Bash and dshkit's handoff
    tool (loading a deferred MCP tool through ToolSearch needs no permission); stdout+stderr."""
    done = subprocess.run(
        [
            binary("claude", "node_modules", ".bin", "claude"),
            "-p",
            *args,
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
            f"mcp__dshkit__{GRAFT_TOOL}",
        ],
        env=claude_env(world, fake, proxy),
        cwd=world.project,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done.stdout + done.stderr


def claude_result(output: str) -> dict[str, Any]:
    """What `claude -p --output-format json` reports (session id, result text, …)."""
    line = next(line for line in output.splitlines() if line.startswith("{"))
    reported: dict[str, Any] = orjson.loads(line)
    return reported


def claude_transcript(world: World, session: str) -> Path:
    (path,) = (world.home / ".claude" / "projects").glob(f"*/{session}.jsonl")
    return path


def claude_source_reaches_the_band(world: World, fake: Any, proxy: RefusingProxy) -> str:
    """Turn 1 of a source session: a Bash call at 40% of the window, another at 72% (the
    pressure builds over the turn's requests, each its own message and request id), then
    (nudged) the model loads the handoff tool and calls it. Returns the source's session id."""
    fake.script.extend(
        [
            {
                "tool": "Bash",
                "arguments": {"command": "ls", "description": "list the files"},
                "input_tokens": 40_000,
            },
            {
                "tool": "Bash",
                "arguments": {"command": "cat hello.txt", "description": "read the file"},
                "input_tokens": 72_000,
            },
            # Claude Code defers MCP tools: the model loads the tool before it can call it.
            {"tool": "ToolSearch", "arguments": {"query": f"select:mcp__dshkit__{GRAFT_TOOL}"}},
            {"tool": f"mcp__dshkit__{GRAFT_TOOL}", "arguments": {}},
        ]
    )
    source = str(claude_result(claude(world, fake, proxy, "read hello.txt"))["session_id"])
    assert not fake.script, "the fake model's script was not played to the end"
    requests = session_requests(fake, source)
    # Below the band at the prompt and after the first call (40%): no nudge.
    assert not nudged(requests[0]) and not nudged(requests[1])
    # PostToolUse after the second call, the turn's second response at 72%, put the nudge
    # into the very next request: the pressure is the latest request's, not the turn's first.
    (after_bash,) = [b for b in requests if "hello from the project" in texts(b)][:1]
    assert after_bash is requests[2] and nudged(after_bash)
    # The model did as told (ToolSearch loads the tool): it is not accused of ignoring it.
    assert all(ESCALATION not in texts(body) for body in requests)
    return source


# -- Claude Code ----------------------------------------------------------------------------


def test_claude_code_hands_off_to_a_new_real_session(
    tmp_path: Path, refusing: RefusingProxy
) -> None:
    cli = binary("claude", "node_modules", ".bin", "claude")
    world = graft_world(tmp_path, "claude", cli)
    world.install_hooks()
    with fake_anthropic() as fake:
        source = claude_source_reaches_the_band(world, fake, refusing)
        # The new session is the real CLI's, started by dshkit's launcher with the same env.
        target = started_target(
            world, fake, source, lambda target: claude_transcript(world, target).read_text()
        )
        # What the handoff tool said reached the source's model in its next request: stop,
        # and tell the person the new session and how to go on there (Claude Code shows a
        # result's structured content in place of its text, so the text must go alone).
        told = texts(session_requests(fake, source)[-1])
        assert STOP in told and target in told and f"claude --resume {target}" in told

        # The source takes no new prompt: nothing reaches the model, the pointer is shown.
        before = len(fake.requests)
        out = claude(world, fake, refusing, "--resume", source, "继续")
        assert len(fake.requests) == before, "the retired source's prompt reached the model"
        shown = str(claude_result(out)["result"])
        assert "blocked by hook" in shown and BLOCKED in shown
        assert f"claude --resume {target}" in shown


def test_claude_code_rolls_back_when_the_target_cannot_start(
    tmp_path: Path, refusing: RefusingProxy
) -> None:
    cli = binary("claude", "node_modules", ".bin", "claude")
    world = graft_world(tmp_path, "claude", cli, timeout=10.0)
    # Only dshkit's launcher reads CLAUDE_BIN: the source runs the real CLI by its path.
    attempts = tmp_path / "attempts"
    broken = tmp_path / "broken-claude"
    broken.write_text(
        f'#!/bin/sh\necho start >> "{attempts}"\necho "no claude today" >&2\nexit 1\n'
    )
    broken.chmod(0o755)
    world.env["CLAUDE_BIN"] = str(broken)
    # Unspaced attempts: the rollback lands while the handoff tool waits to report.
    config = world.state / "config.toml"
    config.write_text(config.read_text() + "ignite_spacing_s = 0\n")
    world.install_hooks()
    with fake_anthropic() as fake:
        source = claude_source_reaches_the_band(world, fake, refusing)
        txn = wait_for("the handoff to end", lambda: handoff_ended(world, source))
        assert txn.state == State.ROLLED_BACK and txn.attempts == 3, txn
        assert attempts.read_text().count("start") == 3
        assert "no claude today" in str(txn.last_error)
        # The source's model was told in its next request that the handoff was undone.
        told = texts(session_requests(fake, source)[-1])
        assert UNDONE in told and STOP not in told

        # The source works again, and its next request carries the rollback notice once.
        before = len(session_requests(fake, source))
        out = claude(world, fake, refusing, "--resume", source, "继续")
        assert claude_result(out)["result"] == fake.text
        (again,) = session_requests(fake, source)[before:]
        assert texts(again).count(ROLLBACK_NOTICE) == 1
        assert ROLLBACK_NOTICE in texts({"messages": again["messages"][-1:]})  # with this prompt
        # A further prompt is not told again (the notice it sees is the one in its history).
        before = len(session_requests(fake, source))
        claude(world, fake, refusing, "--resume", source, "再继续")
        (further,) = session_requests(fake, source)[before:]
        assert texts(further).count(ROLLBACK_NOTICE) == 1
        assert ROLLBACK_NOTICE not in texts({"messages": further["messages"][-1:]})


def test_claude_code_shows_the_person_where_a_forced_cut_went(
    tmp_path: Path, refusing: RefusingProxy
) -> None:
    cli = binary("claude", "node_modules", ".bin", "claude")
    world = graft_world(tmp_path, "claude", cli)
    world.install_hooks()
    with fake_anthropic() as fake:
        fake.script.append(
            {
                "tool": "Bash",
                "arguments": {"command": "cat hello.txt", "description": "read the file"},
                "input_tokens": 80_000,
            }
        )
        out = claude(world, fake, refusing, "read hello.txt")
        source = str(claude_result(out)["session_id"])
        txn = wait_for("the handoff to end", lambda: handoff_ended(world, source))
        assert txn.state == State.COMMITTED, txn.last_error
        # What Claude Code showed the person at the end of the turn (a hook's systemMessage,
        # kept in its log as a `hook_system_message` attachment): where the work went.
        shown = [
            str(entry["attachment"]["content"])
            for entry in map(
                orjson.loads, claude_transcript(world, source).read_bytes().split(b"\n")[:-1]
            )
            if entry.get("type") == "attachment"
            and entry["attachment"].get("type") == "hook_system_message"
        ]
        assert len(shown) == 1, shown
        assert "强制切断" in shown[0] and f"交接 #{txn.id}" in shown[0]
        # Still starting when the turn ended (the target's first turn takes a model reply):
        # how to find where it went, and how to take it back.
        assert (
            f"dshkit graft status --session {source}" in shown[0] or str(txn.target_id) in shown[0]
        )
        # The person's words, not the model's: no request carried it.
        assert all(shown[0] not in texts(r.body) for r in fake.requests)


def test_claude_code_target_whose_first_turn_is_an_api_error_is_no_target(
    tmp_path: Path, refusing: RefusingProxy
) -> None:
    cli = binary("claude", "node_modules", ".bin", "claude")
    world = graft_world(tmp_path, "claude", cli, timeout=30.0)
    config = world.state / "config.toml"
    config.write_text(config.read_text() + "ignite_spacing_s = 0\n")
    world.install_hooks()
    with fake_anthropic() as fake:
        # The API refuses every request of a target (its first message carries the identity
        # line): the real CLI writes "API Error: 401 …" in the model's place and ends its turn.
        fake.refuse = lambda body: "graft-identity" in texts(body)
        source = claude_source_reaches_the_band(world, fake, refusing)
        txn = wait_for("the handoff to end", lambda: handoff_ended(world, source))
    # Before: the error message counted as the model's answer, the handoff committed and the
    # source retired onto a target that never ran.
    assert txn.state == State.ROLLED_BACK and txn.attempts == 3, txn
    error = str(txn.last_error)
    assert "API Error" in error and FAILED_MARK in error
    with Store(world.state) as store:
        assert retirement(store, "claude", source) is None  # the source works again
        failed = [r.detail for r in audit_records(store) if r.kind == "ignite-failed"]
    assert len(failed) == 3 and all("API Error" in str(d["error"]) for d in failed), failed


# -- Codex ----------------------------------------------------------------------------------


def codex(world: World, proxy: RefusingProxy, *args: str) -> str:
    """The real `codex exec ARGS…` in the project; its stdout and stderr."""
    done = run_codex_exec(world, proxy, *args)
    return done.stdout + done.stderr


def codex_thread(output: str) -> str:
    for line in output.splitlines():
        if line.startswith("{") and '"thread.started"' in line:
            return str(orjson.loads(line)["thread_id"])
    raise AssertionError(f"codex announced no thread: {output[-2000:]}")


def codex_rollout(world: World, session: str) -> str:
    """The text of a Codex session's rollout ("" until it exists)."""
    found = list((world.home / ".codex" / "sessions").rglob(f"rollout-*-{session}.jsonl"))
    return found[0].read_text() if found else ""


def test_codex_hands_off_to_a_new_real_session(tmp_path: Path, refusing: RefusingProxy) -> None:
    cli = binary("codex", "node_modules", ".bin", "codex")
    world = graft_world(tmp_path, "codex", cli)
    # The project is no git checkout: the source runs with --skip-git-repo-check, and so must
    # the target dshkit's launcher starts there.
    with fake_responses() as fake:
        codex_config(world, fake.base_url)
        config = world.home / ".codex" / "config.toml"
        # Codex announces 95% of the configured window in its log (here 95,000 tokens).
        config.write_text("model_context_window = 100000\n" + config.read_text())
        world.install_hooks()  # which approves dshkit's read-only handoff tools
        fake.script.extend(
            [
                {
                    "tool": "exec_command",
                    "arguments": {"cmd": "cat hello.txt"},
                    "input_tokens": 68_400,  # 72% of 95,000
                },
                # Codex offers MCP tools in a namespace, `mcp__dshkit`.
                {"tool": GRAFT_TOOL, "namespace": "mcp__dshkit", "arguments": {}},
            ]
        )
        asked = codex(world, refusing, *CODEX_APPROVES_HANDOFF, "--json", "read hello.txt")
        source = codex_thread(asked)
        assert not fake.script, "the fake model's script was not played to the end"
        requests = session_requests(fake, source)
        assert not nudged(requests[0])
        # PostToolUse after the command put the nudge into the very next request.
        assert "hello from the project" in texts(requests[1]) and nudged(requests[1])
        assert all(ESCALATION not in texts(body) for body in requests)

        target = started_target(world, fake, source, lambda target: codex_rollout(world, target))

        # The source takes no new prompt: `codex exec resume` sends the model nothing.
        before = len(fake.requests)
        out = codex(world, refusing, "resume", source, "继续")
        assert len(fake.requests) == before, "the retired source's prompt reached the model"
        assert "UserPromptSubmit Blocked" in out
    # Codex 0.171's `exec` reports the block but not its reason (neither in its output nor in
    # the rollout): the reason is shown by replaying that prompt's hook payload, with the real
    # session id and rollout, through the hook command Codex ran.
    rollout = next((world.home / ".codex" / "sessions").rglob(f"rollout-*-{source}.jsonl"))
    payload = {
        "session_id": source,
        "transcript_path": str(rollout),
        "cwd": str(world.project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "继续",
        "turn_id": "replayed",
        "model": "gpt-fake",
    }
    hook = subprocess.run(
        [SCRIPT, "hook", "UserPromptSubmit", "--state-dir", str(world.state)],
        input=orjson.dumps(payload),
        env=codex_env(world, refusing),
        cwd=world.project,
        capture_output=True,
        check=True,
    )
    answer = orjson.loads(hook.stdout)
    assert answer["decision"] == "block"
    assert BLOCKED in answer["reason"] and f"codex resume {target}" in answer["reason"]


# -- DSH ------------------------------------------------------------------------------------


def dsh_world(root: Path, template: Path) -> World:
    """A DSH world with dshkit's hooks installed and DSH on PATH (as a person's install), its
    key in DSH's own environment only: DSH withholds it (and every DSH_* name) from the hook
    bridge's commands, so the forced cut's target gets it from dshkit or not at all."""
    cli = binary("dsh", "node_modules", ".bin", "dsh")
    world = graft_world(root, "dsh", cli)
    shutil.copytree(template, world.home / ".dsh", symlinks=True, dirs_exist_ok=True)
    config = world.state / "config.toml"
    config.write_text(config.read_text() + "ignite_spacing_s = 0\n")
    world.install_hooks()
    return world


def dsh(
    world: World, fake: Any, proxy: RefusingProxy, prompt: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary("dsh", "node_modules", ".bin", "dsh"), "--profile", "headless", prompt],
        env={
            **world.env,
            **proxy.env(),
            "DEEPSEEK_BASE_URL": fake.base_url,
            "DEEPSEEK_API_KEY": "sk-fake",
            "DSH_TELEMETRY_DISABLED": "1",
        },
        cwd=world.project,
        capture_output=True,
        text=True,
        timeout=180,
    )


def dsh_reaches_the_forced_line(world: World, fake: Any, proxy: RefusingProxy) -> Txn:
    """A DSH session whose one command reports 80% of DSH's announced window (1,000,000
    tokens): its PostToolUse hook cuts it. Returns the handoff once it ended."""
    fake.script.append(
        {"tool": "bash", "arguments": {"command": "cat hello.txt"}, "input_tokens": 800_000}
    )
    done = dsh(world, fake, proxy, "read hello.txt")
    assert done.returncode == 0, done.stderr[-2000:]
    assert not fake.script, "the fake model's script was not played to the end"

    def ended() -> Txn | None:
        with Store(world.state) as store:
            found = transactions(store, (State.COMMITTED, State.ROLLED_BACK, State.FAILED))
        return found[0] if found else None

    return wait_for("the forced handoff to end", ended)


def test_dsh_target_gets_the_persons_key_and_answers_before_the_source_retires(
    tmp_path: Path, refusing: RefusingProxy, dsh_profile_template: Path
) -> None:
    world = dsh_world(tmp_path, dsh_profile_template)
    with fake_chat() as fake:
        txn = dsh_reaches_the_forced_line(world, fake, refusing)
        assert txn.state == State.COMMITTED, (txn.last_error, world.hook_log()[-2000:])
        target = txn.target_id
        assert target and target != txn.plan.session_id
        # The target's first request carried the card; the model answered it (with the key
        # DSH withheld from the hook, read back from DSH's own process).
        identity = txn.plan.identity.render()
        assert any(identity in texts(r.body) for r in fake.requests)
        assert "MISSING_CREDENTIAL" not in str(txn.last_error)
        # The person is told where the work went: DSH shows the person nothing a hook says,
        # so at the end of the source's turn its model is sent on, once, to say it (and that
        # step of the turn is not refused as new work).
        source = txn.plan.session_id
        relayed = [r.body for r in fake.requests if RELAY in texts(r.body)]
        # (the hooks' log says why not: a Stop handler over its budget, a report not found)
        assert relayed, (
            "the end of the forced cut's turn did not send the model on",
            world.hook_log()[-3000:],
        )
        told = texts(relayed[0]).split(RELAY, 1)[1]
        assert "强制切断" in told and (
            f"dshkit graft status --session {source}" in told or target in told
        ), told
        assert sum(texts(r.body).count(RELAY) > 0 for r in fake.requests) >= 1
    with Store(world.state) as store:
        kinds = [r.kind for r in audit_records(store)]
    assert "ignite" in kinds and "ignite-failed" not in kinds


def test_dsh_target_without_the_key_rolls_the_handoff_back(
    tmp_path: Path, refusing: RefusingProxy, dsh_profile_template: Path
) -> None:
    world = dsh_world(tmp_path, dsh_profile_template)
    # The person's DSH starts, as dshkit's launcher finds it, with no key at all: every
    # target's first turn fails MISSING_CREDENTIAL (its transcript shows the card).
    keyless = tmp_path / "keyless-dsh"
    real = binary("dsh", "node_modules", ".bin", "dsh")
    keyless.write_text(f'#!/bin/sh\nexec env -u DEEPSEEK_API_KEY "{real}" "$@"\n')
    keyless.chmod(0o755)
    world.env["DSH_BIN"] = str(keyless)
    with fake_chat() as fake:
        txn = dsh_reaches_the_forced_line(world, fake, refusing)
    assert txn.state == State.ROLLED_BACK and txn.attempts == 3, txn
    error = str(txn.last_error)
    assert "MISSING_CREDENTIAL" in error
    # Each target that never answered is kept and marked; none is taken for the target.
    with Store(world.state) as store:
        failed = [r.detail for r in audit_records(store) if r.kind == "ignite-failed"]
        assert retirement(store, "dsh", txn.plan.session_id) is None  # the source works
    assert len(failed) == 3
    for detail in failed:
        assert f"{FAILED_MARK} {detail['failedTarget']}" in error


# -- Gemini CLI -----------------------------------------------------------------------------
# At 72% of the window the nudge reaches the model in the request after its shell call
# (AfterTool's context), it calls the handoff tool, dshkit's launcher starts a new real
# Gemini CLI session with the card on stdin, and the retired source takes no new prompt.

GEMINI_TOOL = f"mcp_dshkit_{GRAFT_TOOL}"  # how 0.61.0 names an MCP server's tool


def gemini_source_turn() -> list[dict[str, object]]:
    """The source's scripted turn: a shell call at 72% of the window, then (nudged) the
    handoff tool."""
    return [
        {
            "tool": "run_shell_command",
            "arguments": {"command": "cat hello.txt"},
            "input_tokens": 72_000,
        },
        {"tool": GEMINI_TOOL, "arguments": {}},
    ]


def gemini_logs(world: World) -> list[Path]:
    """Every Gemini CLI session log of the world, as they are now."""
    return sorted((world.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"))


def gemini_transcript(world: World, session: str) -> str:
    """The text of the Gemini CLI session `session`'s log ("" until it exists)."""
    for path in gemini_logs(world):
        text = path.read_text()
        if f'"sessionId":"{session}"' in text.split("\n", 1)[0]:
            return text
    return ""


def test_gemini_cli_hands_off_to_a_new_real_session(
    tmp_path: Path, refusing: RefusingProxy
) -> None:
    cli = binary("gemini", "node_modules", ".bin", "gemini")
    world = graft_world(tmp_path, "gemini", cli)
    gemini_settings(world)
    world.install_hooks()
    with fake_gemini() as fake:
        fake.script.extend(gemini_source_turn())
        out = run_gemini(world, fake, refusing, "-p", "read hello.txt")
        assert not fake.script, ("the fake model's script was not played to the end", out[-3000:])
        bodies = [r.body for r in fake.requests]
        after = [b for b in bodies if "hello from the project" in gemini_sent(b)]
        assert after and NUDGE in gemini_sent(after[0]), out[-2000:]
        source = gemini_session_of(world, GEMINI_TOOL.encode())
        txn = wait_for("the handoff to end", lambda: handoff_ended(world, source))
        assert txn.state.name == "COMMITTED", txn.last_error
        target = txn.target_id
        assert target and target != source
        identity = txn.plan.identity.render()
        first = wait_for(
            "the target's request",
            lambda: [r.body for r in fake.requests if identity in gemini_sent(r.body)],
        )[0]
        assert BOARD in gemini_sent(first)
        wait_for("the target's first turn", lambda: fake.text in gemini_transcript(world, target))

        before = len(fake.requests)
        out = run_gemini(world, fake, refusing, "--resume", source, "-p", "继续")
        assert len(fake.requests) == before, "the retired source's prompt reached the model"
        assert BLOCKED in out


def gemini_session_of(world: World, mark: bytes) -> str:
    """The id of the session whose log holds `mark` (the source: the one that called the
    handoff tool)."""
    for path in gemini_logs(world):
        text = path.read_bytes()
        if mark in text:
            return str(orjson.loads(text.split(b"\n", 1)[0])["sessionId"])
    raise AssertionError(f"no session's log holds {mark!r}")


def test_gemini_cli_rolls_back_when_the_target_cannot_start(
    tmp_path: Path, refusing: RefusingProxy
) -> None:
    cli = binary("gemini", "node_modules", ".bin", "gemini")
    world = graft_world(tmp_path, "gemini", cli, timeout=10.0)
    attempts = tmp_path / "attempts"
    broken = tmp_path / "broken-gemini"
    broken.write_text(
        f'#!/bin/sh\necho start >> "{attempts}"\necho "no gemini today" >&2\nexit 1\n'
    )
    broken.chmod(0o755)
    world.env["GEMINI_BIN"] = str(broken)  # only dshkit's launcher reads it
    config = world.state / "config.toml"
    config.write_text(config.read_text() + "ignite_spacing_s = 0\n")
    gemini_settings(world)
    world.install_hooks()
    with fake_gemini() as fake:
        fake.script.extend(gemini_source_turn())
        run_gemini(world, fake, refusing, "-p", "read hello.txt")
        source = gemini_session_of(world, GEMINI_TOOL.encode())
        txn = wait_for("the handoff to end", lambda: handoff_ended(world, source))
        assert txn.state.name == "ROLLED_BACK" and txn.attempts == 3, txn
        assert attempts.read_text().count("start") == 3
        assert "no gemini today" in str(txn.last_error)

        # The source works again, and its next request carries the rollback notice once.
        fake.requests.clear()
        out = run_gemini(world, fake, refusing, "--resume", source, "-p", "继续")
        assert fake.text in out
        (again,) = [r.body for r in fake.requests]
        assert gemini_sent(again).count(ROLLBACK_NOTICE) == 1
