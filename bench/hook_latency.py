"""Latency of the hot hook path: `dshkit hook PreToolUse|PostToolUse|UserPromptSubmit|
SessionStart|Stop` against a bare interpreter start.

Each hook runs as `install-hooks` writes it: this interpreter started without `site`, its
paths given by the launcher line (`install.launcher`), where they can be (the first line
printed says which); a Read by the console script (`dshkit hook`, with `site`) is timed beside
it. Runs each case --runs times, interleaved, as the harnesses do (a fresh process, a payload on
stdin), and prints p50 and p95 of each and their ratio to the bare interpreter. PreToolUse
holds graft's retirement check for every tool (not even started where no handoff ever began)
and the command risk policy for commands (and the guard's look at a file edit's target, in the
project below); PostToolUse holds graft's watermark for every tool, which reads the step just
appended to a real Claude Code transcript (the bench appends one before each run): in a session
far below the watermark's band (20,000 tokens of a 200,000 window: its room hint answers most
calls from one stat), in one near it (80,000 tokens: no room in bytes, but below its usage
ceiling, the first context at which the warning can come: the steps appended since the last
full check are read with the C scanner), the same at a turn's first step (a prompt before each
call, not timed: the steps and prompts since the last full check read with the C scanner,
against the turn's and the next turn's ceilings), the same session with no room hint (dropped
before each call: the store's last fold and the lines since read without loading the store,
`graft.fold`, the full check left to a detached step) and checked in full at every call (the
settings the fold reads dropped too: the tail folded into the store and the decision taken,
what a call costs where the fold cannot answer: a forced cut, a handoff tool's line, changed
settings), and a session in the band whose every call is its turn's first (a prompt before it,
not timed): the watermark's nudge, said by the fold (`quiet.Say`), the full check that records
it run after the answer; a new session's first tool call, a long todo list without phases (a
new session each round): the plan-first nudge, said by the fold the same way; and a Codex
rollout and a Gemini CLI recording near the band (their lines mapped to events by their
adapters' own mappings: the fold). Payloads carry what the real Claude Code sends anew with
every call (a prompt's `prompt_id`, a resumed start's `seconds_since_last_response`), unique
each round. UserPromptSubmit runs with the optimizer's tier off and nothing to deliver, once as
Claude Code sends it (once a turn: a session whose log holds its person's words and no model
request yet, which no tool call left a room hint for, as before its first request), once as
DSH's bridge does (before every model step, its zstd log grown by a step's frame: no room hint
holds for a compressed log, the fold answers; and the same in the watermark's band, one turn
long: after its first steps, nudged and escalated, told all there is in the turn, which the
fold answers too; and a new turn in the band at every round, whose step after its first is
nudged at its prompt: said from the fold, `quiet.Say`, the face that records it run after the
answer), and once as a Claude Code prompt after a tool call of its turn (the PostToolUse before
it, not timed, leaves the watermark's room hint, as in a real session); each is answered from
its session's hint (`dshkit.hooks.lean`) once the one before kept it. SessionStart once as
Claude Code resumes a session (the start before it kept its hint) and once as it starts a new
one (a new session id each round, a UUID: no hint of its own can exist, and the capability
facts are delivered; from the second round on, from the start's template,
`hooks.hint.read_template`, its handlers run by the detached step, which records the delivery),
and that new session's first prompt (its words logged, a permission mode the start did not
report: the capability facts told again with it; from the second round on, from the
prompt's template, as every new session's start told the same); and a new DSH session's
first prompt, which carries its first context (its log as DSH writes one: the modes it was
started in, each event numbered and timed anew; from the template once the probes' results
for those modes are in). A shell command's and an edit's
PostToolUse and a turn's end (Stop), in a project of 500 entries whose turn began at a prompt
and wrote no web page: the gate looks at the payload's bytes, the session's rows and the
project (`gate.glance`); what a turn's end starts (a refresh, a memory harvest) is started
after the answer; and a DSH turn: its first prompt (the person's words logged as DSH logs
them; from the second round on, after the turn before ended, answered from the hint that
turn's first prompt left, `hooks.hint.OPENING`) and its end, which records the end of the
turn before the answer; and a turn's end in a session that built a web page a turn
before, judged and passed: the gate looks at the page's verdict for its content as it is now,
and that page written again (as judged: no run starts), which the gate's face records after the
answer. And, in a home where a handoff was carried out (another session's, picked up by a
third), a tool call, a call near the band and a prompt after its turn's tool call, of a session
the ledger holds nothing for (`graft.standing` looks at its rows, read-only). A hinted call
leaves the handlers it skipped to a detached step; each case starts once none is left. Target:
p50 within 2x for a tool call no policy looks at (Read). CPU time (user + system of the hook
process) is printed beside the wall-clock figures: it is what the hook costs, and moves less
when the machine is busy.

    python bench/hook_latency.py [--runs 60]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dshkit.graft.fold import SETTINGS_FILE
from dshkit.graft.marker import forget
from dshkit.install import launcher
from dshkit.install.commands import dshkit_command
from dshkit.store import Store


def payload(tool: str, transcript: str = "/h/.claude/projects/-p/s.jsonl") -> bytes:
    return (
        b'{"session_id":"s","transcript_path":"' + transcript.encode() + b'",'
        b'"hook_event_name":"PreToolUse","tool_name":"' + tool.encode() + b'",'
        b'"tool_input":{"command":"ls -la src"}}'
    )


# What the real Claude Code (2.1.x) sends anew with every call, which no handler reads (a
# prompt's `prompt_id`, a resumed start's `seconds_since_last_response`): made unique each run.
PER_CALL = b"per-call-0000"


def prompt_payload(transcript: str, session: str = "s") -> bytes:
    """A UserPromptSubmit payload: a person's words to a session (no tool name)."""
    return (
        b'{"session_id":"'
        + session.encode()
        + b'","transcript_path":"'
        + transcript.encode()
        + b'","cwd":"/p","permission_mode":"default","hook_event_name":"UserPromptSubmit",'
        b'"prompt_id":"'
        + PER_CALL
        + b'","prompt":"fix the failing test in src/app.py and run the suite"}'
    )


def start_payload(transcript: str, session: str = "q", source: str = "resume") -> bytes:
    """A SessionStart payload of a Claude Code session (`source`: "startup" for a new one)."""
    return (
        b'{"session_id":"'
        + session.encode()
        + b'","transcript_path":"'
        + transcript.encode()
        + b'","cwd":"/p","hook_event_name":"SessionStart","source":"'
        + source.encode()
        + (b'","seconds_since_last_response":"' + PER_CALL if source == "resume" else b"")
        + b'"}'
    )


def step(number: int, context: int = 20_000) -> bytes:
    """One model request calling a tool, and the tool's result, as Claude Code logs them."""
    base = {"sessionId": "s", "cwd": "/p", "timestamp": "2026-12-01T10:00:00.000Z"}
    use = {"type": "tool_use", "id": f"t{number}", "name": "Read", "input": {"file_path": "a"}}
    message = {
        "id": f"m{number}",
        "role": "assistant",
        "content": [use],
        "usage": {"input_tokens": context + number, "output_tokens": 10},
    }
    result = {"type": "tool_result", "tool_use_id": f"t{number}", "content": "x" * 2_000}
    lines = [
        {**base, "type": "assistant", "message": message, "requestId": f"r{number}"},
        {**base, "type": "user", "message": {"role": "user", "content": [result]}},
    ]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def dsh_step(number: int, context: int = 20_000) -> list[dict[str, Any]]:
    """One model step of a DSH session, as its log holds it (its records are its events)."""
    usage = {"inputTokens": context + number, "outputTokens": 10}
    message = {"role": "assistant", "content": [], "source": {"model": "deepseek-chat"}}
    call = {"turn": 1, "step": number, "callId": f"c{number}", "name": "read_file"}
    result = {"role": "tool", "content": [{"type": "text", "text": "x" * 2_000}]}
    return [
        {"type": "assistant/message", "data": {"turn": 1, "message": message, "usage": usage}},
        {"type": "tool/call", "data": {**call, "arguments": '{"path": "a"}'}},
        {"type": "tool/result", "data": {"turn": 1, "step": number, "message": result}},
    ]


def dsh_frame(records: list[dict[str, Any]]) -> bytes:
    """One zstd frame of JSON lines, as DSH appends them (a checksum, no content size)."""
    import zstandard

    text = b"".join(json.dumps(record).encode() + b"\n" for record in records)
    return zstandard.ZstdCompressor(write_checksum=True, write_content_size=False).compress(text)


def dsh_opened(home: str, session: str) -> bytes:
    """A new DSH session's first prompt, its log as DSH writes one: the modes it was started
    in (with a sequence number and time of its own), its first turn and the person's words."""
    log = os.path.join(home, ".dsh", "sessions", "--p--", session, "session.jsonl.zstd")
    os.makedirs(os.path.dirname(log))
    at = int(time.time() * 1000)
    words = {
        "role": "user",
        "content": [{"type": "text", "text": "go"}],
        "source": {"kind": "user"},
    }
    records: list[dict[str, Any]] = [
        {"type": "session", "version": 0, "id": session, "cwd": "/p"},
        {"type": "sandbox/mode", "seq": 0, "time": at, "data": {"mode": "workspace-write"}},
        {"type": "approval/policy", "seq": 1, "time": at, "data": {"policy": "ask"}},
        {"type": "turn/start", "seq": 2, "time": at, "data": {"turn": 1}},
        {"type": "user/message", "seq": 3, "time": at, "data": words},
    ]
    with open(log, "wb") as opened:
        opened.write(dsh_frame(records))
    return prompt_payload(log, session)


def hook_call(event: str, session: str, transcript: str, **fields: Any) -> bytes:
    """A hook's payload: its event, session and log, and the fields of that event."""
    named = {"session_id": session, "transcript_path": transcript, "hook_event_name": event}
    return json.dumps({**named, **fields}).encode()


def planned(log: Path, number: int) -> bytes:
    """A new Claude Code session whose model wrote a long todo list without phases (its first
    request, 20,000 tokens), and the PostToolUse of that call: the plan-first nudge is due."""
    items = [{"content": f"step {n}", "status": "pending"} for n in range(5)]
    use = {"type": "tool_use", "id": "t0", "name": "TodoWrite", "input": {"todos": items}}
    usage = {"input_tokens": 20_000, "output_tokens": 10}
    message = {"id": "m0", "role": "assistant", "content": [use], "usage": usage}
    session = f"9a1b{number:04d}-1d2e-4b3a-8c9d-0e1f2a3b4c5d"
    lines = [
        {"type": "user", "sessionId": session, "cwd": "/p", "message": {"content": "go"}},
        {"type": "assistant", "sessionId": session, "message": message, "requestId": "r0"},
    ]
    log.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    call = {
        "session_id": session,
        "transcript_path": str(log),
        "cwd": "/p",
        "hook_event_name": "PostToolUse",
        "tool_name": "TodoWrite",
        "tool_use_id": "t0",
        "tool_input": {"todos": items},
    }
    return json.dumps(call).encode()


def judged_page(state: Path, key: tuple[str, str], page: Path) -> None:
    """`page` recorded as the session `key` wrote it, and judged ok as it is now."""
    from dshkit.gate.delivery import content_hash, note_writes
    from dshkit.gate.judge import Verdict
    from dshkit.gate.verdicts import save_verdict

    passed = Verdict(str(page), content_hash(page), "ok", False, 5, None, [], [], None)
    with Store(state) as store:
        note_writes(store, key, [page])
        save_verdict(store, passed)


def timed(command: list[str], env: dict[str, str], data: bytes) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one run of `command` with `data` on stdin."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
    assert child.stdin is not None
    try:
        child.stdin.write(data)
        child.stdin.close()
    except BrokenPipeError:  # `python -c pass` reads nothing: it may be gone already
        pass
    _, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{command} exited {child.returncode}")
    return took, usage.ru_utime + usage.ru_stime


def settle(state: str) -> None:
    """Wait until no detached step of a hinted call is left (each removes its payload file
    when done), nor a process started after a call's answer (`checking`): a harness's next
    event comes after a model's answer, seconds later, and the step's CPU must not land on
    the next case measured (it is not the hook's latency)."""
    folder = os.path.join(state, "hints")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pending = os.path.isdir(folder) and any(
            name.startswith("payload.") for name in os.listdir(folder)
        )
        if not pending and not checking(state):
            return
        time.sleep(0.01)


def checking(state: str) -> bool:
    """Whether a detached process for the state directory `state` still runs: a watermark
    check (`dshkit.hooks.later`), or what a turn's end starts (a refresh, a harvest), each
    naming the directory in its arguments."""
    wanted = [os.fsencode(state)]
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                line = handle.read()
        except OSError:
            continue
        if all(part in line for part in wanted):
            return True
    return False


def handed_off(state: str, cwd: str) -> None:
    """A handoff carried out in `state` (another session's, picked up by a third): from then
    on, graft's faces ask the ledger about every session (`graft.standing`)."""
    from dshkit.graft.identity import IGNITION_MARK, Identity
    from dshkit.graft.lifecycle import Plan, begin, claim_pending
    from dshkit.graft.marker import mark

    identity = Identity("s-src", 42, 1)
    card = "## 交接任务看板\n原始用户要求：继续"
    message = f"{identity.render()}\n{IGNITION_MARK} 请直接接着下面的任务继续。\n\n{card}"
    with Store(Path(state)) as store:
        mark(state)
        txn = begin(store, Plan("claude", "s-src", cwd, message, identity, card), ignite=False)
        claim_pending(store, txn.id, "claude", "s-tgt")


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100)[int(share * 100) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    # As `install-hooks` writes a hook: this interpreter through its launcher, where `site` can
    # be replayed by paths (`install.launcher`), else the console script.
    console = dshkit_command()
    hook = [*launcher.program(console), "hook", "PreToolUse"]
    print(f"hooks run: {'the launcher' if launcher.is_launcher(hook[:3]) else 'the script'}")
    after = [*hook[:-1], "PostToolUse"]
    prompted = [*hook[:-1], "UserPromptSubmit"]
    started = [*hook[:-1], "SessionStart"]
    ended = [*hook[:-1], "Stop"]
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as home:
        env = {**os.environ, "HOME": home, "DSH_HOME": home, "CLAUDECODE": "1"}
        transcript = Path(home) / ".claude" / "projects" / "-p" / "s.jsonl"
        near = transcript.with_name("near.jsonl")
        full = transcript.with_name("full.jsonl")
        transcript.parent.mkdir(parents=True)
        prompt = {"type": "user", "sessionId": "s", "cwd": "/p", "message": {"content": "go"}}
        for log in (transcript, near, full):
            log.write_text(json.dumps(prompt) + "\n")
        near_payload = payload("Read", str(near)).replace(b'"session_id":"s"', b'"session_id":"n"')
        full_payload = payload("Read", str(full)).replace(b'"session_id":"s"', b'"session_id":"f"')
        # In the band (145,000 tokens of 200,000), a person's prompt before each call (not
        # timed): each call is its turn's first, which the watermark nudges.
        band = transcript.with_name("band.jsonl")
        band.write_text(json.dumps(prompt) + "\n")
        band_payload = payload("Read", str(band)).replace(b'"session_id":"s"', b'"session_id":"g"')
        folded = transcript.with_name("folded.jsonl")
        folded.write_text(json.dumps(prompt) + "\n")
        folded_payload = payload("Read", str(folded)).replace(
            b'"session_id":"s"', b'"session_id":"o"'
        )
        # Near the band too, a prompt before each call (not timed): a turn's first step.
        first = transcript.with_name("first.jsonl")
        first.write_text(json.dumps(prompt) + "\n")
        first_payload = payload("Read", str(first)).replace(
            b'"session_id":"s"', b'"session_id":"u"'
        )
        # DSH's bridge sends UserPromptSubmit before every model step, naming its zstd log,
        # which grows by a frame (the step before: a request, its call and result) each round.
        dsh_log = os.path.join(home, ".dsh", "sessions", "--p--", "d1", "session.jsonl.zstd")
        os.makedirs(os.path.dirname(dsh_log))
        with open(dsh_log, "wb") as growing:
            growing.write(dsh_frame([{"type": "session", "version": 0, "id": "d1", "cwd": "/p"}]))
        # The same in the band (145,000 tokens of the 200,000 its log announces), one turn: its
        # first steps are nudged and escalated (in full), then told all there is in the turn.
        dsh_band = dsh_log.replace(f"{os.sep}d1{os.sep}", f"{os.sep}d2{os.sep}")
        os.makedirs(os.path.dirname(dsh_band))
        with open(dsh_band, "wb") as growing:
            opened: list[dict[str, Any]] = [
                {"type": "session", "version": 0, "id": "d2", "cwd": "/p"},
                {"type": "turn/start", "data": {"turn": 1}},
                {"type": "request/context", "data": {"contextWindow": 200_000}},
            ]
            growing.write(dsh_frame(opened))
        # The same in the band, a new turn each round (a person's words, a step at 145,000
        # tokens, no Stop between): the step after it is nudged at its prompt, said from the
        # fold.
        dsh_nudged = dsh_log.replace(f"{os.sep}d1{os.sep}", f"{os.sep}d3{os.sep}")
        os.makedirs(os.path.dirname(dsh_nudged))
        words = {"role": "user", "content": [{"type": "text", "text": "go"}]}
        with open(dsh_nudged, "wb") as growing:
            said_by_person = {"type": "user/message", "data": {**words, "source": {"kind": "user"}}}
            growing.write(dsh_frame([{**opened[0], "id": "d3"}, *opened[1:], said_by_person]))
        # A Codex rollout near the band too (80,000 tokens of the 200,000 its turn announces),
        # a call and its usage record appended each round: no room in bytes, and no shape the
        # room hint scans (its lines are mapped to events), so the fold answers.
        rolled = "01a22aa8-d960-7ae2-8fb7-bfdbb0b55be1"
        rollout = Path(home, ".codex", "sessions", "2026", "11", "30")
        rollout = rollout / f"rollout-2026-11-30T04-13-58-{rolled}.jsonl"
        rollout.parent.mkdir(parents=True)
        begun = {"type": "task_started", "model_context_window": 200_000}
        typed = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "go"}],
        }
        rollout.write_text(
            json.dumps({"type": "session_meta", "payload": {"session_id": rolled, "cwd": "/p"}})
            + "\n"
            + json.dumps({"type": "event_msg", "payload": begun})
            + "\n"
            + json.dumps({"type": "response_item", "payload": typed})
            + "\n"
        )
        codex_payload = hook_call(
            "PostToolUse", rolled, str(rollout), turn_id="t1", tool_name="web_search", tool_input={}
        )
        # A Gemini CLI recording near the band too, a model's message (its usage, then again
        # with its call) and the call's result appended each round: folded the same way.
        recorded = "2964c2e8-289a-45dc-b07d-bdbfe28c8997"
        recording = Path(
            home, ".gemini", "tmp", "p", "chats", "session-2026-12-06T13-26-2964c2e8.jsonl"
        )
        recording.parent.mkdir(parents=True)
        typed_first = {"id": "u0", "type": "user", "content": [{"text": "go"}]}
        recording.write_text(
            json.dumps({"sessionId": recorded, "projectHash": "e6d6", "kind": "main"})
            + "\n"
            + json.dumps(typed_first)
            + "\n"
        )
        gemini_payload = hook_call(
            "AfterTool", recorded, str(recording), tool_name="glob", tool_input={}
        )
        # A transcript of its own: a prompt drops its session's room hint (the first tool
        # call after it is checked in full), which would make the far-below case a full one.
        asked = transcript.with_name("prompted.jsonl")
        asked.write_text(json.dumps(prompt) + "\n")
        # Starts in sessions of their own (a prompt between them would be another case's).
        resumed = transcript.with_name("resumed.jsonl")
        resumed.write_text(json.dumps(prompt) + "\n")
        turn = transcript.with_name("turn.jsonl")  # a prompt after its turn's tool call
        turn.write_text(json.dumps(prompt) + "\n")
        tool_before = payload("Read", str(turn)).replace(b'"session_id":"s"', b'"session_id":"t"')
        turn_prompt = prompt_payload(str(turn), "t")
        # As installed: bytecode cached (the first round writes it), no handlers of one's own.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("DSHKIT_HOOK_HANDLERS", None)
        # A home where a handoff was carried out (another session's): a tool call, a call
        # near the band and a prompt after its turn's tool call of a session the ledger holds
        # nothing for.
        handed_home = os.path.join(home, "begun")
        begun_env: dict[str, str] = {**env, "HOME": handed_home, "DSH_HOME": handed_home}
        begun_state = os.path.join(handed_home, "dshkit")
        os.makedirs(begun_state, mode=0o700)
        handed_off(begun_state, home)
        begun_near = Path(handed_home, ".claude", "projects", "-p", "near.jsonl")
        begun_turn = begun_near.with_name("turn.jsonl")
        begun_near.parent.mkdir(parents=True)
        for log in (begun_near, begun_turn):
            log.write_text(json.dumps(prompt) + "\n")
        begun_near_payload = payload("Read", str(begun_near))
        begun_tool_before = payload("Read", str(begun_turn)).replace(
            b'"session_id":"s"', b'"session_id":"t"'
        )
        begun_turn_prompt = prompt_payload(str(begun_turn), "t")
        # A shell command's PostToolUse and a turn's end, in a project of 500 entries (20
        # directories of 24 files) whose turn began at a prompt (not timed) and wrote no web
        # page: the gate scans the project for deliverables changed since.
        project = Path(home, "proj")
        for number in range(20):
            folder = project / f"pkg{number:02d}"
            folder.mkdir(parents=True)
            for module in range(24):
                (folder / f"m{module:02d}.py").write_text("pass\n")
        shell = transcript.with_name("shell.jsonl")
        shell.write_text(json.dumps(prompt) + "\n")
        in_project = b'"cwd":"' + str(project).encode() + b'",'
        shell_payload = hook_call(
            "PostToolUse",
            "b",
            str(shell),
            cwd=str(project),
            tool_name="Bash",
            tool_input={"command": "ls -la src"},
        )
        edited = {"file_path": str(project / "pkg00" / "m00.py"), "old_string": "pass"}
        edit_guarded, edit_payload = (
            hook_call(
                event,
                "b",
                str(shell),
                cwd=str(project),
                tool_name="Edit",
                tool_input={**edited, "new_string": "return"},
            )
            for event in ("PreToolUse", "PostToolUse")
        )
        stop_payload = hook_call("Stop", "b", str(shell), cwd=str(project), stop_hook_active=False)
        shell_prompt = prompt_payload(str(shell), "b").replace(b'"cwd":"/p",', in_project)
        # A turn's end in a session that built a web page in a turn before, judged and passed
        # (its turn begun at a prompt, not timed): the gate looks at the page's verdict.
        site = Path(home, "site")
        site.mkdir()
        page = site / "index.html"
        page.write_text("<h1>report</h1>\n")
        long_ago = time.time() - 3600
        os.utime(page, (long_ago, long_ago))
        built = transcript.with_name("built.jsonl")
        built.write_text(json.dumps(prompt) + "\n")
        judged_page(Path(home, "dshkit"), ("claude", "w"), page)
        built_stop = hook_call("Stop", "w", str(built), cwd=str(site), stop_hook_active=False)
        # Its page written again, as it was judged (no run starts): the gate's face records it
        # after the answer.
        page_written = hook_call(
            "PostToolUse",
            "w",
            str(built),
            cwd=str(site),
            tool_name="Write",
            tool_input={"file_path": str(page), "content": page.read_text()},
        )
        built_prompt = prompt_payload(str(built), "w").replace(
            b'"cwd":"/p",', b'"cwd":"' + str(site).encode() + b'",'
        )
        # A DSH turn's end: the person's prompt (not timed) opens the turn, Stop ends it (the
        # one write made in the foreground: DSH asks before every step).
        dsh_ended = dsh_log.replace(f"{os.sep}d1{os.sep}", f"{os.sep}d4{os.sep}")
        os.makedirs(os.path.dirname(dsh_ended))
        with open(dsh_ended, "wb") as growing:
            growing.write(dsh_frame([{"type": "session", "version": 0, "id": "d4", "cwd": "/p"}]))
        dsh_turn = prompt_payload(dsh_ended, "d4")
        dsh_stop = hook_call("Stop", "d4", dsh_ended, cwd="/p", stop_hook_active=False)
        cases: dict[str, tuple[list[str], bytes]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], payload("Read")),
            "another tool (Read)": (hook, payload("Read")),
            "Read, by the console script": ([*console, *hook[-2:]], payload("Read")),
            "a command (Bash): policy": (hook, payload("Bash")),
            "a file edit (Edit): guard": (hook, edit_guarded),
            "PostToolUse: far below band": (after, payload("Read", str(transcript))),
            "PostToolUse: near the band": (after, near_payload),
            "PostToolUse: turn's first step": (after, first_payload),
            "PostToolUse: no room hint": (after, folded_payload),
            "PostToolUse: full check": (after, full_payload),
            "PostToolUse: a nudge": (after, band_payload),
            "PostToolUse: plan first": (after, b""),  # a new session each round (below)
            "PostToolUse (Codex): near band": (after, codex_payload),
            "PostToolUse (Gemini): near band": (after, gemini_payload),
            "UserPromptSubmit (Claude)": (prompted, prompt_payload(str(asked), "p")),
            "UserPromptSubmit (Claude, turn)": (prompted, turn_prompt),
            "UserPromptSubmit (DSH)": (prompted, prompt_payload(dsh_log, "d1")),
            "UserPromptSubmit (DSH, band)": (prompted, prompt_payload(dsh_band, "d2")),
            "UserPromptSubmit (DSH): a nudge": (prompted, prompt_payload(dsh_nudged, "d3")),
            "SessionStart (Claude, resume)": (started, start_payload(str(resumed))),
            "SessionStart (Claude, new)": (started, b""),  # a new session each round (below)
            "UserPromptSubmit (Claude, new)": (prompted, b""),  # that session's first prompt
            "UserPromptSubmit (DSH, new)": (prompted, b""),  # a new DSH session's (below)
            "PostToolUse (Bash): command": (after, shell_payload),
            "PostToolUse (Edit): a module": (after, edit_payload),
            "Stop (Claude)": (ended, stop_payload),
            "UserPromptSubmit (DSH): turn's first": (prompted, dsh_turn),  # (then its end)
            "Stop (DSH)": (ended, dsh_stop),
            "Stop (Claude): a page judged": (ended, built_stop),
            "PostToolUse (Write): a web page": (after, page_written),
            "handoff begun: Read": (hook, payload("Read")),
            "handoff begun: PostToolUse near": (after, begun_near_payload),
            "handoff begun: prompt (turn)": (prompted, begun_turn_prompt),
        }
        homes: dict[str, dict[str, str]] = {
            name: begun_env for name in cases if name.startswith("handoff begun")
        }
        # That session's first prompts (not timed), before any request: the capability facts
        # delivered, then again with the probes' results, then nothing to say, which keeps the
        # session's hint (as its first turn's steps would). A call in the band says something
        # at every round: a hint dropped then (the probes' results coming) is never kept again.
        kept = os.path.join(home, "dshkit", "hints", "UserPromptSubmit.d3")
        sayings, deadline = 0, time.monotonic() + 60
        while time.monotonic() < deadline:
            settle(os.path.join(home, "dshkit"))
            opening = prompt_payload(dsh_nudged, "d3")
            said = subprocess.run(prompted, input=opening, env=env, capture_output=True).stdout
            sayings += bool(said)
            if sayings >= 2 and not said and os.path.exists(kept):
                break
            time.sleep(0.1)
        timed(prompted, env, shell_prompt)  # the shell session's turn begins (not timed)
        timed(prompted, env, built_prompt)  # and the web page's session's (not timed)
        figures: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for round in range(args.runs + 1):
            with open(transcript, "ab") as growing:
                growing.write(step(round))
            for log_path in (near, full, folded):
                with open(log_path, "ab") as growing:
                    growing.write(step(round, 80_000))
            with open(first, "ab") as growing:  # a person's prompt, then its turn's first step
                growing.write(json.dumps(prompt).encode() + b"\n")
            timed(prompted, env, prompt_payload(str(first), "u"))
            with open(first, "ab") as growing:
                growing.write(step(round, 80_000))
            with open(turn, "ab") as growing:
                growing.write(step(round))
            with open(shell, "ab") as growing:
                growing.write(step(round))
            with open(begun_near, "ab") as growing:
                growing.write(step(round, 80_000))
            with open(begun_turn, "ab") as growing:
                growing.write(step(round))
            with open(rollout, "ab") as growing:  # a call, and its request's usage
                call = {"type": "function_call", "name": "web_search", "call_id": f"c{round}"}
                usage = {"input_tokens": 80_000 + round, "cached_input_tokens": 60_000}
                record = {"response_id": f"r{round}", "usage": {**usage, "output_tokens": 10}}
                output = {"type": "function_call_output", "call_id": f"c{round}"}
                for line in (
                    {"type": "response_item", "payload": {**call, "arguments": "{}"}},
                    {"type": "response_item", "payload": {**output, "output": "x" * 2_000}},
                    {"type": "token_usage_record", "payload": record},
                ):
                    growing.write(json.dumps(line).encode() + b"\n")
            with open(recording, "ab") as growing:  # a message, grown by its call; the result
                tokens = {"input": 80_000 + round, "output": 7, "cached": 60_000}
                grown: dict[str, Any] = {
                    "id": f"g{round}",
                    "type": "gemini",
                    "content": "",
                    "tokens": tokens,
                }
                globbed = {"id": f"glob_{round}", "name": "glob", "args": {"pattern": "*.py"}}
                result = {"id": globbed["id"], "name": "glob", "response": {"output": "x" * 2_000}}
                for entry in (
                    grown,
                    {**grown, "toolCalls": [globbed]},
                    {
                        "id": f"r{round}",
                        "type": "user",
                        "content": [{"functionResponse": result}],
                    },
                ):
                    growing.write(json.dumps(entry).encode() + b"\n")
            with open(band, "ab") as growing:  # a new turn, and its first step in the band
                growing.write(json.dumps(prompt).encode() + b"\n" + step(round, 145_000))
            with open(dsh_log, "ab") as growing:
                growing.write(dsh_frame(dsh_step(round)))
            with open(dsh_band, "ab") as growing:
                growing.write(dsh_frame(dsh_step(round, 145_000)))
            with open(dsh_nudged, "ab") as growing:  # a new turn, its first step in the band
                began = [{"type": "turn/start", "data": {"turn": round + 2}}, said_by_person]
                growing.write(dsh_frame([*began, *dsh_step(round, 145_000)]))
            for name, (command, data) in cases.items():
                if name == "PostToolUse: plan first":  # its first todo list, no phases
                    data = planned(transcript.with_name(f"plan{round:04d}.jsonl"), round)
                if name == "SessionStart (Claude, new)":
                    new = f"5f0c{round:04d}-1d2e-4b3a-8c9d-0e1f2a3b4c5d"  # as harnesses name them
                    data = start_payload(str(transcript.with_name(f"{new}.jsonl")), new, "startup")
                if name == "UserPromptSubmit (Claude, new)":  # (its words logged as it is sent)
                    opened_log = transcript.with_name(f"{new}.jsonl")
                    opened_log.write_text(json.dumps({**prompt, "sessionId": new}) + "\n")
                    data = prompt_payload(str(opened_log), new)
                if name == "UserPromptSubmit (DSH, new)":
                    data = dsh_opened(home, f"session-7c1d{round:04d}-3a4b-4c5d-8e6f-0a1b2c3d4e5f")
                case_env = homes.get(name, env)
                for state in (os.path.join(home, "dshkit"), begun_state):  # (both homes: the
                    settle(state)  # CPU of what one runs after a call must land on neither)
                if data is full_payload:
                    forget(os.path.join(home, "dshkit"), str(full))
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(home, "dshkit", SETTINGS_FILE))
                if data is folded_payload:
                    forget(os.path.join(home, "dshkit"), str(folded))
                if data is turn_prompt:
                    timed(after, env, tool_before)  # the turn's tool call (not timed)
                    settle(os.path.join(home, "dshkit"))
                if data is dsh_turn:  # a new turn: its start and the person's words logged
                    with open(dsh_ended, "ab") as growing:
                        began = [
                            {"type": "turn/start", "data": {"turn": round + 1}},
                            said_by_person,
                        ]
                        growing.write(dsh_frame(began))
                if data is begun_turn_prompt:
                    timed(after, begun_env, begun_tool_before)  # (the same, not timed)
                    settle(begun_state)
                data = data.replace(PER_CALL, f"per-call-{round:04d}".encode())
                took, spent = timed(command, case_env, data)
                if round:  # round 0 warms up
                    figures[name].append(took)
                    cpu[name].append(spent)
        for state in (os.path.join(home, "dshkit"), begun_state):  # (what runs after writes)
            settle(state)
    bare = percentile(figures["python -c pass"], 0.5)
    bare_cpu = percentile(cpu["python -c pass"], 0.5)
    for name, values in figures.items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        spent = percentile(cpu[name], 0.5)
        print(
            f"{name:<30} p50 {p50 * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms   "
            f"p50 ratio {p50 / bare:4.2f}x   cpu p50 {spent * 1000:6.1f} ms "
            f"({spent / bare_cpu:4.2f}x)"
        )
    print("target: p50 ratio <= 2x for a tool call no policy looks at (Read)")


if __name__ == "__main__":
    main()
