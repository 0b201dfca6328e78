"""Plain-file hints for the hot hook path: whether a handoff ever began, and which sessions the
watermark can skip.

A tool call in a session that was handed off is refused, which takes a look at the store's
ledger; that look (SQLite and the store's imports) would otherwise land on every tool call of
every session. The hint `graft.used` is written before the first handoff begins and never
removed, so its absence always means no session here was ever handed off, and the store need
not be opened.

The watermark runs after every tool call, and most sessions are far below its band. After a
check that had nothing to say, a *room* hint records how large the transcript may grow before
the session could come near the band (`watermark.room_bytes`); while it is smaller, the next
call is answered from one `stat` without opening the store or reading the log. The hint is
only ever an upper bound, moved by each full check:

- the bytes are counted from a point no later than the line holding the latest usage: the
  size at the check before the one that first saw that usage (0 when unknown), since
  everything that can enlarge the next request is logged after that line;
- it holds only for the transcript it was written for (by two checksums of its path: no path
  or session id is kept), for that size or larger, and for the configuration file as it was;
- a call writing a todo list (what the plan-first nudge reads) is never skipped;
- a compressed log (DSH's zstd frames) gets no hint: its bytes do not bound its text.
- a log with no model request in it yet (a session's first prompt) needs no hint where no
  handoff ever began (none can have failed): with no usage there is no pressure to measure,
  and with no todo list no plan-first nudge, so the watermark has nothing to say (each whole
  line is read with the C scanner, as below; only logs `harnesses.quiet_lines` describes).
  No byte count of such a log bounds the context its first request will report (the system
  prompt and tools are not logged), so nothing else is inferred from it.
- where a harness writes its log behind its hooks (`harnesses.LaggingLog`: Claude Code drains
  a write queue on a timer), a check after a tool call first waits, bounded, for the line of
  the call it is about: the request that made the call is what the watermark judges.

A session near the band has no room in bytes, but usually still some in tokens: the hint then
also keeps the *ceiling*, the fewest context tokens a later request of the same turn needs to
reach the warning or forced line (only the forced one once the session was warned and
escalated in this turn: `watermark.usage_ceiling`), and the model it was measured with. A
call is then skipped when everything logged since the check is a request below the ceiling on
that model, its tools' results, or a line the session reader leaves out (an attachment but a
hook's context), as the harness registry describes its logs (`harnesses.quiet_lines`, only
Claude Code's so far): each new line is read with the
interpreter's C scanner (`_json`), and any other line (a summary, a todo list, another
harness's record, a line that does not parse) means a full check, which moves the hint; a last
line still being written is left for later, as the reader leaves it. A check with a forced
cut started gets no ceiling (a failed cut must be told). What is skipped is folded by the next
full check, as with the room in bytes.

A person's message begins a new turn, where the warning counts again: the hint also keeps the
*next* ceiling, the one a request of the turn after the check's needs (`watermark.next_turn`;
none when that turn would be told already at the check's context). Messages (a person's, or
a hook's context) logged before any request since the check are then skipped, and each request
after them must stay below both ceilings (a message that begins no turn leaves the turn's in
force); a message after a request since the check means a full check (the next ceiling was
not found for that request's level). A prompt *turns* the hint (a rename, `turn`): what a
prompt brings (an attached file) may not be in the log's bytes, so its room in bytes no
longer holds, while its ceilings do, being measured against the requests' own usage.

Where no room hint answers, `graft.fold` may still tell what the watermark says from the
store's last fold and the log's records since (`quiet_payload`, `quiet_prompt`): nothing (the
check answers AFTER) or a nudge or an escalation (it answers `Say`, with the words; at a
prompt, where graft's face could say nothing else); either way its handler's full check runs
once the call is answered (`dshkit.quiet`).
"""

from __future__ import annotations

import os

from .. import harnesses
from ..quiet import AFTER, Say, plain_string

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..store import Store

NAME = "graft.used"
# A session a person kept from the forced cut: store meta `<EXCLUDE_KEY><harness>:<session id>`
# (here, not in the ledger: the watermark's full check reads it without loading the ledger).
EXCLUDE_KEY = "graft.exclude:"
ROOM_DIR = "graft-room"  # one small file per transcript: `<room dir>/<crc32 of its path>`
TURNED = ".turn"  # the same file once a prompt came (`turn`): its ceilings alone hold
_CONFIG = "config.toml"  # (config.CONFIG_NAME, not imported on the hot path)
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # (zstdframes.MAGIC, not imported on the hot path)
# The most log a call reads to be skipped by the ceiling; past it a full check moves the hint.
SCAN_LIMIT = 256 * 1024
# How far back from a lagging log's end a hook looks for its call's line (what follows that
# line before the hook runs is other calls' lines and results: far less, but for huge results).
CALL_TAIL = 256 * 1024


def used(state_dir: str) -> bool:
    return os.path.exists(os.path.join(state_dir, NAME))


def mark(state_dir: str) -> None:
    """Write the hint (owner-only, empty), once."""
    if not used(state_dir):
        os.close(os.open(os.path.join(state_dir, NAME), os.O_CREAT | os.O_WRONLY, 0o600))


# -- room below the watermark's band ------------------------------------------------------------


class Room:
    """A room hint: skip while the transcript is at least `size` and below `limit` bytes.
    `context` is the latest usage the check saw and `low` where the bytes are counted from;
    `ceiling` (0: none) the context a request past `size` must stay below on the model whose
    checksum is `model`, and `turned` (0: none) the one it must stay below once a person's
    message began a new turn; `rising`, whether that one holds too after requests of this
    turn at or above `context` (see `_below_ceiling`)."""

    __slots__ = ("ceiling", "context", "limit", "low", "model", "rising", "size", "turned")

    def __init__(
        self,
        limit: int,
        size: int,
        context: int,
        low: int,
        ceiling: int = 0,
        model: str = "-",
        turned: int = 0,
        rising: bool = False,
    ) -> None:
        self.limit, self.size, self.context, self.low = limit, size, context, low
        self.ceiling, self.model, self.turned, self.rising = ceiling, model, turned, rising


def transcript_size(transcript: str) -> int | None:
    """The transcript's size in bytes, or None when it is not a file."""
    try:
        return os.stat(transcript).st_size if transcript else None
    except OSError:
        return None


def caught_up(transcript: str, field: Callable[[str], object]) -> bool:
    """Wait until the log holds the line of the tool call this hook is about, where the
    harness writes its log behind its hooks (`harnesses.LaggingLog`; `field` reads the
    payload): the watermark judges the request that made this call, and until that line is
    written the log still shows the one before. Bounded: False when the harness's wait
    passed without it (the caller says so in the hooks' log and judges the log as it is; the
    next call's check folds what came late)."""
    for lagging in harnesses.lagging_logs():
        call = field(lagging.call_field)
        if isinstance(call, str) and call and transcript:
            # One look per call: the raw quiet check and the full check after it run in the
            # same process, and the second is told what the first found (or waited out).
            looked = (transcript, call)
            if _LAST_LOOK and _LAST_LOOK[0][0] == looked:
                return _LAST_LOOK[0][1]
            found = _wait_for_line(transcript, f'"{call}"'.encode(), lagging.wait_s)
            _LAST_LOOK[:] = [(looked, found)]
            return found
    return True


# The last call's look (`caught_up`): only the last, so a long-lived process (the service's
# hook workers) keeps nothing of earlier calls.
_LAST_LOOK: list[tuple[tuple[str, str], bool]] = []


def _wait_for_line(transcript: str, needle: bytes, wait_s: float) -> bool:
    """Whether `needle` is (or, within `wait_s` seconds, comes to be) in the log's last
    CALL_TAIL bytes; each look reads only what was appended since the one before."""
    import time

    deadline = time.monotonic() + wait_s
    seen: int | None = None  # where the previous look ended
    while True:
        try:
            with open(transcript, "rb") as handle:
                end = handle.seek(0, os.SEEK_END)
                if seen is None or seen > end:  # first look, or the file was replaced
                    begin = max(0, end - CALL_TAIL)
                else:
                    begin = max(0, seen - len(needle))
                handle.seek(begin)
                if needle in handle.read(end - begin):
                    return True
        except OSError:
            return True  # no log to wait for: the check says what it says without it
        seen = end
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def quiet(state_dir: str, transcript: str, size: int | None, tool_input: Any) -> bool:
    """Whether the watermark surely has nothing to say after this tool call (see the module
    docstring): a room hint for this transcript and configuration that its size is within,
    and a call that writes no todo list."""
    if size is None:
        return False
    if isinstance(tool_input, dict) and isinstance(
        tool_input.get("todos", tool_input.get("plan")), list
    ):
        return False
    room = _read(state_dir, transcript)
    if room is None or size < room.size:
        # (where a handoff ever began, a forced cut's failure may be owed: it needs no usage)
        return not used(state_dir) and _fresh(transcript, size)
    return size < room.limit or (room.ceiling > 0 and _below_ceiling(transcript, room, size))


def _fresh(transcript: str, size: int) -> bool:
    """Whether the log holds no model request yet (see the module docstring): every whole
    line of its first `size` bytes (at most SCAN_LIMIT) is one the reader leaves out, an
    attachment or a person's or a tool's message, as `harnesses.quiet_lines` describes a log,
    and none names a usage or a todo list. Then there is no usage to measure pressure from,
    and no todo list for the plan-first nudge: the watermark has nothing to say."""
    if size > SCAN_LIMIT:
        return False
    try:
        with open(transcript, "rb") as handle:
            raw = handle.read(size)
    except OSError:
        return False
    if len(raw) < size or raw[:4] == _ZSTD_MAGIC:
        return False
    if b'"todos"' in raw or b'"plan"' in raw:
        return False  # a todo list may be written: what the plan-first nudge reads
    shapes = harnesses.quiet_lines()
    for shape in shapes:
        if any(b'"%s"' % key.encode() in raw for key in shape.usage_keys):
            return False
    from ..jsonscan import line_value, scanner

    scan = scanner()
    lines = [line for line in raw[: raw.rfind(b"\n") + 1].splitlines() if line.strip()]
    if not lines:
        return False  # nothing whole written yet: as with any log, its size alone says nothing
    for line in lines:
        try:
            record = line_value(scan, line)
        except ValueError:
            return False
        if not isinstance(record, dict):
            return False
        kind = record.get("type")
        if not isinstance(kind, str) or not any(
            kind in s.silent or kind in (s.attachment, s.results) for s in shapes
        ):
            return False
    return True


def _below_ceiling(transcript: str, room: Room, size: int) -> bool:
    """Whether every whole line logged from the hint's size up to `size` is a request below
    the ceiling on the hint's model, or its tools' results; or, before any request, a
    message (a person's, which begins a turn, or another's), after which every request must
    stay below both ceilings, the turn's and the next one's (see the module docstring)."""
    if size - room.size > SCAN_LIMIT:
        return False
    try:
        with open(transcript, "rb") as handle:
            handle.seek(room.size)
            raw = handle.read(size - room.size)
    except OSError:
        return False
    if b'"todos"' in raw or b'"plan"' in raw:
        return False  # a todo list may be written: what the plan-first nudge reads
    from ..jsonscan import line_value, scanner

    scan = scanner()
    shapes = harnesses.quiet_lines()
    ceiling = room.ceiling  # what a request must stay below: the turn's, until a message
    last = -1  # the context of the latest request since the hint (-1: none)
    floor = 0  # what a request after a message must be at least (see below)
    messages = requests = False  # since the hint; (requests: after the first message)
    for line in raw[: raw.rfind(b"\n") + 1].splitlines():
        if not line.strip():
            continue
        try:
            record = line_value(scan, line)
        except ValueError:
            return False
        if any(_message(record, s) for s in shapes):
            # Maybe a new turn (a message that begins none leaves the turn's ceiling in
            # force: both bind), whose ceiling was found with this turn's level at the
            # hint's context. A request of this turn logged since moved that level: the
            # growth the next turn's lines allow for is then the same only while the levels
            # keep rising (`Room.rising`): from the hint's context to that request's, and on
            # to each request after the message. A message after one of those: a full check.
            if room.turned <= 0 or requests:
                return False  # (no next ceiling: a new turn at this context is told at once)
            if last >= 0 and not (room.rising and last >= room.context):
                return False
            messages, ceiling, floor = True, min(room.ceiling, room.turned), max(last, 0)
            continue
        found = None
        for shape in shapes:
            found = _quiet_record(record, ceiling, room.model, shape)
            if found is not None:
                break
        if found is None or (messages and 0 <= found < floor):
            return False
        if found >= 0:
            last = found
            requests = messages
    return True


def _message(record: Any, lines: harnesses.QuietLines) -> bool:
    """A message line, as `lines` describes a harness's log: one of `results` type whose
    content is not tool results alone (a person's words, or the harness's), or a hook's
    context; the reader makes a message of it, and of a person's words a new turn."""
    if not isinstance(record, dict):
        return False
    kind = record.get("type")
    if kind == lines.attachment:
        attachment = record.get(kind)
        return isinstance(attachment, dict) and attachment.get("type") == lines.spoken
    message = record.get("message")
    if kind != lines.results or not isinstance(message, dict):
        return False
    content = message.get("content")
    return isinstance(content, str) or (
        isinstance(content, list)
        and all(isinstance(block, dict) for block in content)
        and not all(block.get("type") == lines.result for block in content)
    )


def _quiet_record(record: Any, ceiling: int, model: str, lines: harnesses.QuietLines) -> int | None:
    """A model request below the ceiling on the hint's model (its context), a line holding
    only tool results, a request naming no usage or a line the reader leaves out (-1), as
    `lines` describes a harness's log; None for anything else (not known to be quiet)."""
    if not isinstance(record, dict):
        return None
    kind = record.get("type")
    if not isinstance(kind, str):
        return None
    if kind in lines.silent:
        return -1
    if kind == lines.attachment:
        attachment = record.get(kind)  # (the attachment under its line's type)
        spoken = not isinstance(attachment, dict) or attachment.get("type") == lines.spoken
        return None if spoken else -1
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    if kind == lines.results:
        content = message.get("content")
        results = isinstance(content, list) and all(
            isinstance(block, dict) and block.get("type") == lines.result for block in content
        )
        return -1 if results else None
    if kind != lines.request:
        return None
    name = message.get("model")
    named = isinstance(name, str) and name and not name.startswith(lines.synthetic)
    if named and _model_mark(name) != model:
        return None  # another model: another window may apply
    usage = message.get("usage")
    if usage is None:
        return -1
    if not isinstance(usage, dict):
        return None
    context = 0
    for key in lines.usage_keys:
        value = usage.get(key) or 0
        if type(value) is not int:
            return None
        context += value
    return context if context < ceiling else None


def _model_mark(model: str | None) -> str:
    """The hint's checksum of a model name ("-" for none)."""
    if model is None:
        return "-"
    import zlib  # (here: a hook that reads no room hint loads no zlib)

    return f"{zlib.crc32(model.encode()):08x}"


def quiet_payload(state_dir: str, raw: bytes) -> bool | str | Say:
    """`quiet` read from a hook's raw payload, before any JSON parser is imported: its
    `transcript_path` and `session_id` as plain strings. A call that may write a todo list
    (`todos` or `plan` anywhere in it) is never skipped by the room hint; where the hint does
    not answer, the store's last fold and the log's lines since may still tell what the
    watermark says (`fold.verdict`, which reads the list from the log): nothing (AFTER) or a
    nudge or an escalation (`Say`: `dshkit.quiet`); either way the full check
    runs once the call is answered, and folds the lines into the store (and records what was
    said, when it says the same). Never raises: False decides nothing."""
    try:
        listed = b'"todos"' in raw or b'"plan"' in raw
        transcript = plain_string(raw, b'"transcript_path"')
        if transcript is None:
            return False
        if not caught_up(transcript, lambda key: plain_string(raw, f'"{key}"'.encode())):
            return False  # the full check says what it can, and logs that the line was late
        if not listed and quiet(state_dir, transcript, transcript_size(transcript), None):
            return True
        session = plain_string(raw, b'"session_id"')
        from . import fold  # (here: a call the room hint answers loads none of it)

        said = None if session is None else fold.verdict(state_dir, transcript, session)
        if said is None:
            return False
        if not said:
            return AFTER
        return Say(said)
    except Exception:
        return False


def quiet_prompt(state_dir: str, payload: Mapping[str, Any]) -> bool | str | Say:
    """For the lean foreground (`hooks.lean`): whether graft's prompt face surely says nothing
    to this prompt, as `hook.on_prompt` decides it before opening the store (no handoff ever
    began, or the ledger holds nothing for the session, `standing.clear`; and the watermark
    cannot speak: no session, no transcript file, its room hint says so), or what it says:
    where no room hint answers, the store's last fold and the log's lines since tell it
    (`fold.prompted`): nothing (AFTER; then, as that face does, the room hint is turned,
    `turn`: the first tool call after a prompt is skipped by its ceilings alone) or the
    watermark's nudge or escalation (`Say`); either way the face runs once the call is
    answered, and records what was said when it says the same."""
    transcript = str(payload.get("transcript_path") or "")
    session = str(payload.get("session_id") or "")
    if used(state_dir):
        from .standing import clear  # (here: before the first handoff, one `stat` says it)

        if not clear(state_dir, session):
            return False
    size = transcript_size(transcript)
    if session and size is not None and not quiet(state_dir, transcript, size, None):
        from . import fold  # (here: a prompt the room hint answers loads none of it)

        said = fold.prompted(state_dir, transcript, session, payload)
        if said is None:
            return False
        if said:
            return Say(said)  # (the face, run after, drops the room hint, as in full)
        turn(state_dir, transcript)
        return AFTER
    turn(state_dir, transcript)
    return True


def remember(
    store: Store, state_dir: str, harness: str, session_id: str, transcript: str, size: int
) -> Room | None:
    """After a check that had nothing to say (the transcript was `size` bytes before it), the
    room it leaves, written as the transcript's hint; None (and no hint) when there is none."""

    import orjson

    from .settings import GraftSettings
    from .watermark import (
        TOKENS_PER_BYTE,
        Digest,
        GraftState,
        next_turn,
        room_bytes,
        turn_told,
        usage_ceiling,
    )

    row = store.db.execute(
        "SELECT digest, forced_at, state FROM graft_watch WHERE harness = ? AND session_id = ?",
        (harness, session_id),
    ).fetchone()
    room = None
    settings, _ = GraftSettings.resolve(state_dir)  # as the check that ran used them
    if row is not None and not _compressed(transcript):
        digest = Digest.from_json(orjson.loads(row[0]))
        free = room_bytes(digest, settings)
        state = GraftState.from_json(orjson.loads(row[2]))
        ceiling = usage_ceiling(digest, settings, state) if row[1] is None else None
        # A new turn's ceiling, unless its message alone is told (then every message means a
        # full check).
        turned = None
        if ceiling is not None and not turn_told(digest, settings):
            turned = usage_ceiling(next_turn(digest), settings, state)
        if digest.context is not None and (free is not None or ceiling is not None):
            before = _read(state_dir, transcript)
            if before is None or before.size > size:
                low = 0  # where the latest usage's line is: unknown, the whole log counts
            elif before.context == digest.context:
                low = before.low  # the same latest usage: the same line
            else:
                low = before.size  # a usage the previous check had not seen: after its size
            limit = 0 if free is None else low + free * TOKENS_PER_BYTE
            mark = _model_mark(digest.model)
            # This turn's level is the latest usage and no lower than the turn's before:
            # a later request of this turn, no lower either, leaves the next turn's growth
            # as it was (the two rises add up to the same), so its ceiling holds.
            # And its ceiling is the plain one (not the forced line alone, after an escalation
            # in this turn): below it, a new turn begun at that request is not told either.
            levels = digest.levels
            rising = bool(levels) and levels[-1] == [digest.ordinal, digest.context]
            rising = rising and (len(levels) < 2 or levels[-2][1] <= digest.context)
            rising = rising and ceiling == usage_ceiling(digest, settings)
            room = Room(limit, size, digest.context, low, ceiling or 0, mark, turned or 0, rising)
    if room is None:
        forget(state_dir, transcript)
    else:
        _write(state_dir, transcript, room)
    return room


def forget(state_dir: str, transcript: str) -> None:
    """Drop the transcript's room hint (the next call is checked in full)."""
    path = _path(state_dir, transcript)
    for name in (path, path + TURNED):
        try:
            os.unlink(name)
        except OSError:  # none there (or unremovable: then its stamp no longer matches either)
            continue


def turn(state_dir: str, transcript: str) -> None:
    """After a prompt: the transcript's room hint holds by its ceilings alone (see the module
    docstring), its room in bytes no longer (renamed: one system call, nothing written)."""
    path = _path(state_dir, transcript)
    try:
        os.replace(path, path + TURNED)
    except OSError:  # none there (a turned one stays as it is)
        return


def _path(state_dir: str, transcript: str) -> str:
    import zlib  # (here: a hook that reads no room hint loads no zlib)

    return os.path.join(state_dir, ROOM_DIR, f"{zlib.crc32(os.fsencode(transcript)):08x}")


def _stamp(state_dir: str, transcript: str) -> str:
    """What the hint is valid for: the transcript (a second checksum of its path) and the
    configuration file as it is now (its change time and size)."""
    try:
        st = os.stat(os.path.join(state_dir, _CONFIG))
        config = f"{st.st_mtime_ns}:{st.st_size}"
    except OSError:
        config = "-"
    import zlib

    return f"{zlib.adler32(os.fsencode(transcript)):08x}/{config}"


def _read(state_dir: str, transcript: str) -> Room | None:
    path = _path(state_dir, transcript)
    turned = False
    try:
        with open(path, "rb") as handle:
            fields = handle.read(256).split()
    except OSError:
        try:
            with open(path + TURNED, "rb") as handle:
                fields = handle.read(256).split()
        except OSError:
            return None
        turned = True
    if len(fields) != 9 or fields[8].decode("ascii", "replace") != _stamp(state_dir, transcript):
        return None
    try:
        limit, size, context, low, ceiling, next_one, rising = (int(f) for f in fields[:7])
    except ValueError:
        return None
    model = fields[7].decode("ascii", "replace")
    # A prompt came since (`turn`): no room in bytes (what it brought may not be logged).
    limit = 0 if turned else limit
    return Room(limit, size, context, low, ceiling, model, next_one, rising == 1)


def _write(state_dir: str, transcript: str, room: Room) -> None:
    """Write the hint whole (a temporary file renamed over it), owner-only."""
    from ..paths import replace_whole  # (loaded already where a full check wrote the store)

    path = _path(state_dir, transcript)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    text = (
        f"{room.limit} {room.size} {room.context} {room.low} {room.ceiling} {room.turned} "
        f"{int(room.rising)} {room.model} {_stamp(state_dir, transcript)}\n"
    )
    replace_whole(path, text.encode())
    from contextlib import suppress  # (loaded already by `paths`)

    with suppress(OSError):  # a prompt's turned hint, older than this one
        os.unlink(path + TURNED)


def _compressed(transcript: str) -> bool:
    """Whether the log is zstd frames (its first bytes), or cannot be read (no hint either)."""
    try:
        with open(transcript, "rb") as handle:
            return handle.read(4) == _ZSTD_MAGIC
    except OSError:
        return True
