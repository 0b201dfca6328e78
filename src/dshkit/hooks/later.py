"""Handlers a quiet check answered for, run once the call is answered (`AFTER`, `Say`:
`dshkit.quiet`): in the caller (a resident worker's deferred step, the tests), or detached,
as `python -m dshkit.hooks.later EVENT STATE FILE HANDLER…`.

A quiet check may prove "nothing to say" from what its handler's last full run left behind
(graft's fold, from the store's last fold of the log) while that run is still owed, so that
the next call reads less: the handler runs after the answer, on the call's payload, and what
it would have said is neither written nor committed (it is found again by the next call's
check). A check may also know the handler's words (`Say`: the watermark's nudge), which the
foreground wrote; the answer written lies beside the payload (`<file>.said`), and only when
the handlers, run now, give it byte for byte are its commits run and the turn recorded, as
after a full call that wrote it (what was said is recorded as said); otherwise nothing is,
and the hooks' log says so. Detached, the payload waits in an owner-only file of the hints
directory (argv is world-readable), which the step removes; the step runs in a session of
its own with its standard streams on /dev/null, its failures in the hooks' log.
"""

from __future__ import annotations

import os
import sys
import time

from ..hookspec import HANDLERS_TOTAL_S, entries, extra_entries
from . import dispatch
from .log import log
from .protocol import answer, written
from .protocol import said as protocol_said
from .spawn import remove, taken

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from ..hookio import Call


def run(event: str, handlers: list[str], raw: bytes, state: str, said: bytes | None = None) -> None:
    """Run `handlers` (descriptors' names) of `event` on the payload `raw`: their answers
    discarded, or, where the foreground wrote their words (`said`, as `protocol.said` has
    it), recorded when they give that answer. Never raises: a failure is a line in the
    hooks' log."""
    env = os.environ
    try:
        extra = extra_entries(env.get("DSHKIT_HOOK_HANDLERS", ""))
        wanted = [entry for entry in entries(event, extra) if entry.handler in handlers]
        hook = dispatch._hook(event, raw, env, state)
        try:
            started = time.monotonic()
            results = dispatch._handle(hook, wanted, env, started + HANDLERS_TOTAL_S)
            if said is not None:
                recorded(hook, results, said, started)
        finally:
            dispatch._close(hook)
    except BaseException as exc:
        log(state, event, f"a run after the answer failed: {type(exc).__name__}: {exc}")


def recorded(
    hook: Call, results: list[tuple[str, dict[str, Any]]], said: bytes, started: float
) -> None:
    """After the foreground wrote the handlers' words (`said`): their commits and the turn
    recorded when their answer now is that one byte for byte (see the module docstring)."""
    event, state = hook.event, hook.directory
    reply = answer(event, results, hook.harness)
    output, error = written(reply.reply)
    info = hook.harness_info
    turns = info is not None and info.asks_every_step and bool(hook.session_id)
    if protocol_said(output, error, reply.reply.code) != said:
        handlers = ", ".join(name for name, _ in results) or "no handler"
        log(
            state,
            event,
            f"the answer a quiet check gave was not the one its handlers give now ({handlers}):"
            " nothing of it was recorded",
        )
        if turns:  # (a person's prompt still opens its turn, as a hinted answer's step does)
            dispatch._turn(hook, {})
        return
    dispatch._record(state, event, results, reply.emitted, started + HANDLERS_TOTAL_S)
    if turns:
        dispatch._turn(hook, reply.verdict)


def main(argv: list[str]) -> int:
    """The detached process: the payload file read (and the answer written beside it, if
    any) and removed, then the handlers run."""
    event, state, name, *handlers = argv
    try:
        raw, said = taken(name)
    finally:
        remove(name)
    run(event, handlers, raw, state, said)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
