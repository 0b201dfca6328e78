"""Graft at the hooks, run as the harnesses run them (`dshkit hook EVENT`, a payload on stdin):
the watermark's nudge and escalation once each, a handed-off session refused with a pointer, a
rolled-back one told once, a waiting handoff handed to the next session in its directory, and
the forced cut starting a real handoff through the (fake) Claude Code CLI."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.graft import ledger, live, marker
from dshkit.graft.ledger import audit_records
from dshkit.graft.lifecycle import ROLLBACK_NOTICE, Ignition, State, begin, handoff, transactions
from dshkit.graft.live import FORCE_TEXT
from dshkit.graft.watermark import Digest
from dshkit.store import Store

from ..support.cli import run_dshkit
from ..support.graft_driver import Transcript, World, make_world, plan_for
from ..support.graft_hooks import FIXED, context, hook


@pytest.fixture
def world(tmp_path: Path) -> World:
    made = make_world(tmp_path)
    made.state.mkdir(mode=0o700)
    (made.state / "config.toml").write_text(FIXED)
    return made


def kinds(world: World) -> list[str]:
    with Store(world.state) as store:
        return [record.kind for record in audit_records(store)]


def test_the_warning_is_told_once_then_escalated_once(world: World) -> None:
    transcript = Transcript(world, "s-warn").prompt("把测试补齐").step(60_000)
    assert context(hook(world, "PostToolUse", transcript.payload())) == ""
    transcript.step(72_000)
    nudge = context(hook(world, "PostToolUse", transcript.payload()))
    assert "72%" in nudge and "graft_slice_and_inject" in nudge
    transcript.step(73_000)  # the model went on with another tool call
    escalation = context(hook(world, "PostToolUse", transcript.payload()))
    assert "水位告急" in escalation and "73%" in escalation
    transcript.step(74_000)
    assert context(hook(world, "PostToolUse", transcript.payload())) == ""
    assert kinds(world) == ["model-nudge", "nudge-escalation"]


def test_a_model_that_obeys_the_warning_is_not_accused(world: World) -> None:
    transcript = Transcript(world, "s-obey").prompt("继续").step(72_000)
    assert "72%" in context(hook(world, "PostToolUse", transcript.payload()))
    transcript.step(73_000, tool="mcp__dshkit__graft_prepare")
    assert context(hook(world, "PostToolUse", transcript.payload())) == ""
    assert kinds(world) == ["model-nudge"]


def test_a_new_turn_in_the_band_is_warned_again_through_the_prompt(world: World) -> None:
    transcript = Transcript(world, "s-turns").prompt("一").step(71_000)
    assert "71%" in context(hook(world, "PostToolUse", transcript.payload()))
    transcript.prompt("二")
    assert "71%" in context(hook(world, "UserPromptSubmit", transcript.payload(prompt="二")))


@pytest.mark.process
def test_a_handed_off_source_is_refused_and_a_rolled_back_one_told_once(world: World) -> None:
    with Store(world.state) as store:
        txn = begin(store, plan_for("s-gone", str(world.cwd)))
    transcript = Transcript(world, "s-gone").prompt("继续")
    blocked = hook(world, "UserPromptSubmit", transcript.payload(prompt="还在吗"))
    assert blocked["decision"] == "block" and f"交接 #{txn.id}" in blocked["reason"]
    denied = hook(world, "PreToolUse", transcript.payload(tool_name="Read", tool_input={}))
    output = denied["hookSpecificOutput"]
    assert (
        output["permissionDecision"] == "deny" and "不再接收" in output["permissionDecisionReason"]
    )
    other = Transcript(world, "s-other").prompt("hi")
    assert hook(world, "PreToolUse", other.payload(tool_name="Read", tool_input={})) == {}
    # Ignition exhausted: the source is usable again and hears about it exactly once.
    world.script("fail", "fail", "fail")
    with Store(world.state) as store:
        rolled = handoff(store, plan_for("s-back", str(world.cwd)), ignition=Ignition(5, 3, 0.05))
    assert rolled.state == State.ROLLED_BACK
    back = Transcript(world, "s-back").prompt("继续")
    told = hook(world, "UserPromptSubmit", back.payload(prompt="继续"))
    assert ROLLBACK_NOTICE in context(told) and "decision" not in told
    assert ROLLBACK_NOTICE not in context(hook(world, "UserPromptSubmit", back.payload()))
    assert hook(world, "PreToolUse", back.payload(tool_name="Bash", tool_input={})) == {}


def test_a_waiting_handoff_goes_to_the_next_session_started_in_its_directory(
    world: World,
) -> None:
    with Store(world.state) as store:
        begin(store, plan_for("s-src", str(world.cwd)), ignite=False)
    started = {"session_id": "s-next", "cwd": str(world.cwd), "source": "startup"}
    first = context(hook(world, "SessionStart", started))
    assert "<!-- graft-identity:" in first and "s-src" in first
    assert context(hook(world, "SessionStart", {**started, "session_id": "s-third"})) == ""
    with Store(world.state) as store:
        assert ledger.retirement(store, "claude", "s-src").target_id == "s-next"  # type: ignore[union-attr]


@pytest.mark.process
def test_the_forced_cut_starts_a_real_handoff(world: World) -> None:
    transcript = Transcript(world, "s-full").prompt("把文档补全，以后不要改 API").step(72_000)
    hook(world, "PostToolUse", transcript.payload())  # warned
    transcript.step(76_000)
    forced = context(hook(world, "PostToolUse", transcript.payload()))
    assert forced == FORCE_TEXT
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with Store(world.state) as store:
            done = transactions(store, (State.COMMITTED,))
        if done:
            break
        time.sleep(0.2)
    [txn] = done
    assert txn.plan.session_id == "s-full" and txn.target_id
    assert "模型拒绝提前切走" in txn.plan.first_message  # the ignored warning is on the card
    assert "以后不要改 API" in txn.plan.first_message
    assert kinds(world)[:2] == ["model-nudge", "force-graft"]
    [target] = world.targets(txn.plan.identity)
    assert target == txn.target_id
    # Another burst of tool calls above the cut does not start a second handoff.
    transcript.step(77_000)
    denied = hook(world, "PreToolUse", transcript.payload(tool_name="Bash", tool_input={}))
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_digest_folded_in_pieces_equals_the_whole_and_round_trips() -> None:
    events: list[dict[str, Any]] = []
    for turn in range(1, 9):
        events.append({"type": "turn/start", "seq": len(events), "data": {"turn": turn}})
        usage = {"inputTokens": 1_000 * turn * turn, "outputTokens": 5}
        message = {"role": "assistant", "content": [], "source": {"kind": "model", "model": "m"}}
        events.append(
            {
                "type": "assistant/message",
                "seq": len(events),
                "data": {"message": message, "usage": usage},
            }
        )
    whole = Digest.of(events)
    pieces = Digest()
    for start in range(0, len(events), 3):
        pieces = Digest.from_json(orjson.loads(orjson.dumps(pieces.as_json())))
        pieces.extend(events[start : start + 3])
    assert pieces == whole
    assert whole.count == 16 and whole.ordinal == 8 and len(whole.levels) == 6


def test_a_waiting_handoff_is_claimed_only_once_delivered(world: World) -> None:
    with Store(world.state) as store:
        begin(store, plan_for("s-src", str(world.cwd)), ignite=False)
        offered = live.pickup(store, "claude", "s-lost", str(world.cwd))
        assert offered is not None  # …but its answer never reached the harness: no commit
        again = live.pickup(store, "claude", "s-next", str(world.cwd))
        assert again is not None and again.text == offered.text
        again.commit(store)
        assert live.pickup(store, "claude", "s-third", str(world.cwd)) is None
        assert ledger.retirement(store, "claude", "s-src").target_id == "s-next"  # type: ignore[union-attr]


# -- the hot path: sessions far below the band are answered from their room hint --------------


def watched(world: World, session: str) -> tuple[Any, ...]:
    """What the watermark keeps of a session: its watch row and its tail cursor."""
    with Store(world.state) as store:
        row = store.db.execute(
            "SELECT digest, state, updated_at FROM graft_watch WHERE session_id = ?", (session,)
        ).fetchone()
        cursor = store.db.execute(
            "SELECT cursor FROM transcript_tails WHERE consumer = 'graft' AND path LIKE ?",
            (f"%{session}.jsonl",),
        ).fetchone()
    return tuple(row or ()) + tuple(cursor or ())


def pad(transcript: Transcript, size: int) -> None:
    """A tool result of about `size` bytes: logged content the next request carries."""
    result = {"type": "tool_result", "tool_use_id": "pad", "content": "x" * size}
    transcript.write({"type": "user", "message": {"role": "user", "content": [result]}})


def test_a_session_far_below_the_band_is_answered_without_reading_its_log(world: World) -> None:
    transcript = Transcript(world, "s-small").prompt("整理一下目录").step(10_000)
    assert context(hook(world, "PostToolUse", transcript.payload())) == ""  # checked in full
    kept = watched(world, "s-small")
    assert kept
    for tokens in (10_200, 10_400, 10_600):
        transcript.step(tokens)
        assert context(hook(world, "PostToolUse", transcript.payload())) == ""
    assert watched(world, "s-small") == kept  # no tail read, no fold, nothing written
    # Grown by logged content past its room: checked again, and the band's word arrives.
    pad(transcript, 52_000)
    transcript.step(72_000)
    nudge = context(hook(world, "PostToolUse", transcript.payload()))
    assert "72%" in nudge and "graft_slice_and_inject" in nudge
    with Store(world.state) as store:
        (raw,) = store.db.execute(
            "SELECT digest FROM graft_watch WHERE session_id = 's-small'"
        ).fetchone()
    folded = Digest.from_json(orjson.loads(raw))
    assert folded.context == 72_000
    assert folded.count > Digest.from_json(orjson.loads(kept[0])).count + 3 * 3  # skipped ones too


def late_step(transcript: Transcript, tokens: int, delay_s: float) -> dict[str, Any]:
    """A model request at `tokens` calling Bash, whose line is written `delay_s` seconds from
    now, as Claude Code's write queue does behind a quick tool's PostToolUse; the payload the
    hook gets at once (it names the call)."""
    call = f"toolu_late{transcript.steps + 1}"
    record = transcript.request(tokens, "Bash", {"command": "ls"}, call)
    threading.Timer(delay_s, transcript.write, (record,)).start()
    return transcript.payload(tool_name="Bash", tool_use_id=call)


@pytest.mark.parametrize("hinted", [False, True], ids=["full check", "room hint"])
def test_a_hook_ahead_of_the_log_waits_for_its_calls_line(world: World, hinted: bool) -> None:
    transcript = Transcript(world, "s-late").prompt("跑一下测试").step(40_000)
    assert context(hook(world, "PostToolUse", transcript.payload())) == ""
    rooms = world.state / marker.ROOM_DIR
    assert any(rooms.iterdir())  # a room hint was kept: the raw path reads it first
    if not hinted:
        marker.forget(str(world.state), str(transcript.path))
    pad(transcript, 30_000)  # the logged result the next request carries
    payload = late_step(transcript, 72_000, 0.3)
    nudge = context(hook(world, "PostToolUse", payload))
    assert "72%" in nudge and "graft_slice_and_inject" in nudge
    assert not (world.state / "hooks.log").exists()


def test_a_call_whose_line_never_comes_is_judged_as_the_log_is(world: World) -> None:
    transcript = Transcript(world, "s-never").prompt("跑一下测试").step(40_000)
    payload = transcript.payload(tool_name="Bash", tool_use_id="toolu_never")
    assert context(hook(world, "PostToolUse", payload)) == ""
    assert "tool call 'toolu_never' in time" in (world.state / "hooks.log").read_text()


def test_skipping_changes_no_decision(world: World) -> None:
    """The same session twice, one answered from its room hint where it can be, the other
    checked in full at every call (its hint dropped before each): the same answers, the same
    state kept."""
    hinted, every = Transcript(world, "s-hinted"), Transcript(world, "s-every")
    script: list[tuple[str, int]] = [
        ("prompt", 0),
        ("step", 20_000),
        ("step", 21_000),
        ("pad", 20_000),
        ("step", 40_000),
        ("step", 41_000),
        ("pad", 30_000),
        ("step", 71_000),
        ("step", 71_500),
        ("step", 72_000),
    ]
    answers: dict[str, list[str]] = {"s-hinted": [], "s-every": []}
    for action, value in script:
        for transcript in (hinted, every):
            if action == "prompt":
                transcript.prompt("把测试补齐")
                continue
            if action == "pad":
                pad(transcript, value)
                continue
            transcript.step(value)
            if transcript is every:
                marker.forget(str(world.state), str(every.path))
            said = context(hook(world, "PostToolUse", transcript.payload()))
            answers[transcript.session].append(said.replace(transcript.session, "…"))
    assert answers["s-hinted"] == answers["s-every"]
    assert sum(bool(said) for said in answers["s-every"]) == 2  # the nudge, the escalation
    assert watched(world, "s-hinted")[:2] == watched(world, "s-every")[:2]


def test_a_prompt_answered_from_the_room_hint_changes_no_decision(world: World) -> None:
    """Prompts between tool calls, in one session answered from its room hint where it can
    be, in the other checked in full (the hint dropped before every call): the same answers
    to the prompts and the tool calls, the same state kept."""
    hinted, every = Transcript(world, "s-hinted"), Transcript(world, "s-every")
    script: list[tuple[str, Any]] = [
        ("prompt", "把测试补齐"),
        ("step", 20_000),
        ("step", 21_000),
        ("prompt", "再看看日志"),  # far below the band: the hinted one reads nothing
        ("pad", 20_000),
        ("step", 40_000),
        ("prompt", "继续"),
        ("step", 71_000),  # the nudge
        ("prompt", "还要多久"),  # a new turn in the band: warned again through the prompt
        ("step", 71_500),
        ("step", 72_000),
    ]
    answers: dict[str, list[str]] = {"s-hinted": [], "s-every": []}
    skipped = 0
    for action, value in script:
        for transcript in (hinted, every):
            if action == "pad":
                pad(transcript, value)
                continue
            if transcript is every:
                marker.forget(str(world.state), str(every.path))
            if action == "prompt":
                transcript.prompt(value)
                size = marker.transcript_size(str(transcript.path))
                quiet = marker.quiet(str(world.state), str(transcript.path), size, None)
                before = watched(world, transcript.session)
                answer = hook(world, "UserPromptSubmit", transcript.payload(prompt=value))
                if transcript is hinted and quiet:  # neither the log read nor the store written
                    assert watched(world, transcript.session) == before
                    skipped += 1
            else:
                transcript.step(value)
                answer = hook(world, "PostToolUse", transcript.payload())
            said = context(answer)
            answers[transcript.session].append(said.replace(transcript.session, "…"))
    assert answers["s-hinted"] == answers["s-every"]
    # The first prompt (no request logged yet) and the one far below the band; the next one
    # follows a request of the turn it began (skipped below its ceilings), which the next
    # turn's ceiling was not found for: checked in full (and the one in the band, where a new
    # turn is told at once).
    assert skipped == 2
    assert sum("71%" in said for said in answers["s-every"]) == 2  # the nudge, told again
    assert watched(world, "s-hinted")[:2] == watched(world, "s-every")[:2]


def test_a_log_with_no_request_yet_is_answered_without_the_store(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prompts to a session whose log holds no model request yet, in one session answered
    without a check (no usage: nothing to measure), in the other checked in full: the same
    answers, the plan-first nudge and a first request already in the band still told (a few
    bytes of log bound nothing: the first request's context is mostly unlogged)."""
    fresh = marker._fresh
    monkeypatch.setattr(  # (the one checked in full: as if its log were not fresh)
        marker, "_fresh", lambda path, size: "s-every" not in path and fresh(path, size)
    )
    hinted, every = Transcript(world, "s-hinted"), Transcript(world, "s-every")
    todos = {"todos": [{"content": f"第 {n} 步", "status": "pending"} for n in range(5)]}
    use = {"type": "tool_use", "id": "todo", "name": "TodoWrite", "input": todos}
    script: list[tuple[str, Any]] = [
        ("prompt", "开始"),
        ("attachment", {"type": "hook_additional_context", "content": ["x"]}),
        ("prompt", "继续"),
        ("line", {"type": "assistant", "message": {"role": "assistant", "content": [use]}}),
        ("prompt", "还有"),  # a todo list, no usage: the plan-first nudge
        ("step", 72_000),  # the first usage, in the band
        ("prompt", "再来"),
    ]
    answers: dict[str, list[str]] = {"s-hinted": [], "s-every": []}
    skipped = []
    for action, value in script:
        for transcript in (hinted, every):
            if action == "attachment":
                transcript.write({"type": "attachment", "attachment": value})
                continue
            if action == "line":
                transcript.write(value)
                continue
            if action == "prompt":
                transcript.prompt(value)
                answer = hook(world, "UserPromptSubmit", transcript.payload(prompt=value))
            else:
                transcript.step(value)
                answer = hook(world, "PostToolUse", transcript.payload())
            if transcript is hinted:
                skipped.append(not watched(world, hinted.session))
            said = context(answer)
            answers[transcript.session].append(said.replace(transcript.session, "…"))
    assert answers["s-hinted"] == answers["s-every"]
    told = answers["s-every"]
    assert told[:2] == ["", ""] and "阶段节点" in told[2]
    assert "72%" in told[3] and "72%" in told[4]  # the nudge, told again in the new turn
    assert skipped == [True, True, False, False, False]  # no store row until the todo list
    assert watched(world, "s-hinted")[:2] == watched(world, "s-every")[:2]


def test_a_call_writing_a_todo_list_is_never_skipped(world: World) -> None:
    transcript = Transcript(world, "s-todo").prompt("重构").step(10_000)
    hook(world, "PostToolUse", transcript.payload())
    todos = {"todos": [{"content": f"第 {n} 步", "status": "pending"} for n in range(5)]}
    transcript.step(10_200, tool="TodoWrite", tool_input=todos)
    answer = hook(world, "PostToolUse", transcript.payload(tool_name="TodoWrite", tool_input=todos))
    assert "阶段节点" in context(answer)


def test_a_changed_configuration_voids_the_room_hint(world: World) -> None:
    transcript = Transcript(world, "s-config").prompt("继续").step(10_000)
    hook(world, "PostToolUse", transcript.payload())
    transcript.step(10_500)
    assert context(hook(world, "PostToolUse", transcript.payload())) == ""
    # A much smaller window: the same usage is now in the band.
    (world.state / "config.toml").write_text(FIXED.replace("100000", "14500"))
    transcript.step(10_500)
    assert "72%" in context(hook(world, "PostToolUse", transcript.payload()))


def imported_by(world: World, transcript: Transcript) -> set[bytes]:
    """The modules one PostToolUse call imports (a Read, as Claude Code sends it)."""
    done = run_dshkit(
        "hook",
        "PostToolUse",
        "--state-dir",
        str(world.state),
        home=world.cwd.parent,
        env={**world.env(), "CLAUDECODE": "1", "PYTHONPROFILEIMPORTTIME": "1"},
        input=orjson.dumps(
            {"hook_event_name": "PostToolUse", **transcript.payload(tool_name="Read")}
        ),
        text=False,
        timeout=60,
        process=True,  # what a fresh interpreter imports
    )
    assert done.stdout == b""
    return {line.rsplit(b"|", 1)[-1].strip() for line in done.stderr.splitlines()}


@pytest.mark.process
def test_a_skipped_call_imports_no_json_parser_and_no_store(world: World) -> None:
    transcript = Transcript(world, "s-lean").prompt("看看").step(10_000)
    checked = imported_by(world, transcript)  # the first call: checked in full
    assert b"sqlite3" in checked and b"zstandard" not in checked  # a plain log: no zstd
    transcript.step(10_100)
    imported = imported_by(world, transcript)
    assert b"dshkit.hooks.run" in imported
    assert imported & {b"json", b"orjson", b"sqlite3", b"dshkit.hooks.dispatch"} == set()


def test_a_prompt_voids_the_room_in_bytes_but_not_the_ceilings(world: World) -> None:
    summary = {"type": "summary", "summary": "开始"}  # no quiet line: only bytes skip it
    within = Transcript(world, "s-bytes").prompt("开始").step(10_000)
    hook(world, "PostToolUse", within.payload())
    kept = watched(world, "s-bytes")
    within.write(summary)
    within.step(10_100)
    hook(world, "PostToolUse", within.payload())
    assert watched(world, "s-bytes") == kept  # within its room in bytes
    transcript = Transcript(world, "s-prompt").prompt("开始").step(10_000)
    hook(world, "PostToolUse", transcript.payload())
    kept = watched(world, "s-prompt")
    transcript.prompt("再看看这个大文件")
    hook(world, "UserPromptSubmit", transcript.payload(prompt="再看看这个大文件"))
    transcript.step(10_100)
    hook(world, "PostToolUse", transcript.payload())
    assert watched(world, "s-prompt") == kept  # the new turn's request below its ceilings
    transcript.prompt("还有")
    hook(world, "UserPromptSubmit", transcript.payload(prompt="还有"))
    transcript.write(summary)
    transcript.step(10_200)
    hook(world, "PostToolUse", transcript.payload())
    assert watched(world, "s-prompt") != kept  # checked in full: the bytes no longer hold


# -- near the band: calls below the usage ceiling are skipped ----------------------------------

# Dynamic over a 100,000 window: the lines fall as the open turn's rise grows (the growth a cut
# allows for), so the ceiling is found where they meet the rising context.
DYNAMIC = "[graft]\nwindow_tokens = 100000\n"
NEAR_SCRIPTS = {
    "fixed": (
        FIXED,
        [
            ("prompt", 0),
            ("step", 55_000),
            ("step", 60_000),
            ("pad", 5_000),
            ("step", 62_000),
            ("step", 64_000),
            ("prompt", 0),
            ("step", 66_000),
            ("step", 68_000),
            ("step", 69_999),
            ("step", 70_000),
            ("step", 71_000),
            ("step", 72_000),
            ("step", 73_000),  # warned and escalated in this turn: only the forced line counts
            ("step", 74_000),
            ("step", 74_999),
        ],
    ),
    "dynamic": (
        DYNAMIC,
        [
            ("prompt", 0),
            ("step", 30_000),
            ("step", 35_000),
            ("prompt", 0),
            ("step", 38_000),
            ("step", 42_000),
            ("step", 44_000),
            ("step", 45_000),
            ("pad", 2_000),
            ("step", 46_000),
            ("step", 46_500),
            ("step", 47_000),
            ("step", 47_500),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(NEAR_SCRIPTS))
def test_skipping_below_the_ceiling_changes_no_decision(world: World, name: str) -> None:
    """A session near the band twice, one skipped below its usage ceiling where it can be, the
    other checked in full at every call: the same answers and the same decision state after
    every call, the same digest once both were checked, and the first one really skipped."""
    config, script = NEAR_SCRIPTS[name]
    (world.state / "config.toml").write_text(config)
    hinted, every = Transcript(world, "s-hinted"), Transcript(world, "s-every")
    answers: dict[str, list[str]] = {"s-hinted": [], "s-every": []}
    skipped = 0
    for action, value in script:
        for transcript in (hinted, every):
            if action == "prompt":
                transcript.prompt("把测试补齐")
                hook(world, "UserPromptSubmit", transcript.payload(prompt="把测试补齐"))
                continue
            if action == "pad":
                pad(transcript, value)
                continue
            transcript.step(value)
            if transcript is every:
                marker.forget(str(world.state), str(every.path))
            before = watched(world, transcript.session)
            said = context(hook(world, "PostToolUse", transcript.payload()))
            answers[transcript.session].append(said.replace(transcript.session, "…"))
            if transcript is hinted and before and watched(world, hinted.session) == before:
                skipped += 1
        if action == "step":
            assert watched(world, "s-hinted")[1] == watched(world, "s-every")[1]  # the state
    assert answers["s-hinted"] == answers["s-every"]
    told = [said for said in answers["s-every"] if said]
    assert len(told) == 2 and "水位" in told[0] and "水位告急" in told[1]  # nudge, escalation
    for transcript in (hinted, every):  # a last check in full folds what the hinted one skipped
        marker.forget(str(world.state), str(transcript.path))
        assert context(hook(world, "PostToolUse", transcript.payload())) == ""
    assert watched(world, "s-hinted")[:2] == watched(world, "s-every")[:2]
    # Every call below its ceiling, a turn's first ones below the next turn's ceiling too:
    # fixed, the two turns' steps below 70% and the three after the escalation (only the
    # forced line counts then); dynamic, the second turn's below 45% (its next ceiling) and
    # the steps below 47% after the check at 45%.
    assert skipped == {"fixed": 9, "dynamic": 6}[name]


# Many turns, each begun by a prompt and its first steps skipped below the next turn's
# ceiling where they can be: rising levels, a jump, a fall (a compaction), the band reached.
TURNS_SCRIPT: list[tuple[str, int]] = [
    ("prompt", 0),
    ("step", 30_000),
    ("step", 32_000),
    ("prompt", 0),
    ("step", 33_000),
    ("step", 36_000),
    ("prompt", 0),
    ("step", 37_000),
    ("step", 37_500),
    ("prompt", 0),
    ("step", 46_000),  # a jump: more growth per turn, lower lines
    ("step", 47_000),
    ("prompt", 0),
    ("step", 40_000),  # a fall below the turn before's level
    ("step", 48_000),
    ("prompt", 0),
    ("step", 49_000),
    ("step", 55_000),
]
# Then into the band, short of the forced cut (which would start a handoff): dynamic lines
# sit lower than fixed ones (70% / 75%).
TURNS_TAILS = {
    "dynamic": [
        ("prompt", 0),
        ("step", 60_000),
        ("step", 65_000),
        ("step", 66_000),
        ("prompt", 0),
        ("step", 66_200),
        ("step", 66_400),
        ("prompt", 0),
        ("step", 66_600),
    ],
    "fixed": [
        ("prompt", 0),
        ("step", 60_000),
        ("step", 66_000),
        ("step", 69_000),
        ("prompt", 0),
        ("step", 71_000),
        ("step", 72_000),
        ("step", 73_000),
        ("prompt", 0),
        ("step", 73_500),
        ("step", 74_000),
    ],
}


@pytest.mark.parametrize("name", sorted(TURNS_TAILS))
def test_a_turns_first_steps_skipped_below_the_next_ceiling_change_no_decision(
    world: World, name: str
) -> None:
    """Prompts between steps: one session skipped where its turned room hint allows, the
    other checked in full at every call (prompts too): the same answers and state after every
    call, and the first one really skipped some turn's first step."""
    (world.state / "config.toml").write_text({"dynamic": DYNAMIC, "fixed": FIXED}[name])
    script = TURNS_SCRIPT + TURNS_TAILS[name]
    hinted, every = Transcript(world, "s-hinted"), Transcript(world, "s-every")
    answers: dict[str, list[str]] = {"s-hinted": [], "s-every": []}
    first_skipped = 0
    for number, (action, value) in enumerate(script):
        for transcript in (hinted, every):
            if transcript is every:
                marker.forget(str(world.state), str(every.path))
            if action == "prompt":
                transcript.prompt(f"第 {number} 轮")
                answer = hook(world, "UserPromptSubmit", transcript.payload(prompt="继续"))
            else:
                transcript.step(value)
                before = watched(world, transcript.session)
                answer = hook(world, "PostToolUse", transcript.payload())
                turn_first = script[number - 1][0] == "prompt"
                if transcript is hinted and turn_first and watched(world, hinted.session) == before:
                    first_skipped += 1
            said = context(answer)
            answers[transcript.session].append(said.replace(transcript.session, "…"))
        if action == "step":
            assert watched(world, "s-hinted")[1] == watched(world, "s-every")[1]  # the state
    assert answers["s-hinted"] == answers["s-every"]
    assert any(answers["s-every"])  # the band was reached: told something
    assert first_skipped >= 3
    for transcript in (hinted, every):  # a last check in full folds what the hinted one skipped
        marker.forget(str(world.state), str(transcript.path))
        transcript.step(script[-1][1] + 100)
        hook(world, "PostToolUse", transcript.payload())
    assert watched(world, "s-hinted")[:2] == watched(world, "s-every")[:2]


@pytest.mark.process
def test_a_session_near_the_band_is_skipped_without_a_store_or_json(world: World) -> None:
    transcript = Transcript(world, "s-near").prompt("看看").step(60_000)
    assert b"sqlite3" in imported_by(world, transcript)  # no room in bytes: checked in full
    kept = watched(world, "s-near")
    transcript.step(65_000)
    imported = imported_by(world, transcript)
    assert imported & {b"json", b"orjson", b"sqlite3", b"dshkit.hooks.dispatch"} == set()
    assert watched(world, "s-near") == kept
    transcript.step(70_000)  # at the warning line: checked, and told
    assert "70%" in context(hook(world, "PostToolUse", transcript.payload()))


def test_an_out_of_range_value_is_refused_and_the_defaults_still_warn_and_cut(
    world: World,
) -> None:
    # warning_ratio 1.5 is out of range: refused, its default (70%) used; the rest is kept.
    (world.state / "config.toml").write_text(FIXED + "warning_ratio = 1.5\n")
    transcript = Transcript(world, "s-bad").prompt("继续").step(72_000)
    nudge = context(hook(world, "PostToolUse", transcript.payload()))
    assert "72%" in nudge and "graft_slice_and_inject" in nudge
    log = (world.state / "hooks.log").read_text()
    assert "warning_ratio = 1.5" in log and "the default is used instead" in log
    with Store(world.state) as store:
        refused = [r for r in audit_records(store) if r.kind == "settings-refused"]
    assert len(refused) == 1 and "warning_ratio" in refused[0].detail["problem"]
    transcript.step(73_000)
    hook(world, "PostToolUse", transcript.payload())  # escalated; the refusal is audited once
    with Store(world.state) as store:
        assert [r.kind for r in audit_records(store)].count("settings-refused") == 1


def test_model_driven_off_leaves_only_the_forced_cut(world: World) -> None:
    (world.state / "config.toml").write_text(FIXED + "model_driven = false\n")
    transcript = Transcript(world, "s-quiet").prompt("继续").step(72_000)
    assert context(hook(world, "PostToolUse", transcript.payload())) == ""
    transcript.step(73_000)
    assert context(hook(world, "PostToolUse", transcript.payload())) == ""
    assert kinds(world) == []


def test_an_excluded_session_is_warned_but_never_cut(world: World) -> None:
    with Store(world.state) as store:
        ledger.set_excluded(store, "claude", "s-kept", True, by="cli", reason=None)
    transcript = Transcript(world, "s-kept").prompt("继续").step(72_000)
    assert "72%" in context(hook(world, "PostToolUse", transcript.payload()))
    transcript.step(90_000)
    beyond = context(hook(world, "PostToolUse", transcript.payload()))
    assert beyond != FORCE_TEXT and "水位告急" in beyond  # the band runs to the end
    assert "force-graft" not in kinds(world)


@pytest.mark.process
def test_after_a_forced_cut_the_person_is_told_where_the_work_went(world: World) -> None:
    transcript = Transcript(world, "s-cut").prompt("把文档补全").step(76_000)
    assert context(hook(world, "PostToolUse", transcript.payload())) == FORCE_TEXT
    # While the model says where it stopped, the handoff (detached) starts the new session.
    txn = wait_committed(world, "s-cut")
    # The turn ends: Claude Code shows the person a hook's `systemMessage` (never the model).
    stopped = hook(world, "Stop", transcript.payload(stop_hook_active=False))
    told = str(stopped.get("systemMessage", ""))
    assert txn.target_id and txn.target_id in told, stopped
    assert f"claude --resume {txn.target_id}" in told and "强制切断" in told
    assert "hookSpecificOutput" not in stopped  # nothing of it goes to the model
    again = hook(world, "Stop", transcript.payload(stop_hook_active=False))
    assert "systemMessage" not in again  # once


def wait_committed(world: World, session: str) -> Any:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with Store(world.state) as store:
            done = [
                t for t in transactions(store, (State.COMMITTED,)) if t.plan.session_id == session
            ]
        if done:
            return done[0]
        time.sleep(0.2)
    pytest.fail(f"the handoff of {session} did not commit")


def test_a_forced_cut_still_starting_at_the_end_of_the_turn_says_where_to_look(
    world: World,
) -> None:
    from dshkit.graft.hook import on_stop
    from dshkit.hookio import Call

    with Store(world.state) as store:
        with store.transaction() as db:
            live._save(db, "claude", "s-slow", forced_at=ledger.now_ms() - 1_000)
        txn = begin(store, plan_for("s-slow", str(world.cwd)))  # its target not started yet
    call = Call("Stop", {"session_id": "s-slow"}, "claude", str(world.state))
    try:
        answer = on_stop(call)
    finally:
        call.close()
    assert answer is not None and answer.decision is None and not answer.text
    told = answer.notice
    assert "强制切断" in told and f"交接 #{txn.id}" in told
    assert "dshkit graft status --session s-slow" in told
    assert f"dshkit graft cancel --txn {txn.id}" in told


def test_a_harness_that_shows_the_person_nothing_sends_the_model_on_to_say_it(
    world: World,
) -> None:
    from dshkit.graft.hook import on_stop
    from dshkit.graft.lifecycle import claim_pending
    from dshkit.hookio import Call

    with Store(world.state) as store:
        with store.transaction() as db:
            live._save(db, "dsh", "s-dsh", forced_at=ledger.now_ms() - 1_000)
        plan = dataclasses.replace(
            plan_for("s-dsh", str(world.cwd)), harness="dsh", target_harness="dsh"
        )
        txn = begin(store, plan, ignite=False)
        claim_pending(store, txn.id, "dsh", "s-dsh-next")
    call = Call("Stop", {"session_id": "s-dsh"}, "dsh", str(world.state))
    try:
        answer = on_stop(call)
        assert answer is not None and answer.decision is not None
        kind, reason = answer.decision
        assert kind == "block" and reason.startswith(live.RELAY)
        assert "s-dsh-next" in reason and f"交接 #{txn.id}" in reason and not answer.notice
        with Store(world.state) as store:
            assert answer.commit is not None
            answer.commit(store)
        assert on_stop(call).decision is None  # type: ignore[union-attr]  # once
    finally:
        call.close()


def test_a_prompt_to_a_handed_off_source_is_blocked_but_a_model_step_is_not(
    world: World,
) -> None:
    from dshkit.graft.hook import on_prompt
    from dshkit.hookio import Call

    with Store(world.state) as store:
        begin(store, plan_for("s-steps", str(world.cwd)))
    payload = {"session_id": "s-steps", "prompt": "继续", "cwd": str(world.cwd)}
    for step, blocked in ((False, True), (True, False)):
        call = Call("UserPromptSubmit", payload, "claude", str(world.state), step=step)
        try:
            answer = on_prompt(call)
            decided = None if answer is None or answer.decision is None else answer.decision[0]
            assert (decided == "block") is blocked
        finally:
            call.close()


def test_every_session_is_told_once_to_search_only_its_workspace(world: World) -> None:
    transcript = Transcript(world, "s-scope").prompt("找一下旧接口")
    # Off by default: a start says nothing of it.
    assert context(hook(world, "SessionStart", transcript.payload(source="startup"))) == ""
    (world.state / "config.toml").write_text(FIXED + "search_scope = true\n")
    started = context(hook(world, "SessionStart", transcript.payload(source="startup")))
    assert f"搜索文件只在工作区 {world.cwd} 内进行" in started and "AppData" in started
    assert context(hook(world, "SessionStart", transcript.payload(source="resume"))) == ""
    # A compaction drops what was said: it is said again.
    again = context(hook(world, "SessionStart", transcript.payload(source="compact")))
    assert "搜索文件只在工作区" in again
    # Claude Code's first request gets its start's context: a prompt says nothing more.
    said = context(hook(world, "UserPromptSubmit", transcript.payload(prompt="找一下旧接口")))
    assert "搜索文件只在工作区" not in said


def test_a_forced_cut_that_failed_before_its_handoff_began_is_not_reported_as_under_way(
    world: World,
) -> None:
    from dshkit.graft.hook import on_stop
    from dshkit.hookio import Call

    marker.mark(str(world.state))
    with Store(world.state) as store:
        with store.transaction() as db:
            live._save(db, "claude", "s-failed", forced_at=ledger.now_ms() - 2_000)
        ledger.record_force_failure(store, "claude", "s-failed", "constraints truncated")
        with store.transaction() as db:  # and one cut long past, whose handoff never began
            live._save(db, "claude", "s-old", forced_at=ledger.now_ms() - 3_600_000)
    for session in ("s-failed", "s-old"):
        call = Call("Stop", {"session_id": session}, "claude", str(world.state))
        try:
            answer = on_stop(call)
        finally:
            call.close()
        assert answer is not None and not answer.notice and answer.decision is None, session
