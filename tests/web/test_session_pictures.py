"""The reads behind the console's pictures, over real HTTP: a session's context use over its
turns with the lines of each and its handoff boundary, where the profile's quotes were said
in it, and each session's friction counts with its harness, project and day."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import httpx
import pytest

from dshkit.graft import GraftService
from dshkit.jobs import JobRunner
from dshkit.sessions import Scanner, SessionsService, Source
from dshkit.store import Store

from ..support.console import SESSION, friction_session
from ..support.context_session import (
    CONTEXT_SESSION,
    CONTEXTS,
    LINES,
    QUOTE_ENTRY,
    QUOTED,
    WINDOW,
    ContextWorld,
    cut_and_quote,
    write_context_session,
)
from ..support.profile import PROFILE
from ..support.web import Running


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[Running, ContextWorld]]:
    def capabilities(state: Path, jobs: JobRunner) -> dict[str, object]:
        sources = [Source("dsh", tmp_path / "sessions")]
        return {
            "graft": GraftService(state, sources=sources),
            "sessions": SessionsService(state, sources=sources),
            "signals": None,  # the app's own: the profile's and the status service's
        }

    server = Running(tmp_path, capabilities=capabilities)
    boundary, quoted, long_call = write_context_session(server.root)
    friction_session(server.root)
    with Store(server.state_dir) as store:
        Scanner(store).scan([Source("dsh", server.root)])
        txn = cut_and_quote(store, server.root, boundary, PROFILE)
    yield server, ContextWorld(boundary, quoted, long_call, txn)
    server.close()


def get(running: Running, path: str, **params: str) -> httpx.Response:
    """A read as the console makes it (its cookie, no token)."""
    return running.http.get(f"http://127.0.0.1:{running.port}/api{path}", params=params)


def test_context_use_per_turn_with_its_lines_and_the_handoff_boundary(
    running: tuple[Running, ContextWorld],
) -> None:
    server, world = running
    answer = get(server, f"/graft/context/dsh/{CONTEXT_SESSION[:9]}")
    assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
    used = answer.json()
    assert (used["harness"], used["session"], used["mode"]) == ("dsh", CONTEXT_SESSION, "dynamic")
    turns = used["turns"]
    assert [t["turn"] for t in turns] == [1, 2, 3, 4, 5]
    assert [t["tokens"] for t in turns] == list(CONTEXTS)
    assert {(t["window"], t["windowSource"]) for t in turns} == {(WINDOW, "log")}
    assert [(t["forced"], t["warning"]) for t in turns] == [pytest.approx(line) for line in LINES]
    assert [t["warningTokens"] for t in turns] == [70_000, 53_000, 53_000, 56_000, 62_375]
    assert [t["forcedTokens"] for t in turns] == [75_000, 58_000, 58_000, 61_000, 67_375]
    # Turn 4 is the one in the warning band (0.57 against 0.56), none reached the forced cut.
    assert used["firstWarningTurn"] == 4 and used["firstForcedTurn"] is None
    assert used["peak"]["turn"] == 5 and used["peak"]["ratio"] == pytest.approx(0.575)
    assert all(t["start"] <= t["end"] for t in turns)
    assert all(a["end"] < b["start"] for a, b in pairwise(turns))
    (cut,) = used["boundaries"]
    assert cut["txnId"] == world.txn.id and cut["state"] == "PENDING" and cut["role"] == "source"
    assert cut["seq"] == world.boundary_seq and cut["turn"] == 3
    assert turns[2]["start"] <= cut["time"] <= turns[2]["end"]

    # A session nothing cut has no boundary; one not there is a 404; a bad harness a 400.
    friction = get(server, f"/graft/context/dsh/{SESSION}").json()
    assert friction["boundaries"] == [] and friction["peak"] is None
    assert [(t["turn"], t["tokens"], t["ratio"]) for t in friction["turns"]] == [
        (1, None, None),
        (2, None, None),
    ]  # its log reports no usage
    assert get(server, "/graft/context/dsh/no-such-session").status_code == 404
    assert get(server, f"/graft/context/nope/{SESSION}").status_code == 400


def test_the_quotes_said_in_a_session_with_their_entries(
    running: tuple[Running, ContextWorld],
) -> None:
    server, world = running
    answer = get(server, f"/sessions/dsh/{CONTEXT_SESSION}/quoted")
    assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
    (mark,) = answer.json()["quotes"]
    assert mark["label"] == QUOTE_ENTRY and mark["quote"] == QUOTED
    assert mark["seq"] == world.quoted_seq and mark["claim"] == "要求图表画出预警线"
    assert isinstance(mark["time"], int)
    # The profile's other entries quote "x", said in none of this session's messages.
    assert get(server, f"/sessions/dsh/{SESSION}/quoted").json() == {"quotes": []}
    assert get(server, "/sessions/dsh/no-such-session/quoted").status_code == 404


def test_each_sessions_friction_with_its_harness_project_and_day(
    running: tuple[Running, ContextWorld],
) -> None:
    server, world = running
    found = get(server, "/signals/sessions")
    assert found.status_code == 200 and found.headers["cache-control"] == "no-store"
    body = found.json()
    rows = {row["sessionId"]: row for row in body["sessions"]}
    assert body["signals"] == get(server, "/signals").json()["signals"]
    context, friction = rows[CONTEXT_SESSION], rows[SESSION]
    assert context["project"] != friction["project"]
    assert context["harness"] == friction["harness"] == "dsh"
    assert context["totals"]["longTools"] == 1 and context["totals"]["repeatFailures"] == 0
    assert friction["totals"]["longTools"] == 1 and friction["totals"]["repeatFailures"] == 1
    # The same counts as the totals per day and harness, summed back.
    totals = get(server, "/signals").json()
    for day in totals["days"]:
        mine = [r for r in body["sessions"] if r["day"] == day["day"] and r["harness"] == "dsh"]
        for name in body["signals"]:
            assert sum(r["totals"][name] for r in mine) == day["totals"][name], (day, name)
    # One harness, one session.
    one = get(server, "/signals/sessions", harness="dsh", session=CONTEXT_SESSION).json()
    assert one["sessions"] == [context]
    assert get(server, "/signals/sessions", harness="claude").json()["sessions"] == []
    assert get(server, "/signals/sessions", harness="nope").status_code == 400
    # The hits of one session are where its counts come from.
    hits = get(server, "/signals/hits", signal="longTools", session=CONTEXT_SESSION).json()
    assert hits["total"] == 1 and hits["hits"][0]["callSeq"] == world.long_call_seq
