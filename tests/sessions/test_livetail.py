"""What a live log gained since a tail cursor, read without the session reader
(`dshkit.sessions.livetail`): as the tail reader takes it, or None where it would not."""

from __future__ import annotations

import os
from pathlib import Path

from dshkit.sessions.livetail import kinds_since, quiet_since
from dshkit.sessions.tail import read_tail
from dshkit.store import Store
from dshkit.storeview import TAIL_CURSOR, query_rows

from ..support.logs import event, human, session_dir, write_log

MODES = ("approval/policy", "sandbox/mode")


def cursor(state: Path, log: Path) -> str:
    rows = query_rows(str(state), TAIL_CURSOR, ["capability", str(log)])
    assert rows
    return str(rows[0][0])


def test_the_events_of_some_kinds_since_a_cursor_are_their_types_and_data_in_order(
    tmp_path: Path,
) -> None:
    log = session_dir(tmp_path / "sessions", "d1", "/p") / "session.jsonl.zstd"
    opened = [
        event("sandbox/mode", 1, {"mode": "workspace-write"}, time=5),
        event("turn/start", 2, {"turn": 1}),
        event("approval/policy", 3, {"policy": "ask"}, time=9),
        human(4, "go"),
    ]
    write_log(log, [opened], session_id="d1", cwd="/p")
    # The whole log (no cursor yet): the kinds asked for, in order; their sequence numbers
    # and times are not what a consumer of those kinds reads.
    assert kinds_since(str(log), None, MODES) == [
        ["sandbox/mode", {"mode": "workspace-write"}],
        ["approval/policy", {"policy": "ask"}],
    ]
    assert not quiet_since(str(log), None, MODES)
    assert quiet_since(str(log), None, ("step/start",))
    state = tmp_path / "state"
    with Store(state) as store:
        read_tail(store, str(log), "dsh", consumer="capability", kinds=MODES)
    assert kinds_since(str(log), cursor(state, log), MODES) == []
    assert quiet_since(str(log), cursor(state, log), MODES)
    write_log(log, [[human(5, "more")]], mode="ab", session_id="d1")
    assert quiet_since(str(log), cursor(state, log), MODES)  # (only other kinds came)
    write_log(log, [[event("sandbox/mode", 6, {"mode": "read-only"})]], mode="ab")
    assert kinds_since(str(log), cursor(state, log), MODES) == [
        ["sandbox/mode", {"mode": "read-only"}]
    ]
    assert not quiet_since(str(log), cursor(state, log), MODES)
    # Replaced (another file where the cursor was left): not told here.
    kept = cursor(state, log)
    os.replace(log, log.with_suffix(".old"))
    write_log(log, [opened], session_id="d1", cwd="/p")
    assert kinds_since(str(log), kept, MODES) is None
    assert not quiet_since(str(log), kept, MODES)
