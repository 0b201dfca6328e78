"""The gate's quiet checks (`gate.glance`) against the faces they stand in for: a shell
command they call quiet is one after which `GateService.commanded` records and starts
nothing, a turn's end they leave to the step after the answer is one `at_stop` hands nothing
back at; and where a deliverable changed or was recorded, they leave the call to the face."""

from __future__ import annotations

import os
import time
from pathlib import Path

from dshkit.gate import delivery, glance
from dshkit.gate.glance import quiet_command, quiet_stop
from dshkit.gate.rework import NOT_FAILURES
from dshkit.gate.service import GateService
from dshkit.quiet import AFTER
from dshkit.store import GATE_REWORK_DELIVERY, Store

from ..support.gate import stored_verdict


def raw(session: str, cwd: Path | str | None) -> bytes:
    where = b"" if cwd is None else b',"cwd":"' + str(cwd).encode() + b'"'
    return b'{"session_id":"' + session.encode() + b'"' + where + b',"tool_name":"Bash"}'


def places(tmp_path: Path) -> tuple[Path, Path]:
    """A state directory and a project directory under `tmp_path`, both made."""
    state, cwd = tmp_path / "state", tmp_path / "proj"
    state.mkdir(mode=0o700)
    cwd.mkdir()
    return state, cwd


def recorded(state: Path) -> int:
    with Store(state) as store:
        return int(store.db.execute("SELECT count(*) FROM gate_writes").fetchone()[0])


def agrees(state: Path, session: str, cwd: Path) -> tuple[bool | str, bool | str]:
    """Both checks for `session` in `cwd`; where they say quiet, the faces do nothing."""
    command, stop = (
        quiet_command(str(state), raw(session, cwd)),
        quiet_stop(str(state), raw(session, cwd)),
    )
    gate = GateService(state)
    key = ("claude", session)
    if command is True:
        before = recorded(state)
        assert gate.commanded(key, str(cwd)) == []
        assert recorded(state) == before
    if stop == AFTER:
        assert gate.at_stop(key, str(cwd), time.monotonic()) is None
    return command, stop


def test_a_turn_that_changed_no_deliverable_is_quiet_and_one_that_did_is_not(
    tmp_path: Path,
) -> None:
    state, cwd = tmp_path / "state", tmp_path / "proj"
    state.mkdir(mode=0o700)
    (cwd / "site").mkdir(parents=True)
    old = cwd / "site" / "old.html"
    old.write_text("<p>before</p>")
    long_ago = time.time() - 3600
    os.utime(old, (long_ago, long_ago))
    # No store yet: no turn began, nothing was recorded.
    assert quiet_command(str(state), raw("s1", cwd)) is True
    assert quiet_stop(str(state), raw("s1", cwd)) == AFTER
    # A session the gate never saw a turn of: nothing to scan for.
    assert agrees(state, "s1", cwd) == (True, AFTER)
    # Its turn began (a prompt): what changed before it is not this turn's.
    GateService(state).at_prompt(("claude", "s1"))
    (cwd / "notes.txt").write_text("not a deliverable")
    assert agrees(state, "s1", cwd) == (True, AFTER)
    # A deliverable written since: the faces' (the scan finds it; another session's turn,
    # begun later, does not see it).
    time.sleep(0.01)
    GateService(state).at_prompt(("claude", "s2"))
    time.sleep(0.01)
    fresh = cwd / "site" / "report.htm"
    fresh.write_text("<p>new</p>")
    stamp = time.time() + 1
    os.utime(fresh, (stamp, stamp))
    assert quiet_command(str(state), raw("s1", cwd)) == AFTER  # (the face, after the answer)
    assert quiet_stop(str(state), raw("s1", cwd)) is False
    earlier = time.time() - 60
    os.utime(fresh, (earlier, earlier))  # (written before either turn began, after all)
    assert agrees(state, "s2", cwd) == (True, AFTER)


def test_a_turns_end_is_quiet_once_every_recorded_deliverable_is_judged_and_handed_back(
    tmp_path: Path,
) -> None:
    # A session that built a web page: each later turn's end costs the gate a look while its
    # deliverables, as they are now, have verdicts that are no failure or were handed back.
    state, cwd = places(tmp_path)
    page, other = cwd / "page.html", cwd / "other.svg"
    page.write_text("<p>one</p>")
    long_ago = time.time() - 3600
    os.utime(page, (long_ago, long_ago))
    gate, key = GateService(state), ("claude", "s1")
    with Store(state) as store:
        delivery.note_writes(store, key, [page, other])  # (other: never written, or removed)
    assert quiet_stop(str(state), raw("s1", cwd)) is False  # not judged yet
    assert quiet_stop(str(state), raw("s2", cwd)) == AFTER  # (another session's)
    stored_verdict(state, page, "ok")
    assert agrees(state, "s1", cwd) == (True, AFTER)
    page.write_text("<p>two</p>")  # changed since its verdict: the face judges it
    os.utime(page, (long_ago, long_ago))
    assert quiet_stop(str(state), raw("s1", cwd)) is False
    stored_verdict(state, page, "blank-page")  # a failure, not handed back yet: the face's
    assert quiet_stop(str(state), raw("s1", cwd)) is False
    rework = gate.at_stop(key, str(cwd), time.monotonic())
    assert rework is not None and "page.html" in rework.instruction
    rework.commit()  # handed back: nothing more to hand back for this content
    assert agrees(state, "s1", cwd) == (True, AFTER)
    stored_verdict(state, page, "needs-gesture")  # (a newer verdict of it, no failure)
    assert agrees(state, "s1", cwd) == (True, AFTER)


def test_a_session_with_more_deliverables_than_the_face_looks_at_is_the_faces(
    tmp_path: Path,
) -> None:
    state, cwd = places(tmp_path)
    pages = [cwd / f"p{n}.html" for n in range(glance.SESSION_FILES + 1)]
    with Store(state) as store:
        delivery.note_writes(store, ("claude", "s1"), pages[:-1])
    assert quiet_stop(str(state), raw("s1", cwd)) == AFTER  # (none there: removed)
    with Store(state) as store:
        delivery.note_writes(store, ("claude", "s1"), pages[-1:])
    assert quiet_stop(str(state), raw("s1", cwd)) is False


def test_the_looks_constants_are_the_gates() -> None:
    assert glance.SESSION_FILES == delivery.SESSION_FILES
    assert glance.NOT_FAILURES == NOT_FAILURES
    assert f"kind = '{GATE_REWORK_DELIVERY}'" in glance.DELIVERED
    assert delivery.delivery_mark("p", "h") == "p\nh"  # (the mark the look spells)


def test_rework_switched_off_for_the_session_skips_its_scan(tmp_path: Path) -> None:
    state, cwd = places(tmp_path)
    gate = GateService(state)
    gate.at_prompt(("claude", "s1"))
    (cwd / "page.html").write_text("<p>x</p>")
    stamp = time.time() + 1
    os.utime(cwd / "page.html", (stamp, stamp))
    assert quiet_command(str(state), raw("s1", cwd)) == AFTER
    with Store(state) as store:
        from dshkit.gate import delivery

        delivery.set_session_rework(store, ("claude", "s1"), False)
    assert agrees(state, "s1", cwd) == (True, AFTER)


def test_a_payload_the_byte_scan_cannot_read_is_left_to_the_face(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    for payload in (
        b'{"session_id":"s\\"1","cwd":"/p"}',  # an escape
        b'{"session_id":"s1","cwd":"/p\\u00e9"}',
        b'{"session_id":"s1","cwd":"/p","tool_input":{"cwd":"/q"}}',  # named twice
        b'{"cwd":"/p"}',  # no session: the face says why
    ):
        assert quiet_command(str(state), payload) == AFTER, payload  # (it says nothing)
        assert quiet_stop(str(state), payload) is False, payload
    # No cwd at all: the face scans nothing either.
    assert quiet_command(str(state), raw("s1", None)) is True


def test_a_write_naming_no_deliverable_is_quiet_in_every_shape_the_face_reads(
    tmp_path: Path,
) -> None:
    # Every write the face reads names its file by a key or in a patch: where the quiet check
    # says nothing is named, the face finds nothing (the file exists, so it would).
    import orjson

    from dshkit.gate.glance import quiet_write
    from dshkit.gate.rework import written_deliverables

    for name in ("page.html", "Deck.SVG", "old.htm", "doc.xhtml", "app.py", "notes.md"):
        (tmp_path / name).write_text("x")
    inputs = []
    for name in ("page.html", "Deck.SVG", "old.htm", "doc.xhtml", "app.py", "notes.md"):
        patch = f"*** Begin Patch\n*** Update File: {name}\n@@\n-a\n+b\n*** End Patch"
        inputs += [
            {"file_path": str(tmp_path / name), "content": "x"},
            {"path": name, "old_string": "a", "new_string": "b"},
            {"command": ["apply_patch", patch]},
        ]
    quiet = 0
    for tool_input in inputs:
        raw = orjson.dumps({"session_id": "s", "tool_name": "Edit", "tool_input": tool_input})
        if quiet_write("", raw) is True:
            quiet += 1
            assert written_deliverables(tool_input, str(tmp_path)) == [], tool_input
        else:  # (the face, which says nothing, runs after the answer)
            assert quiet_write("", raw) == AFTER
            assert written_deliverables(tool_input, str(tmp_path)), tool_input
    assert quiet == 6  # the two files no deliverable, in the three shapes
    # A name spelled with escapes the bytes do not show is the face's.
    assert quiet_write("", b'{"tool_input":{"file_path":"/p/page.\\u0068tml"}}') == AFTER
