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
the scan finds nothing, it does nothing at all. Neither face ever says anything, so where
either would do something (record a deliverable, start its judging) it runs after the answer
(AFTER), in the step the call leaves, never in the call's foreground. At a turn's end
(`quiet_stop`, for `hook.on_stop`), the face waits for the session's deliverables to be
judged and hands back a failure: where each deliverable recorded for the session
(`gate_writes`), as its content is now, has a verdict that is no failure or was handed back
already (a removed one is nobody's concern), and the scan finds nothing since its turn
began, nothing can fail, and the face runs after the answer (AFTER), to end the turn.

Rows are matched by session id, whichever harness wrote them, and rework switched on or left
to `[gate] rework` counts as on (the configuration is not read): a look errs only towards the
face. A payload whose fields the byte scan cannot read, or a store the look cannot read, runs
the face: at a turn's end in the foreground, after a write or a command after the answer.
"""

from __future__ import annotations

from ..quiet import AFTER, plain_string

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from typing import Any

# The session's turns as the gate keeps them: when each began, and its own rework switch.
TURNS = "SELECT turn_at, rework FROM gate_sessions WHERE session_id = ?"
# The deliverables recorded for the session, newest first: what a turn's end waits for and
# hands back (`delivery.session_files`, one more than it looks at: more, and the face runs).
WRITES = "SELECT harness, path FROM gate_writes WHERE session_id = ? ORDER BY at DESC LIMIT ?"
SESSION_FILES = 50  # (`delivery.SESSION_FILES`: a test holds them equal)
# The newest verdict of a content (`delivery.latest_verdict`; its column is the evidence's
# "verdict", both written from one value by `verdicts.save_verdict`).
VERDICT = "SELECT verdict FROM gate_verdicts WHERE path = ? AND sha256 = ? ORDER BY id DESC LIMIT 1"
# A failure handed back to the session once (`store.GATE_REWORK_DELIVERY`, the mark
# `delivery.delivery_mark`: a test holds them equal).
DELIVERED = (
    "SELECT 1 FROM deliveries WHERE harness = ? AND session_id = ? AND kind = 'gate-rework'"
    " AND what = ?"
)
NOT_FAILURES = ("ok", "needs-gesture", "needs-network")  # (`rework.NOT_FAILURES`, held equal)


def quiet_write(state_dir: str, raw: bytes) -> bool | str:
    """True where the gate's face after a write tool surely finds no deliverable named in its
    input (see the module docstring): what an edit of anything but a web page costs; AFTER
    otherwise: the face, which never says anything, records and starts the judging once the
    call is answered."""
    if b"\\u" in raw:
        return AFTER  # (an escape may spell a suffix the bytes do not show)
    from .scan import DELIVERABLE_SUFFIXES

    lowered = raw.lower()
    return AFTER if any(suffix.encode() in lowered for suffix in DELIVERABLE_SUFFIXES) else True


def quiet_command(state_dir: str, raw: bytes) -> bool | str:
    """True where the gate's face after a shell command surely records and starts nothing
    (see the module docstring); AFTER otherwise: the face, which never says anything, runs
    once the call is answered. Never raises."""
    try:
        looked = _look(state_dir, raw, [(TURNS, [])])
        if looked is None:
            return AFTER
        _, cwd, (turns,) = looked
        return AFTER if _changed(cwd, turns) else True
    except Exception:
        return AFTER


def quiet_stop(state_dir: str, raw: bytes) -> bool | str:
    """AFTER where the gate's face at a turn's end surely hands nothing back (see the module
    docstring); False otherwise. Never raises."""
    try:
        looked = _look(state_dir, raw, [(TURNS, []), (WRITES, [SESSION_FILES + 1])])
        if looked is None:
            return False
        session, cwd, (turns, writes) = looked
        if _changed(cwd, turns) or not _settled(state_dir, session, writes):
            return False
        return AFTER
    except Exception:
        return False


def _look(
    state_dir: str, raw: bytes, queries: list[tuple[str, list[Any]]]
) -> tuple[str, str | None, list[Any]] | None:
    """The call's session and `cwd` (None: it names none), and the rows of `queries` for
    the session (its id the first parameter of each); None where the byte scan cannot read
    either field, or the call names no session."""
    session = plain_string(raw, b'"session_id"')
    cwd = plain_string(raw, b'"cwd"')
    if not session or (cwd is None and b'"cwd"' in raw):
        return None  # (no session: the face does nothing either, but says so itself)
    from ..storeview import queries_rows

    try:
        rows = queries_rows(state_dir, [(sql, [session, *more]) for sql, more in queries])
    except FileNotFoundError:
        rows = [[] for _ in queries]  # no store yet: no turn began, nothing was recorded
    return session, cwd or None, rows


def _settled(state_dir: str, session: str, writes: list[Any]) -> bool:
    """Whether every deliverable recorded for the session (`writes`: harness, path) has, as
    its content is now, a verdict that is no failure or was handed back to the session
    already (a file removed since is nobody's concern): what a turn's end of a session that
    built a web page and had it judged costs the gate. False where the face looks at fewer
    than there are (it would not see them all)."""
    if not writes:
        return True
    if len(writes) > SESSION_FILES:
        return False
    import hashlib  # (here: a session that never built a page hashes nothing)

    from ..storeview import queries_rows

    contents = []
    for harness, path in writes:
        try:
            with open(path, "rb") as handle:
                contents.append((harness, path, hashlib.sha256(handle.read()).hexdigest()))
        except OSError:
            continue
    verdicts = queries_rows(state_dir, [(VERDICT, [path, sha]) for _, path, sha in contents])
    if not all(verdicts):
        return False  # not judged yet: the face waits for the verdict
    failed = [
        (DELIVERED, [harness, session, f"{path}\n{sha}"])
        for (harness, path, sha), rows in zip(contents, verdicts, strict=True)
        if rows[0][0] not in NOT_FAILURES
    ]
    return all(queries_rows(state_dir, failed))


def _changed(cwd: str | None, turns: list[Any]) -> bool:
    """Whether a deliverable under `cwd` changed since the earliest turn of the session whose
    rework is not switched off (False: no such turn, or no `cwd`)."""
    # (a switch left to `[gate] rework`, NULL, counts as on)
    began = [at for at, rework in turns if isinstance(at, int) and rework != 0]
    if not began or not cwd:
        return False
    from .scan import changed

    return bool(changed(cwd, min(began)))
