"""The command-hook protocol: the payload's JSON read, and the faces' answers merged into one
within the output cap, written in the calling harness's dialect (`harnesses.HookDialect`). The
call a face receives and the answer it gives are `dshkit.hookio`'s.

Nothing is cut silently: a context that does not fit is dropped whole and named in the log
(the profile is made to fit by design); a decision's reason over the cap is shortened with a
visible mark, because the decision itself must still reach the harness.
"""

from __future__ import annotations

from .. import harnesses

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a policy's hot path)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

    from ..harnesses import Reply

# The cap on one output string (UTF-16 code units, see `harnesses.text_length`); nothing
# longer is emitted.
MAX_OUTPUT_CHARS = harnesses.HOOK_TEXT_LIMIT
_STRICTNESS = {"allow": 1, "ask": 2, "deny": 3}  # an unknown decision ranks below allow


def loads(raw: bytes) -> Any:
    """A payload's JSON, read with the interpreter's own C scanner (`_json`): the `json`
    package would import `re` and `enum` first, a good part of a shell command's cost.
    ValueError (json's JSONDecodeError among them) when it is not one JSON value."""
    from ..jsonscan import scanner

    text = raw.decode("utf-8")
    scan = scanner()
    start = _skip_blanks(text, 0)
    try:
        value, end = scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"not JSON at character {exc.value}") from None
    if _skip_blanks(text, end) != len(text):
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


def written(reply: Reply) -> tuple[bytes, bytes]:
    """What an answer writes: its JSON to stdout and its text to stderr (b"": nothing)."""
    return (dumps(reply.output) if reply.output else b""), reply.error.encode()


def write(out: tuple[IO[bytes] | None, IO[bytes] | None], output: bytes, error: bytes) -> None:
    """Write an answer (`written`) to the call's stdout and stderr (`out`), each flushed;
    OSError where one is wanted and missing."""
    for stream, data in zip(out, (output, error), strict=True):
        if data:
            if stream is None:
                raise OSError("no stream to write to")
            stream.write(data)
            stream.flush()


def delivered(
    out: tuple[IO[bytes] | None, IO[bytes] | None],
    output: bytes,
    error: bytes,
    directory: str | None,
    event: str,
) -> bool:
    """`write` an answer; False, and a line in the hooks' log, where that failed: then nothing
    of it may be recorded. (A full call's writing, timed by the handlers' budget, catches that
    budget's interruption too: `dispatch._write`.)"""
    try:
        write(out, output, error)
    except Exception as exc:
        from .log import log

        log(
            directory,
            event,
            f"answer not delivered ({type(exc).__name__}: {exc}); nothing recorded",
        )
        return False
    return True


def said(output: bytes, error: bytes, code: int) -> bytes:
    """An answer as written (stdout, stderr, exit code) in one string: what a step after the
    answer compares with its handlers' answer (`hooks.after`, `hooks.later`)."""
    return b"%d %d\n" % (code, len(output)) + output + error


def dumps(value: Any) -> bytes:
    """`value` (dicts, lists, strings, numbers, booleans, None) as `json.dumps` writes it with
    `ensure_ascii=False`, without importing `json`."""
    from _json import encode_basestring

    parts: list[str] = []

    def write(item: Any) -> None:
        if isinstance(item, str):
            parts.append(encode_basestring(item))
        elif item is None or isinstance(item, bool):
            parts.append({None: "null", True: "true", False: "false"}[item])
        elif isinstance(item, int | float):
            parts.append(int.__repr__(item) if isinstance(item, int) else float.__repr__(item))
        elif isinstance(item, dict):
            parts.append("{")
            for index, (key, inner) in enumerate(item.items()):
                parts.append(", " if index else "")
                parts.append(encode_basestring(str(key)) + ": ")
                write(inner)
            parts.append("}")
        elif isinstance(item, list | tuple):
            parts.append("[")
            for index, inner in enumerate(item):
                parts.append(", " if index else "")
                write(inner)
            parts.append("]")
        else:
            raise TypeError(f"{type(item).__name__} is not JSON")

    write(value)
    return "".join(parts).encode()


def _skip_blanks(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\n\r":
        at += 1
    return at


class Merged:
    """What dshkit answers, which results it carries, and what was left out.

    `verdict` is the merged answer in the handlers' own words (`additionalContext`,
    `permissionDecision` and `permissionDecisionReason`, `decision: "block"` and `reason`,
    `systemMessage`; {} is "no opinion"); `reply` is how the calling harness's dialect takes it
    (docs/design/hooks.md#one-protocol-a-dialect-per-harness)."""

    __slots__ = ("emitted", "notes", "reply", "verdict")

    def __init__(
        self, verdict: dict[str, Any], reply: Reply, emitted: list[int], notes: list[str]
    ) -> None:
        self.verdict = verdict
        self.reply = reply
        self.emitted = emitted  # indexes of the results the answer carries
        self.notes = notes  # for the log: what was dropped or shortened, and why

    @property
    def output(self) -> dict[str, Any]:
        """The JSON written to stdout ({}: none)."""
        return self.reply.output


def answer(
    event: str, results: list[tuple[str, dict[str, Any]]], harness: str = "unknown"
) -> Merged:
    """Merge `(handler, result)` pairs, in priority order, into one verdict, written as
    `harness` (a name from the registry) takes it.

    Contexts are joined in order; one that would take the joined text over the cap is
    dropped whole (later, smaller ones may still fit). The strictest permission decision wins
    (deny over ask over allow, the first of equals), so no later, looser handler can undo a
    deny; the first block wins. The same results always give the same bytes.
    """
    notes: list[str] = []
    emitted: set[int] = set()
    verdict: dict[str, Any] = {}
    contexts = [
        (index, name, str(result["additionalContext"]))
        for index, (name, result) in enumerate(results)
        if result.get("additionalContext")
    ]
    if len(contexts) == 1 and 2 * len(contexts[0][2]) <= MAX_OUTPUT_CHARS:
        # One context no count can take over the cap (a character is at most two UTF-16
        # units): whole, as `join_contexts` keeps it, without loading the preview's module.
        emitted.add(contexts[0][0])
        verdict["additionalContext"] = contexts[0][2]
    elif contexts:  # (a command's answer carries none: the guard's path imports nothing more)
        from ..hookio import join_contexts  # the preview joins them the same way

        text, kept, notes = join_contexts(event, [(name, text) for _, name, text in contexts])
        emitted.update(contexts[k][0] for k in kept)
        if kept:
            verdict["additionalContext"] = text
    permission = _strictest(results)
    if permission is not None:
        name, result = results[permission]
        emitted.add(permission)
        verdict["permissionDecision"] = result["permissionDecision"]
        verdict["permissionDecisionReason"] = _reason(
            name, str(result.get("permissionDecisionReason", "")), notes
        )
    notices = [
        (index, str(result["systemMessage"]))
        for index, (_, result) in enumerate(results)
        if result.get("systemMessage")
    ]
    if notices:  # for the person: every one, in order
        emitted.update(i for i, _ in notices)
        verdict["systemMessage"] = "\n".join(text for _, text in notices)
    block = _first(results, lambda r: r.get("decision") == "block")
    if block is not None:
        name, result = results[block]
        emitted.add(block)
        verdict.update(decision="block", reason=_reason(name, str(result.get("reason", "")), notes))
    # Lines for the person, one per handler that has one, in order.
    said = [
        (i, str(r["systemMessage"])) for i, (_, r) in enumerate(results) if r.get("systemMessage")
    ]
    if said:
        emitted.update(i for i, _ in said)
        verdict["systemMessage"] = "\n".join(line for _, line in said)
    reply = harnesses.dialect(harness).reply(event, verdict) if verdict else _SILENT
    return Merged(verdict, reply, sorted(emitted), notes)


_SILENT = harnesses.Reply({})  # no opinion: nothing written, exit 0


def _first(
    results: list[tuple[str, dict[str, Any]]], wanted: Callable[[dict[str, Any]], bool]
) -> int | None:
    return next((i for i, (_, result) in enumerate(results) if wanted(result)), None)


def _strictest(results: list[tuple[str, dict[str, Any]]]) -> int | None:
    """The index of the first result with the strictest permission decision."""
    found = [i for i, (_, result) in enumerate(results) if result.get("permissionDecision")]
    return min(
        found,
        key=lambda i: (-_STRICTNESS.get(str(results[i][1]["permissionDecision"]), 0), i),
        default=None,
    )


def _reason(name: str, text: str, notes: list[str]) -> str:
    """A decision's reason within the cap: over it, shortened at a line break with a mark."""
    length = harnesses.text_length(text)
    if length <= MAX_OUTPUT_CHARS:
        return text
    mark = f"\n…（原因共 {length} 字，超出 {MAX_OUTPUT_CHARS} 字上限，其余未显示）"
    room = MAX_OUTPUT_CHARS - len(mark) - (length - len(text))  # astral characters count twice
    cut = text.rfind("\n", 0, room)
    kept = text[: cut if cut > 0 else room]
    notes.append(f"shortened the reason of {name} from {length} characters (over the cap)")
    return kept + mark
