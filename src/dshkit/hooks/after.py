"""The detached step after a call the lean foreground answered from its hint
(`python -m dshkit.hooks.after EVENT STATE PAYLOAD-FILE [FLAGS] [OWED…]`, started by
`hooks.lean.after`).

It runs the handlers the foreground skipped, for real, on the call's payload (read from the
owner-only file, then removed): what they do besides answering (a prompt recorded as a run,
a turn begun, a probe started) still happens, only after the answer. Their answer is not
written anywhere: the foreground said "nothing", so nothing is committed. Should a handler
have said something after all, the hint was wrong: a line in the hooks' log and the hint
dropped (what it owed is owed still, and the next event carries it). Otherwise what they read
is kept as the session's next hint, as after a full call (`hooks.lean.Observation`).

After a start answered from its event's template, the foreground's answer lies beside the
payload (`<file>.said`): when the handlers give it byte for byte, its commits run and the turn
is recorded, as after a full call that wrote it; otherwise nothing is recorded and the
template is dropped (`_templated`). Where the answer written was a live handler's words (its
check said them: `Say`, argument `--said-by-owed`), that handler, run after the others, is
the one compared with it (`hooks.later`), and the turn is recorded there, once. A turn's
first prompt whose turn the foreground opened (`--turn-opened`) is run as the person's prompt,
whatever the turn says by then.
"""

from __future__ import annotations

import os
import sys
import time

from ..hookspec import HANDLERS_TOTAL_S, entries, extra_entries
from . import dispatch, hint
from .later import recorded
from .lean import BY_OWED, OPENED, Observation, _said, live, observed
from .log import log
from .protocol import answer
from .run import _present
from .spawn import remove, taken

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ..hookio import Call

    Result = dict[str, Any]


def main(argv: list[str]) -> int:
    """The detached process: the payload file read (and the templated answer beside it, if
    any), the step run, then the files removed (while the payload file is there, a step is
    pending: tests wait for none to be)."""
    event, state, name, *owed = argv
    flags = set()
    while owed and owed[0] in (BY_OWED, OPENED):  # (a handler is "module:function")
        flags.add(owed.pop(0))
    try:
        raw, said = taken(name)
        step(event, state, raw, said, owed, BY_OWED in flags, OPENED in flags)
    finally:
        remove(name)
    return 0


def step(
    event: str,
    state: str,
    raw: bytes,
    said: bytes | None = None,
    owed: Sequence[str] = (),
    by_owed: bool = False,
    opened: bool = False,
) -> None:
    """Run the handlers a hint answered for (see the module docstring); `said`, the answer the
    foreground wrote, if it wrote one: a templated one (`lean._said`), or (`by_owed`) the
    words the checks of `owed` gave; then `owed`, the live handlers whose check answered AFTER
    or `Say` (what to say, proved from what their last run left behind, which is still owed:
    graft's fold), unobserved: their answers discarded, or, where they were said, recorded
    when the same (`hooks.later`, which then records the turn). `opened`: the call was a
    turn's first prompt, whose turn the foreground opened (`turns.begin`): its handlers run
    as for the person's prompt, whatever the turn says by then. Never raises."""
    spoken = tuple(owed) if by_owed and said is not None else ()  # (None: not delivered)
    try:
        _step(event, state, raw, None if by_owed and not spoken else said, spoken, opened)
    except BaseException as exc:
        log(state, event, f"hint step failed: {type(exc).__name__}: {exc}")
    if owed and not spoken:
        from .later import run

        run(event, list(owed), raw, state)


def _step(
    event: str,
    state: str,
    raw: bytes,
    said: bytes | None,
    spoken: Sequence[str] = (),
    opened: bool = False,
) -> None:
    """The handlers a hint answered for, observed; then, where the foreground wrote the words
    of live handlers (`spoken`), those handlers, unobserved (what they read is not the hint's:
    their checks read it anew each call), recorded as `hooks.later` records them, before the
    hint is kept, so that it holds to the turn they leave."""
    env = os.environ
    try:
        extra = extra_entries(env.get("DSHKIT_HOOK_HANDLERS", ""))
    except ValueError as exc:
        log(state, event, f"hint step: {exc}")
        return
    wanted = [entry for entry in entries(event, extra) if _present(entry, state)]
    checks = live()
    run = [entry for entry in wanted if entry.handler not in checks]
    started = time.monotonic()
    with Observation(state, templates=said is not None and not spoken) as seen:
        hook = observed(dispatch._hook(event, raw, env, state, False if opened else None), seen)
        try:
            results = dispatch._handle(hook, run, env, started + HANDLERS_TOTAL_S, seen)
            if spoken and said is not None:  # (the answer written: the live handlers' words)
                owed = [entry for entry in wanted if entry.handler in spoken]
                deadline = started + HANDLERS_TOTAL_S
                recorded(hook, dispatch._handle(hook, owed, env, deadline), said, started)
            elif said is not None:
                _templated(hook, results, said, seen, [entry.handler for entry in wanted])
                return
            else:
                info = hook.harness_info
                if info is not None and info.asks_every_step and hook.session_id:
                    dispatch._turn(hook, {})
        finally:
            dispatch._close(hook)
        if results:
            spoken = ", ".join(name for name, _ in results)
            hint.drop(state, event, hook.harness, hook.session_id, hook.steps and not hook.is_step)
            log(
                state,
                event,
                f"the hint answered nothing but {spoken} had something to say: "
                "it was not delivered, nor recorded; the hint is dropped",
            )
            return
        seen.keep(hook, [entry.handler for entry in wanted], env)


def _templated(
    hook: Call,
    results: list[tuple[str, Result]],
    said: bytes,
    seen: Observation,
    handlers: list[str],
) -> None:
    """After a templated answer (`said`, written by the foreground): when the handlers, run
    now, give that answer byte for byte, what it leaves behind is recorded (its commits, the
    turn), as after a full call that wrote it, and the template is kept anew; otherwise
    nothing is recorded (what was owed is owed still: the next event carries it), the
    template is dropped, and the hooks' log says so."""
    event, state = hook.event, hook.directory
    reply = answer(event, results, hook.harness)
    seen.heard(results, reply.reply)
    seen.answered(reply.reply, hook)
    info = hook.harness_info
    turns = info is not None and info.asks_every_step and bool(hook.session_id)
    if seen.failed or seen.reply is None or _said(seen.reply) != said:
        hint.drop_template(str(state), event, hook.payload, hook.harness)
        log(
            state,
            event,
            "a templated answer was not the one its handlers give now: "
            "nothing of it was recorded; the template is dropped",
        )
        if turns:
            dispatch._turn(hook, {})
        return
    seen.recorded = dispatch._record(state, event, results, reply.emitted, time.monotonic())
    if turns:
        dispatch._turn(hook, reply.verdict)
    seen.keep(hook, handlers, os.environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
