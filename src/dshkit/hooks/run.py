"""`dshkit hook EVENT [--state-dir DIR]`: the entry point, on the agent's hot path.

It imports nothing heavy until it knows a handler wants this call: an event without handlers,
or a tool event whose handlers all look at other tools (the tool's name is found in the raw
payload, without a JSON parser), or one whose handlers all say from the raw payload that
they have nothing to say (`Entry.quiet`), only drains stdin and exits, at about a bare
interpreter's cost. The agent must never be broken by dshkit: a bad payload, a failing or
slow handler, anything at all gives a well-formed "no opinion" (nothing printed, exit 0) and
a line in `<state dir>/hooks.log`. Extra handlers may be named in `DSHKIT_HOOK_HANDLERS` (see
`hookspec.extra_entries`), after the built-in ones.

The payload is read within `hookspec.PAYLOAD_READ_S`: a stdin that is never closed must not
hang the hook until the harness kills it, which would let a command through unjudged. A call
whose payload did not come whole gets no opinion, except from the command guard, which fails
closed (see `dispatch.unread`); so does a call with no state directory (a relative `DSH_HOME`
or `--state-dir`), where the guard judges in its strictest mode.

`call` is one call with its stdin, stdout, stderr, environment and directory as parameters:
the process's entry (`main`) hands it its own; the tests hand it theirs, in their own process.
"""

from __future__ import annotations

import os
import sys
import time

from ..harnesses import absolute, dsh_home
from ..hookspec import (
    AFTER,
    EVENTS,
    MAX_PAYLOAD_BYTES,
    PAYLOAD_READ_S,
    Entry,
    Say,
    entries,
    extra_entries,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from contextlib import AbstractContextManager
    from typing import IO, Any, NoReturn, TypeVar

    _T = TypeVar("_T")

# The events `lean` may answer from a hint: its one definition, here, where every call is
# routed, so that a call of another event never loads `lean` to ask.
LEAN_EVENTS = ("UserPromptSubmit", "SessionStart")
_KEY = b'"tool_name"'
_BLANKS = (b" ", b"\t", b"\r", b"\n")  # JSON whitespace


def main(argv: list[str]) -> NoReturn:
    """`dshkit hook ARGV` in a process of its own: `call` with the process's own stdin,
    stdout, stderr, environment and directory; then the process ends (`end`)."""
    out, err = getattr(sys.stdout, "buffer", None), getattr(sys.stderr, "buffer", None)
    end(call(argv, sys.stdin, out, err, os.environ, detach=True))


def end(code: int) -> NoReturn:
    """End this hook process with `code`, as the interpreter's exit would, less what a
    short-lived process need not do: the interpreter's finalization (every module's teardown,
    the store's and the zstd decoder's objects freed one by one), about 2 ms of a prompt's
    hook, measured (docs/design/hooks.md#a-hook-process-ends-without-the-teardown). What an
    exit does that anyone can see is done first, in its order: the threads that are not
    daemons are waited for (where there are any, the ordinary exit runs instead), the `atexit`
    functions run (a watched child is killed), stdout and stderr are flushed (where that
    fails, the ordinary exit reports it, as ever). Files are written whole by their writers,
    and the store's commits are durable when made: nothing else is waiting."""
    threads = sys.modules.get("threading")
    if threads is not None:
        main_thread = threads.main_thread()
        if any(not t.daemon and t is not main_thread for t in threads.enumerate()):
            sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:
        sys.exit(code)
    os._exit(code)


def call(
    argv: list[str],
    stdin: IO[Any] | None,
    stdout: IO[bytes] | None,
    stderr: IO[bytes] | None,
    env: Mapping[str, str],
    cwd: str | None = None,
    *,
    detach: bool = False,
    deferred: list[Callable[[], None]] | None = None,
) -> int:
    """One hook call: `argv` (EVENT [--state-dir DIR]), the payload read from `stdin` (its file
    descriptor, as a harness's pipe is read), the answer written to `stdout` and `stderr`
    (bytes, as the harness's dialect has it; a line that has no log to go to on `stderr`), in
    the environment `env` and the directory `cwd` (None: this process's). The handlers read
    both as any code does (HOME, `~`, a command's directory), so an environment or directory
    other than the process's own is made the process's for the call and put back after it (a
    caller's other threads see it meanwhile). A call answered from its hint (`hooks.lean`)
    leaves the handlers it skipped to a detached process when `detach` (the process's entry);
    to the caller when it passes `deferred`, where that step is appended, to be run (in this
    call's environment and directory) once the answer is out (a resident worker); else runs
    them here once it answered (the tests: nothing outlives the call). Its exit code, the
    answer's."""
    if env is os.environ and cwd is None:  # the process's own (main): nothing to swap
        return _call(argv, stdin, stdout, stderr, detach, deferred)
    steps: list[Callable[[], None]] | None = None if deferred is None else []
    try:
        return _within(env, cwd, lambda: _call(argv, stdin, stdout, stderr, detach, steps))
    finally:
        if deferred is not None and steps:
            deferred.extend(_bound(dict(env), cwd, step) for step in steps)


def _bound(env: Mapping[str, str], cwd: str | None, step: Callable[[], None]) -> Callable[[], None]:
    """`step`, to be run later in the call's environment and directory."""
    return lambda: _within(env, cwd, step)


def _within(env: Mapping[str, str], cwd: str | None, run: Callable[[], _T]) -> _T:
    """`run()` with `env` made the process's environment and `cwd` its directory (None: this
    process's), both put back after it."""
    saved, here = dict(os.environ), os.getcwd()
    try:
        _environ(dict(env))
        if cwd is not None:
            os.chdir(cwd)
        return run()
    finally:
        os.chdir(here)
        _environ(saved)


def _environ(wanted: dict[str, str]) -> None:
    """`os.environ` (and so the C environment a child process inherits) made `wanted`."""
    for name in [name for name in os.environ if name not in wanted]:
        del os.environ[name]
    os.environ.update(wanted)


def _call(
    argv: list[str],
    stdin: IO[Any] | None,
    stdout: IO[bytes] | None,
    stderr: IO[bytes] | None,
    detach: bool = False,
    deferred: list[Callable[[], None]] | None = None,
) -> int:
    event = argv[0] if argv else ""
    directory = argv[argv.index("--state-dir") + 1] if "--state-dir" in argv[:-1] else None
    try:
        state = _state_dir(directory)
    except Exception as exc:  # Invalid, caught broadly: the hot path imports no error tree
        # No state directory to log in, and none may be made here (the agent's directory):
        # the line goes to stderr, which the harness keeps in its own log. The handlers that
        # fail closed (the command guard) still answer, with no settings: the strictest
        # (docs/design/guard.md#the-guard-fails-closed).
        raw, short = _read_payload(stdin, MAX_PAYLOAD_BYTES, PAYLOAD_READ_S)
        closed = [entry for entry in entries(event) if entry.fails_closed]
        closed = [entry for entry in closed if _wanted([entry], raw)]
        said = "only the command guard answers" if closed else "no opinion given"
        if stderr is not None:
            line = f"dshkit hook {event or '-'}: {exc}; {said}\n"
            stderr.write(line.encode("utf-8", "backslashreplace"))
            stderr.flush()
        if not closed:
            return 0
        if short:
            from .dispatch import unread

            out = (stdout, stderr)
            return unread(event, closed, len(raw), short, os.environ, directory, out, "", raw)
        from .dispatch import run

        return run(event, closed, raw, os.environ, directory, (stdout, stderr))
    problem = ""
    try:
        extra = extra_entries(os.environ.get("DSHKIT_HOOK_HANDLERS", ""))
    except ValueError as exc:
        extra, problem = (), str(exc)
    if event not in EVENTS:
        problem = f"unknown hook event {event!r} (known: {', '.join(EVENTS)})"
    wanted = [entry for entry in entries(event, extra) if _present(entry, state)]
    raw, short = _read_payload(stdin, MAX_PAYLOAD_BYTES, PAYLOAD_READ_S)
    if short:
        from .dispatch import unread

        closed = [entry for entry in wanted if entry.fails_closed and _wanted([entry], raw)]
        out = (stdout, stderr)
        return unread(event, closed, len(raw), short, os.environ, directory, out, problem, raw)
    owed: list[Entry] = []  # quiet now, but their handlers run once the call is answered
    spoken: list[tuple[Entry, str]] = []  # (of those) the checks that knew their words
    asked = [entry for entry in wanted if entry.quiet is not None and _wanted([entry], raw)]
    with _looks(state, asked):
        left = [
            entry
            for entry in wanted
            if entry not in asked or not _quiet(entry, state, raw, owed, spoken)
        ]
        ends = owed and not spoken and not (left and _wanted(left, raw))
        if ends and _turn_ends(event, raw, state):
            # No handler would answer now, and this answer ends the turn of a harness that
            # asks before every step, which could not be recorded here: the handlers answer
            # in full, which records it before the next step can ask (after the answer, too
            # late).
            left, owed = [entry for entry in wanted if entry in left or entry in owed], []
    delivered = None  # the answer written for `spoken`: their handlers must give it to record
    out = (stdout, stderr)
    try:
        if spoken:
            alone = not problem and event not in LEAN_EVENTS
            if alone and not (left and _wanted(left, raw)):
                written = _say(event, spoken, raw, state, out)
                if written is not None:
                    code, delivered = written
                    return code
            # Another handler has something to say, or the words were not written: the
            # handlers answer in full, these among them.
            back = [entry for entry, _ in spoken]
            owed = [entry for entry in owed if entry not in back]
            left = [entry for entry in wanted if entry in left or entry in back]
        return _answer(event, left, raw, state, directory, problem, out, detach, deferred)
    finally:
        if owed:
            handlers = [entry.handler for entry in owed]
            after(event, handlers, raw, state, detach, deferred, delivered)


class _Nothing:
    """A context that holds nothing (`contextlib.nullcontext`, without loading `contextlib`)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NOTHING = _Nothing()


def _looks(state: str, asked: list[Entry]) -> AbstractContextManager[object]:
    """Where quiet checks are asked, one read-only connection to the store shared by their
    looks and the turn's end (`storeview.Shared`: ~0.4 ms a connection, measured); else
    nothing (a call no check is asked for loads no `storeview`)."""
    if not asked:
        return _NOTHING
    from ..storeview import Shared

    return Shared(state)


def _quiet(
    entry: Entry, state: str, raw: bytes, owed: list[Entry], spoken: list[tuple[Entry, str]]
) -> bool:
    """Whether the entry's quiet check (one it is asked: `_call`) says its handler need not
    run before the answer; one whose handler is still to run after it (AFTER, or a `Say`)
    goes to `owed`, and one that gave its handler's words (`Say`) to `spoken` too."""
    if entry.quiet is None:
        return False
    said = entry.quiet(state, raw)
    if said == AFTER or isinstance(said, Say):
        owed.append(entry)
        if isinstance(said, Say):
            spoken.append((entry, said.text))
        return True
    return said is True


def _turn_ends(event: str, raw: bytes, state: str) -> bool:
    """Whether an answer of nothing to this call ends its session's turn, as the runtime
    records it for a harness that asks before every model step (`dispatch._turn`,
    `turns.changes`: a Stop not blocked), and that could not be recorded here, before the
    answer (`turns.end`, without the store loaded); a session id the byte scan cannot read
    counts as one."""
    if event != "Stop":
        return False
    from ..quiet import plain_string

    session = plain_string(raw, b'"session_id"')
    if not session:
        return session is None and b'"session_id"' in raw  # (none: no turn recorded)
    from .. import turns

    return not turns.end(state, session)


def _say(
    event: str,
    spoken: list[tuple[Entry, str]],
    raw: bytes,
    state: str,
    out: tuple[IO[bytes] | None, IO[bytes] | None],
) -> tuple[int, bytes | None] | None:
    """`say` the words quiet checks gave for their handlers (`Say`) to the harness the
    payload tells (None: a payload that does not parse, nothing written)."""
    try:
        from .. import harnesses
        from .protocol import loads

        payload = loads(raw)
        if not isinstance(payload, dict):
            return None
        harness = harnesses.detect(payload, os.environ)
    except Exception:
        return None
    return say(event, [(entry.handler, text) for entry, text in spoken], harness, state, out)


def say(
    event: str,
    spoken: list[tuple[str, str]],
    harness: str,
    state: str,
    out: tuple[IO[bytes] | None, IO[bytes] | None],
) -> tuple[int, bytes | None] | None:
    """Write the words quiet checks gave for their handlers (`spoken`: handler, text) as the
    runtime would write the handlers' answer (merged in order, in `harness`'s dialect); the
    exit code and the answer as written (`protocol.said`; None: its writing failed, nothing
    is to be recorded), or None where nothing was written (a context the cap would drop: the
    full path answers, and says why)."""
    try:
        from .protocol import answer, delivered, said, written

        results = [(handler, {"additionalContext": text}) for handler, text in spoken]
        merged = answer(event, results, harness)
        if merged.notes or len(merged.emitted) != len(results):
            return None
        output, error = written(merged.reply)
    except Exception:
        return None
    if not delivered(out, output, error, state, event):
        return 0, None  # (as a full call whose answer was not delivered: nothing recorded)
    return merged.reply.code, said(output, error, merged.reply.code)


def after(
    event: str,
    handlers: list[str],
    raw: bytes,
    state: str,
    detach: bool,
    deferred: list[Callable[[], None]] | None,
    said: bytes | None = None,
) -> None:
    """Run `handlers` once the call was answered (`hooks.later`), their answers discarded, or,
    where the foreground wrote their words (`said`, as `protocol.said` has it), committed when
    they give the same answer: after the answer where the caller defers (a resident worker),
    detached where the call is a process of its own, else now (the tests). Never raises: a
    failure is a line in the hooks' log."""
    if deferred is not None or not detach:
        from .later import run

        def step() -> None:
            run(event, handlers, raw, state, said)

        if deferred is None:
            step()
        else:
            deferred.append(step)
        return
    try:
        from .spawn import SAID, leave, start

        left = leave(state, "later", raw, {SAID: said})
        start("dshkit.hooks.later", event, state, left, *handlers)
    except Exception as exc:
        from .log import log

        log(state, event, f"a run after the answer not started: {type(exc).__name__}: {exc}")


def _answer(
    event: str,
    wanted: list[Entry],
    raw: bytes,
    state: str,
    directory: str | None,
    problem: str,
    out: tuple[IO[bytes] | None, IO[bytes] | None],
    detach: bool,
    deferred: list[Callable[[], None]] | None,
) -> int:
    """The call answered by the handlers left wanting it (none: nothing said)."""
    if wanted and _wanted(wanted, raw):
        if event in LEAN_EVENTS and not problem:
            from .lean import Observation, answer

            code = answer(event, wanted, raw, state, os.environ, detach, out, deferred)
            if code is not None:
                return code
            from .dispatch import run

            with Observation(state) as seen:
                return run(event, wanted, raw, os.environ, directory, out, "", seen)
        from .dispatch import run

        return run(event, wanted, raw, os.environ, directory, out, problem)
    if problem:
        from .log import log

        log(directory, event, problem)
    return 0


def _state_dir(directory: str | None) -> str:
    """The state directory as `hookio.state_path` has it (a call no handler wants does not
    load `hookio`); Invalid when it is relative."""
    if directory:
        path = os.path.expanduser(directory)
        return absolute(path, directory, "the state directory", "state_dir")
    return os.path.join(dsh_home(), "dshkit")


def _present(entry: Entry, state: str) -> bool:
    """Whether the file the entry waits for (if any) is in the state directory `state`."""
    if entry.when_exists is None:
        return True
    return os.path.exists(os.path.join(state, entry.when_exists))


def _read_payload(stdin: IO[Any] | None, limit: int, seconds: float) -> tuple[bytes, str]:
    """`stdin` up to its end, and what cut it short: "" (nothing), "time" (still open after
    `seconds` without a whole JSON object) or "size" (over `limit` bytes).

    Harnesses write the payload and close stdin at once: then this is two reads that find
    the bytes and the end already there, with stdin non-blocking meanwhile (put back as it
    was), and nothing imported. Only when nothing more is there yet does it wait (`select`),
    first checking whether what came is a whole payload already (then there is nothing to
    wait for).
    """
    deadline = time.monotonic() + seconds
    if stdin is None:  # no stdin at all: an empty payload
        return b"", ""
    try:
        fd = stdin.fileno()
        blocking = os.get_blocking(fd)
    except (AttributeError, ValueError, OSError):  # no stdin at all: an empty payload
        return b"", ""
    chunks: list[bytes] = []
    size = 0
    try:
        if blocking:
            os.set_blocking(fd, False)  # (a file's read never blocks anyway)
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:  # nothing more there yet
                if chunks and _whole(b"".join(chunks)):
                    break
                if not _readable(fd, deadline):
                    return b"".join(chunks), "time"
                continue
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                return b"".join(chunks), "size"
    except OSError:  # stdin unreadable (closed under us): what came is all there is
        pass
    finally:
        if blocking:  # as it was: another process may share this end of the pipe
            os.set_blocking(fd, True)
    return b"".join(chunks), ""


def _readable(fd: int, deadline: float) -> bool:
    """Whether `fd` has something to read (or its end) before `deadline`."""
    import select  # only on the way to waiting: the common path never gets here

    left = deadline - time.monotonic()
    return left > 0 and bool(select.select((fd,), (), (), left)[0])


def _whole(raw: bytes) -> bool:
    """Whether `raw` is one whole JSON object: a payload no more bytes can complete (its
    closing brace came)."""
    import json  # (only on the way to waiting, as `select`)

    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


def _wanted(wanted: list[Entry], raw: bytes) -> bool:
    """Whether some handler may want this payload (false only when every handler looks at
    certain tools and the payload surely names another)."""
    if any(entry.tools is None for entry in wanted):
        return True
    names = _tool_names(raw)
    if names is None:
        return True  # no plain tool name found: the parser decides
    return any(names & (entry.tool_names(None) or set()) for entry in wanted)


def _tool_names(raw: bytes) -> set[str] | None:
    """The string value of every "tool_name" key in raw JSON, without parsing it (and
    without `re`: either costs more than the rest of this path). Unescaped, `"tool_name"` is
    a key or a value, never part of another string, so the real key is among those found.
    None when one holds anything but a plain string: then the parser decides. The last
    payload's are kept (`_SCANNED`): a call asks once per handler it may leave out, and a
    payload may be large (a Read's whole result: ~50 us a scan at 200 KB, measured)."""
    global _SCANNED
    scanned, names = _SCANNED  # (one read: a tuple replaced whole, never changed)
    if scanned is not raw:
        names = _scan_names(raw)
        _SCANNED = (raw, names)
    return names


# The payload last scanned (held, so that its identity is the key) and its tool names.
_SCANNED: tuple[bytes | None, set[str] | None] = (None, None)


def _scan_names(raw: bytes) -> set[str] | None:
    """`_tool_names`, scanned."""
    names = set()
    at = raw.find(_KEY)
    while at >= 0:
        colon = _skip(raw, at + len(_KEY))
        if raw[colon : colon + 1] == b":":  # a key, not the value "tool_name"
            quote = _skip(raw, colon + 1)
            end = raw.find(b'"', quote + 1)
            value = raw[quote + 1 : end]
            if raw[quote : quote + 1] != b'"' or end < 0 or b"\\" in value:
                return None
            names.add(value.decode("utf-8", "replace"))
        at = raw.find(_KEY, colon)
    return names or None


def _skip(raw: bytes, at: int) -> int:
    """The index of the first byte from `at` that is not JSON whitespace."""
    while raw[at : at + 1] in _BLANKS:
        at += 1
    return at
