"""Running an event's handlers: each within its own budget, then the answer (in the calling
harness's dialect), then commits.

Reached only when some handler may want the call (see `hooks.run`). A handler that fails or
overruns its budget is logged and gives no opinion (one that fails closed, the command guard,
answers as for a call it could not read); the results other handlers produced before or after
it are kept. All of them together stay within the hook timeout written into
the harness's settings. A result's `commit` runs only once the answer carrying it was
written to the harness, so a side effect (a session marked as injected) never claims what
the agent did not get.

A command policy runs here on every shell command: nothing is imported (no `json`: protocol.py
reads the payload and writes the answer; no `signal`, whose enums cost more than the guard, but
its core `_signal`; no pathlib, typing, contextlib or importlib) until a handler or the log
needs it.
"""

from __future__ import annotations

import _signal as signal  # the `signal` module's own core, without its enums (`enum`)
import sys
import time

from ..harnesses import detect as detect_harness
from ..harnesses import dialect, marks
from ..hookio import Answer, Call, room_after
from ..hookspec import (
    COMMITS_TOTAL_S,
    HANDLERS_TOTAL_S,
    MAX_PAYLOAD_BYTES,
    PAYLOAD_READ_S,
    Entry,
)
from .log import log
from .protocol import answer, loads, write, written

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import FrameType
    from typing import IO, Any, TypeVar

    from ..harnesses import Reply
    from .lean import Observation

    T = TypeVar("T")
    Result = dict[str, Any]
    Streams = tuple[IO[bytes] | None, IO[bytes] | None]  # the call's stdout and stderr

COMMIT_BUDGET_S = 2.0


class _OutOfTime(BaseException):
    """A budget ran out (a BaseException: a handler's `except Exception` must not eat it)."""


def run(
    event: str,
    wanted: list[Entry],
    raw: bytes,
    env: Mapping[str, str],
    directory: str | None,
    out: Streams,
    problem: str = "",
    observation: Observation | None = None,
) -> int:
    """Answer `event` with the `wanted` handlers on `out` (stdout, stderr); the exit code is
    the answer's (0 but where the calling harness's dialect blocks by exit code). Under an
    `observation` (`hooks.lean`), what the handlers read is recorded and, once the answer was
    written and the store closed, kept as the session's hint when they had nothing to say."""
    started = time.monotonic()
    if problem:
        log(directory, event, problem)
    try:
        hook = _hook(event, raw, env, directory)
    except BaseException as exc:  # unparsable: the policies that fail closed still answer
        log(directory, event, f"{type(exc).__name__}: {exc}")
        from .run import _wanted  # (only for a payload that cannot be read)

        closed = [entry for entry in wanted if entry.fails_closed and _wanted([entry], raw)]
        why = "调用内容不是可以解析的 JSON 对象"
        return _closed(event, closed, env, directory, out, why, raw)
    if observation is not None:
        from .lean import observed

        hook = observed(hook, observation)
    try:
        return _answer(hook, wanted, env, started, out, observation)
    finally:
        _close(hook)
        if observation is not None:
            _keep(hook, wanted, env, observation)


def _keep(hook: Call, wanted: list[Entry], env: Mapping[str, str], seen: Observation) -> None:
    """The session's hint from what was observed (never raises: a hint not kept only costs the
    next call the full path)."""
    try:
        seen.keep(hook, [entry.handler for entry in wanted], env)
    except BaseException as exc:
        log(hook.directory, hook.event, f"no hint kept: {type(exc).__name__}: {exc}")


def _answer(
    hook: Call,
    wanted: list[Entry],
    env: Mapping[str, str],
    started: float,
    out: Streams,
    observation: Observation | None = None,
) -> int:
    """Run the handlers, write their answer to `out`, then run its commits and record the
    turn; returns the exit code the answer asks for."""
    event, directory = hook.event, hook.directory
    try:
        results = _handle(hook, wanted, env, started + HANDLERS_TOTAL_S, observation)
        reply = answer(event, results, hook.harness)
    except BaseException as exc:  # even SystemExit or Ctrl-C: nothing may reach the agent
        log(directory, event, f"{type(exc).__name__}: {exc}")
        if observation is not None:
            observation.spoke = observation.failed = True
        return 0
    if observation is not None:
        observation.heard(results, reply.reply)
    for note in reply.notes:
        log(directory, event, note)
    written = bool(reply.reply) and _write(directory, event, reply.reply, out)
    if observation is not None and (written or not reply.reply):
        observation.answered(reply.reply, hook)
    if written:
        recorded = _record(directory, event, results, reply.emitted, time.monotonic())
        if observation is not None:
            observation.recorded = recorded
    info = hook.harness_info
    if info is not None and info.asks_every_step and hook.session_id:
        _turn(hook, reply.verdict if written else {})
    return reply.reply.code if written else 0


def _close(hook: Call) -> None:
    """Close the call's store (the answer was written: a failure here is only logged)."""
    try:
        hook.close()
    except BaseException as exc:
        log(hook.directory, hook.event, f"store not closed: {type(exc).__name__}: {exc}")


def _turn(hook: Call, verdict: dict[str, Any]) -> None:
    """Where the harness asks before every model step: the session's turn as this answer
    (`verdict`, as written; {} when none was) leaves it (`dshkit.turns`), within a budget."""
    from .. import turns

    def record() -> None:
        step = hook.is_step
        blocked = verdict.get("decision") == "block"
        context = str(verdict.get("additionalContext") or "")
        if not turns.changes(hook.event, step=step, blocked=blocked, context=context):
            return
        with hook.open_store() as store:
            turns.record(
                store,
                hook.key,
                hook.event,
                step=step,
                blocked=blocked,
                context=context,
                source=str(hook.payload.get("source") or ""),
            )

    try:
        _within(COMMIT_BUDGET_S, record)
    except BaseException as exc:
        log(hook.directory, hook.event, f"turn not recorded: {type(exc).__name__}: {exc}")


def unread(
    event: str,
    closed: list[Entry],
    size: int,
    short: str,
    env: Mapping[str, str],
    directory: str | None,
    out: Streams,
    problem: str = "",
    raw: bytes = b"",
) -> int:
    """Answer a call whose payload did not come whole (`short`: "time", stdin still open at
    the deadline; "size", over the cap) after `size` bytes (`raw`, what came): no opinion, a
    line in the log, and from the handlers that fail closed (`closed`: the command guard,
    when the call may be one of its tools) the guard's decision for a command it cannot
    understand."""
    if problem:
        log(directory, event, problem)
    why = (
        f"stdin still open after {PAYLOAD_READ_S:g} s"
        if short == "time"
        else f"over {MAX_PAYLOAD_BYTES} bytes"
    )
    said = (
        f"钩子在 {PAYLOAD_READ_S:g} 秒内没有收到完整的调用内容（标准输入一直没有关闭）"
        if short == "time"
        else f"调用内容超过 {MAX_PAYLOAD_BYTES} 字节，没有读完"
    )
    whole = f"payload not read whole ({why}, {size} bytes read)"
    return _closed(event, closed, env, directory, out, said, raw, whole)


def _closed(
    event: str,
    closed: list[Entry],
    env: Mapping[str, str],
    directory: str | None,
    out: Streams,
    why: str,
    raw: bytes,
    said: str = "payload not read",
) -> int:
    """Answer for the handlers that fail closed (`closed`: the command guard, when the call
    may be one of its tools) with their decision for a command they could not read (`why`,
    in Chinese); no opinion when there are none (or they would allow). The harness is told
    by what of the payload came (`raw`: its transcript's name, Codex's turn id); `said`
    begins the line in the log."""
    try:
        harness = detect_harness(_sniffed(raw), env)
        hook = Call(event, {}, harness, directory, env, log=_logger(directory, event))
        found = [(entry.handler, _unjudged(entry, hook, why)) for entry in closed]
        reply = answer(event, [(name, result) for name, result in found if result], harness)
    except BaseException as exc:  # even SystemExit or Ctrl-C: nothing may reach the agent
        log(directory, event, f"{said}; {type(exc).__name__}: {exc}")
        return 0
    decision = reply.verdict.get("permissionDecision")
    if decision is None:
        log(directory, event, f"{said}; no opinion given")
        return 0
    if not _write(directory, event, reply.reply, out):
        return 0
    log(directory, event, f"{said}; the command guard answered {decision}")
    return reply.reply.code


def _sniffed(raw: bytes) -> dict[str, Any]:
    """What `harnesses.detect` reads, from a payload that cannot be parsed: the first plain
    string values of "transcript_path" and "hook_event_name", and which of the fields only
    some harness's payloads carry (`harnesses.marks`) are there."""
    found: dict[str, Any] = {}
    for name in ("transcript_path", "hook_event_name"):
        key = b'"' + name.encode() + b'"'
        at = raw.find(key)
        if at >= 0:
            rest = raw[at + len(key) : at + len(key) + 4096].lstrip(b" \t\r\n:").lstrip()
            if rest.startswith(b'"'):
                found[name] = rest[1:].split(b'"', 1)[0].decode("utf-8", "replace")
    for name in marks():
        if b'"' + name.encode() + b'"' in raw:
            found[name] = ""
    return found


def _unjudged(entry: Entry, hook: Call, why: str) -> Result | None:
    """A handler's answer to a call it could not read (the command guard's own)."""
    module, _, _ = entry.handler.partition(":")
    unjudged: Callable[[Call, str], Answer | None] = _module(module).unjudged
    return _result(hook, unjudged(hook, why))


def _write(directory: str | None, event: str, reply: Reply, out: Streams) -> bool:
    """Write the answer to the harness (its JSON to stdout, its text to stderr, as its
    dialect has it: `out`); False (and a line in the log) when that failed."""
    try:
        write(out, *written(reply))
    except BaseException as exc:
        message = f"answer not delivered ({type(exc).__name__}: {exc}); nothing recorded"
        log(directory, event, message)
        return False
    return True


def _hook(
    event: str,
    raw: bytes,
    env: Mapping[str, str],
    directory: str | None,
    step: bool | None = None,
) -> Call:
    """The call `raw` makes; `step`, where the caller knows it, whether it is a model step
    (`Call.is_step`; None: read from the session's turn when asked)."""
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise ValueError(f"payload over {MAX_PAYLOAD_BYTES} bytes")
    payload = loads(raw or b"{}")
    if not isinstance(payload, dict):
        raise ValueError("payload is not a JSON object")
    harness = detect_harness(payload, env)
    payload = dialect(harness).incoming(payload)  # the person's words, not hooks' context
    return Call(event, payload, harness, directory, env, step=step, log=_logger(directory, event))


def _logger(directory: str | None, event: str) -> Callable[[str], None]:
    """A call's line in the hooks' log (`Call.log`)."""

    def said(message: str) -> None:
        log(directory, event, message)

    return said


def _handle(
    hook: Call,
    wanted: list[Entry],
    env: Mapping[str, str],
    deadline: float,
    observation: Observation | None = None,
) -> list[tuple[str, Result]]:
    """Each handler that serves this call, within min(its budget, what is left), told the
    room the answer's context has left for it (`Call.room`); under an `observation`, each
    handler's reads are noted as its own, and one that failed or overran marks it spoken
    (a hint must not stand for an answer that was not given)."""
    cap = _cap(hook, env.get("DSHKIT_HOOK_BUDGET_S") or "inf")  # lower for every handler
    results: list[tuple[str, Result]] = []
    for entry in wanted:
        tools = entry.tool_names(hook.harness_info)
        if not entry.serves(hook.harness) or (tools is not None and hook.tool_name not in tools):
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            log(hook.directory, hook.event, f"handler {entry.handler} skipped: no time left")
            continue
        seconds = min(entry.budget, cap, left)
        hook.room = room_after(hook.event, _contexts(results))
        if observation is not None:
            observation.begin(entry.handler)
        try:
            result = _within(seconds, _call, entry.handler, hook)
        except _OutOfTime:
            if observation is not None:
                observation.spoke = observation.failed = True
            message = f"handler {entry.handler} took more than {seconds:g} s"
            log(hook.directory, hook.event, message)
            _failed_closed(results, entry, hook, f"判断超过了 {seconds:g} 秒的时限")
            continue
        except (Exception, SystemExit) as exc:
            if observation is not None:
                observation.spoke = observation.failed = True
            message = f"handler {entry.handler} failed: {type(exc).__name__}: {exc}"
            log(hook.directory, hook.event, message)
            _failed_closed(results, entry, hook, f"判断时出错（{type(exc).__name__}）")
            continue
        finally:
            if observation is not None:
                observation.end()
        if result is None:
            continue
        if not isinstance(result, dict):
            log(hook.directory, hook.event, f"handler {entry.handler} returned a non-dict")
            continue
        results.append((entry.handler, result))
    return results


def _contexts(results: list[tuple[str, Result]]) -> list[tuple[str, str]]:
    """The contexts (handler, text) of the results so far, as the answer will join them."""
    return [
        (name, str(r["additionalContext"])) for name, r in results if r.get("additionalContext")
    ]


def _cap(hook: Call, given: str) -> float:
    """`DSHKIT_HOOK_BUDGET_S`: seconds above 0, else no cap at all (and a line in the log): a
    bad value must not turn the handlers, the command guard among them, off."""
    try:
        cap = float(given)
    except ValueError:
        cap = -1.0
    if cap > 0:  # (not NaN either)
        return cap
    log(hook.directory, hook.event, f"DSHKIT_HOOK_BUDGET_S={given!r} is not seconds above 0")
    return float("inf")


def _failed_closed(results: list[tuple[str, Result]], entry: Entry, hook: Call, why: str) -> None:
    """A handler that fails closed and could not finish still answers, as for a call it could
    not read (within the budget that is left: its answer needs no judging)."""
    if not entry.fails_closed:
        return
    try:
        result = _within(1.0, _unjudged, entry, hook, why)
    except BaseException as exc:
        log(hook.directory, hook.event, f"handler {entry.handler}: {type(exc).__name__}: {exc}")
        return
    if result is not None:
        results.append((entry.handler, result))


def _record(
    directory: str | None,
    event: str,
    results: list[tuple[str, Result]],
    emitted: list[int],
    started: float,
) -> bool:
    """Once an answer was written: the commits of the results it carried (`emitted`, their
    indexes), within `COMMITS_TOTAL_S` of `started`; whether all the handlers said is now
    recorded (every result carried, every commit run)."""
    carried = [results[i] for i in emitted]
    ran = _commit(directory, event, carried, started + COMMITS_TOTAL_S)
    return ran and len(carried) == len(results)


def _commit(
    directory: str | None, event: str, emitted: list[tuple[str, Result]], deadline: float
) -> bool:
    """Run the commits of the results the written answer carried, each within its budget;
    whether every one ran."""
    ran = True
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
            ran = False
            what = f"took more than {seconds:g} s" if isinstance(exc, _OutOfTime) else str(exc)
            log(
                directory,
                event,
                f"handler {name}: its answer was delivered but not recorded: {what}",
            )
    return ran


def _call(name: str, hook: Call) -> Result | None:
    """The handler `name` ("module:function", imported now) called with `hook`: a face's
    `Answer`, or a handler of one's own (`DSHKIT_HOOK_HANDLERS`), which may answer in
    dshkit's words as a dict, its `commit` taking no argument."""
    module, _, function = name.partition(":")
    handler: Callable[[Call], Answer | Result | None] = getattr(_module(module), function)
    return _result(hook, handler(hook))


def _result(hook: Call, said: Answer | Result | None) -> Result | None:
    """A face's answer in dshkit's words (None when it says nothing), its commit run in the
    call's store once the answer carrying it was written; a dict as it is."""
    if not isinstance(said, Answer):
        return said
    result = said.words()
    if not result:
        return None
    commit = said.commit
    if commit is not None:

        def recorded() -> None:
            with hook.open_store() as store:
                commit(store)

        result["commit"] = recorded
    return result


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


def _module(name: str) -> Any:
    """The module `name` (absolute), imported now: `importlib.import_module` without
    importing `importlib`, whose package loads `warnings` on every call that runs a handler."""
    __import__(name)
    return sys.modules[name]
