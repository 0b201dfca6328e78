"""`dshkit hook EVENT` as the harnesses run it: a process, a payload on stdin, JSON on stdout."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import harnesses
from dshkit import hookspec as registry
from dshkit.cli import HOOK_GC_THRESHOLD
from dshkit.hooks.protocol import MAX_OUTPUT_CHARS, answer
from dshkit.store import Store

from ..support.cli import environment, run_dshkit
from ..support.hook_handlers import DENIED
from ..support.hooks import LOCKER, claude, codex, context, dsh, hook, hook_log, unanswered
from ..support.profile import PROFILE, effective, store_version


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with Store(tmp_path / ".dsh" / "dshkit") as store:
        store_version(store, PROFILE)
    return tmp_path


def test_claude_and_codex_get_the_profile_once_per_session_at_start(home: Path) -> None:
    text = effective(home)
    first, _ = hook(home, "SessionStart", claude("c1", source="startup"))
    assert first == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}
    }
    assert hook(home, "SessionStart", claude("c1", source="resume"))[0] == {}
    assert hook(home, "UserPromptSubmit", claude("c1", prompt="hi"))[0] == {}
    assert context(hook(home, "SessionStart", claude("c1", source="compact"))[0]) == text
    other, _ = hook(home, "SessionStart", claude("c2", source="startup"))
    assert context(other) == text  # byte for byte the same in another session
    assert context(hook(home, "SessionStart", codex("x1"))[0]) == text


def test_dsh_gets_it_with_the_first_prompt_and_never_again(home: Path) -> None:
    text = effective(home)
    assert hook(home, "SessionStart", dsh("session-1", source="startup"))[0] == {}
    first, _ = hook(home, "UserPromptSubmit", dsh("session-1", prompt="fix the build"))
    assert context(first) == text
    # DSH fires UserPromptSubmit before every model step, its prompt the contexts so far.
    again, _ = hook(home, "UserPromptSubmit", dsh("session-1", prompt=text))
    assert again == {}


def test_nothing_to_inject_means_no_context_at_all(tmp_path: Path) -> None:
    assert hook(tmp_path, "SessionStart", claude("c1", source="startup"))[0] == {}
    assert hook(tmp_path, "UserPromptSubmit", dsh("session-1", prompt="hi"))[0] == {}


def test_the_agent_is_never_broken(home: Path) -> None:
    out, log = hook(
        home,
        "SessionStart",
        claude("c1"),
        DSHKIT_HOOK_HANDLERS=(
            "SessionStart=tests.support.hook_handlers:crash;"
            "SessionStart=tests.support.hook_handlers:speak"
        ),
    )
    assert "forced crash" in log
    assert context(out) == effective(home) + "\n\nfrom the extra handler"  # the others still speak
    started = time.monotonic()
    out, log = hook(
        home,
        "PreToolUse",
        {"tool_name": "Bash"},
        DSHKIT_HOOK_BUDGET_S="0.5",
        DSHKIT_HOOK_HANDLERS="PreToolUse=tests.support.hook_handlers:stall",
    )
    assert out == {} and time.monotonic() - started < 10 and "took more than 0.5 s" in log
    for raw in (b"not json", b"[1, 2]", b"\xff\xfe"):
        done = run_dshkit("hook", "SessionStart", home=home, input=raw, text=False, check=False)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert hook(home, "NoSuchEvent", {})[0] == {}
    assert "unknown hook event 'NoSuchEvent'" in hook_log(home)


def test_contexts_over_the_cap_are_dropped_whole_and_logged(home: Path) -> None:
    # Nothing is cut mid-text: the profile (first in order) is delivered whole, the context
    # that would take the answer over the cap is dropped and named in the log.
    extra = {"DSHKIT_HOOK_HANDLERS": "SessionStart=tests.support.hook_handlers:huge"}
    out, log = hook(home, "SessionStart", claude("c9", source="startup"), **extra)
    assert context(out) == effective(home)
    assert "dropped the context of tests.support.hook_handlers:huge (10001 characters)" in log
    again, _ = hook(home, "SessionStart", claude("c10", source="startup"), **extra)
    assert orjson.dumps(again) == orjson.dumps(out)  # the same bytes for the same input
    # Alone and over the cap: not delivered cut, not delivered at all, and not committed.
    alone, log = hook(
        home,
        "PreCompact",
        claude("c9"),
        DSHKIT_HOOK_HANDLERS="PreCompact=tests.support.hook_handlers:huge",
    )
    assert alone == {} and log.count("dropped the context of tests.support.hook_handlers:huge") == 3
    assert not (home / ".dsh" / "dshkit" / "huge-committed").exists()


def test_a_slow_second_handler_no_longer_loses_the_profile(home: Path) -> None:
    # Reproduced bug: the profile handler marked the DSH session as injected, the slow
    # handler after it spent the shared budget, and nothing at all was printed.
    text = effective(home)
    slow = {
        "DSHKIT_HOOK_HANDLERS": "UserPromptSubmit=tests.support.hook_handlers:stubborn",
        "DSHKIT_HOOK_BUDGET_S": "0.5",
    }
    first, log = hook(home, "UserPromptSubmit", dsh("session-7", prompt="fix it"), **slow)
    assert context(first) == text
    assert "handler tests.support.hook_handlers:stubborn took more than 0.5 s" in log
    # It was delivered, so it was recorded: the next model step does not get it again.
    assert hook(home, "UserPromptSubmit", dsh("session-7", prompt=text), **slow)[0] == {}


def test_a_session_is_marked_only_once_the_answer_was_written(home: Path) -> None:
    text = effective(home)
    noted = {"DSHKIT_HOOK_HANDLERS": "UserPromptSubmit=tests.support.hook_handlers:noted"}
    # The harness went away: writing the answer fails.
    assert "answer not delivered" in unanswered(
        home, "UserPromptSubmit", dsh("session-8", prompt="hi"), **noted
    )
    assert not (home / ".dsh" / "dshkit" / "noted-committed").exists()
    # Not recorded, so the next firing delivers it, and then both commits run.
    out, _ = hook(
        home,
        "UserPromptSubmit",
        dsh("session-8", prompt="hi"),
        DSHKIT_HOOK_HANDLERS="UserPromptSubmit=tests.support.hook_handlers:noted",
    )
    assert context(out) == text + "\n\nnoted"
    assert (home / ".dsh" / "dshkit" / "noted-committed").read_text() == "session-8"
    assert hook(home, "UserPromptSubmit", dsh("session-8", prompt=text))[0] == {}


@pytest.mark.parametrize("mode", ["immediate", "exclusive"])
@pytest.mark.process
def test_a_locked_store_gives_no_opinion_within_the_budget(home: Path, mode: str) -> None:
    database = home / ".dsh" / "dshkit" / "dshkit.db"
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(database), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert locker.stdout is not None and locker.stdout.readline() == b"locked\n"
        # Answered while the lock is still held (the locker lets go only below).
        out, log = hook(home, "SessionStart", claude("c5", source="startup"))
    finally:
        locker.communicate(b"", timeout=30)
    assert out == {}
    # The handler gave up on the lock by itself (the hooks' store waits a second for one), not
    # cut by its budget: it once waited the store's 30 s, past the budget. Said by the log, not
    # timed (a loaded machine says nothing about the hook).
    assert "handler dshkit.profile.hook:on_session_start failed" in log and "locked" in log
    assert "took more than" not in log
    # Nothing was recorded: once the lock is gone, the same session gets its profile.
    assert context(hook(home, "SessionStart", claude("c5", source="startup"))[0]) == effective(home)


def test_tool_handlers_run_for_their_vocabulary_in_each_harness(home: Path) -> None:
    policy = {"DSHKIT_HOOK_HANDLERS": "PreToolUse[command]=tests.support.hook_handlers:deny"}
    denied = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": DENIED,
        }
    }
    bash = claude("c1", hook_event_name="PreToolUse", tool_name="Bash", tool_input={})
    assert hook(home, "PreToolUse", bash, **policy)[0] == denied
    assert hook(home, "PreToolUse", dsh("s1", tool_name="bash"), **policy)[0] == denied
    assert (
        hook(home, "PreToolUse", {**codex("x1"), "tool_name": "exec_command"}, **policy)[0]
        == denied
    )
    # Another tool, or DSH's command tool's name in Claude Code: not this handler's.
    assert hook(home, "PreToolUse", {**bash, "tool_name": "Read"}, **policy)[0] == {}
    assert hook(home, "PreToolUse", {**bash, "tool_name": "bash"}, **policy)[0] == {}
    bad, log = hook(home, "PreToolUse", bash, DSHKIT_HOOK_HANDLERS="PreToolUse[nope]=x:y")
    assert bad == {} and "unknown tool vocabulary 'nope'" in log


@pytest.mark.process
def test_stop_starts_one_detached_refresh(tmp_path: Path) -> None:
    started = time.monotonic()
    out, _ = hook(tmp_path, "Stop", claude("c1", stop_hook_active=False))
    assert out == {} and time.monotonic() - started < 5  # the agent is not kept waiting
    state = tmp_path / ".dsh" / "dshkit"
    deadline = time.monotonic() + 30
    while True:
        with Store(state) as store:
            run = store.get_meta("profile.lastRun")
        if run:
            break
        assert time.monotonic() < deadline, "the detached refresh never ran"
        time.sleep(0.2)
    assert "not enough material yet" in orjson.loads(run)["reason"]


@pytest.mark.process
def test_the_hot_path_imports_nothing_heavy(tmp_path: Path) -> None:
    # Structural, not timed (bench/hook_latency.py measures): an event with no handler
    # must not pay for click, JSON, SQLite or dataclasses.
    probe = (
        "import sys; sys.argv = ['dshkit', 'hook', 'PreCompact']\n"
        "import os; os._exit = sys.exit  # (the hook ends its process; the probe goes on)\n"
        "from dshkit.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'click', 'json', 'sqlite3', 'orjson', 'dataclasses', 'pathlib', 'zstandard'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=b"{}",
        capture_output=True,
        env=environment(tmp_path),
        check=True,
    )
    assert done.stdout.strip() == b"[]", done.stdout


@pytest.mark.process
def test_a_tool_handler_costs_nothing_for_other_tools(tmp_path: Path) -> None:
    # The policy looks at commands only, and graft's retirement check waits for its marker
    # (no handoff ever began here): another tool's call is answered from the raw payload,
    # without a JSON parser or the store.
    probe = (
        "import sys; sys.argv = ['dshkit', 'hook', 'PreToolUse']\n"
        "import os; os._exit = sys.exit  # (the hook ends its process; the probe goes on)\n"
        "from dshkit.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'click', 'json', 'sqlite3', 'orjson', 'dataclasses', 'pathlib', 'zstandard'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    for tool, printed in (("Read", b"[]"), ("Bash", b'{"hookSpecificOutput"')):
        done = subprocess.run(
            [sys.executable, "-c", probe],
            input=orjson.dumps({"tool_name": tool, "tool_input": {"tool_name": "Edit"}}),
            capture_output=True,
            env=environment(
                tmp_path,
                {"DSHKIT_HOOK_HANDLERS": "PreToolUse[command]=tests.support.hook_handlers:deny"},
            ),
            check=True,
        )
        assert done.stdout.startswith(printed), done.stdout  # Bash: the handler did run


def test_answers_keep_whole_contexts_in_order_and_mark_a_shortened_reason() -> None:
    results: list[tuple[str, dict[str, Any]]] = [
        ("first", {"additionalContext": "a" * 6_000}),
        ("second", {"additionalContext": "b" * 5_000}),
        ("third", {"additionalContext": "c" * 3_000, "commit": print}),
        ("astral", {"additionalContext": "😀" * 5_000}),  # 10,000 code units, as JS counts
    ]
    reply = answer("SessionStart", results)
    assert (
        reply.output["hookSpecificOutput"]["additionalContext"]
        == "a" * 6_000 + "\n\n" + "c" * 3_000
    )
    assert reply.emitted == [0, 2]
    assert [note.split(" (")[0] for note in reply.notes] == [
        "dropped the context of second",
        "dropped the context of astral",
    ]
    assert answer("SessionStart", results).output == reply.output  # deterministic
    reason = "一行理由\n" * 3_000
    denied = answer(
        "PreToolUse",
        [
            ("quiet", {}),
            ("policy", {"permissionDecision": "deny", "permissionDecisionReason": reason}),
            ("later", {"permissionDecision": "allow"}),
        ],
    )
    specific = denied.output["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny" and denied.emitted == [1]
    shown = specific["permissionDecisionReason"]
    assert len(shown) <= MAX_OUTPUT_CHARS and shown.endswith("字上限，其余未显示）")
    assert reason.startswith(shown.rpartition("\n…")[0])  # whole lines, then the mark
    assert denied.notes == ["shortened the reason of policy from 15000 characters (over the cap)"]


def test_every_event_fits_its_budgets_in_the_hook_timeout() -> None:
    for event in registry.EVENTS:
        budgets = [entry.budget for entry in registry.entries(event)]
        assert sum(budgets) <= registry.HANDLERS_TOTAL_S, event
    assert (
        registry.PAYLOAD_READ_S + registry.HANDLERS_TOTAL_S + registry.COMMITS_TOTAL_S
        < registry.HOOK_TIMEOUT_S
    )
    for entry in registry.HANDLERS:
        module, _, function = entry.handler.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), entry


def test_installed_matchers_come_from_each_harness_vocabulary() -> None:
    extra = registry.extra_entries(
        "PreToolUse[command]=m:policy; PostToolUse[read,write]=m:gate; Stop=m:f"
    )
    events = {
        h.name: registry.installed_events(h, extra, builtin=()) for h in harnesses.all_harnesses()
    }
    assert events["claude"]["PreToolUse"] == "^(Bash)$"
    assert events["dsh"]["PreToolUse"] == "^(bash|job_kill|job_output|pwsh|workflow)$"
    assert events["codex"]["PostToolUse"] == "^(apply_patch)$"  # Codex has no read tool
    assert events["claude"]["Stop"] == "" and "PreCompact" not in events["claude"]
    assert registry.installed_events(harnesses.get("claude")).keys() == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",  # graft's retirement check (every tool) and the command risk policy
        "PostToolUse",  # graft's watermark (every tool) and the delivery gate
        "Stop",
        "SessionEnd",
    }
    built_in = registry.installed_events(harnesses.get("dsh"))
    assert built_in["PreToolUse"] == built_in["PostToolUse"] == ""
    for spec, problem in (
        ("Nope=m:f", "unknown hook event 'Nope'"),
        ("Stop[command]=m:f", "Stop has no tool to match"),
        ("PreToolUse=nothing", "expected Event=module:function"),
    ):
        with pytest.raises(ValueError, match=re.escape(problem)):
            registry.extra_entries(spec)


def _process_hook(
    home: Path, event: str, payload: dict[str, Any], handler: str, stderr: bytes = b""
) -> str:
    """The context one `dshkit hook EVENT` process answered with, `handler` run after the
    built-in ones (it must exit 0 and write `stderr`)."""
    done = run_dshkit(
        "hook",
        event,
        home=home,
        env={
            "DSHKIT_HOOK_HANDLERS": f"{event}=tests.support.hook_handlers:{handler}",
            "PYTHONUNBUFFERED": None,  # (as a harness starts it: stdout and stderr buffered)
        },
        input=orjson.dumps(payload),
        text=False,
        timeout=60,
        process=True,
    )
    assert done.returncode == 0 and done.stderr == stderr, done.stderr
    return context(orjson.loads(done.stdout)) or ""


@pytest.mark.process
def test_a_hook_process_ends_as_an_exit_would_without_the_teardown(tmp_path: Path) -> None:
    # The process ends on `os._exit`: its `atexit` functions still run, its whole answer
    # (10,000 characters: more than one write of a pipe) is written, and what they left in
    # stderr's buffer is flushed; an object only the interpreter's teardown would free is
    # not freed (docs/design/hooks.md#a-hook-process-ends-without-the-teardown).
    state = tmp_path / ".dsh" / "dshkit"
    payload = claude("c1", tool_name="Read")
    said = _process_hook(tmp_path, "PostToolUse", payload, "kept", b"kept, unflushed")
    assert said == "kept " * 2000
    assert (state / "atexit-ran").read_text() == "ran"
    assert not (state / "torn-down").exists()


@pytest.mark.process
def test_a_hook_process_waits_for_its_threads_as_an_exit_would(tmp_path: Path) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    said = _process_hook(tmp_path, "PostToolUse", claude("c1", tool_name="Read"), "lingering")
    assert said == "lingering"
    assert (state / "thread-done").read_text() == "done"
    assert (state / "atexit-ran").read_text() == "ran"


@pytest.mark.process
def test_a_hook_process_collects_cycles_rarely(tmp_path: Path) -> None:
    # Its collector runs every HOOK_GC_THRESHOLD allocations, not every 700: the hook path's
    # imports and handlers made more than 700 since its last pass, which the default never
    # lets happen (docs/design/hooks.md#a-hook-process-collects-rarely).
    said = _process_hook(tmp_path, "PostToolUse", claude("c1", tool_name="Read"), "collection")
    threshold, allocated = map(int, said.split())
    assert threshold == HOOK_GC_THRESHOLD
    assert allocated > 700


def test_a_calls_tool_names_are_scanned_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each handler of certain tools asks whether the payload names one of them; a Read's
    # whole result may be in the payload, so its bytes are scanned once a call, not per ask.
    from dshkit.hooks import run

    from ..support.cli import hook_here

    scans: list[bytes] = []
    scan = run._scan_names

    def counted(raw: bytes) -> set[str] | None:
        scans.append(raw)
        return scan(raw)

    monkeypatch.setattr(run, "_scan_names", counted)
    for tool in ("Read", "Bash", "Write"):
        payload = claude("c1", hook_event_name="PostToolUse", tool_name=tool)
        payload |= {"tool_input": {"command": "ls"}, "tool_response": "x" * 200_000}
        scans.clear()
        code, _, _ = hook_here(["PostToolUse"], environment(tmp_path), orjson.dumps(payload))
        assert code == 0 and len(scans) == 1, (tool, len(scans))
