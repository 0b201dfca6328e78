"""One use case, one JSON, whichever surface asked: the command line's `--json`, the MCP tool's
structured answer and the HTTP endpoint's body, asked on one state, each conform to the one
TypedDict the use case declares and are equal where they answer the same question.

The world: a person's home with a DSH session that fixed a failing test in a git workspace,
scanned, its memory harvested, and a custom profile text chosen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dshkit.app import DebugStatusJson
from dshkit.graft.wire import HandoffJson, Panel, SessionPart
from dshkit.memory.wire import RecordListJson, RecordViewJson
from dshkit.profile.wire import EffectiveProfileJson, ProfileShowJson
from dshkit.sessions import Source
from dshkit.sessions.wire import SessionDetailJson, SessionInfoJson, SessionViewJson
from dshkit.web.routers.profile import ProfileView
from dshkit.web.routers.sessions import SessionsJson

from .support.cli import invoke, state_of
from .support.contracts import conforms
from .support.memory import fix_session, make_repo, write_session
from .support.surfaces import cli_json, http_json, mcp_json

SESSION = "s-one"
ERROR = "KeyError: 'only-in-one'"  # what the session's failing test said: a record's words
CUSTOM = "请用中文回答，先给结论。"


@dataclass(frozen=True)
class World:
    home: Path
    state: Path
    repo: Path
    sources: list[Source]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    base = tmp_path_factory.mktemp("surfaces")
    home, repo = base / "home", make_repo(base / "work" / "app")
    root = home / ".dsh" / "sessions"
    write_session(root, SESSION, repo, fix_session(error=ERROR))
    invoke("scan", home=home)
    invoke("memory", "harvest", "--all", home=home)
    (base / "custom.txt").write_text(CUSTOM, encoding="utf-8")
    invoke("profile", "custom", "--file", str(base / "custom.txt"), home=home)
    invoke("profile", "mode", "custom", home=home)
    return World(home, state_of(home), repo, [Source("dsh", root)])


def both(shape: Any, *payloads: Any) -> None:
    for payload in payloads:
        conforms(shape, payload)


def test_sessions_list(world: World) -> None:
    cli = cli_json(world.home, "sessions", "list")
    http = http_json(world.state, world.sources, "/api/sessions/")
    both(list[SessionInfoJson], cli)
    both(SessionsJson, http)
    assert [s["id"] for s in cli] == [SESSION]
    assert http["sessions"] == cli


def test_a_session_shown(world: World) -> None:
    """`sessions show` gives the session whole, the console's endpoint a window of it: two
    use cases, each its type, the same session's summary in both."""
    cli = cli_json(world.home, "sessions", "show", SESSION)
    http = http_json(world.state, world.sources, f"/api/sessions/dsh/{SESSION}")
    both(SessionDetailJson, cli)
    both(SessionViewJson, http)
    assert http["session"] == {key: cli[key] for key in http["session"]}
    assert http["humanMessages"]["total"] == len(cli["humanMessageTexts"]) == 1
    assert http["toolCalls"]["total"] == sum(tool["calls"] for tool in cli["tools"].values())


def test_memory_list(world: World) -> None:
    cli = cli_json(world.home, "memory", "list", "--cwd", str(world.repo))
    http = http_json(world.state, world.sources, "/api/memory/records", cwd=str(world.repo))
    both(RecordListJson, cli, http)
    assert cli["records"] and cli["workspace"] == {"root": str(world.repo), "remote": None}
    assert cli == http


def test_memory_search(world: World) -> None:
    cli = cli_json(world.home, "memory", "search", "only-in-one", "--cwd", str(world.repo))
    mcp = mcp_json(
        world.state,
        world.sources,
        "memory_search",
        {"query": "only-in-one", "cwd": str(world.repo)},
        cwd=str(world.repo),
    )
    http = http_json(
        world.state, world.sources, "/api/memory/search", q="only-in-one", cwd=str(world.repo)
    )
    both(RecordListJson, cli, mcp, http)
    assert cli["records"] and cli["records"][0]["source"]["sessionId"] == SESSION
    assert cli == http
    # The agent's view (the MCP tool): the same records, rescanned, each observed record's
    # text dshkit's template and its external text fenced (tests/memory/test_structural.py).
    assert [r["id"] for r in mcp["records"]] == [r["id"] for r in cli["records"]]
    assert all("only-in-one" not in r["text"] for r in mcp["records"])


def test_memory_record(world: World) -> None:
    first = cli_json(world.home, "memory", "list", "--cwd", str(world.repo))["records"][0]["id"]
    cli = cli_json(world.home, "memory", "show", str(first))
    mcp = mcp_json(world.state, world.sources, "memory_get", {"id": first}, cwd=str(world.repo))
    http = http_json(world.state, world.sources, f"/api/memory/records/{first}")
    both(RecordViewJson, cli, mcp, http)
    assert cli["id"] == first and cli["current"] is True
    assert cli == http
    # The agent's view (the MCP tool) differs only where text from outside is: fenced.
    same = ("id", "kind", "subject", "workspace", "validFrom", "source", "grade", "current")
    assert {k: mcp[k] for k in same} == {k: cli[k] for k in same}


def test_graft_debug_status(world: World) -> None:
    """The CLI and the MCP tool give graft's panel with memory's counts; the HTTP endpoint the
    panel alone, or one session's part of it."""
    cli = cli_json(world.home, "graft", "debug-status", "--session", SESSION)
    mcp = mcp_json(world.state, world.sources, "graft_debug_status", {"sessionId": SESSION})
    both(DebugStatusJson, cli, mcp)
    assert cli == mcp
    part = http_json(world.state, world.sources, "/api/graft/status", session=SESSION)
    both(SessionPart, part)
    assert part == cli["session"] and part["sessionId"] == SESSION
    whole = cli_json(world.home, "graft", "debug-status")
    panel = http_json(world.state, world.sources, "/api/graft/status")
    both(Panel, panel)
    assert panel == {key: value for key, value in whole.items() if key != "memory"}


def test_graft_prepare(world: World) -> None:
    cli = cli_json(world.home, "graft", "prepare", "--session", SESSION)
    mcp = mcp_json(world.state, world.sources, "graft_prepare", {"sessionId": SESSION})
    http = http_json(world.state, world.sources, "/api/graft/preview", session=SESSION)
    both(HandoffJson, cli, mcp, http)
    assert cli["source"]["sessionId"] == SESSION
    assert cli == mcp == http


def test_the_profile_the_agent_is_given(world: World) -> None:
    """Three views of the profile, each its own type: the MCP tool gives the injected text,
    `profile show` that and the version behind it, the console's state all it shows; the
    text, its mode and its source are the same in each."""
    mcp = mcp_json(world.state, world.sources, "profile_show", {})
    cli = cli_json(world.home, "profile", "show")
    http = http_json(world.state, world.sources, "/api/profile/state")
    both(EffectiveProfileJson, mcp)
    both(ProfileShowJson, cli)
    both(ProfileView, http)
    assert mcp["text"] == cli["effectiveText"] == http["effectiveText"] == CUSTOM
    assert mcp["mode"] == cli["mode"] == http["mode"] == "custom"
    assert mcp["source"] == cli["effectiveSource"] == http["effectiveSource"]
    assert (cli["profile"], cli["lastRun"]) == (http["profile"], http["lastRun"])


def test_a_payload_that_breaks_its_type_is_caught() -> None:
    """The check is strict: a missing field, a field the type does not name, a wrong kind of
    value (true is no integer), each named by where it is."""
    good = {"harness": "dsh", "id": "x", "project": "p", "cwd": "/", "title": "t", "files": 1}
    good |= {"events": 2, "humanMessages": 1, "toolCalls": 0, "firstTime": None, "lastTime": 5}
    conforms(SessionInfoJson, good)
    for bad, said in [
        ({k: v for k, v in good.items() if k != "cwd"}, "without ['cwd']"),
        (good | {"extra": 1}, "has no field ['extra']"),
        (good | {"files": True}, "$.files"),
        (good | {"lastTime": "5"}, "$.lastTime"),
    ]:
        with pytest.raises(AssertionError, match=re.escape(said)):
            conforms(SessionInfoJson, bad)
    with pytest.raises(AssertionError, match=r"\$\[0\]\.files"):
        conforms(list[SessionInfoJson], [good | {"files": 1.5}])
