"""A session's standing in the handoff ledger as the hot path looks at it (`graft.standing`),
against what graft's faces read from the store loaded in full, through a handoff's life: a
look that says "nothing" is one the face has nothing to say to."""

from __future__ import annotations

from pathlib import Path

from dshkit.graft import ledger, live, marker, standing
from dshkit.graft.lifecycle import begin, claim_pending, release
from dshkit.store import Store

from ..support.graft_driver import plan_for

SESSIONS = ("src", "tgt", "other")


def payload(session: str) -> bytes:
    return b'{"hook_event_name":"PreToolUse","session_id":"' + session.encode() + b'"}'


def looks(state: Path, store: Store, cwd: str) -> dict[str, tuple[bool, bool, bool]]:
    """Each session's looks (tool call, turn's end, prompt), checked against the faces' own
    reads: the tool call's look is the ledger's retirement exactly; a quiet turn's end has no
    forced cut to report; a clear prompt is owed no pointer, notice or pickup."""
    seen = {}
    for session in SESSIONS:
        tool = standing.quiet_tool(str(state), payload(session))
        stop = standing.quiet_stop(str(state), payload(session))
        prompt = standing.clear(str(state), session)
        retired = live.retired(store, "claude", session)
        assert tool == (retired is None), session
        if stop:
            assert live.forced_report(store, "claude", session, 0.0) is None, session
        if prompt:
            assert retired is None, session
            assert ledger.owed_notices(store, "claude", session) is None, session
            assert live.pickup(store, "claude", session, cwd) is None, session
        seen[session] = (tool, stop, prompt)
    return seen


def test_the_looks_say_nothing_only_where_the_faces_have_nothing_to_say(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    cwd = str(tmp_path)
    # No store yet: nothing is known, the faces decide (and open it).
    assert not standing.quiet_tool(str(state), payload("src"))
    assert not standing.quiet_stop(str(state), payload("src"))
    assert not standing.clear(str(state), "src")
    quiet = (True, True, True)
    with Store(state) as store:
        marker.mark(str(state))
        assert looks(state, store, cwd) == dict.fromkeys(SESSIONS, quiet)
        # A handoff waiting for the next session in its directory: its source is
        # transferring, and any prompt may be the one to pick it up.
        txn = begin(store, plan_for("src", cwd), ignite=False)
        assert looks(state, store, cwd) == {
            "src": (False, True, False),
            "tgt": (True, True, False),
            "other": (True, True, False),
        }
        # Picked up by "tgt": the source is retired, the target works.
        claim_pending(store, txn.id, "claude", "tgt")
        assert looks(state, store, cwd) == {
            "src": (False, True, False),
            "tgt": quiet,
            "other": quiet,
        }
        # Released: the source works again and is told so once; until then, its prompt is
        # the face's.
        release(store, "claude", "src")
        assert looks(state, store, cwd)["src"] == (True, True, False)
        owed = ledger.owed_notices(store, "claude", "src")
        assert owed is not None
        ledger.mark_shown(store, "claude", "src", owed.txn_ids)
        assert looks(state, store, cwd)["src"] == quiet
        # A forced cut started for "other": where its work went is reported at its turn's end.
        with store.transaction() as db:
            live._save(db, "claude", "other", forced_at=ledger.now_ms())
        assert looks(state, store, cwd)["other"] == (True, False, False)
        assert live.forced_report(store, "claude", "other", 0.0) is not None


def test_a_session_id_the_byte_scan_cannot_read_is_left_to_the_face(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    with Store(state):
        pass
    assert standing.quiet_tool(str(state), payload("plain"))
    for raw in (
        b'{"session_id":"esc\\"aped"}',  # an escape: not read by the byte scan
        b'{"session_id":"a","x":{"session_id":"b"}}',  # named twice
        b'{"session_id":""}',
        b'{"tool_name":"Read"}',
    ):
        assert not standing.quiet_tool(str(state), raw), raw
        assert not standing.quiet_stop(str(state), raw), raw
    assert not standing.clear(str(state), "")
