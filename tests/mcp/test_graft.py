"""The handoff tools of dshkit's MCP server, in process through the SDK's client, against a
Claude Code transcript and the fake Claude Code CLI: preview, read back, search, hand off (the
target really started), refuse a second handoff, and the debug panel; and `dshkit graft slice`
handing off through the same use case."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp.types import CallToolResult

from dshkit import harnesses
from dshkit.graft.identity import parse_identity
from dshkit.graft.lifecycle import State, cancel, load
from dshkit.mcp.server import build_server
from dshkit.sessions import Source
from dshkit.store import Store

from ..support.cli import run_dshkit
from ..support.graft_driver import Transcript, World, make_world
from ..support.mcp import text, with_client


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    made = make_world(tmp_path)
    for name, value in made.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(made.cwd)  # a harness starts its MCP server in the session's directory
    return made


def call(
    world: World, name: str, arguments: dict[str, Any], harness: str | None = None
) -> CallToolResult:
    sources = [Source("claude", world.claude / "projects")]
    server = build_server(world.state, sources, harness=harness)
    return with_client(server, lambda client: client.call_tool(name, arguments))


def session(world: World) -> Transcript:
    transcript = Transcript(world, "c-src").prompt(
        "把 README 翻译成英文，以后不要改 docs/ 之外的文件"
    )
    transcript.step(20_000, "Bash", {"command": "pytest -q"})
    return transcript


def test_prepare_previews_the_handoff_of_the_calling_session_and_changes_nothing(
    world: World,
) -> None:
    session(world)
    shown = call(world, "graft_prepare", {})
    assert not shown.is_error, text(shown)
    first = text(shown)
    assert parse_identity(first) is not None and "c-src" in first
    assert "以后不要改 docs/ 之外的文件" in first
    facts = shown.structured_content or {}
    assert facts["source"]["sessionId"] == "c-src"
    with Store(world.state) as store:
        assert store.db.execute("SELECT COUNT(*) FROM graft_txns").fetchone()[0] == 0


def test_read_back_and_search_by_the_cards_coordinates(world: World) -> None:
    session(world)
    found = call(world, "graft_search_history", {"sourceSessionId": "c-src", "query": "pytest"})
    assert not found.is_error, text(found)
    hits = (found.structured_content or {})["hits"]
    assert hits and hits[0]["tool"] == "Bash"
    read = call(world, "graft_read_result", {"sourceSessionId": "c-src", "seq": hits[0]["seq"]})
    assert not read.is_error and "pytest -q" in text(read)
    missing = call(world, "graft_read_result", {"sourceSessionId": "c-src", "seq": 999})
    assert missing.is_error and "seq" in text(missing)


@pytest.mark.process
def test_slice_and_inject_starts_the_target_and_a_second_one_is_refused(world: World) -> None:
    session(world)
    done = call(world, "graft_slice_and_inject", {"sessionId": "c-src"})
    assert not done.is_error, text(done)
    assert "不再接收" in text(done)
    txn_id = (done.structured_content or {})["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with Store(world.state) as store:
            txn = load(store, txn_id)
        if txn.state == State.COMMITTED:
            break
        time.sleep(0.2)
    assert txn.state == State.COMMITTED and txn.target_id
    assert world.targets(txn.plan.identity) == [txn.target_id]
    again = call(world, "graft_slice_and_inject", {"sessionId": "c-src"})
    assert again.is_error and "SOURCE_ALREADY_MIGRATED" in text(again)
    panel = call(world, "graft_debug_status", {"sessionId": "c-src"})
    status = (panel.structured_content or {})["session"]
    assert status["retirement"]["kind"] == "retired"
    assert status["retirement"]["targetSessionId"] == txn.target_id


def test_an_unknown_session_is_named_in_the_error(world: World) -> None:
    session(world)
    refused = call(world, "graft_prepare", {"sessionId": "nope"})
    assert refused.is_error and "sessionId" in text(refused)


def test_the_cli_and_the_tool_hand_off_through_the_same_use_case(world: World) -> None:
    # With no headless start the handoff waits for the next session, so nothing else runs:
    # the two handoffs of one unchanged session can be compared whole.
    session(world)
    world.state.mkdir()
    (world.state / "config.toml").write_text("[graft]\nignite_target = false\n")
    out = run_dshkit(
        "graft", "slice", "--session", "c-s", "--root", str(world.claude / "projects"),
        "--harness", "claude", "--json", "--state-dir", str(world.state), home=world.cwd,
    )  # fmt: skip
    by_cli = orjson.loads(out.stdout)
    assert by_cli["state"] == "PENDING" and by_cli["sessionId"] == "c-src"
    with Store(world.state) as store:
        cancel(store, by_cli["id"])  # the source works again, and may hand off once more
    done = call(world, "graft_slice_and_inject", {})  # no id: the session working here
    assert not done.is_error, text(done)
    assert "已登记" in text(done)
    by_tool = done.structured_content or {}
    assert by_tool["id"] == by_cli["id"] + 1
    same = {"id", "createdAt", "updatedAt"}
    assert {k: v for k, v in by_tool.items() if k not in same} == {
        k: v for k, v in by_cli.items() if k not in same
    }
    assert "c-src" in by_tool["card"]
    with Store(world.state) as store:
        assert load(store, by_tool["id"]).plan == load(store, by_cli["id"]).plan
        assert load(store, by_tool["id"]).state == State.PENDING


@pytest.mark.process
def test_a_rolled_back_slice_exits_1_with_its_state(world: World) -> None:
    session(world)
    world.script("fail", "fail")
    world.state.mkdir()
    (world.state / "config.toml").write_text("[graft]\nignite_attempts = 2\nignite_spacing_s = 0\n")
    out = run_dshkit(
        "graft", "slice", "--session", "c-src", "--root", str(world.claude / "projects"),
        "--harness", "claude", "--json", "--state-dir", str(world.state), home=world.cwd,
        check=False,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr  # not done: the source works again
    ended = orjson.loads(out.stdout)
    assert ended["state"] == "ROLLED_BACK" and ended["attempts"] == 2


@pytest.mark.process
def test_two_sessions_in_one_directory_hand_off_by_the_id_the_nudge_names(world: World) -> None:
    session(world)
    other = Transcript(world, "c-other").prompt("另一个会话的工作")
    other.step(10_000)
    guessed = call(world, "graft_slice_and_inject", {})
    assert guessed.is_error  # which one calls cannot be told from the directory

    done = call(world, "graft_slice_and_inject", {"sessionId": "c-src"})
    assert not done.is_error, text(done)
    facts = done.structured_content or {}
    # The tool waited for the outcome: the model is told what to pass on to the person.
    assert facts["state"] in ("VERIFIED", "COMMITTED") and facts["targetSessionId"]
    target = facts["targetSessionId"]
    assert target in text(done) and f"claude --resume {target}" in text(done)
    assert facts["continueCommand"] == f"cd {world.cwd} && claude --resume {target}"
    with Store(world.state) as store:
        assert store.db.execute("SELECT COUNT(*) FROM graft_txns").fetchone()[0] == 1


@pytest.mark.process
def test_the_target_runs_on_the_model_and_mode_the_source_log_names(world: World) -> None:
    transcript = Transcript(world, "c-mode")
    transcript.write(
        {
            "type": "user",
            "message": {"role": "user", "content": "把 README 翻译成英文"},
            "permissionMode": "acceptEdits",
        }
    )
    transcript.step(20_000)  # its model: claude-test
    done = call(world, "graft_slice_and_inject", {"sessionId": "c-mode"})
    assert not done.is_error, text(done)
    [args] = world.call_args()
    assert args["options"] == {"--model": "claude-test", "--permission-mode": "acceptEdits"}
    facts = done.structured_content or {}
    assert (facts["model"], facts["mode"]) == ("claude-test", "acceptEdits")


@pytest.mark.process
def test_a_rolled_back_handoff_is_told_to_the_model_with_why(world: World) -> None:
    session(world)
    world.script("fail", "fail")
    world.state.mkdir()
    (world.state / "config.toml").write_text("[graft]\nignite_attempts = 2\nignite_spacing_s = 0\n")
    done = call(world, "graft_slice_and_inject", {"sessionId": "c-src"})
    assert not done.is_error, text(done)
    assert (done.structured_content or {})["state"] == "ROLLED_BACK"
    assert "回滚" in text(done) and "the API is unreachable" in text(done)
    assert "不再接收" not in text(done)  # the source works on


@pytest.mark.process
@pytest.mark.parametrize("harness", ["claude", "dsh", "codex"])
def test_what_the_handoff_says_reaches_the_model_of_every_harness(
    world: World, harness: str
) -> None:
    # A harness whose client shows a result's structured content in place of its text
    # (Claude Code 2.1.332) is answered with the text alone; the others get both.
    session(world)
    world.script("fail")
    world.state.mkdir()
    (world.state / "config.toml").write_text("[graft]\nignite_attempts = 1\nignite_spacing_s = 0\n")
    done = call(world, "graft_slice_and_inject", {"sessionId": "c-src"}, harness=harness)
    assert not done.is_error, text(done)
    assert "回滚" in text(done) and "the API is unreachable" in text(done)
    drops_text = harnesses.get(harness).mcp_shows_structured
    assert (done.structured_content is None) is drops_text
