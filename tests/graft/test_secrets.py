"""Secrets stay behind (issue 32 item 4): an AWS key, a GitHub token and a connection string
with a password, planted in the commands a session ran and in the person's words, reach
neither the card (board, rules, maybe-rules, the first message), nor the store, nor the
target's command line; the person's rule keeps its words, the value becomes its marker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit import harnesses
from dshkit.graft.constraints import parse_constraints, parse_maybe_rules
from dshkit.graft.handoff import Handoff, build_handoff
from dshkit.graft.identity import Identity
from dshkit.graft.lifecycle import Plan, State, handoff
from dshkit.graft.settings import GraftSettings
from dshkit.sessions.catalog import SessionInfo
from dshkit.store import Store

from ..support.graft_driver import FAST, World

AWS = "AKIAZ3MSJV4WWNKWW5FG"
GITHUB = "ghp_R8vZq2Lm9XwT4bNc7KdP1sYf6HjA3uE0oQiW"
DB_PASSWORD = "Xq7-Lm2p9vRz"
VALUES = (AWS, GITHUB, DB_PASSWORD)
CWD = "/home/dev/work"


def session() -> list[dict[str, Any]]:
    """The person asks, runs commands carrying all three, and types rules holding them."""
    events: list[dict[str, Any]] = []

    def add(kind: str, data: dict[str, Any]) -> None:
        events.append({"type": kind, "seq": len(events), "time": 0, "data": data})

    def user(text: str, turn: int) -> None:
        add("turn/start", {"turn": turn})
        content = [{"type": "text", "text": text}]
        add("user/message", {"role": "user", "content": content, "source": {"kind": "user"}})

    def bash(command: str, output: str, turn: int, error: bool = False) -> None:
        call = f"call-{len(events)}"
        arguments = orjson.dumps({"command": command}).decode()
        add("tool/call", {"turn": turn, "callId": call, "name": "bash", "arguments": arguments})
        message = {
            "role": "tool",
            "source": {"kind": "tool", "callId": call},
            "content": [{"type": "text", "text": output}],
            "isError": error,
        }
        add("tool/result", {"turn": turn, "message": message})

    user(f"把部署脚本修好，AWS key 是 {AWS}。", 1)
    bash(f"AWS_ACCESS_KEY_ID={AWS} pytest -q tests/deploy", "12 passed in 0.4s", 1)
    bash(
        f"git push https://{GITHUB}@github.com/acme/app.git main",
        "To github.com:acme/app.git\n   1a2b3c4..5d6e7f8  main -> main",
        1,
    )
    add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    user(f"以后推送都用 token {GITHUB}，不要把它写进仓库。", 2)
    user(f"数据库是 postgres://admin:{DB_PASSWORD}@db.internal:5432/app 这台。", 3)
    bash(
        f"psql postgres://admin:{DB_PASSWORD}@db.internal:5432/app -c 'select 1'",
        "ERROR: relation does not exist",
        3,
        error=True,
    )
    return events


def prepared() -> Handoff:
    info = SessionInfo("dsh", "src-1", "p", CWD, "t", 1, 0, 0, 0, None, None, 0)
    return build_handoff(info, session(), GraftSettings())


def assert_clean(text: str) -> None:
    for value in VALUES:
        assert value not in text


def test_no_secret_reaches_the_card_the_rules_or_the_first_message() -> None:
    made = prepared()
    assert_clean(made.first_message)
    assert_clean(made.card.text)
    assert_clean(orjson.dumps(made.as_json()).decode())
    board = made.as_json()["board"]
    # the done list still says what ran, with the key's marker in its place
    assert any("[secret: AWS Access Key]" in item["text"] for item in board["done"])
    assert board["blocker"] is not None and "[secret:" in board["blocker"]["text"]
    assert "[secret: AWS Access Key]" in (board["request"] or "")


def test_the_persons_rule_keeps_its_words_and_the_secret_becomes_a_marker() -> None:
    message = prepared().first_message
    rules = parse_constraints(message)
    assert rules is not None
    assert [c.text for c in rules] == [
        "以后推送都用 token [secret: GitHub Token]，不要把它写进仓库。"
    ]
    maybe = parse_maybe_rules(message)
    assert maybe is not None
    assert [c.text for c in maybe] == [
        "数据库是 postgres://admin:[secret: Basic Auth Credentials]@db.internal:5432/app 这台。"
    ]


@pytest.mark.parametrize(("harness", "stands"), [("claude", None), ("codex", "-")])
def test_the_first_message_goes_on_stdin_not_the_command_line(
    harness: str, stands: str | None
) -> None:
    message = prepared().first_message
    launch = harnesses.get(harness).launcher.start("/w", message, model="m1")
    assert launch.stdin == message
    assert message not in launch.argv and not any("graft-identity" in a for a in launch.argv)
    assert "m1" in launch.argv  # its options are still given
    if stands is not None:
        assert launch.argv[-1] == stands
    resumed = harnesses.get(harness).launcher.resume("/w", "s-1", message)
    assert resumed is not None and resumed.stdin == message and message not in resumed.argv


def test_dsh_takes_the_message_on_its_command_line_only_redacted() -> None:
    # rc.8's headless app reads its task from positional words only (no stdin, no file)
    message = prepared().first_message
    launch = harnesses.get("dsh").launcher.start("/w", message)
    assert launch.stdin is None and launch.argv[-1] == message
    assert_clean(" ".join(launch.argv))


@pytest.mark.process
def test_the_target_cli_sees_no_secret_and_no_message_in_its_cmdline(
    world: World, store: Store
) -> None:
    made = prepared()
    plan = Plan(
        "claude",
        "source-1",
        str(world.cwd),
        made.first_message.replace("src-1", "source-1"),
        Identity("source-1", made.identity.boundary_seq, 1),
        made.card.text,
    )
    txn = handoff(store, plan, ignition=FAST)

    assert txn.state == State.COMMITTED
    [call] = world.call_args()
    assert call["message"] == "stdin"  # read as Claude Code reads it with no prompt argument
    cmdline = "\0".join(call["cmdline"])  # the CLI's own /proc/self/cmdline
    assert "graft-identity" not in cmdline and "硬约束" not in cmdline
    assert_clean(cmdline)
    # the target got the whole message, identity line first
    [target] = world.targets(plan.identity)
    assert target == txn.target_id
    # nothing in the state directory holds a value (the store, its WAL, any file)
    for path in Path(store.state_dir).rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for value in VALUES:
                assert value.encode() not in data, path
