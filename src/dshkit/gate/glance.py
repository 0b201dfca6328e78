"""The gate's quiet checks: where its hook faces surely have nothing to do after a write
or a shell command, or to hand back at a turn's end, told from the payload's bytes, the
session's rows read-only (`storeview`) and the bounded scan of its working directory
(`scan`), loading neither the store nor the gate
(docs/design/gate.md#a-turn-that-wrote-no-deliverable-costs-the-gate-a-look).

After a write tool (`quiet_write`, for `hook.on_write`), the face judges the web
deliverables the tool's input names: where the payload's bytes hold no deliverable's suffix
(`.html`, `.svg`, …, in any case, and no JSON escape of a character that could spell one),
it names none. After a shell command (`quiet_command`, for `hook.on_command`), the face
records and judges the deliverables under the call's `cwd` changed since the session's turn
began: where no turn of it began with rework not switched off for it (`gate_sessions`), or
the scan finds nothing, it does nothing at all. At a turn's end (`quiet_stop`, for
`hook.on_stop`), the face waits for the session's deliverables to be judged and hands back a
failure: where the session never had a deliverable recorded (`gate_writes`) and the scan
finds nothing since its turn began, nothing can fail, and the face runs after the answer
(AFTER), to end the turn.

Rows are matched by session id, whichever harness wrote them, and rework switched on or left
to `[gate] rework` counts as on (the configuration is not read): a look errs only towards the
face. A payload whose fields the byte scan cannot read, or a store the look cannot read, runs
the face.
"""

from __future__ import annotations

from ..quiet import AFTER, plain_string

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from typing import Any

# The session's turns as the gate keeps them: when each began, and its own rework switch.
TURNS = "SELECT turn_at, rework FROM gate_sessions WHERE session_id = ?"
# A deliverable ever recorded for the session (what a turn's end waits for and hands back).
WRITES = "SELECT 1 FROM gate_writes WHERE session_id = ? LIMIT 1"


def quiet_write(state_dir: str, raw: bytes) -> bool:
    """Whether the gate's face after a write tool surely finds no deliverable named in its
    input (see the module docstring): what an edit of anything but a web page costs."""
    if b"\\u" in raw:
        return False  # (an escape may spell a suffix the bytes do not show)
    from .scan import DELIVERABLE_SUFFIXES

    lowered = raw.lower()
    return not any(suffix.encode() in lowered for suffix in DELIVERABLE_SUFFIXES)


def quiet_command(state_dir: str, raw: bytes) -> bool:
    """Whether the gate's face after a shell command surely records and starts nothing (see
    the module docstring). Never raises: False runs the face."""
    try:
        looked = _look(state_dir, raw, [TURNS])
        if looked is None:
            return False
        cwd, (turns,) = looked
        return not _changed(cwd, turns)
    except Exception:
        return False


def quiet_stop(state_dir: str, raw: bytes) -> bool | str:
    """AFTER where the gate's face at a turn's end surely hands nothing back (see the module
    docstring); False otherwise. Never raises."""
    try:
        looked = _look(state_dir, raw, [TURNS, WRITES])
        if looked is None:
            return False
        cwd, (turns, writes) = looked
        return False if writes or _changed(cwd, turns) else AFTER
    except Exception:
        return False


def _look(state_dir: str, raw: bytes, sqls: list[str]) -> tuple[str | None, list[Any]] | None:
    """The call's `cwd` (None: it names none) and the rows of `sqls` for its session; None
    where the byte scan cannot read either field, or the call names no session."""
    session = plain_string(raw, b'"session_id"')
    cwd = plain_string(raw, b'"cwd"')
    if not session or (cwd is None and b'"cwd"' in raw):
        return None  # (no session: the face does nothing either, but says so itself)
    from ..storeview import queries_rows

    try:
        rows = queries_rows(state_dir, [(sql, [session]) for sql in sqls])
    except FileNotFoundError:
        rows = [[] for _ in sqls]  # no store yet: no turn began, nothing was recorded
    return cwd or None, rows


def _changed(cwd: str | None, turns: list[Any]) -> bool:
    """Whether a deliverable under `cwd` changed since the earliest turn of the session whose
    rework is not switched off (False: no such turn, or no `cwd`)."""
    # (a switch left to `[gate] rework`, NULL, counts as on)
    began = [at for at, rework in turns if isinstance(at, int) and rework != 0]
    if not began or not cwd:
        return False
    from .scan import changed

    return bool(changed(cwd, min(began)))
