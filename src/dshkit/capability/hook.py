"""Capability facts for the agent, the capability package's hook face: on its first request,
and again when they changed.

The report goes with the harness's context event (SessionStart for Claude Code and Codex;
the first UserPromptSubmit for DSH, whose bridge delivers SessionStart context late), again
after a compaction or /clear, and on a later UserPromptSubmit when the session's modes
changed (a changed mode voids old conclusions), when probes pending at the last delivery
have results now, or when none was delivered yet (a start that could not make it). Nothing
waits for a probe: a missing or expired result starts one detached `dshkit capability
--probe` (a dry call, the preview's, only says it would). A session's delivery is recorded by
the commit, once the answer was written to the harness. `DSHKIT_CAPABILITY=off` turns it off.
"""

from __future__ import annotations

import os

from ..hookio import Answer, Call

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from ..store import Store
    from .facts import Facts

SWITCH = "DSHKIT_CAPABILITY"  # "off" turns the capability facts off
CAPABILITY = "capability"


def on_session_start(call: Call) -> Answer:
    """The session's capability facts on the harness's context event, and again after a
    compaction or /clear."""
    with call.open_store() as store:
        return _capability_facts(store, call)


def on_prompt(call: Call) -> Answer:
    """The facts with a prompt: the first where that carries the first context (DSH), and a
    later one whenever they differ from the last delivered (a changed mode; results that were
    pending; none delivered yet)."""
    with call.open_store() as store:
        return _capability_facts(store, call)


def _capability_facts(store: Store, call: Call) -> Answer:
    from ..store import CAPABILITY_DELIVERY
    from . import lookup, read_facts, report

    if call.env.get(SWITCH, "").lower() in ("off", "0", "false"):
        return Answer(CAPABILITY, why=f"switched off ({SWITCH})")
    if not call.session_id:
        return Answer(CAPABILITY, why="the call names no session")
    if call.event == "SessionStart" and not call.first_context:
        return Answer(
            CAPABILITY, why="its start's context comes too late here: the first prompt carries it"
        )
    # The probe's process gets this cwd: the same absolute path makes the same cache key.
    cwd = os.path.abspath(call.cwd or os.getcwd())
    errors: list[str] = []
    facts = _carried(read_facts(store, call.harness, call.payload, errors), store, call)
    if call.dry:
        now = report(store, facts, cwd, errors)
        started = now.probe_due
    else:
        now, started = lookup(store, facts, cwd, errors)
    effects = (f"starts a background probe of {now.key}",) if started else ()
    marker = now.key + ("#pending" if now.pending else "")
    # The last delivery only (each supersedes the one before): a mode changed back is news.
    key = call.key
    unchanged = any(store.delivered(key, CAPABILITY_DELIVERY, m) for m in (marker, now.key))
    if unchanged and not call.again:
        # (an expired cache being probed again is no news)
        return Answer(CAPABILITY, why="unchanged since they were last delivered", effects=effects)

    def record(store: Store) -> None:
        store.mark_delivered(key, CAPABILITY_DELIVERY, marker, superseding=True)

    if now.fresh_until is not None:
        # Its words tell the results as fresh: a start's template made from them must not
        # tell them once they are not (the handler would then say they are pending).
        call.holds_until(now.fresh_until)
    return Answer(CAPABILITY, now.text, effects=effects, commit=record)


def _carried(facts: Facts, store: Store, call: Call) -> Facts:
    """`facts`, each mode nothing reported this time (`unknown`) carried over from what the
    session was last told. A payload may leave a mode out that another event of the same
    session reports (Claude Code's SessionStart has no `permission_mode`, its prompts do):
    saying nothing is no change of mode, and must not make the facts news at every start
    and again at the prompt after it (a real `claude -p --resume` delivered them twice per
    run). A mode that did change is told by the event that reports it."""
    from dataclasses import replace

    from ..store import CAPABILITY_DELIVERY
    from .facts import UNKNOWN

    last = store.last_delivered(call.key, CAPABILITY_DELIVERY)
    if last is None:
        return facts
    told = facts.modes_in(last)
    carried = {
        fact: mode
        for fact, mode in told.items()
        if getattr(facts, fact) == UNKNOWN and mode != UNKNOWN
    }
    if not carried:
        return facts
    sources = {**facts.sources, **dict.fromkeys(carried, "earlier in this session")}
    return replace(facts, **carried, sources=sources)
