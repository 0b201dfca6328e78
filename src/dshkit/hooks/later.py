"""`python -m dshkit.hooks.later STATE EVENT MODULE:FUNCTION ARG…`: a step a quiet check left
for after its call's answer (`hookspec.After`), run detached.

A quiet check that answered "nothing" from what a full check left behind (graft's fold) may
still owe that full check, so that the next call reads less: it starts this process, in a
session of its own with its standard streams on /dev/null, once the call is answered. It runs
`FUNCTION(*ARGS, log)` of `MODULE`, `log` writing a line in the hooks' log of the state
directory STATE under EVENT, where its failure goes too (nobody reads its stderr). Lighter than
the CLI: only the step's own module is loaded.
"""

from __future__ import annotations

import sys

from .log import log


def main(argv: list[str]) -> int:
    state, event, reference, *args = argv
    module, _, name = reference.partition(":")

    def logged(message: str) -> None:
        log(state, event, message)

    try:
        __import__(module)
        getattr(sys.modules[module], name)(*args, logged)
    except Exception as exc:
        logged(f"a step after the answer failed ({reference}): {type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
