"""A session's standing in the handoff ledger, read-only on the hot path: whether graft's
hooks surely have nothing to say to it, once a handoff ever began here.

Before the first handoff (`marker.used`), no session was handed off, is owed a notice, can
pick a handoff up or had a forced cut, and one `stat` says so. After it, every hook asked
the store, loaded in full (its imports, the lifecycle's): about 60 ms of every tool call,
prompt and turn's end, for good, measured. What each face reads is a few rows of one session,
so they are looked at here read-only (`storeview`, the `_sqlite3` C module alone), and where
the ledger holds nothing for the session the face's handler is not run
(docs/design/graft.md#after-the-first-handoff-the-ledger-is-looked-at-not-loaded):

- a tool call (`quiet_tool`): no ledger row names the session (`ledger.retirement`: a
  transferring or retired source is denied every call);
- a turn's end (`quiet_stop`): no forced cut was ever started for it (`live.forced_report`
  reports where the work of one went);
- a prompt (`clear`, asked by `marker.quiet_prompt` before the watermark's own proof): no
  ledger row, no notice of a handoff not yet shown to it (`ledger.owed_notices`), no forced
  cut started for it (whether one failed, which the model is told, is the ledger's to say),
  and no handoff waiting for a session to pick it up anywhere (`live.pickup`: by directory,
  at a session's first context, which the look does not know);
- the watermark's nudge said by the fold (`queries`): the decisions' `migrated` and, in a
  session's first turns, an identity it received (`live.decide_stored`).

Rows are matched by session id alone, whichever harness wrote them: a look never says
"nothing" where the handler could say something, only sometimes the other way round, which
costs the full path. Anything that goes wrong (no store, a schema the look does not know)
answers "not known": the handler runs.
"""

from __future__ import annotations

# A ledger row naming the session: a transferring or retired source (`ledger.retirement`).
HANDED = "SELECT 1 FROM graft_ledger WHERE session_id = ? LIMIT 1"
# A committed handoff whose target the session is (`ledger.received`).
RECEIVED = "SELECT 1 FROM graft_txns WHERE target_id = ? AND state = 'COMMITTED' LIMIT 1"
# A handoff's notice owed to the session and not yet shown (`ledger.owed_notices`; its
# delivery's kind is `store.GRAFT_NOTICE_DELIVERY`, not imported: the hot path).
OWED_NOTICE = (
    "SELECT 1 FROM graft_notices n WHERE n.session_id = ? AND NOT EXISTS (SELECT 1 FROM "
    "deliveries d WHERE d.harness = n.harness AND d.session_id = n.session_id "
    "AND d.kind = 'graft-notice' AND d.what = CAST(n.txn_id AS TEXT)) LIMIT 1"
)
# A handoff waiting for a session to pick it up, in any directory (`lifecycle.pending_for_cwd`).
PENDING = "SELECT 1 FROM graft_pending LIMIT 1"
# A forced cut started for the session (`live.forced_report`).
FORCED = "SELECT 1 FROM graft_watch WHERE session_id = ? AND forced_at IS NOT NULL LIMIT 1"


def quiet_tool(state_dir: str, raw: bytes) -> bool:
    """Whether graft's tool-call face (`hook.on_tool`) surely allows this call: no ledger row
    names its session. Never raises: False runs the face, which decides."""
    return _none_of(state_dir, raw, [HANDED])


def quiet_stop(state_dir: str, raw: bytes) -> bool:
    """Whether graft's turn-end face (`hook.on_stop`) surely has nothing to report: no forced
    cut was ever started for the session. Never raises: False runs the face."""
    return _none_of(state_dir, raw, [FORCED])


def clear(state_dir: str, session_id: str) -> bool:
    """Whether the ledger surely leaves graft's prompt face nothing to say to the session but
    the watermark's word: no ledger row names it, no notice is owed to it, no forced cut was
    started for it, no handoff waits to be picked up. Never raises: False takes the face in
    full."""
    if not session_id:
        return False
    try:
        from ..storeview import queries_rows

        looks = [(sql, [session_id]) for sql in (HANDED, OWED_NOTICE, FORCED)]
        found = queries_rows(state_dir, [*looks, (PENDING, [])])
    except Exception:
        return False
    return not any(found)


def queries(session_id: str) -> list[tuple[str, list[str]]]:
    """What the fold reads of the ledger beside the session's digest, in its own read
    transaction (`live.decide_stored`): a ledger row naming the session (handed off: the
    decisions' `migrated`, which the fold leaves to the full check), and a committed handoff
    it is the target of (received: born from one, no cut in its first turns); each found
    where its rows are not empty."""
    return [(HANDED, [session_id]), (RECEIVED, [session_id])]


def _none_of(state_dir: str, raw: bytes, sqls: list[str]) -> bool:
    """Whether none of `sqls` (each given the payload's session id) finds a row."""
    try:
        from ..quiet import plain_string

        session = plain_string(raw, b'"session_id"')
        if not session:
            return False
        from ..storeview import queries_rows

        found = queries_rows(state_dir, [(sql, [session]) for sql in sqls])
    except Exception:
        return False
    return not any(found)
