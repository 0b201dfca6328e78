"""Handlers a quiet check said nothing for, run once the call is answered, their answers
discarded (`hookspec.AFTER`): in the caller (a resident worker's deferred step, the tests),
or detached, as `python -m dshkit.hooks.later EVENT STATE FILE HANDLER…`.

A quiet check may prove "nothing to say" from what its handler's last full run left behind
(graft's fold, from the store's last fold of the log) while that run is still owed, so that
the next call reads less: the handler runs after the answer, on the call's payload, and what
it would have said is neither written nor committed (it is found again by the next call's
check). Detached, the payload waits in an owner-only file of the hints directory (argv is
world-readable), which the step removes; the step runs in a session of its own with its
standard streams on /dev/null, its failures in the hooks' log.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from ..hookspec import HANDLERS_TOTAL_S, entries, extra_entries
from . import dispatch
from .log import log


def run(event: str, handlers: list[str], raw: bytes, state: str) -> None:
    """Run `handlers` (descriptors' names) of `event` on the payload `raw`, their answers
    discarded. Never raises: a failure is a line in the hooks' log."""
    env = os.environ
    try:
        extra = extra_entries(env.get("DSHKIT_HOOK_HANDLERS", ""))
        wanted = [entry for entry in entries(event, extra) if entry.handler in handlers]
        hook = dispatch._hook(event, raw, env, state)
        try:
            dispatch._handle(hook, wanted, env, time.monotonic() + HANDLERS_TOTAL_S)
        finally:
            dispatch._close(hook)
    except BaseException as exc:
        log(state, event, f"a run after the answer failed: {type(exc).__name__}: {exc}")


def main(argv: list[str]) -> int:
    """The detached process: the payload file read and removed, the handlers run."""
    event, state, name, *handlers = argv
    try:
        with open(name, "rb") as handle:
            raw = handle.read()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)
    run(event, handlers, raw, state)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
