"""The detached step after a call the lean foreground answered from its hint
(`python -m dshkit.hooks.after EVENT STATE PAYLOAD-FILE`, started by `hooks.lean.after`).

It runs the handlers the foreground skipped, for real, on the call's payload (read from the
owner-only file, then removed): what they do besides answering (a prompt recorded as a run,
a turn begun, a probe started) still happens, only after the answer. Their answer is not
written anywhere: the foreground said "nothing", so nothing is committed. Should a handler
have said something after all, the hint was wrong: a line in the hooks' log and the hint
dropped (what it owed is owed still, and the next event carries it). Otherwise what they read
is kept as the session's next hint, as after a full call (`hooks.lean.Observation`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from ..hookspec import HANDLERS_TOTAL_S, entries, extra_entries
from . import dispatch, hint
from .lean import Observation, live, observed
from .log import log
from .run import _present


def main(argv: list[str]) -> int:
    """The detached process: the payload file read, the step run, then the file removed (while
    it is there, a step is pending: tests wait for none to be)."""
    event, state, name = argv
    try:
        with open(name, "rb") as handle:
            raw = handle.read()
        step(event, state, raw)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)
    return 0


def step(event: str, state: str, raw: bytes) -> None:
    """Run the handlers a hint answered for (see the module docstring); never raises."""
    try:
        _step(event, state, raw)
    except BaseException as exc:
        log(state, event, f"hint step failed: {type(exc).__name__}: {exc}")


def _step(event: str, state: str, raw: bytes) -> None:
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
    with Observation(state) as seen:
        hook = observed(dispatch._hook(event, raw, env, state), seen)
        try:
            results = dispatch._handle(hook, run, env, started + HANDLERS_TOTAL_S, seen)
            info = hook.harness_info
            if info is not None and info.asks_every_step and hook.session_id:
                dispatch._turn(hook, {})
        finally:
            dispatch._close(hook)
        if results:
            said = ", ".join(name for name, _ in results)
            hint.drop(state, event, hook.harness, hook.session_id)
            log(
                state,
                event,
                f"the hint answered nothing but {said} had something to say: "
                "it was not delivered, nor recorded; the hint is dropped",
            )
            return
        seen.keep(hook, [entry.handler for entry in wanted], env, hook.log)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
