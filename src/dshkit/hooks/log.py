"""The hooks' log, `<state dir>/hooks.log`: one line for each thing that went wrong behind
the agent's back, where nobody would see it otherwise (a handler that failed or overran,
an answer not delivered, a probe a hook started detached that failed).

On the hot path only when there is something to say: nothing is imported until a line is
written.
"""

from __future__ import annotations

import time

LOG_LIMIT = 1 << 20  # bytes; a longer log is moved to hooks.log.1 before the next line


def log(directory: str | None, event: str, message: str) -> None:
    """One line in <state dir>/hooks.log; never raises (the log must not break a hook)."""
    from ..errors import Invalid
    from ..paths import private_dir, private_opener, state_dir

    try:
        state = state_dir(directory)
    except Invalid:  # no state directory (a relative one): nowhere to write, said on stderr
        return
    try:
        private_dir(state)
        path = state / "hooks.log"
        if path.exists() and path.stat().st_size > LOG_LIMIT:
            path.replace(path.with_suffix(".log.1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        with open(path, "a", encoding="utf-8", opener=private_opener) as handle:
            handle.write(f"{stamp}Z {event or '-'} {message}\n")
    except OSError:
        pass
