"""Running an event's handlers: each within its own budget, then the answer, then commits.

Reached only when some handler may want the call (see `hooks.run`). A handler that fails or
overruns its budget is logged and gives no opinion; the results other handlers produced
before or after it are kept. All of them together stay within the hook timeout written into
the harness's settings. A result's `commit` runs only once the answer carrying it was
written to the harness, so a side effect (a session marked as injected) never claims what
the agent did not get.

A command policy runs here on every shell command: beyond `json` and `signal`, nothing is
imported (no pathlib, typing or contextlib) until a handler or the log needs it.
"""

from __future__ import annotations

import importlib
import json
import signal
import sys
import time

from ..harnesses import detect as detect_harness
from ..hookspec import (
    COMMITS_TOTAL_S,
    HANDLERS_TOTAL_S,
    MAX_PAYLOAD_BYTES,
    PAYLOAD_READ_S,
    Entry,
)
from .log import log
from .protocol import HookInput, answer

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import FrameType
    from typing import Any, TypeVar

    T = TypeVar("T")
    Result = dict[str, Any]

COMMIT_BUDGET_S = 2.0


class _OutOfTime(BaseException):
    """A budget ran out (a BaseException: a handler's `except Exception` must not eat it)."""


def run(
    event: str,
    wanted: list[Entry],
    raw: bytes,
    env: Mapping[str, str],
    directory: str | None,
    problem: str = "",
) -> int:
    """Answer `event` with the `wanted` handlers; always exits 0."""
    started = time.monotonic()
    if problem:
        log(directory, event, problem)
    try:
        hook = _hook(event, raw, env, directory)
        results = _handle(hook, wanted, env, started + HANDLERS_TOTAL_S)
        reply = answer(event, results)
    except BaseException as exc:  # even SystemExit or Ctrl-C: nothing may reach the agent
        log(directory, event, f"{type(exc).__name__}: {exc}")
        return 0
    for note in reply.notes:
        log(directory, event, note)
    if not reply.output or not _write(directory, event, reply.output):
        return 0
    emitted = [results[i] for i in reply.emitted]
    _commit(directory, event, emitted, time.monotonic() + COMMITS_TOTAL_S)
    return 0


def unread(
    event: str,
    closed: list[Entry],
    size: int,
    short: str,
    env: Mapping[str, str],
    directory: str | None,
    problem: str = "",
) -> int:
    """Answer a call whose payload did not come whole (`short`: "time", stdin still open at
    the deadline; "size", over the cap) after `size` bytes: no opinion, a line in the log,
    and from the handlers that fail closed (`closed`: the command guard, when the call may
    be one of its tools) the guard's decision for a command it cannot understand."""
    if problem:
        log(directory, event, problem)
    why = (
        f"stdin still open after {PAYLOAD_READ_S:g} s"
        if short == "time"
        else f"over {MAX_PAYLOAD_BYTES} bytes"
    )
    said = f"payload not read whole ({why}, {size} bytes read)"
    try:
        found = [(entry.handler, _unjudged(event, short, env, directory)) for entry in closed]
        reply = answer(event, [(name, result) for name, result in found if result])
    except BaseException as exc:  # even SystemExit or Ctrl-C: nothing may reach the agent
        log(directory, event, f"{said}; {type(exc).__name__}: {exc}")
        return 0
    specific = reply.output.get("hookSpecificOutput", {})
    decision = specific.get("permissionDecision")
    if decision is None:
        log(directory, event, f"{said}; no opinion given")
        return 0
    if _write(directory, event, reply.output):
        log(directory, event, f"{said}; the command guard answered {decision}")
    return 0


def _unjudged(
    event: str, short: str, env: Mapping[str, str], directory: str | None
) -> Result | None:
    """The command guard's answer to a command it could not read: its mode's decision for
    `unknown` (what it does with any command it cannot understand), None when that is allow."""
    from ..guard import TABLE, UNKNOWN
    from .guard import _mode  # the mode the guard hook is in, read the way it reads it

    hook = HookInput(event, {}, detect_harness({}, env), directory, env)
    mode, problem = _mode(hook)
    decision = TABLE[UNKNOWN][mode]  # the decision table's row for what it cannot understand
    if decision == "allow":
        return None
    why = (
        f"钩子在 {PAYLOAD_READ_S:g} 秒内没有收到完整的调用内容（标准输入一直没有关闭）"
        if short == "time"
        else f"调用内容超过 {MAX_PAYLOAD_BYTES} 字节，没有读完"
    )
    verb = "拒绝" if decision == "deny" else "需要人工确认"
    return {
        "permissionDecision": decision,
        "permissionDecisionReason": (
            f"dshkit 命令风险策略（{mode}）{verb}这条命令：无法看懂的命令，{why}，"
            f"无法判断它的风险。{problem}"
        ),
    }


def _write(directory: str | None, event: str, output: dict[str, Any]) -> bool:
    """Write the answer to the harness; False (and a line in the log) when that failed."""
    try:
        sys.stdout.buffer.write(json.dumps(output, ensure_ascii=False).encode())
        sys.stdout.flush()
    except BaseException as exc:
        message = f"answer not delivered ({type(exc).__name__}: {exc}); nothing recorded"
        log(directory, event, message)
        return False
    return True


def _hook(event: str, raw: bytes, env: Mapping[str, str], directory: str | None) -> HookInput:
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise ValueError(f"payload over {MAX_PAYLOAD_BYTES} bytes")
    payload = json.loads(raw or b"{}")
    if not isinstance(payload, dict):
        raise ValueError("payload is not a JSON object")
    return HookInput(event, payload, detect_harness(payload, env), directory, env)


def _handle(
    hook: HookInput, wanted: list[Entry], env: Mapping[str, str], deadline: float
) -> list[tuple[str, Result]]:
    """Each handler that serves this call, within min(its budget, what is left)."""
    cap = float(env.get("DSHKIT_HOOK_BUDGET_S") or "inf")  # a lower budget for every handler
    results = []
    for entry in wanted:
        tools = entry.tool_names(hook.harness_info)
        if not entry.serves(hook.harness) or (tools is not None and hook.tool_name not in tools):
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            log(hook.directory, hook.event, f"handler {entry.handler} skipped: no time left")
            continue
        seconds = min(entry.budget, cap, left)
        try:
            result = _within(seconds, _call, entry.handler, hook)
        except _OutOfTime:
            message = f"handler {entry.handler} took more than {seconds:g} s"
            log(hook.directory, hook.event, message)
            continue
        except (Exception, SystemExit) as exc:
            message = f"handler {entry.handler} failed: {type(exc).__name__}: {exc}"
            log(hook.directory, hook.event, message)
            continue
        if result is None:
            continue
        if not isinstance(result, dict):
            log(hook.directory, hook.event, f"handler {entry.handler} returned a non-dict")
            continue
        results.append((entry.handler, result))
    return results


def _commit(
    directory: str | None, event: str, emitted: list[tuple[str, Result]], deadline: float
) -> None:
    """Run the commits of the results the written answer carried, each within its budget."""
    for name, result in emitted:
        commit = result.get("commit")
        if commit is None:
            continue
        seconds = min(COMMIT_BUDGET_S, deadline - time.monotonic())
        try:
            if seconds <= 0:
                raise TimeoutError("no time left")
            _within(seconds, commit)
        except BaseException as exc:
            what = f"took more than {seconds:g} s" if isinstance(exc, _OutOfTime) else str(exc)
            log(
                directory,
                event,
                f"handler {name}: its answer was delivered but not recorded: {what}",
            )


def _call(name: str, hook: HookInput) -> Result | None:
    """The handler `name` ("module:function", imported now) called with `hook`."""
    module, _, function = name.partition(":")
    handler: Callable[[HookInput], Result | None] = getattr(
        importlib.import_module(module), function
    )
    return handler(hook)


def _within(seconds: float, call: Callable[..., T], *args: Any) -> T:
    """`call(*args)`, interrupted by _OutOfTime in the main thread once `seconds` are spent
    (SIGALRM, Unix)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return call(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
