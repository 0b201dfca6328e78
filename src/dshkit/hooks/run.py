"""`dshkit hook EVENT [--state-dir DIR]`: the entry point, on the agent's hot path.

It imports nothing heavy until it knows the event has handlers: an event without any (every
PreToolUse, for now) only drains stdin and exits, at about a bare interpreter's cost.
The agent must never be broken by dshkit: a bad payload, a failing or slow handler, anything
at all gives a well-formed "no opinion" (nothing printed, exit 0) and a line in
`<state dir>/hooks.log`. Extra handlers may be named in `DSHKIT_HOOK_HANDLERS`
("Event=module:function;…"), after the built-in ones.
"""

from __future__ import annotations

import os
import sys

from .registry import EVENTS, HANDLERS


def main(argv: list[str]) -> int:
    event = argv[0] if argv else ""
    directory = argv[argv.index("--state-dir") + 1] if "--state-dir" in argv[:-1] else None
    names = HANDLERS.get(event, ()) + extra_handlers(
        os.environ.get("DSHKIT_HOOK_HANDLERS", "")
    ).get(event, ())
    if event in EVENTS and not names:
        sys.stdin.buffer.read()  # the harness wrote a payload: take it, answer nothing
        return 0
    from ..paths import state_dir
    from .dispatch import log, run

    if event not in EVENTS:
        sys.stdin.buffer.read()
        log(
            state_dir(directory),
            event,
            f"unknown hook event {event!r} (known: {', '.join(EVENTS)})",
        )
        return 0
    return run(event, names, os.environ, directory)


def extra_handlers(spec: str) -> dict[str, tuple[str, ...]]:
    """`Event=module:function;…` as event → handler names."""
    found: dict[str, tuple[str, ...]] = {}
    for item in filter(None, spec.split(";")):
        event, _, name = item.partition("=")
        found[event.strip()] = (*found.get(event.strip(), ()), name.strip())
    return found
