"""Import budgets of the hook paths that run on every prompt and after every tool call.

Structural, not timed (bench/hook_latency.py measures): each case runs `dshkit hook EVENT` in
a fresh interpreter, as the harnesses do, and lists the modules it loaded that its path has
no use for. A module that comes back here is a cost every call pays again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import plugins
from dshkit.graft import fold, marker
from dshkit.hooks import hint
from dshkit.profile.state import ProfileState
from dshkit.store import Store

from ..support.capability import wait_for_probes
from ..support.cli import environment
from ..support.gate import stored_verdict
from ..support.hooks import claude, codex, context, dsh, hook, hook_log
from ..support.procs import running_with, wait_until

pytestmark = pytest.mark.process

# What a prompt with the optimizer off never needs: the probes' machinery (they run in a
# detached process, and find the browser there), the optimizer's pipeline, the session
# scanner and catalog and the model client (no model is asked, no scan run, the session
# and its directory are named), the CLI framework, graft's lifecycle where no handoff ever
# began (nothing can wait), and no TOML read (no Codex config) or hash taken.
PROMPT_HEAVY = (
    "click",
    "concurrent.futures",
    "dshkit.capability.mcp",
    "dshkit.chromium",
    "dshkit.graft.lifecycle",
    "dshkit.llm.client",
    "dshkit.optimizer.pipeline",
    "dshkit.sessions.catalog",
    "dshkit.sessions.freshness",
    "dshkit.sessions.scanner",
    "hashlib",
    "logging",
    "shutil",
    "tempfile",
    "tomllib",
)
# What the watermark's full check never needs: no process is started, no TOML or zstd read
# (a Claude Code log), no hash taken, none of the prompt hooks' capabilities, and graft's
# ledger and lifecycle where no handoff ever began (a check with nothing to say records none).
FULL_CHECK_HEAVY = (
    "click",
    "concurrent.futures",
    "dshkit.capability",
    "dshkit.graft.ledger",
    "dshkit.graft.lifecycle",
    "dshkit.optimizer",
    "dshkit.profile",
    "hashlib",
    "subprocess",
    "threading",
    "tomllib",
    "zstandard",
)

# What a session's start or a DSH step never needs where no handoff ever began: nothing can
# wait to be picked up or recovered, no session was handed off, and a DSH step names no
# transcript the watermark could read (its log is not there).
NO_HANDOFF_HEAVY = (
    "dshkit.graft.ledger",
    "dshkit.graft.lifecycle",
    "dshkit.graft.live",
    "dshkit.graft.watermark",
    "hashlib",  # (the start reads memory and delivers it; the digest comes after the answer)
)


def loaded(
    home: Path, event: str, payload: dict[str, Any], heavy: tuple[str, ...], **env: str
) -> list[str]:
    """The modules of `heavy` that one `dshkit hook EVENT` call loaded."""
    return answered(home, event, payload, heavy, **env)[0]


def answered(
    home: Path, event: str, payload: dict[str, Any], heavy: tuple[str, ...], **env: str
) -> tuple[list[str], bytes]:
    """The modules of `heavy` that one `dshkit hook EVENT` call loaded, and its answer."""
    probe = (
        f"import sys; sys.argv = ['dshkit', 'hook', {event!r}]\n"
        "import os; os._exit = sys.exit  # (the hook ends its process; the probe goes on)\n"
        "from dshkit.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"heavy = set({list(heavy)!r})\n"
        "print()\nprint(sorted(heavy & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=orjson.dumps(payload),
        capture_output=True,
        env=environment(home, env),
        check=True,
    )
    assert done.stderr == b"", done.stderr
    said, _, found = done.stdout.rstrip(b"\n").rpartition(b"\n")
    return list(orjson.loads(found.replace(b"'", b'"'))), said


def transcript(home: Path, name: str) -> Path:
    path = home / ".claude" / "projects" / "-p" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    line = {"type": "user", "sessionId": "c1", "cwd": "/p", "message": {"content": "go"}}
    path.write_bytes(orjson.dumps(line) + b"\n")
    return path


def test_a_prompt_with_the_optimizer_off_loads_no_probe_model_or_cli(tmp_path: Path) -> None:
    # The capability facts are on: the first prompt starts the probes (detached) and says
    # they are pending; the second reads what is cached. Neither loads the probes' machinery.
    log = transcript(tmp_path, "c1.jsonl")
    words = {"hook_event_name": "UserPromptSubmit", "prompt": "fix the failing test"}
    payload = claude("c1", transcript_path=str(log), **words)
    try:
        assert (
            loaded(tmp_path, "UserPromptSubmit", payload, PROMPT_HEAVY, DSHKIT_CAPABILITY="on")
            == []
        )
        assert (
            loaded(tmp_path, "UserPromptSubmit", payload, PROMPT_HEAVY, DSHKIT_CAPABILITY="on")
            == []
        )
    finally:
        wait_for_probes(tmp_path / ".dsh" / "dshkit")


def test_a_step_of_dshs_bridge_loads_no_probe_model_or_cli(tmp_path: Path) -> None:
    payload = dsh("d1", hook_event_name="UserPromptSubmit", prompt="fix it")
    assert loaded(tmp_path, "UserPromptSubmit", payload, PROMPT_HEAVY) == []
    assert loaded(tmp_path, "UserPromptSubmit", payload, PROMPT_HEAVY) == []  # a step now


def read_call(home: Path) -> tuple[Path, dict[str, Any]]:
    """A Claude Code log holding a Read call's request (20,000 tokens: far below the band),
    and the PostToolUse payload of that call (a log with no request yet needs no check)."""
    log = transcript(home, "c1.jsonl")
    use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}
    message = {"role": "assistant", "content": [use], "usage": {"input_tokens": 20_000}}
    with open(log, "ab") as handle:
        handle.write(orjson.dumps({"type": "assistant", "message": message}) + b"\n")
    payload = claude(
        "c1", transcript_path=str(log), hook_event_name="PostToolUse", tool_name="Read"
    )
    payload["tool_input"] = {"file_path": "a"}
    return log, payload


def test_the_watermarks_full_check_loads_only_what_folding_the_log_needs(tmp_path: Path) -> None:
    log, payload = read_call(tmp_path)
    state = tmp_path / ".dsh" / "dshkit"
    # The first check, and one with its hint dropped and the settings it kept for the fold
    # (`graft.fold`) gone too: a full check again.
    for _ in range(2):
        assert loaded(tmp_path, "PostToolUse", payload, FULL_CHECK_HEAVY) == []
        marker.forget(str(state), str(log))
        (state / fold.SETTINGS_FILE).unlink()
    assert (state / "dshkit.db").exists()  # it did open the store and fold the log


# What a tool call the fold answers never needs, where no room hint answers (`graft.fold`):
# the store is read through the C module alone, the log's lines with the C scanner
# (`sessions.livetail`), not the session reader.
FOLD_HEAVY = (
    "dataclasses",
    "dshkit.graft.live",
    "dshkit.graft.watermark",
    "dshkit.hookio",
    "dshkit.hooks.dispatch",
    "dshkit.sessions.events",
    "dshkit.sessions.reader",
    "dshkit.sessions.tail",
    "dshkit.store",
    "json",
    "orjson",
    "pathlib",
    "sqlite3",
    "typing",
)


def kept_again(room: Path) -> bool:
    """Whether the room hint `room` is back within a minute: the last thing a full check run
    after the answer does (`graft.marker.remember`)."""
    deadline = time.monotonic() + 60
    while not room.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return room.exists()


def test_a_call_no_room_hint_answers_is_folded_without_the_store(tmp_path: Path) -> None:
    log, payload = read_call(tmp_path)
    state = tmp_path / ".dsh" / "dshkit"
    hook(tmp_path, "PostToolUse", payload)  # the full check, which keeps the settings
    room = next((state / marker.ROOM_DIR).glob("[0-9a-f]*"))
    for step in (2, 3):  # the next request, far below the band, with no room hint to say so
        marker.forget(str(state), str(log))
        use = {"type": "tool_use", "id": f"t{step}", "name": "Read", "input": {}}
        message = {"id": f"m{step}", "content": [use], "usage": {"input_tokens": 20_000 + step}}
        with open(log, "ab") as handle:
            handle.write(orjson.dumps({"type": "assistant", "message": message}) + b"\n")
        assert loaded(tmp_path, "PostToolUse", payload, FOLD_HEAVY) == []
        # Its full check ran after the answer, detached: the store holds the new request,
        # and the room hint is back.
        assert kept_again(room)
        with Store(state) as store:
            (digest,) = store.db.execute("SELECT digest FROM graft_watch").fetchone()
        assert orjson.loads(digest)["context"] == 20_000 + step


def codex_log(home: Path) -> tuple[Path, dict[str, Any], Callable[[int, int], bytes]]:
    """A Codex rollout under `home` (a turn begun, a person's words), the PostToolUse payload
    of one of its calls, and what writes a call and its request's usage (tokens, number)."""
    session = "01a22aa8-d960-7ae2-8fb7-bfdbb0b55be1"
    log = home / ".codex" / "sessions" / "2026" / "11" / "30"
    log = log / f"rollout-2026-11-30T04-13-58-{session}.jsonl"
    log.parent.mkdir(parents=True)

    def used(tokens: int, number: int) -> bytes:
        usage = {"input_tokens": tokens, "cached_input_tokens": tokens // 2, "output_tokens": 9}
        call = {"type": "function_call", "name": "shell", "call_id": f"c{number}"}
        lines: list[dict[str, Any]] = [
            {"type": "response_item", "payload": {**call, "arguments": "{}"}},
            {
                "type": "token_usage_record",
                "payload": {"response_id": f"r{number}", "usage": usage},
            },
        ]
        return b"".join(orjson.dumps(line) + b"\n" for line in lines)

    typed = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    begun = {"type": "task_started", "model_context_window": 200_000}
    opening = [
        {"type": "session_meta", "payload": {"session_id": session, "cwd": "/p"}},
        {"type": "event_msg", "payload": begun},
        {"type": "response_item", "payload": typed},
    ]
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in opening))
    payload = {**codex(session), "transcript_path": str(log), "hook_event_name": "PostToolUse"}
    payload["tool_name"] = "web_search"  # (a tool no other handler looks at)
    return log, payload, used


def gemini_log(home: Path) -> tuple[Path, dict[str, Any], Callable[[int, int], bytes]]:
    """A Gemini CLI recording under `home` (a person's words), the AfterTool payload of one of
    its calls, and what writes a model's message, grown by its call, and the call's result."""
    session = "2964c2e8-289a-45dc-b07d-bdbfe28c8997"
    log = home / ".gemini" / "tmp" / "p" / "chats" / "session-2026-12-06T13-26-2964c2e8.jsonl"
    log.parent.mkdir(parents=True)

    def used(tokens: int, number: int) -> bytes:
        message = {"id": f"g{number}", "type": "gemini", "content": "", "tokens": {"input": tokens}}
        call = {"id": f"glob_{number}", "name": "glob", "args": {"pattern": "*.py"}}
        result = {"id": call["id"], "name": "glob", "response": {"output": "a.py"}}
        lines: list[dict[str, Any]] = [
            message,
            {**message, "toolCalls": [call]},
            {"id": f"r{number}", "type": "user", "content": [{"functionResponse": result}]},
        ]
        return b"".join(orjson.dumps(line) + b"\n" for line in lines)

    meta = {"sessionId": session, "projectHash": "e6d6", "kind": "main"}
    typed = {"id": "u0", "type": "user", "content": [{"text": "go"}]}
    log.write_bytes(orjson.dumps(meta) + b"\n" + orjson.dumps(typed) + b"\n")
    payload: dict[str, Any] = {"session_id": session, "transcript_path": str(log), "cwd": "/p"}
    payload.update(hook_event_name="AfterTool", tool_name="glob", tool_input={})
    return log, payload, used


@pytest.mark.parametrize("made", [codex_log, gemini_log], ids=["codex", "gemini"])
def test_a_mapped_logs_call_no_room_hint_answers_is_folded_without_the_store(
    tmp_path: Path, made: Callable[[Path], tuple[Path, dict[str, Any], Callable[[int, int], bytes]]]
) -> None:
    # Codex's and Gemini's lines are mapped to events by their adapters' own mappings, which
    # load nothing of the session layer (`sessions.rollout`, `sessions.chats`): folded like
    # DSH's events.
    state = tmp_path / ".dsh" / "dshkit"
    log, payload, used = made(tmp_path)
    with open(log, "ab") as handle:
        handle.write(used(20_000, 1))
    assert hook(tmp_path, "PostToolUse", payload) == ({}, "")  # the full check: settings kept
    room = next((state / marker.ROOM_DIR).glob("[0-9a-f]*"))
    for number in (2, 3):  # the next request, far below the band, with no room hint to say so
        marker.forget(str(state), str(log))
        with open(log, "ab") as handle:
            handle.write(used(20_000 + number, number))
        assert loaded(tmp_path, "PostToolUse", payload, FOLD_HEAVY) == []
        # Its full check, run after the answer, folds the new request into the store and keeps
        # the room hint again, last: the next round forgets it only once this step is done.
        assert kept_again(room)
        with Store(state) as store:
            (digest,) = store.db.execute("SELECT digest FROM graft_watch").fetchone()
        assert orjson.loads(digest)["context"] == 20_000 + number


def band_call(home: Path) -> tuple[Path, dict[str, Any]]:
    """`read_call`'s session checked in full once, then a request of the same turn in the
    watermark's band (145,000 tokens of the default 200,000 window) with no room hint."""
    log, payload = read_call(home)
    hook(home, "PostToolUse", payload)  # the full check, which keeps the settings
    use = {"type": "tool_use", "id": "t2", "name": "Read", "input": {}}
    message = {"id": "m2", "content": [use], "usage": {"input_tokens": 145_000}}
    with open(log, "ab") as handle:
        handle.write(orjson.dumps({"type": "assistant", "message": message}) + b"\n")
    return log, payload


def test_a_nudge_the_fold_can_say_is_said_without_the_store_and_recorded_after(
    tmp_path: Path,
) -> None:
    # The same call twice: with the fold's settings dropped (the full check answers), and
    # with them (the fold answers, `hookspec.Say`). The same bytes; the second loads nothing
    # of the store, and its full check, run after the answer, records the nudge as given.
    full, fold_home = tmp_path / "full", tmp_path / "fold"
    for home in (full, fold_home):
        log, payload = band_call(home)
        state = home / ".dsh" / "dshkit"
        marker.forget(str(state), str(log))
        if home is full:
            (state / fold.SETTINGS_FILE).unlink()
        heavy, said = answered(home, "PostToolUse", payload, FOLD_HEAVY)
        if home is full:
            expected = said
            assert "hookSpecificOutput" in orjson.loads(said)  # (a nudge, in Claude's words)
            continue
        assert said == expected and set(heavy) <= {"dshkit.hookio"}, heavy
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with Store(state) as store:
                row = store.db.execute("SELECT state FROM graft_watch").fetchone()
                told = store.db.execute(
                    "SELECT count(*) FROM graft_audit WHERE kind = 'model-nudge'"
                ).fetchone()[0]
            if orjson.loads(row[0])["nudgeTurn"] is not None:
                break
            time.sleep(0.05)
        assert orjson.loads(row[0])["nudgeTurn"] == 1 and told == 1
        assert "not the one its handlers give" not in hook_log(home)


def test_parallel_tool_calls_in_the_band_are_nudged_once(tmp_path: Path) -> None:
    # Claude Code runs the PostToolUse hooks of a step's parallel tool calls at once. The
    # first to note the nudge says it; the others come before the check after its answer
    # recorded it, and say nothing (before: the full check said it again).
    log, payload = band_call(tmp_path)
    state = tmp_path / ".dsh" / "dshkit"
    marker.forget(str(state), str(log))
    command = [sys.executable, "-m", "dshkit", "hook", "PostToolUse"]
    calls = [
        subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment(tmp_path),
        )
        for _ in range(6)
    ]
    for call in calls:  # (each reads its payload once it is started: all at once)
        assert call.stdin is not None
        call.stdin.write(orjson.dumps(payload))
        call.stdin.close()
    answers = []
    for call in calls:
        assert call.stdout is not None and call.stderr is not None
        out, err = call.stdout.read(), call.stderr.read()
        assert call.wait(60) == 0 and err == b"", err
        answers.append(orjson.loads(out) if out else {})
    said = [context(out) for out in answers if context(out)]
    assert len(said) == 1 and "水位已达" in str(said[0]), answers
    settled(state)
    rows = polled(state, "SELECT count(*) FROM graft_audit WHERE kind = 'model-nudge'", bool)
    assert rows[0][0] == 1
    assert "not the one its handlers give" not in hook_log(tmp_path)


def test_a_nudge_the_fold_can_say_beside_another_handlers_words_is_answered_in_full(
    tmp_path: Path,
) -> None:
    log, payload = band_call(tmp_path)
    marker.forget(str(tmp_path / ".dsh" / "dshkit"), str(log))
    extra = {"DSHKIT_HOOK_HANDLERS": "PostToolUse=tests.support.hook_handlers:speak"}
    out, _ = hook(tmp_path, "PostToolUse", payload, **extra)
    said = context(out) or ""
    assert said.startswith("[系统提示] 当前上下文水位已达")
    assert said.endswith("from the extra handler")
    with Store(tmp_path / ".dsh" / "dshkit") as store:  # recorded in the foreground
        (state,) = store.db.execute("SELECT state FROM graft_watch").fetchone()
    assert orjson.loads(state)["nudgeTurn"] == 1


def fixed(home: Path) -> Path:
    """`home`'s state directory, the watermark's lines fixed there (`[graft] mode`): a jump in
    context since a turn before would draw dynamic ones lower."""
    state = home / ".dsh" / "dshkit"
    state.mkdir(parents=True)
    (state / "config.toml").write_text('[graft]\nmode = "fixed"\n')
    return state


def polled(state: Path, sql: str, done: Callable[[list[Any]], bool]) -> list[Any]:
    """The rows of `sql` in the store once `done` says they are there (or a minute passed):
    what a step run after the answer records."""
    deadline = time.monotonic() + 60
    while True:
        with Store(state) as store:
            rows = store.db.execute(sql).fetchall()
        if done(rows) or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)


DSH_WINDOW = {"type": "request/context", "data": {"model": "m", "contextWindow": 200_000}}


def dsh_step(tokens: int) -> dict[str, Any]:
    """A DSH model step's event, at `tokens` of context."""
    message = {"role": "assistant", "content": [], "source": {"model": "m"}}
    usage = {"inputTokens": tokens, "outputTokens": 5}
    return {"type": "assistant/message", "data": {"message": message, "usage": usage}}


def dsh_session(home: Path) -> Path:
    """A DSH session's zstd log under `home`: its first turn, a person's words, the window and
    a step at 20,000 tokens."""
    log = home / ".dsh" / "sessions" / "--p--" / "d1" / "session.jsonl.zstd"
    log.parent.mkdir(parents=True)
    header = {"type": "session", "version": 0, "id": "d1", "createdAt": 0, "cwd": "/p"}
    words = {"role": "user", "content": [{"type": "text", "text": "go"}]}
    log.write_bytes(
        dsh_frame(
            header,
            {"type": "turn/start", "data": {"turn": 1}},
            {"type": "user/message", "data": {**words, "source": {"kind": "user"}}},
            DSH_WINDOW,
            dsh_step(20_000),
        )
    )
    return log


def test_a_dsh_nudge_said_from_the_fold_records_what_a_full_call_records(
    tmp_path: Path,
) -> None:
    # DSH asks at every step: a call's context opens or extends its turn (`turns`). The nudge
    # said from the fold leaves the same state, audit line and turn as the full call.
    found = []
    for name in ("full", "fold"):
        home = tmp_path / name
        state = home / ".dsh" / "dshkit"
        log = dsh_session(home)
        payload = dsh("d1", transcript_path=str(log), hook_event_name="PostToolUse")
        payload["tool_name"] = "read_file"
        assert hook(home, "PostToolUse", payload)[0] == {}  # the full check: below the band
        with open(log, "ab") as handle:
            handle.write(dsh_frame(DSH_WINDOW, dsh_step(145_000)))
        marker.forget(str(state), str(log))
        if name == "full":
            (state / fold.SETTINGS_FILE).unlink()
        heavy, said = answered(home, "PostToolUse", payload, FOLD_HEAVY)
        assert "水位" in orjson.loads(said)["hookSpecificOutput"]["additionalContext"]
        if name == "fold":
            assert set(heavy) <= {"dshkit.hookio"}, heavy
        settled(state)
        deadline = time.monotonic() + 60
        while True:
            with Store(state) as store:
                watch = store.db.execute("SELECT state FROM graft_watch").fetchone()[0]
                told = store.db.execute(
                    "SELECT kind FROM graft_audit WHERE kind = 'model-nudge'"
                ).fetchall()
                turns = store.db.execute(
                    "SELECT harness, session_id, open, heads FROM prompt_turns"
                ).fetchall()
            # (the step after the answer commits the audit line, then records the turn)
            if (told and turns) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        found.append((said, orjson.loads(watch), told, turns))
    assert found[0] == found[1] and found[0][2] and found[0][3]


def test_a_nudge_the_fold_can_say_at_a_prompt_is_said_from_its_hint_and_recorded_after(
    tmp_path: Path,
) -> None:
    # A prompt whose turn was not nudged yet (the turn before crossed into the band with its
    # last request, no tool call after it): the nudge is graft's whole answer. With the
    # fold's settings dropped, the full path says it; with them, the lean foreground (the
    # session's hint, graft's live check saying `Say`) writes the same bytes, loading nothing
    # of the store, and graft's face, run after the answer, records the same nudge.
    off = {"DSHKIT_CAPABILITY": "off"}
    found = []
    for name in ("full", "fold"):
        home = tmp_path / name
        state = fixed(home)
        log, payload = read_call(home)
        hook(home, "PostToolUse", payload, **off)  # the full check, which keeps the settings
        words = {"hook_event_name": "UserPromptSubmit", "prompt": "go on"}
        prompt = claude("c1", transcript_path=str(log), **words)
        assert hook(home, "UserPromptSubmit", prompt, **off)[0] == {}  # (the hint kept)
        text = [{"type": "text", "text": "done"}]
        crossed = {"id": "m2", "content": text, "usage": {"input_tokens": 145_000}}
        with open(log, "ab") as handle:
            handle.write(orjson.dumps({"type": "user", "message": {"content": "go on"}}) + b"\n")
            handle.write(orjson.dumps({"type": "assistant", "message": crossed}) + b"\n")
        marker.forget(str(state), str(log))
        if name == "full":
            (state / fold.SETTINGS_FILE).unlink()
        heavy, said = answered(home, "UserPromptSubmit", prompt, LEAN_HEAVY, **off)
        assert "水位" in orjson.loads(said)["hookSpecificOutput"]["additionalContext"]
        if name == "fold":
            assert heavy == [], heavy
        settled(state)
        told = polled(state, "SELECT kind FROM graft_audit WHERE kind = 'model-nudge'", bool)
        (watch,) = polled(state, "SELECT state FROM graft_watch", bool)[0]
        assert "not the one its handlers give" not in hook_log(home)
        found.append((said, orjson.loads(watch), told))
    assert found[0] == found[1] and found[0][1]["nudgeTurn"] == 2 and found[0][2]


def test_a_dsh_steps_nudge_and_escalation_said_from_the_fold_record_what_full_calls_record(
    tmp_path: Path,
) -> None:
    # DSH asks before every model step: the step after the one that crossed into the band is
    # nudged at its prompt, the next one escalated. Said from the session's hint and the
    # fold, they are the full path's bytes, and graft's face, run after each answer, leaves
    # the same state, audit lines and turn (its heads: what the next steps' prompts carry).
    off = {"DSHKIT_CAPABILITY": "off"}
    found = []
    for name in ("full", "fold"):
        home = tmp_path / name
        state = fixed(home)
        log = dsh_session(home)
        prompt = dsh("d1", transcript_path=str(log), hook_event_name="UserPromptSubmit")
        assert hook(home, "UserPromptSubmit", {**prompt, "prompt": "go"}, **off)[0] == {}
        # A step below the band, which leaves the steps' hint (the person's prompt left the
        # hint of the next turn's first prompt: hooks.hint.read).
        with open(log, "ab") as handle:
            handle.write(dsh_frame(DSH_WINDOW, dsh_step(30_000)))
        assert hook(home, "UserPromptSubmit", {**prompt, "prompt": "on"}, **off)[0] == {}
        settled(state)
        said = []
        for tokens in (145_000, 146_000):  # a step into the band, then one more
            with open(log, "ab") as handle:
                handle.write(dsh_frame(DSH_WINDOW, dsh_step(tokens)))
            if name == "full":
                (state / fold.SETTINGS_FILE).unlink(missing_ok=True)
            asked = {**prompt, "prompt": "on"}
            heavy, out = answered(home, "UserPromptSubmit", asked, FOLD_HEAVY, **off)
            said.append(orjson.loads(out)["hookSpecificOutput"]["additionalContext"])
            if name == "fold":
                assert set(heavy) <= {"dshkit.hookio"}, heavy
            settled(state)

            def told(rows: list[Any], count: int = len(said)) -> bool:
                return bool(rows[0][0] == count)

            polled(state, "SELECT count(*) FROM graft_audit", told)
        with Store(state) as store:
            watch = store.db.execute("SELECT state FROM graft_watch").fetchone()[0]
            kinds = store.db.execute("SELECT kind FROM graft_audit ORDER BY rowid").fetchall()
            turns = store.db.execute(
                "SELECT harness, session_id, open, heads FROM prompt_turns"
            ).fetchall()
        assert "not the one its handlers give" not in hook_log(home)
        found.append((said, orjson.loads(watch), kinds, turns))
    assert found[0] == found[1], found
    said, watch, kinds, turns = found[0]
    assert "水位已达" in said[0] and said[1].startswith("[系统提示] 水位告急")
    assert watch["escalated"] and [kind for (kind,) in kinds] == ["model-nudge", "nudge-escalation"]
    assert turns and said[0][:12] in turns[0][3]


def test_a_start_or_a_dsh_step_where_no_handoff_began_loads_no_graft_machinery(
    tmp_path: Path,
) -> None:
    log = transcript(tmp_path, "c1.jsonl")
    start = claude("c1", transcript_path=str(log), source="startup")
    step = dsh("d1", hook_event_name="UserPromptSubmit", prompt="fix it")
    assert loaded(tmp_path, "SessionStart", start, NO_HANDOFF_HEAVY) == []
    assert loaded(tmp_path, "UserPromptSubmit", step, NO_HANDOFF_HEAVY) == []
    assert loaded(tmp_path, "UserPromptSubmit", step, NO_HANDOFF_HEAVY) == []  # a step now


def test_a_prompt_of_a_session_that_had_its_profile_loads_no_profile(tmp_path: Path) -> None:
    # Delivered at the start: every later prompt is answered from the delivery record alone.
    state = tmp_path / ".dsh" / "dshkit"
    with Store(state) as store:
        profile = ProfileState(store)
        profile.set_custom_text("用中文回答。")
        profile.set_mode("custom")
    log = transcript(tmp_path, "c1.jsonl")
    start = claude("c1", transcript_path=str(log), source="startup")
    out, _ = hook(tmp_path, "SessionStart", start)
    assert "用中文回答。" in out["hookSpecificOutput"]["additionalContext"]
    words = {"hook_event_name": "UserPromptSubmit", "prompt": "fix the failing test"}
    payload = claude("c1", transcript_path=str(log), **words)
    assert loaded(tmp_path, "UserPromptSubmit", payload, ("dshkit.profile.state",)) == []
    out, _ = hook(tmp_path, "UserPromptSubmit", payload)
    assert out == {}  # (and nothing said: it had it)


def test_a_tool_call_no_handler_wants_loads_no_capability(tmp_path: Path) -> None:
    # The descriptors name every handler as a string: reading them loads none of their
    # packages (graft's retirement check waits for a handoff ever begun, the guard for a
    # command).
    # The guard's byte scans for a credential read and a tool named for a delete load its
    # face alone (guard/edits.py and the decision table): never its judge, nor the payload
    # parsed (hookio).
    payload = claude("c1", hook_event_name="PreToolUse", tool_name="Read")
    capabilities = tuple(f"dshkit.{name}" for name in plugins.CAPABILITIES if name != "guard")
    judge = ("dshkit.guard.service", "dshkit.guard.walk", "dshkit.guard.hook", "dshkit.hookio")
    heavy = (*capabilities, *judge, "sqlite3")
    assert loaded(tmp_path, "PreToolUse", payload, heavy) == []
    read = {"tool_input": {"file_path": "/p/src/app.py"}}
    assert loaded(tmp_path, "PreToolUse", payload | read, heavy) == []


# What a prompt or a start answered from its session's hint (`dshkit.hooks.lean`) never needs:
# no handler is loaded, nor the store (its rows are read again through the C module alone,
# which is lent a cache that keeps nothing instead of `functools`), nor the session reader (a
# log's new records are read with `sessions.livetail`), nor the JSON, typing, dataclass or
# path machinery the handlers pull in.
LEAN_HEAVY = (
    "ast",
    "collections",
    "dataclasses",
    "dshkit.capability",
    "dshkit.config",
    "dshkit.gate",
    "dshkit.hookio",
    "dshkit.hooks.dispatch",
    "dshkit.memory",
    "dshkit.optimizer",
    "dshkit.profile",
    "dshkit.sessions.catalog",
    "dshkit.sessions.events",
    "dshkit.sessions.reader",
    "dshkit.sessions.tail",
    "dshkit.store",
    "functools",
    "importlib",  # (nor does loading zstd's C backend: the import system's own modules do)
    "inspect",
    "json",
    "orjson",
    "pathlib",
    "platform",
    "sqlite3",
    "subprocess",
    "typing",
    "uuid",
    "zstandard",  # (a DSH log's new frames are decoded with its C backend alone)
)


def settled(state: Path) -> None:
    """Wait for the detached steps of hinted calls to finish: each removes its payload file
    as it starts, and runs with the state directory in its arguments until it is done."""

    def done() -> bool:
        return not list((state / "hints").glob("payload.*")) and not running_with(f" {state} ")

    wait_until(done, f"the detached steps of {state} to finish")


@pytest.mark.parametrize("harness", ["claude", "dsh"])
def test_a_prompt_or_start_answered_from_its_hint_loads_no_handler(
    tmp_path: Path, harness: str
) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    off = {"DSHKIT_CAPABILITY": "off"}
    if harness == "claude":
        start = claude("c1", source="resume")
        words = claude("c1", hook_event_name="UserPromptSubmit", prompt="fix the failing test")
    else:
        start = dsh("d1", hook_event_name="SessionStart", source="startup")
        words = dsh("d1", hook_event_name="UserPromptSubmit", prompt="fix the failing test")
    for event, payload in (("SessionStart", start), ("UserPromptSubmit", words)):
        # DSH asks before every model step: a person's prompt leaves the hint of the next
        # turn's first prompt (`hint.OPENING`), which answers once the turn ended.
        opening = harness == "dsh" and event == "UserPromptSubmit"
        kept = state / "hints" / f"{event}.{payload['session_id']}{hint.OPENING * opening}"
        ended = {**payload, "hook_event_name": "Stop", "stop_hook_active": False}
        hook(tmp_path, event, payload, **off)  # the full path, which keeps the hint
        assert kept.exists()
        if opening:
            hook(tmp_path, "Stop", ended, **off)
        assert loaded(tmp_path, event, payload, LEAN_HEAVY, **off) == []
        settled(state)
        # (and the step after it kept the next one)
        assert kept.exists()
        if opening:
            hook(tmp_path, "Stop", ended, **off)
        assert loaded(tmp_path, event, payload, LEAN_HEAVY, **off) == []
        settled(state)


# What graft's faces never need once a handoff began here, for a session the ledger holds
# nothing for (`graft.standing`: its rows are looked at read-only): its handlers, the store,
# the ledger and the lifecycle.
BEGUN_HEAVY = (
    "dshkit.graft.hook",
    "dshkit.graft.ledger",
    "dshkit.graft.lifecycle",
    "dshkit.graft.live",
    "dshkit.graft.watermark",
)


def test_after_a_handoff_began_a_session_the_ledger_holds_nothing_for_loads_no_graft_face(
    tmp_path: Path,
) -> None:
    from dshkit.graft.lifecycle import begin, claim_pending

    from ..support.graft_driver import plan_for

    state = tmp_path / ".dsh" / "dshkit"
    off = {"DSHKIT_CAPABILITY": "off"}
    log = transcript(tmp_path, "c1.jsonl")
    words = claude(
        "c1", transcript_path=str(log), hook_event_name="UserPromptSubmit", prompt="go on"
    )
    hook(tmp_path, "UserPromptSubmit", words, **off)  # (the store made)
    with Store(state) as store:  # another session handed off to a third, here
        marker.mark(str(state))
        txn = begin(store, plan_for("s-src", str(tmp_path)), ignite=False)
        claim_pending(store, txn.id, "claude", "s-tgt")
    read = claude("c1", transcript_path=str(log), hook_event_name="PreToolUse", tool_name="Read")
    found, said = answered(tmp_path, "PreToolUse", read, (*BEGUN_HEAVY, "dshkit.store"))
    assert (found, said) == ([], b"")
    # The handed-off source is still denied, by the face.
    source = {**read, "session_id": "s-src"}
    found, said = answered(tmp_path, "PreToolUse", source, BEGUN_HEAVY)
    assert "dshkit.graft.hook" in found and b"deny" in said
    # A turn's end (the gate's and memory's faces load the store; graft's is not run).
    ended = claude("c1", transcript_path=str(log), hook_event_name="Stop")
    assert loaded(tmp_path, "Stop", ended, BEGUN_HEAVY, **off) == []
    settled(state)
    # A prompt answered from its hint, as where no handoff ever began.
    hook(tmp_path, "UserPromptSubmit", words, **off)  # the full path, which keeps the hint
    settled(state)
    assert loaded(tmp_path, "UserPromptSubmit", words, LEAN_HEAVY, **off) == []


# What a shell command, an edit or a turn's end that changed no deliverable never needs: the
# gate looks at the payload's bytes, the session's rows and its directory (`gate.glance`); the
# refresh and the memory harvest, which say nothing, are started by the step after the answer.
QUIET_GATE_HEAVY = (
    "dshkit.gate.delivery",
    "dshkit.gate.service",
    "dshkit.hookio",
    "hashlib",  # (what a session that built a page hashes: its pages)
    "dshkit.memory.hook",
    "dshkit.sessions.hook",
    "dshkit.store",
    "sqlite3",
    "subprocess",
)


def test_a_command_an_edit_or_a_turns_end_that_changed_no_deliverable_loads_no_face(
    tmp_path: Path,
) -> None:
    state = tmp_path / ".dsh" / "dshkit"
    off = {"DSHKIT_CAPABILITY": "off"}
    project = tmp_path / "proj"
    project.mkdir()
    (project / "notes.txt").write_text("not a deliverable")
    log = transcript(tmp_path, "c1.jsonl")
    here = {"transcript_path": str(log), "cwd": str(project)}
    words = claude("c1", **here, hook_event_name="UserPromptSubmit", prompt="go on")
    hook(tmp_path, "UserPromptSubmit", words, **off)  # the turn begins (the gate's row)
    settled(state)
    ran = claude("c1", **here, hook_event_name="PostToolUse", tool_name="Bash")
    ran |= {"tool_input": {"command": "make test"}}
    assert answered(tmp_path, "PostToolUse", ran, QUIET_GATE_HEAVY, **off) == ([], b"")
    # A tool the gate does not look at: its checks are not even asked.
    looked = claude("c1", **here, hook_event_name="PostToolUse", tool_name="Read")
    assert loaded(tmp_path, "PostToolUse", looked, ("dshkit.gate", "_sqlite3"), **off) == []
    edited = claude("c1", **here, hook_event_name="PostToolUse", tool_name="Edit")
    edited |= {"tool_input": {"file_path": str(project / "app.py"), "new_string": "pass"}}
    assert answered(tmp_path, "PostToolUse", edited, QUIET_GATE_HEAVY, **off) == ([], b"")
    ended = claude("c1", **here, hook_event_name="Stop", stop_hook_active=False)
    assert answered(tmp_path, "Stop", ended, QUIET_GATE_HEAVY, **off) == ([], b"")
    # The refresh the turn's end owes ran all the same, after the answer.
    deadline = time.monotonic() + 30
    while True:
        with Store(state) as store:
            if store.get_meta("profile.lastRun"):
                break
        assert time.monotonic() < deadline, "the refresh after the answer never ran"
        time.sleep(0.2)
    # A page written since the turn began: the gate's face, which says nothing, records it
    # after the answer (its content judged already, so no run starts here).
    page = project / "page.html"
    page.write_text("<p>x</p>")
    future = time.time() + 5
    os.utime(page, (future, future))
    stored_verdict(state, page, "ok")
    assert answered(tmp_path, "PostToolUse", ran, QUIET_GATE_HEAVY, **off) == ([], b"")
    settled(state)
    rows = polled(state, "SELECT path FROM gate_writes", bool)
    assert [tuple(row) for row in rows] == [(str(page),)]


def test_a_dsh_turns_end_is_recorded_before_the_answer_without_the_store(
    tmp_path: Path,
) -> None:
    # DSH asks before every model step: its turn's end must be recorded before the next step
    # can ask, and is, by `turns.end`, the handlers all left to the step after the answer.
    from dshkit import turns

    state = tmp_path / ".dsh" / "dshkit"
    off = {"DSHKIT_CAPABILITY": "off"}
    words = dsh("d1", hook_event_name="UserPromptSubmit", prompt="fix the failing test")
    hook(tmp_path, "UserPromptSubmit", words, **off)  # the person's: the turn opens
    settled(state)
    with Store(state) as store:
        assert turns.is_step(store, ("dsh", "d1"), "another hook's context")
    ended = dsh("d1", hook_event_name="Stop", stop_hook_active=False)
    assert answered(tmp_path, "Stop", ended, QUIET_GATE_HEAVY, **off) == ([], b"")
    with Store(state) as store:  # (at once: before any step after the answer ran)
        assert not turns.is_step(store, ("dsh", "d1"), "the person's next words")


def test_a_first_prompt_with_no_request_logged_yet_is_answered_from_its_hint(
    tmp_path: Path,
) -> None:
    # Its transcript is there (a person's words, no model request yet) and no tool call left a
    # room hint: with no usage the watermark has nothing to measure, so graft's live check
    # answers without the store, and the hint the prompt before kept answers the rest.
    state = tmp_path / ".dsh" / "dshkit"
    off = {"DSHKIT_CAPABILITY": "off"}
    log = transcript(tmp_path, "c1.jsonl")
    words = {"hook_event_name": "UserPromptSubmit", "prompt": "fix the failing test"}
    payload = claude("c1", transcript_path=str(log), **words)
    hook(tmp_path, "UserPromptSubmit", payload, **off)  # the full path, which keeps the hint
    assert (state / "hints" / "UserPromptSubmit.c1").exists()
    assert not (state / marker.ROOM_DIR).exists()
    assert loaded(tmp_path, "UserPromptSubmit", payload, LEAN_HEAVY, **off) == []
    settled(state)


# What a tool call answered from the watermark's room hint never needs (`graft.marker`).
ROOM_HEAVY = (
    "dataclasses",
    "dshkit.hookio",
    "dshkit.hooks.dispatch",
    "dshkit.store",
    "json",
    "orjson",
    "sqlite3",
)


def test_a_turns_first_step_below_its_ceilings_loads_no_store_or_parser(tmp_path: Path) -> None:
    # A session near the band (80,000 tokens of 200,000: no room in bytes), checked in full;
    # then a prompt (it turns the room hint) and the turn's first request, below the ceilings.
    (tmp_path / ".dsh" / "dshkit").mkdir(parents=True)
    (tmp_path / ".dsh" / "dshkit" / "config.toml").write_text("[graft]\nwindow_tokens = 200000\n")
    log = transcript(tmp_path, "c1.jsonl")

    def request(tokens: int, number: int) -> bytes:
        use = {"type": "tool_use", "id": f"t{number}", "name": "Read", "input": {}}
        message = {"role": "assistant", "content": [use], "usage": {"input_tokens": tokens}}
        result = {"type": "tool_result", "tool_use_id": f"t{number}", "content": "ok"}
        lines = [
            {"type": "assistant", "message": message, "requestId": f"r{number}"},
            {"type": "user", "message": {"role": "user", "content": [result]}},
        ]
        return b"".join(orjson.dumps(line) + b"\n" for line in lines)

    after = claude("c1", transcript_path=str(log), hook_event_name="PostToolUse", tool_name="Read")
    words = {"hook_event_name": "UserPromptSubmit", "prompt": "and the tests"}
    prompt = claude("c1", transcript_path=str(log), **words)
    with open(log, "ab") as handle:
        handle.write(request(80_000, 1))
    hook(tmp_path, "PostToolUse", after)  # the full check, which keeps the room hint
    with open(log, "ab") as handle:
        handle.write(orjson.dumps({"type": "user", "message": {"content": "and the tests"}}))
        handle.write(b"\n")
    hook(tmp_path, "UserPromptSubmit", prompt)
    assert list((tmp_path / ".dsh" / "dshkit" / marker.ROOM_DIR).glob("*" + marker.TURNED))
    with open(log, "ab") as handle:
        handle.write(request(81_000, 2))
    assert loaded(tmp_path, "PostToolUse", after, ROOM_HEAVY) == []


def dsh_frame(*records: dict[str, Any]) -> bytes:
    """One zstd frame of JSON lines, as DSH appends them."""
    import zstandard

    text = b"".join(orjson.dumps(record) + b"\n" for record in records)
    return zstandard.ZstdCompressor(write_checksum=True, write_content_size=False).compress(text)


def test_a_dsh_step_is_answered_from_its_hint_while_its_log_gains_no_mode(
    tmp_path: Path,
) -> None:
    # DSH asks before every model step, naming its zstd log, which grows at every step. The
    # capability facts read the modes the log sets: a hint holds while the log gains none
    # (its tail watched, `sessions.livetail.quiet_since`), and the graft watermark is folded from
    # the store (`graft.fold`); a mode set in the log is told at the next step.
    state = tmp_path / ".dsh" / "dshkit"
    log = tmp_path / ".dsh" / "sessions" / "--p--" / "d1" / "session.jsonl.zstd"
    log.parent.mkdir(parents=True)
    header = {"type": "session", "version": 0, "id": "d1", "createdAt": 0, "cwd": "/p"}
    usage = {"inputTokens": 20_000, "outputTokens": 5}
    message = {"role": "assistant", "content": [], "source": {"model": "deepseek-chat"}}
    step = {"type": "assistant/message", "data": {"message": message, "usage": usage}}
    log.write_bytes(dsh_frame(header, {"type": "turn/start", "data": {"turn": 1}}, step))
    payload = dsh("d1", transcript_path=str(log), hook_event_name="UserPromptSubmit", prompt="go")
    on = {"DSHKIT_CAPABILITY": "on"}
    try:
        for _ in range(6):  # the facts, pending, then their probes' results: then nothing
            out, _ = hook(tmp_path, "UserPromptSubmit", payload, **on)
            wait_for_probes(state)
            settled(state)
            if not out:
                break
        assert out == {}
        for number in (1, 2):  # a step: a request and its call's result, no mode
            with open(log, "ab") as handle:
                handle.write(dsh_frame({**step, "seq": number}))
            assert loaded(tmp_path, "UserPromptSubmit", payload, LEAN_HEAVY, **on) == []
            settled(state)
        with Store(state) as store:  # the step after the answer folded the log for graft
            (digest,) = store.db.execute("SELECT digest FROM graft_watch").fetchone()
        assert orjson.loads(digest)["context"] == 20_000
        mode = {"type": "sandbox/mode", "data": {"mode": "danger-full-access"}}
        with open(log, "ab") as handle:
            handle.write(dsh_frame(mode))
        out, _ = hook(tmp_path, "UserPromptSubmit", payload, **on)
        assert "danger-full-access" in str(context(out))  # told at once
    finally:
        wait_for_probes(state)
        settled(state)
