"""A person's new prompt told from a model step, for harnesses that ask before every step.

Where the registry says a harness fires UserPromptSubmit before every model step (DSH's
hook bridge), only the first of a turn is the person speaking; the later ones carry the
contexts injected so far as their "prompt". A session's turn opens at a prompt that was let
through (one a hook blocked never reached the agent) and closes at a Stop that was let
through (a blocked Stop sends the agent on) or at a resume or /clear; a UserPromptSubmit
while it is open is a step. Run for real (DSH rc.8, bridge rc.5): a step's prompt hook fires
where contexts came in since the last request (seen: a SessionStart's, which the bridge
delivers late), and its prompt is those contexts. Besides, a prompt holding the head
of a context dshkit injected in the session is a step whatever the turn says (a Stop another
hook blocked, a lost record).

A turn open for longer than `STALE_MS` is taken as lost (a crash, or an interrupt after which
no Stop came): then a prompt without dshkit's text is the person's again. A real turn that
long is rare, and even then its steps carry the heads of what dshkit injected (the profile,
the capability facts, memory) and are still told; the cost of a wrong "step" is only that
the person's words pass unoptimized, while a wrong "prompt" sends the agent's own context
through the optimizer.

One indexed read tells a step (`is_step`); the writes come after the answer (`record`), for
such harnesses only. Nothing beyond the store is imported. A Stop that no handler answers in
the foreground (their checks answered for them) ends the turn without the store loaded
(`end`: the one UPDATE `record` makes for a Stop, on a connection of the C module's own):
after the answer would be too late, as the next step may ask at once. For the same reason a
turn's first prompt answered from its hint opens the turn before the answer (`begin`).
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .store import Store

    Key = tuple[str, str]

STALE_MS = 2 * 3600 * 1000  # an open turn older than this is taken as lost
HEAD_CHARS = 64  # how much of each injected context is kept to recognise it
MIN_HEAD_CHARS = 12  # shorter texts are too common to say anything
KEPT_HEADS = 8  # the latest heads of a session, the oldest dropped first
_SEP = "\x1f"  # between heads (a unit separator: never part of a context's head)
# The SessionStart sources after which no turn goes on. Not "startup": DSH's bridge runs it
# detached, and it may end after the first prompt opened the turn (its context then comes
# with the next step); not "compact", which may come in the middle of a turn.
CLOSING = ("resume", "clear")


def _now_ms() -> int:
    return int(time.time() * 1000)


def head(text: str) -> str:
    """What of an injected context is kept to recognise it ("" when it is too short)."""
    kept = text.strip().replace(_SEP, " ")[:HEAD_CHARS]
    return kept if len(kept) >= MIN_HEAD_CHARS else ""


# The session's turn, as `is_step` reads it (and `is_step_read`, for the hot path's hints).
STEP_QUERY = "SELECT open, opened_at, heads FROM prompt_turns WHERE harness = ? AND session_id = ?"


def is_step(store: Store, key: Key, prompt: str, now_ms: int | None = None) -> bool:
    """Whether this UserPromptSubmit of the session `key` is a model step, not a new prompt."""
    return stepping(store.db.execute(STEP_QUERY, key).fetchone(), prompt, now_ms)


def is_step_read(state_dir: str, key: Key, prompt: str) -> bool:
    """`is_step` without loading the store: the turn read by a look (`storeview`, on the
    connection a `Shared` holds, if any). FileNotFoundError: no store."""
    from .storeview import queries_rows

    turn = queries_rows(state_dir, [(STEP_QUERY, list(key))])[0]
    return stepping(turn[0] if turn else None, prompt)


def stepping(row: Any, prompt: str, now_ms: int | None = None) -> bool:
    """`is_step` for the session's turn `row` (`STEP_QUERY`'s; None: none)."""
    if row is None:
        return False
    is_open, opened_at, heads = row
    if any(each and each in prompt for each in str(heads).split(_SEP)):
        return True  # dshkit's own text: no person typed it
    now = _now_ms() if now_ms is None else now_ms
    return bool(is_open) and now - int(opened_at) < STALE_MS


# The store's schema this module writes (`store.SCHEMA_VERSION`; a test holds them equal):
# another is the store's to open (it migrates an older one, refuses a newer one).
SCHEMA_VERSION = 23
# What ends a session's turn at a Stop let through (`record`).
_END = "UPDATE prompt_turns SET open = 0 WHERE harness = ? AND session_id = ? AND open"
# The session's open turns, whichever harness's (only a harness that asks before every step
# has any: `record` is asked for no other).
_OPEN = "SELECT harness FROM prompt_turns WHERE session_id = ? AND open"
# What opens a session's turn at a person's prompt that carried no context (`record`).
_BEGIN = (
    "INSERT INTO prompt_turns (harness, session_id, open, opened_at, heads) "
    "VALUES (?, ?, 1, ?, '') ON CONFLICT (harness, session_id) DO UPDATE SET "
    "open = 1, opened_at = excluded.opened_at"
)


def end(state_dir: str, session_id: str, busy_timeout_s: float = 1.0) -> bool:
    """End the session's open turn, if it has one, as `record` does at a Stop let through,
    without loading the store (see the module docstring): True when done (no store, or no
    turn open: nothing to do), False where it is the store's to do (a schema this module does
    not know, a database it cannot write within `busy_timeout_s`). The turn is found by the
    session id alone: only a harness that asks before every step keeps one, so no harness
    need be told from the payload. It is looked for first on a read-only look (the call's
    shared one, `storeview.Shared`): a session with no open turn, every Claude Code Stop,
    opens no connection that writes. Never raises."""
    from .storeview import queries_rows

    try:
        version, found = queries_rows(
            state_dir, [("PRAGMA user_version", []), (_OPEN, [session_id])]
        )
    except FileNotFoundError:
        return True
    except Exception:
        return False
    if version[0][0] != SCHEMA_VERSION:
        return False
    if not found:
        return True

    def ended(db: Any) -> None:
        for (harness,) in db.execute(_OPEN, (session_id,)).fetchall():
            db.execute(_END, (harness, session_id))

    return _written(state_dir, busy_timeout_s, ended)


def begin(state_dir: str, key: Key, busy_timeout_s: float = 1.0, now_ms: int | None = None) -> bool:
    """Open the session `key`'s turn, as `record` does for a person's prompt let through that
    carried no context, without loading the store: for a turn's first prompt answered from
    its hint, before the answer (the step after it would be too late: the model's next step
    may ask first, and would be taken for the person's prompt). True when done, False where
    it is the store's to do (no store, a schema this module does not know, a database it
    cannot write within `busy_timeout_s`). Never raises."""
    now = _now_ms() if now_ms is None else now_ms

    def opened(db: Any) -> None:
        db.execute(_BEGIN, (*key, now))

    return _written(state_dir, busy_timeout_s, opened)


def _written(state_dir: str, busy_timeout_s: float, write: Callable[[Any], None]) -> bool:
    """`write` run on a connection of the C module's own, in one immediate transaction, at
    the schema this module knows (`SCHEMA_VERSION`): True once committed, False otherwise
    (nothing written). Never raises."""
    import os

    from .storeview import DB_NAME, connect

    try:  # ("rw" never makes a database: none there is the store's to make)
        db = connect(os.path.join(state_dir, DB_NAME), "rw", busy_timeout_s)
    except Exception:
        return False
    try:
        for pragma in ("synchronous=NORMAL", "secure_delete=ON"):  # (as `store._migrate`'s)
            db.execute(f"PRAGMA {pragma}")
        db.execute("BEGIN IMMEDIATE")
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            db.execute("ROLLBACK")  # (migrated meanwhile, or another release's)
            return False
        write(db)
        db.execute("COMMIT")
        return True
    except Exception:
        return False
    finally:
        db.close()


def _heads(old: str, context: str) -> str:
    found = [each for each in old.split(_SEP) if each]
    new = head(context)
    if new and new not in found:
        found.append(new)
    return _SEP.join(found[-KEPT_HEADS:])


def changes(event: str, *, step: bool, blocked: bool, context: str) -> bool:
    """Whether the answer to `event` changes the session's turn (see `record`): nothing is
    opened for what changes nothing (every tool call of such a harness passes here)."""
    if event == "UserPromptSubmit":
        # A held prompt opens nothing; a step changes nothing unless it brought context.
        return not blocked and (not step or bool(head(context)))
    if event == "Stop":
        return not blocked  # a blocked stop sends the agent on: its turn stays open
    return event == "SessionStart" or bool(head(context))


def record(
    store: Store,
    key: Key,
    event: str,
    *,
    step: bool,
    blocked: bool,
    context: str,
    source: str = "",
    now_ms: int | None = None,
) -> None:
    """After the answer to `event` of the session `key` was given: `blocked` when it held
    the prompt or the stop, `context` the text it carried (""), `step` what `is_step` said,
    `source` a SessionStart's. Writes only what `changes` says changes."""
    if not changes(event, step=step, blocked=blocked, context=context):
        return
    if event == "Stop":
        with store.transaction() as db:
            db.execute(_END, key)
        return
    now = _now_ms() if now_ms is None else now_ms
    opening = event == "UserPromptSubmit" and not step
    closing = event == "SessionStart" and source in CLOSING
    with store.transaction() as db:
        row = db.execute(STEP_QUERY, key).fetchone()
        is_open, opened_at, heads = row if row is not None else (0, 0, "")
        if opening:
            is_open, opened_at = 1, now
        elif closing:
            is_open = 0  # a resume or a /clear: no turn goes on
        heads = _heads(str(heads), context)
        if row is None and (is_open, heads) == (0, ""):
            # Nothing to keep (a start that opened no turn and said nothing, DSH's, whose
            # context comes late): a row would say what no row says, and its being there or
            # not yet (its step may end after the first prompt) must not tell one new
            # session from another (a prompt's template holds to what its handlers read).
            return
        db.execute(
            "INSERT INTO prompt_turns (harness, session_id, open, opened_at, heads) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (harness, session_id) DO UPDATE SET "
            "open = excluded.open, opened_at = excluded.opened_at, heads = excluded.heads",
            (*key, is_open, opened_at, heads),
        )
