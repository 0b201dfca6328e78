"""Handlers for the hook tests, named via DSHKIT_HOOK_HANDLERS (some misbehave on purpose)."""

from __future__ import annotations

import contextlib
import time
from typing import Any

DENIED = "dshkit test policy: this tool is not allowed here"


def crash(hook: Any) -> None:
    raise RuntimeError("forced crash")


def stall(hook: Any) -> None:
    time.sleep(30)


def stubborn(hook: Any) -> None:
    """Sleeps through any Exception: only a budget that is not an Exception stops it."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            time.sleep(30)


def speak(hook: Any) -> dict[str, str]:
    return {"additionalContext": "from the extra handler"}


def huge(hook: Any) -> dict[str, Any]:
    """A context one character over the cap, whose commit leaves a mark if it ever runs."""

    def commit() -> None:
        (hook.state_dir / "huge-committed").write_text("delivered")

    return {"additionalContext": "长" * 10_001, "commit": commit}


def noted(hook: Any) -> dict[str, Any]:
    """A small context whose commit records that the answer was delivered."""

    def commit() -> None:
        (hook.state_dir / "noted-committed").write_text(hook.session_id)

    return {"additionalContext": "noted", "commit": commit}


def deny(hook: Any) -> dict[str, str]:
    return {"permissionDecision": "deny", "permissionDecisionReason": DENIED}


def allow_looser(hook: Any) -> dict[str, str]:
    """A looser command policy registered after the built-in one."""
    return {"permissionDecision": "allow", "permissionDecisionReason": "looser policy"}


def deny_stricter(hook: Any) -> dict[str, str]:
    """A stricter command policy registered after the built-in one."""
    return {"permissionDecision": "deny", "permissionDecisionReason": "stricter policy"}


def block(hook: Any) -> dict[str, str]:
    """Holds the prompt or the stop (a Stop hook that sends the agent on)."""
    return {"decision": "block", "reason": "dshkit test hook: not yet"}


def counted(hook: Any) -> None:
    """Says nothing; appends one line per call to `<state dir>/calls-seen` (the hook's event)."""
    with (hook.state_dir / "calls-seen").open("a") as seen:
        seen.write(hook.event + "\n")


def block_once(hook: Any) -> dict[str, str] | None:
    """Sends the agent on at Stop unless it is going on because of a Stop hook already."""
    if hook.payload.get("stop_hook_active") is True:
        return None
    return {"decision": "block", "reason": "dshkit test hook: not yet"}


def steps_seen(hook: Any) -> None:
    """Says nothing; appends "step" or "prompt" and the prompt to `<state dir>/steps-seen`."""
    with (hook.state_dir / "steps-seen").open("a") as seen:
        seen.write(f"{'step' if hook.is_step else 'prompt'} {hook.payload.get('prompt')}\n")


def held(hook: Any) -> None:
    """Says it started (`held-started` in the state dir), then waits for `release` there (at
    most its budget): a call that stays busy for as long as a test wants."""
    hook.state_dir.mkdir(parents=True, exist_ok=True)  # (no other handler may have made it)
    (hook.state_dir / "held-started").write_text("")
    while not (hook.state_dir / "release").exists():
        time.sleep(0.02)


def vanish(hook: Any) -> None:
    """Ends its process at once, as a crash no handler can catch would."""
    import os

    os._exit(3)


def lingering(hook: Any) -> dict[str, str]:
    """Leaves what a process's exit must still do: an `atexit` function and a thread that is
    not a daemon, each writing a file when it ran (the thread after a while)."""
    import atexit
    import threading

    def later() -> None:
        time.sleep(0.3)
        (hook.state_dir / "thread-done").write_text("done")

    atexit.register(lambda: (hook.state_dir / "atexit-ran").write_text("ran"))
    threading.Thread(target=later).start()
    return {"additionalContext": "lingering"}


class _Finalised:
    """Writes a file when it is freed: at the interpreter's teardown, for a module's global."""

    def __init__(self, path: Any) -> None:
        self.path = path

    def __del__(self) -> None:
        self.path.write_text("torn down")


_KEPT: list[_Finalised] = []


def kept(hook: Any) -> dict[str, str]:
    """Leaves an `atexit` function, which writes to stderr's buffer (not flushed), and an
    object only the interpreter's teardown frees."""
    import atexit
    import sys

    def at_exit() -> None:
        (hook.state_dir / "atexit-ran").write_text("ran")
        sys.stderr.buffer.write(b"kept, unflushed")

    atexit.register(at_exit)
    _KEPT.append(_Finalised(hook.state_dir / "torn-down"))
    return {"additionalContext": "kept " * 2000}


def collection(hook: Any) -> dict[str, str]:
    """Says how often the process's cyclic collector runs (its first generation's threshold),
    and how many objects were allocated (net) since its last pass."""
    import gc

    return {"additionalContext": f"{gc.get_threshold()[0]} {gc.get_count()[0]}"}


def told_once(hook: Any) -> dict[str, Any] | None:
    """Tells the session something once: its commit records it (a file of the state
    directory, which the handler looks at first), and then it says nothing."""
    told = hook.state_dir / f"told-{hook.session_id}"
    if told.exists():
        return None

    def commit() -> None:
        told.write_text("told")

    return {"additionalContext": "told", "commit": commit}


def told_unrecorded(hook: Any) -> dict[str, Any] | None:
    """As `told_once`, but its commit fails: told, never recorded, so told again."""
    if (hook.state_dir / f"told-{hook.session_id}").exists():
        return None

    def commit() -> None:
        raise OSError("the record could not be written")

    return {"additionalContext": "told", "commit": commit}


def started(hook: Any) -> dict[str, str]:
    """Says whether this hook's interpreter ran `site` (a launcher's line starts it without)."""
    import sys

    return {"additionalContext": f"site ran: {'site' in sys.modules}"}
