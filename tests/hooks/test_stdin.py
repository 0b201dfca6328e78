"""A hook whose stdin is never closed: the payload is read within a deadline, and what it
could not read is answered at once (the command guard failing closed), never by hanging
until the harness kills the hook (which lets a command through unjudged).

Each call here answers while the test still holds the pipe open: the hook's answer and exit
come before the test closes its stdin. How long that takes is not asserted (a loaded machine
says nothing about the hook): `GUARD_S` only stops a hook that hangs, and
bench/hook_stdin.py prints the figures."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import hookspec
from dshkit.store import Store

from ..support.cli import COMMAND, environment
from ..support.hooks import claude, context, hook_log
from ..support.profile import PROFILE, effective, store_version

pytestmark = pytest.mark.process

# Far beyond the read deadline (hookspec.PAYLOAD_READ_S) and any start on a loaded machine: a
# hook still running then waits for a stdin that never ends, as a harness would kill it.
GUARD_S = 60.0


@pytest.fixture
def profiled(tmp_path: Path) -> Path:
    """A home whose state holds a profile to inject."""
    with Store(tmp_path / ".dsh" / "dshkit") as store:
        store_version(store, PROFILE)
    return tmp_path


def held_open(home: Path, event: str, written: bytes, **env: str) -> dict[str, Any]:
    """Run `dshkit hook EVENT`, write `written` to its stdin and keep the pipe open: its
    answer, once it exited 0 with our end of its stdin still open."""
    process = subprocess.Popen(
        [*COMMAND, "hook", event],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(home, env),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(written)
        process.stdin.flush()
        try:
            code = process.wait(timeout=GUARD_S)  # a guard against a hang, not a bound
        except subprocess.TimeoutExpired:
            pytest.fail(f"dshkit hook {event} still waits for its stdin after {GUARD_S:g} s")
        # It answered and exited before the pipe was closed: nothing but its own deadline (or
        # a whole payload) can have ended its read.
        assert not process.stdin.closed
        out = process.stdout.read()
        assert process.stderr is not None and process.stderr.read() == b""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdin.close()
        process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()
    assert code == 0
    return orjson.loads(out) if out else {}


def decision(out: dict[str, Any]) -> tuple[str, str] | None:
    specific = out.get("hookSpecificOutput")
    if not specific or "permissionDecision" not in specific:
        return None
    return specific["permissionDecision"], specific["permissionDecisionReason"]


def bash_call(command: str) -> bytes:
    payload = claude("c1", hook_event_name="PreToolUse", tool_name="Bash")
    return orjson.dumps({**payload, "tool_input": {"command": command}})


def test_a_command_whose_payload_never_ends_gets_the_guards_unknown_decision(
    tmp_path: Path,
) -> None:
    partial = bash_call("ls -la")[:-20]  # the harness wrote part of it and keeps stdin open
    out = held_open(tmp_path, "PreToolUse", partial)
    found = decision(out)
    # balanced: what the guard does with a command it cannot understand is ask.
    assert found is not None and found[0] == "ask", out
    assert "命令风险策略（balanced）" in found[1] and "无法看懂的命令" in found[1]
    assert f"{hookspec.PAYLOAD_READ_S:g} 秒" in found[1]
    log = hook_log(tmp_path)
    assert "payload not read whole" in log and "the command guard answered ask" in log
    # The mode in force decides, as for a command it could read.
    strict = held_open(tmp_path, "PreToolUse", partial, DSHKIT_GUARD_MODE="strict")
    assert decision(strict) is not None and decision(strict)[0] == "deny"  # type: ignore[index]
    # Nothing written at all: which tool it is cannot be told either, so it is not let through;
    # nor which harness, so whether it would honour an ask: it is a deny.
    nothing = held_open(tmp_path, "PreToolUse", b"")
    assert decision(nothing) is not None
    assert decision(nothing)[0] == "deny"  # type: ignore[index]
    assert "无法确认调用它的工具支持" in decision(nothing)[1]  # type: ignore[index]


def test_another_tools_unread_payload_gets_no_opinion(tmp_path: Path) -> None:
    payload = claude("c1", hook_event_name="PreToolUse", tool_name="Read")
    partial = orjson.dumps({**payload, "tool_input": {"file_path": "/p/a.py"}})[:-10]
    out = held_open(tmp_path, "PreToolUse", partial)
    assert out == {}
    assert "payload not read whole" in hook_log(tmp_path)


def test_a_whole_payload_on_an_open_stdin_is_judged_at_once(tmp_path: Path) -> None:
    # The payload is complete, only the pipe is left open: no reason to wait for the deadline.
    # Had the read waited for it, the payload would count as not read whole (logged so) and
    # the guard would judge a command it could not read (ask), not this one (deny).
    out = held_open(tmp_path, "PreToolUse", bash_call("rm -rf ~"))
    found = decision(out)
    assert found is not None and found[0] == "deny" and "破坏性命令" in found[1]
    assert "payload not read whole" not in hook_log(tmp_path)


def test_session_start_with_stdin_held_open_gives_no_opinion(profiled: Path) -> None:
    home = profiled
    partial = orjson.dumps(claude("c1", source="startup"))[:-5]
    out = held_open(home, "SessionStart", partial)
    assert out == {}
    assert "SessionStart payload not read whole" in hook_log(home)
    # Nothing was delivered, so nothing was recorded: a readable start still gets the profile.
    later = held_open(home, "SessionStart", orjson.dumps(claude("c1", source="startup")))
    assert context(later) == effective(home)


def test_stdin_is_left_blocking_as_it_was(tmp_path: Path) -> None:
    # The hook reads its end of the pipe non-blocking: a flag of the open pipe, which another
    # process holding the same end (here: this one) would otherwise be left with.
    reader, writer = os.pipe()
    try:
        os.write(writer, bash_call("ls"))
        os.close(writer)
        done = subprocess.run(
            [*COMMAND, "hook", "PreToolUse"],
            stdin=reader,
            capture_output=True,
            env=environment(tmp_path),
            timeout=60,
        )
        assert done.returncode == 0 and done.stderr == b"" and done.stdout == b""
        assert os.get_blocking(reader)
    finally:
        os.close(reader)
