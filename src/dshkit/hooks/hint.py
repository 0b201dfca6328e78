"""Answer hints: one small precomputed file per (event, session) that lets the next
call of that event be answered without loading the handlers, and is used only while
everything it was computed from is as it was.

A hint holds the answer's bytes (stdout, stderr, exit code) and its key: the payload's fields
but the ones named as free (a prompt's words), the environment variables it read (present or
absent), the files it read (each one's inode, size and mtime, or that it was not there) and
the store's rows it read (each as a query, its parameters and a digest of its rows, run again
read-only). Whoever writes a hint names what the answer depended on; `read` returns the answer
only when every part of the key is the same now, and None when anything differs, is missing
or cannot be read (then the caller takes the full path). An answer whose words depend on the
clock also holds only until the time its faces named (`Call.holds_until`:
docs/design/hooks.md#an-answer-whose-words-depend-on-the-clock-holds-until-it-says).
Hints live in `<state dir>/hints/`, owner-only (0700 directory, 0600 files), written whole (a
reader never sees half of one); a forget removes them all (`Store.drop_hints`: a hint holds
rows a forget deletes).

A session's first start or prompt has no hint of its own; its event's *template* answers it
(`write_template`, `read_template`): an answer, with the session's id and transcript path marked
wherever they were read, valid for any other session for which, with its own names in the
marks' places, everything read is as it was for the session it was written from, before that
answer's commits (docs/design/hooks.md#a-new-sessions-start-is-answered-from-its-template).

On the hot path: `read` imports, only for a hint naming store rows, `_sqlite3`; nothing else
beyond what the entry point already holds.
"""

from __future__ import annotations

import os

from .. import harnesses
from ..hookspec import named
from ..storeview import TAIL_CURSOR, queries_rows
from ..turns import is_step_read
from .protocol import dumps, loads
from .spawn import HINT_DIR as HINT_DIR  # (where the hints and the steps' files live)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    Rows = Callable[[list[tuple[str, list[Any]]]], list[list[Any]]]  # queries → their rows


FORMAT = 3  # a hint of another format is not read (1: no `volatile` names; 2: templates
# held to a fresh session's state, not their writer's)
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
MAX_ROWS_TEXT = 1 << 16  # one query's rows in a hint, as text; more: no hint
MAX_NAME = 160  # a session id longer than this gets no hint (a file name must stay short)
MIN_TEMPLATE_ID = 16  # a shorter session id stands in no template (see `_names`)
OPENING = ".opening"  # the suffix of a hint for a turn's first prompt (`path`, `read`)


# The variables a hint holds to (all of them, set or not, by these prefixes): dshkit's own,
# the harnesses' and where configuration lives.
ENV_PREFIXES = ("DSHKIT_", "DSH_", "CLAUDE", "CODEX", "XDG_", "HOME")
VOLATILE = "volatile"  # a key's names of variables left out of it (`env_key`)


class Reply:
    """A hinted answer: what goes to stdout and stderr (bytes), and the exit code; the
    handlers it answers for (as the hint names them)."""

    __slots__ = ("code", "error", "handlers", "harness", "output", "step")

    def __init__(
        self,
        output: bytes = b"",
        error: bytes = b"",
        code: int = 0,
        handlers: list[str] | None = None,
    ) -> None:
        self.output = output
        self.error = error
        self.code = code
        self.handlers = handlers or []
        self.harness = ""  # the harness the hint was written for (`read` sets it)
        # Where the harness asks before every step: whether the hint was a step's (True) or a
        # turn's first prompt's (False); None for the others, and for a template.
        self.step: bool | None = None


def env_key(env: Mapping[str, str], volatile: Iterable[str]) -> dict[str, str]:
    """The variables of `env` a hint holds to (`ENV_PREFIXES`), but those a harness gives each
    of its processes anew (`volatile`: `harnesses.volatile_env` when a key is written; a pid,
    a per-process token, which would void every hint at the harness's next start, and a token
    must not be written down). A key holds the names it left out (`VOLATILE`), and is read
    with them: the same release's registry (a key's `version`) leaves the same ones out, and
    reading them from the key loads no harness module."""
    volatile = frozenset(volatile)
    return {
        name: value
        for name, value in env.items()
        if name.startswith(ENV_PREFIXES) and name not in volatile
    }


def path(
    state: str, event: str, harness: str | None, session: str, opening: bool = False
) -> str | None:
    """The hint file of one session's next `event` (None: a session id no file can be named
    by, which then gets no hint); `opening`, of its next turn's first prompt, where its
    harness asks before every model step (see `read`)."""
    name = f"{event}.{session}"  # (the harness is in it: see `read`)
    if not session or len(name) > MAX_NAME or not _SAFE.issuperset(name):
        return None
    return os.path.join(state, HINT_DIR, name + (OPENING if opening else ""))


def stat_key(name: str) -> list[int] | None:
    """A file as the key holds it: inode, size, mtime in ns (None: not there)."""
    try:
        found = os.stat(name)
    except OSError:
        return None
    return [found.st_ino, found.st_size, found.st_mtime_ns]


def digest(rows: Iterable[Any]) -> str:
    """Rows as the key holds them: order-free (sorted by their repr), whole (no checksum: no
    collision can take a hint for another state, and `zlib` is not loaded; a hint is as
    private as the store, and stays small: the rows a prompt reads are few). ValueError past
    MAX_ROWS_TEXT characters: such a hint is not kept."""
    text = "\n".join(sorted(repr(tuple(row)) for row in rows))
    if len(text) > MAX_ROWS_TEXT:
        raise ValueError(f"rows over {MAX_ROWS_TEXT} characters")
    return text


def write(
    state: str,
    event: str,
    harness: str,
    session: str,
    payload: Mapping[str, Any],
    reply: Reply,
    *,
    free: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    files: Iterable[str] = (),
    tails: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
    queries: Iterable[tuple[str, list[Any]]] = (),
    handlers: Iterable[str] = (),
    unprefixed: Mapping[str, list[str]] | None = None,
    until: int | None = None,
    step: bool | None = None,
) -> bool:
    """Write the hint of `session`'s next `event`: `reply` from the `handlers` it names, valid
    while the payload's fields but `free`, dshkit's variables in `env` (`env_key`: one set or
    unset since voids it), the `files` and the rows of `queries` (SQL, parameters) are as
    they are now, each log of `tails` gained no event of the kinds its consumers read (path →
    consumer → {kinds, check}: since the consumer's cursor, as the `check` it named tells,
    "module:function" of (path, cursor JSON, kinds)), and no free field of
    `unprefixed` starts with one of its prefixes, and not `until` (ms since the epoch) or
    later (`Call.holds_until`: the answer's words depend on the clock). `step`, where the
    harness asks before every model step: whether the call was one (True) or a turn's first
    prompt (False, kept apart: `read`); its turn's row is then no part of the key. Taken now:
    call it once what the answer depended on is settled. False when no hint could be written
    (none is then left)."""
    target = path(state, event, harness, session, opening=step is False)
    if target is None:
        return False
    asked = [(sql, list(ps)) for sql, ps in queries]
    try:
        volatile = sorted(harnesses.volatile_env())
        key = {
            "payload": _fixed(payload, free),
            "free": sorted(free),
            "env": env_key(env or {}, volatile),
            VOLATILE: volatile,
            "handlers": sorted(handlers),
            "unprefixed": dict(unprefixed or {}),
            "until": until,
            "step": step,
            "files": {name: stat_key(name) for name in files},
            "tails": {path: dict(consumers) for path, consumers in (tails or {}).items()},
            "queries": [
                [sql, ps, digest(rows)]
                for (sql, ps), rows in zip(asked, queries_rows(state, asked), strict=True)
            ],
        }
        held = {"event": event, "harness": harness, "session": session, "key": key}
        _save(state, target, held, reply)
    except Exception:  # a hint not written only costs the next call the full path
        drop(state, event, harness, session, opening=step is False)
        return False
    return True


def read(
    state: str,
    event: str,
    harness: str | None,
    session: str,
    payload: Mapping[str, Any],
    env: Mapping[str, str],
) -> Reply | None:
    """The hinted answer to this call when its hint's key holds now, else None (no hint, a
    broken one, or anything it depended on changed). `harness` None: the one the hint was
    written for (`Reply.harness`), which is the calling one whenever the key holds: which
    harness calls is told from the payload's fields (all in the key, the free ones by their
    presence) and from the harnesses' variables (in the key too), so the lean foreground need
    not tell it again (that would load `re` for some).

    Where the harness asks before every model step, a session has two: its next step's and
    its next turn's first prompt's (`OPENING`), each written by a call of its kind, and this
    call is told as the runtime tells it (`turns.is_step_read`, on the session's turn as it is
    now): the person's prompt after a turn's end is answered from the hint the turn's first
    prompt left, not voided by the steps between
    (docs/design/hooks.md#a-turns-first-prompt-has-a-hint-of-its-own)."""
    target = path(state, event, harness, session)
    if target is None:
        return None
    try:
        hint = _load(target, event, session, harness)
        if hint is None or hint["key"].get("step") is not None:
            # (each file holds its kind, `path`: the other is read only where it answers)
            opening = None if hint else _load(target + OPENING, event, session, harness)
            either = hint or opening
            if either is None:
                return None
            prompt = payload.get("prompt")
            key = (either["harness"], session)
            if not (isinstance(prompt, str) and is_step_read(state, key, prompt)):
                hint = opening or _load(target + OPENING, event, session, harness)
            if hint is None:
                return None
        return _holding(state, hint, payload, env)
    except Exception:  # missing, broken or unreadable: the full path answers
        return None


def _load(target: str, event: str, session: str, harness: str | None) -> Any:
    """The hint in the file `target` when it is one of this release's for `event`, `session`
    and `harness` (None: any), else None (none there either)."""
    try:
        with open(target, "rb") as handle:
            hint = loads(handle.read())
    except FileNotFoundError:
        return None
    if (hint["format"], hint["event"], hint["session"]) != (FORMAT, event, session):
        return None
    if hint["version"] != _version():  # another dshkit's handlers may answer otherwise
        return None
    if not isinstance(hint["harness"], str) or harness not in (None, hint["harness"]):
        return None
    return hint


def _holding(
    state: str, hint: Any, payload: Mapping[str, Any], env: Mapping[str, str]
) -> Reply | None:
    """The hint's answer when all its key holds to is as it was (see `read`), else None."""
    key = hint["key"]
    if not _in_time(key) or key["payload"] != _fixed(payload, key["free"]):
        return None
    if env_key(env, key[VOLATILE]) != key["env"]:
        return None
    if prefixed(key["unprefixed"], payload):
        return None
    if any(stat_key(name) != held for name, held in key["files"].items()):
        return None
    asked = [(sql, params) for sql, params, _ in key["queries"]]
    watched = [
        (log, consumer, tail)
        for log, consumers in key.get("tails", {}).items()
        for consumer, tail in consumers.items()
    ]
    cursors = [(TAIL_CURSOR, [consumer, log]) for log, consumer, _ in watched]
    found = queries_rows(state, asked + cursors)
    if [digest(rows) for rows in found[: len(asked)]] != [h for _, _, h in key["queries"]]:
        return None
    for (log, _, tail), rows in zip(watched, found[len(asked) :], strict=True):
        check = named(str(tail["check"]))
        if not check(log, rows[0][0] if rows else None, tail["kinds"]):
            return None
    return _reply(hint, key)


def prefixed(unprefixed: Mapping[str, list[str]], payload: Mapping[str, Any]) -> bool:
    """Whether a free field `unprefixed` names (field → prefixes) is not text in the payload,
    or starts with one of its prefixes: then a hint or template holding it does not answer."""
    for name, prefixes in unprefixed.items():
        value = payload.get(name)
        if not isinstance(value, str) or value.startswith(tuple(prefixes)):
            return True
    return False


def _save(state: str, target: str, held: dict[str, Any], reply: Reply) -> None:
    """Write a hint or a template (`held`, with its format, release and answer) whole,
    owner-only."""
    from pathlib import Path

    from ..paths import private_dir, replace_whole

    held = {"format": FORMAT, "version": _version(), **held}
    held["reply"] = [
        reply.output.decode("utf-8", "surrogateescape"),
        reply.error.decode("utf-8", "surrogateescape"),
        reply.code,
    ]
    private_dir(Path(state, HINT_DIR))
    replace_whole(target, dumps(held))


def _reply(held: Any, key: Any) -> Reply | None:
    """The answer a hint or a template holds (None: not one that can be given)."""
    output, error, code = held["reply"]
    if not (isinstance(output, str) and isinstance(error, str) and type(code) is int):
        return None
    handlers = key["handlers"]
    if not (isinstance(handlers, list) and all(isinstance(h, str) for h in handlers)):
        return None
    found = Reply(
        output.encode("utf-8", "surrogateescape"),
        error.encode("utf-8", "surrogateescape"),
        code,
        handlers,
    )
    found.harness = held["harness"]
    found.step = key.get("step")
    return found


# -- templates: a session's first start or prompt ---------------------------------------------

SAID, QUIET = ".said", ""  # a template's slot: an answer that says something, or nothing


def template_path(
    state: str, event: str, payload: Mapping[str, Any], harness: str, slot: str = SAID
) -> str:
    """The template file of `event` for the payload's directory and `harness` (one per
    project and harness: its sessions share it; another project's, or another harness's
    sessions in the same one, would otherwise replace it each time), in `slot`: an answer
    that says something (SAID) and one that says nothing (QUIET) are kept apart, so that a
    session's second prompt (nothing to say, after a first that spoke) leaves the template
    its first prompt wrote for the next new session."""
    import zlib  # (a built-in module: loaded in a few microseconds)

    where = str(payload.get("cwd") or "")
    name = f"{event}.new-{zlib.crc32(where.encode()):08x}.{harness}{slot}"
    return os.path.join(state, HINT_DIR, name)


def _names(payload: Mapping[str, Any]) -> tuple[str, str] | None:
    """The session id and transcript path a template stands for, when the id can stand in a
    template: a file-safe name of at least MIN_TEMPLATE_ID characters (a UUID, as harnesses
    name sessions), so that where it occurs in what the handlers read is surely its place."""
    session = payload.get("session_id")
    transcript = payload.get("transcript_path") or ""
    if not isinstance(session, str) or not isinstance(transcript, str):
        return None
    if len(session) < MIN_TEMPLATE_ID or path("s", "e", None, session) is None:
        return None
    if "'" in transcript:  # (put back in an SQL literal, it would need its quotes doubled)
        return None
    return session, transcript


def _unnamed(payload: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The payload's fields but the session's names, and which of those names it has."""
    names = ("session_id", "transcript_path")
    fixed = {k: v for k, v in payload.items() if k not in names}
    return fixed, [k for k in names if k in payload]


def _put(text: str, names: tuple[str, str], marks: tuple[str, str]) -> str:
    """`text` with the session's names (its transcript path first: it may hold the id; as a
    path and as an SQL literal's body) replaced by `marks` (or the marks by names)."""
    transcript, session = names[1], names[0]
    mark_transcript, mark_session = marks[1], marks[0]
    if transcript:
        text = text.replace(transcript, mark_transcript)
        text = text.replace(transcript.replace("'", "''"), mark_transcript)
    return text.replace(session, mark_session)


class Seen:
    """What a call's handlers read, as it was once they answered (before the answer's
    commits), with its session's id and transcript path marked (`marks`): each file's
    `stat_key`, each statement's rows (`digest`), and each log a handler tailed for some
    kinds of event: the consumer's cursor as it was and the events of those kinds since
    (`sessions.livetail.kinds_since`), by marked name, statement and log. What a template
    written from that call holds to (`seen`, `write_template`)."""

    __slots__ = ("files", "marks", "queries", "tails")

    def __init__(
        self,
        marks: tuple[str, str],
        files: dict[str, Any],
        queries: list[list[str]],
        tails: dict[str, dict[str, dict[str, Any]]],
    ) -> None:
        self.marks, self.files, self.queries, self.tails = marks, files, queries, tails


def seen(
    payload: Mapping[str, Any],
    files: Iterable[str],
    queries: Iterable[str],
    rows: Rows,
    tails: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> Seen | None:
    """The `files` as they are now, the rows of the statements `queries` as `rows` reads
    them, and each log of `tails` (path → consumer → {kinds, events}: what a tail read
    announced) as its consumer would read it from its cursor as `rows` has it, for the
    payload's session, its names marked (None: an id that cannot be marked, rows too many or
    unreadable, a log that cannot be told: no template can be written). `rows` reads the
    store as it was before the call's handlers ran (`storeview.Snapshot`): what they found,
    not what they wrote."""
    names = _names(payload)
    if names is None:
        return None
    marks = (f"<session {os.urandom(12).hex()}>", f"<transcript {os.urandom(12).hex()}>")
    statements = sorted(set(queries))
    watched = [
        (log, consumer, read)
        for log, each in (tails or {}).items()
        for consumer, read in each.items()
    ]
    try:
        asked: list[tuple[str, list[Any]]] = [(sql, []) for sql in statements]
        asked += [(TAIL_CURSOR, [consumer, log]) for log, consumer, _ in watched]
        read_rows = rows(asked)
        found, cursors = read_rows[: len(statements)], read_rows[len(statements) :]
        logs: dict[str, dict[str, dict[str, Any]]] = {}
        for (log, consumer, read), cursor in zip(watched, cursors, strict=True):
            told = _told(log, cursor, read)
            if told is None:
                return None
            logs.setdefault(_put(log, names, marks), {})[consumer] = {
                "kinds": list(read["kinds"]),
                "events": str(read["events"]),
                "cursor": _put(digest(cursor), names, marks),
                "told": _put(told, names, marks),
            }
        queried = zip(statements, found, strict=True)
        return Seen(
            marks,
            {_put(name, names, marks): stat_key(name) for name in files},
            [[_put(sql, names, marks), digest(each)] for sql, each in queried],
            logs,
        )
    except Exception:  # unreadable, or rows too many: no template
        return None


def _told(log: str, cursor: list[Any], read: Mapping[str, Any]) -> str | None:
    """The events of the tail read's kinds in `log` since the consumer's `cursor` (its rows),
    as text (None: that cannot be told)."""
    events = named(str(read["events"]))(log, cursor[0][0] if cursor else None, read["kinds"])
    return None if events is None else repr(events)


def write_template(
    state: str,
    event: str,
    harness: str,
    payload: Mapping[str, Any],
    reply: Reply,
    *,
    env: Mapping[str, str],
    seen: Seen,
    handlers: Iterable[str],
    free: Iterable[str] = (),
    unprefixed: Mapping[str, list[str]] | None = None,
    until: int | None = None,
) -> bool:
    """Write `event`'s template: the answer `reply` (what was written: stdout's bytes, stderr's,
    the exit code) of a call whose session's first of its event it was, to stand for the same
    call of any other session (see `read_template`) for which everything its handlers read
    (`seen`) is the same with the names put in the marks' places. Its key is a hint's with the
    session's names marked wherever they occur (the payload, the variables, `seen`): the
    payload's `free` fields held by their presence alone (and not starting with a prefix of
    `unprefixed`, as a hint holds them), and `until` as a hint's. None is written for an
    answer naming the session, or an id that cannot be marked (the one there, if any, stays:
    it still stands for the sessions it holds for); one that could not be written is
    dropped."""
    names = _names(payload)
    said = reply.output + reply.error
    slot = SAID if said or reply.code else QUIET
    target = template_path(state, event, payload, harness, slot)
    if names is None or names[0].encode() in said or os.fsencode(names[1] or "\0") in said:
        return False
    try:
        marks = seen.marks
        fixed, fields = _unnamed(payload)
        volatile = sorted(harnesses.volatile_env())
        variables = {k: _put(v, names, marks) for k, v in env_key(env, volatile).items()}
        free = sorted(free)
        template = {
            "event": event,
            "harness": harness,
            "marks": list(marks),
            "key": {
                "payload": _fixed(fixed, free),
                "free": free,
                "fields": fields,
                "env": variables,
                VOLATILE: volatile,
                "handlers": sorted(handlers),
                "unprefixed": dict(unprefixed or {}),
                "until": until,
                "files": dict(seen.files),
                "queries": [list(query) for query in seen.queries],
                "tails": seen.tails,
            },
        }
        _save(state, target, template, reply)
    except Exception:  # a template not written only costs the next new session the full path
        _unlink(target)
        return False
    return True


def _fresh(names: tuple[str, str]) -> tuple[str, str]:
    """A session id no one has seen, and its transcript beside the named one's."""
    session = f"dshkit-unseen-{os.urandom(8).hex()}"
    return session, os.path.join(os.path.dirname(names[1]), session) if names[1] else ""


def unseen(
    payload: Mapping[str, Any], files: Iterable[str], queries: Iterable[str], rows: Rows
) -> bool:
    """Whether the payload's session is, as far as the `files` and the statements `queries`
    read it (their rows as `rows` reads them, see `seen`), one the store knows nothing of:
    each file and each statement's rows the same with its names as with a fresh session's.
    What a start's template is written from (`hooks.lean.Observation`)."""
    names = _names(payload)
    if names is None:
        return False
    fresh = _fresh(names)
    try:
        for name in files:
            if stat_key(name) != stat_key(_put(name, names, fresh)):
                return False
        statements = sorted(set(queries))
        asked: list[tuple[str, list[Any]]] = [(sql, []) for sql in statements]
        asked += [(_put(sql, names, fresh), []) for sql in statements]
        found = [digest(each) for each in rows(asked)]
    except Exception:  # unreadable: not known to be unseen
        return False
    return found[: len(statements)] == found[len(statements) :]


def read_template(
    state: str, event: str, payload: Mapping[str, Any], env: Mapping[str, str]
) -> Reply | None:
    """The templated answer to this call (`write_template`) when a template's key holds for
    this session (the one that says something first): the payload but its session id and
    transcript path is the one it was written from; the variables, the files and the rows,
    with this session's names in the marks' places, are as they were for the session it was
    written from (so its handlers, reading all the same, give the same answer). None
    otherwise."""
    names = _names(payload)
    if names is None:
        return None
    for harness in harnesses.names():  # (which one calls is told by what the key holds)
        for slot in (SAID, QUIET):
            found = _templated(state, event, payload, env, names, harness, slot)
            if found is not None:
                return found
    return None


def _templated(
    state: str,
    event: str,
    payload: Mapping[str, Any],
    env: Mapping[str, str],
    names: tuple[str, str],
    harness: str,
    slot: str,
) -> Reply | None:
    """The answer of `event`'s template for `harness` in `slot` when its key holds for this
    session."""
    try:
        with open(template_path(state, event, payload, harness, slot), "rb") as handle:
            template = loads(handle.read())
        if (template["format"], template["event"], template["harness"]) != (FORMAT, event, harness):
            return None
        if template["version"] != _version():
            return None
        key, marks = template["key"], tuple(template["marks"])
        if not _in_time(key):
            return None
        fixed, fields = _unnamed(payload)
        if key["payload"] != _fixed(fixed, key["free"]) or key["fields"] != fields:
            return None
        if prefixed(key["unprefixed"], payload):
            return None
        variables = env_key(env, key[VOLATILE])
        if {k: _put(v, names, marks) for k, v in variables.items()} != key["env"]:
            return None
        for name, held in key["files"].items():
            if stat_key(_put(name, marks, names)) != held:
                return None
        asked: list[tuple[str, list[Any]]] = [
            (_put(sql, marks, names), []) for sql, _ in key["queries"]
        ]
        watched = [
            (_put(log, marks, names), consumer, read)
            for log, consumers in key["tails"].items()
            for consumer, read in consumers.items()
        ]
        cursors = [(TAIL_CURSOR, [consumer, log]) for log, consumer, _ in watched]
        found = queries_rows(state, asked + cursors)
        if [digest(rows) for rows in found[: len(asked)]] != [held for _, held in key["queries"]]:
            return None
        for (log, _, read), cursor in zip(watched, found[len(asked) :], strict=True):
            if _put(digest(cursor), names, marks) != read["cursor"]:
                return None
            told = _told(log, cursor, read)
            if told is None or _put(told, names, marks) != read["told"]:
                return None
        return _reply(template, key)
    except Exception:  # missing, broken or unreadable: the full path answers
        return None


def _in_time(key: Mapping[str, Any]) -> bool:
    """Whether a key's answer still holds as far as time goes: before its `until`, if any."""
    import time  # (a built-in module: loaded already)

    until = key.get("until")
    return until is None or time.time() * 1000 < until


def drop_template(state: str, event: str, payload: Mapping[str, Any], harness: str) -> None:
    """Remove `event`'s templates for the payload's directory and `harness` (both slots), if
    any."""
    for slot in (SAID, QUIET):
        _unlink(template_path(state, event, payload, harness, slot))


def _unlink(name: str) -> None:
    """Remove the file `name`, if it is there."""
    try:
        os.unlink(name)
    except OSError:  # (no contextlib: the hot path)
        return


def drop(state: str, event: str, harness: str, session: str, opening: bool = False) -> None:
    """Remove the hint of `session`'s next `event` (`opening`: its next turn's first
    prompt's), if there is one."""
    target = path(state, event, harness, session, opening)
    if target is not None:
        _unlink(target)


def _fixed(payload: Mapping[str, Any], free: Iterable[str]) -> Any:
    """The payload's fields as a hint holds them: as JSON values (a round trip through the
    writer, so a dict read back compares equal), those of `free` by their presence alone."""
    skipped = set(free)  # (held by their presence alone)
    held = {name: True if name in skipped else value for name, value in payload.items()}
    return loads(dumps(held))


def _version() -> str:
    """The dshkit release a hint was written by (the package is loaded already)."""
    from .. import __version__

    return __version__
