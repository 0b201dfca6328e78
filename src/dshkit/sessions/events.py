"""The normalized event model shared by every harness, and the questions asked of it.

An event is a plain dict shaped like a DSH log record — `{"type", "seq", "time", "data"}` plus
DSH's optional `ignorable`, `surfaceOp` and `sourceEventSeqs` — so DSH records are used as
they are and Claude Code / Codex lines are mapped onto the same vocabulary:

- `user/message`: `data` *is* the message (`{role, content[], source}`); human speech only
  when `source.kind == "user"` (docs/design/sessions.md#only-typed-words-are-human-messages);
  in a sub-agent's session the typed prompts are another agent's, `agent-message`
  (docs/design/sessions.md#a-sub-agents-prompt-is-not-the-persons).
- `assistant/message`: `{turn, step, message, usage?, synthetic?, error?}`; `synthetic` when
  the harness wrote it in the model's place (Claude Code's "No response requested."), with
  `error {code, message}` when it stands for a failed request (an API error): neither is
  the model's words (`is_model_message`).
- `tool/call`: `{turn, step, callId, name, arguments}` (`arguments` a JSON string).
- `tool/result`: `{turn, step, message{source{callId}, content[], isError?}, error?}`.
- `turn/start`, `turn/end`, `request/context {contextWindow}`, and `usage/record {turn,
  usage}` for harnesses that report usage apart from the message (Codex).

Plain dicts keep scanning within reach of the bare decode-and-parse cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import orjson

# A prompt another agent wrote, and the adapter state's mark of a sub-agent's session: where
# the hot path's mapping reads them too (`sessions.mapping`).
from .mapping import AGENT_MESSAGE as AGENT_MESSAGE
from .mapping import SUBAGENT as SUBAGENT

Event = dict[str, Any]
T = TypeVar("T")


def _message(event: Event) -> dict[str, Any]:
    data = event.get("data") or {}
    return data if event.get("type") == "user/message" else (data.get("message") or {})


def is_model_message(event: Event) -> bool:
    """An `assistant/message` a model wrote: not one the harness put in its place."""
    return event.get("type") == "assistant/message" and not (event.get("data") or {}).get(
        "synthetic"
    )


def is_human_message(event: Event) -> bool:
    """A message the person typed: `user/message` whose source kind is `user`."""
    if event.get("type") != "user/message":
        return False
    source = (event.get("data") or {}).get("source") or {}
    return source.get("kind") == "user"


def as_agent_prompts(events: list[Event]) -> None:
    """Mark, in place, every typed prompt of `events` as another agent's (`AGENT_MESSAGE`):
    what an adapter does to the events of a sub-agent's session, whose prompts the parent
    agent wrote (docs/design/sessions.md#a-sub-agents-prompt-is-not-the-persons)."""
    for event in events:
        if is_human_message(event):
            data = event["data"]
            event["data"] = {**data, "source": {**data["source"], "kind": AGENT_MESSAGE}}


def message_text(event: Event, *, include_reasoning: bool = False) -> str:
    """The text blocks of the event's message, joined by newlines."""
    parts: list[str] = []
    for block in _message(event).get("content") or ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" or (include_reasoning and kind == "reasoning"):
            parts.append(str(block.get("text", "")))
        elif kind == "tool-result":
            parts.extend(
                str(inner.get("text", ""))
                for inner in block.get("content") or ()
                if isinstance(inner, dict) and inner.get("type") == "text"
            )
    return "\n".join(parts)


def human_messages(events: Iterable[Event]) -> list[Event]:
    return [event for event in events if is_human_message(event)]


def result_call_id(event: Event) -> str | None:
    """The call id a `tool/result` answers, not `data.toolCallId`
    (docs/design/sessions.md#a-tool-result-names-its-call-in-sourcecallid)."""
    message = (event.get("data") or {}).get("message") or {}
    call_id = (message.get("source") or {}).get("callId") or message.get("toolCallId")
    if call_id:
        return str(call_id)
    for block in message.get("content") or ():  # DSH v0 keeps it on the tool-result block too
        if isinstance(block, dict) and block.get("toolCallId"):
            return str(block["toolCallId"])
    return None


def is_failed_result(event: Event) -> bool:
    """A tool result that failed: `data.error`, or the message (or its v0 block) marked isError."""
    data = event.get("data") or {}
    if data.get("error"):
        return True
    message = data.get("message") or {}
    if message.get("isError") is True:
        return True
    return any(
        isinstance(block, dict) and block.get("isError") is True
        for block in message.get("content") or ()
    )


def ask_answers(event: Event) -> list[dict[str, Any]] | None:
    """The `answers` of an ask-the-user result (`{"answers":[{id, selected[], custom?}]}`)."""
    if event.get("type") != "tool/result":
        return None
    text = message_text(event).strip()
    if not text.startswith("{"):
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    answers = value.get("answers") if isinstance(value, dict) else None
    return answers if isinstance(answers, list) else None


@dataclass(slots=True)
class ToolCall:
    """A `tool/call` and the `tool/result` answering it, with their positions in the events."""

    call: Event
    index: int
    result: Event | None = None
    result_index: int | None = None

    @property
    def call_id(self) -> str:
        return str(self.call["data"].get("callId", ""))

    @property
    def name(self) -> str:
        return str(self.call["data"].get("name", ""))

    @property
    def failed(self) -> bool:
        return self.result is not None and is_failed_result(self.result)

    @property
    def duration_ms(self) -> int | None:
        """Call to result wall time; None without a result or without both times."""
        if self.result is None:
            return None
        start, end = self.call.get("time"), self.result.get("time")
        if not isinstance(start, int) or not isinstance(end, int):
            return None
        return end - start


@dataclass(slots=True)
class ToolPairing:
    calls: list[ToolCall]
    unpaired_results: list[tuple[int, Event]]  # (position, result) matching no open call


class Pairer(Generic[T]):
    """The one rule pairing tool calls with their results, applied one event at a time, so
    that a streaming count (`profile.signals`) pairs exactly as `pair_tool_calls` does.

    A call is *open* from its `tool/call` until a result answers it. A `tool/result` answers
    the open call whose id it carries (`result_call_id`); with none open under that id it is
    unpaired. When an id repeats, a result pairs with the most recent open call of that id:
    a call opened under an id that is still open supersedes the older call, which is left
    without a result. Why:

    - ids do repeat in real logs where a harness or its model numbers calls per request or
      per turn (`call_0` in every request), so an id names a call only among the open ones;
    - an id is reused while its call is still open only when that call was abandoned (an
      interrupted turn, a crash): nothing will answer it any more, and the result that
      follows belongs to the call the harness ran last;
    - the pairing of a result depends only on what came before it (a map over the whole log
      would let a later call take an earlier result), and a stream keeps at most one open
      call per id.

    Each call is given a value (`T`: whatever its user needs of the call later), handed back
    by the result that answers it.
    """

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: dict[str, T] = {}

    def call(self, event: Event, value: T) -> None:
        """Open the `tool/call` `event`, `value` standing for it."""
        self._open[str((event.get("data") or {}).get("callId", ""))] = value

    def result(self, event: Event) -> T | None:
        """The value of the open call the `tool/result` `event` answers (closing it), or None
        when it answers no open call (an unpaired result)."""
        call_id = result_call_id(event)
        return self._open.pop(call_id, None) if call_id else None


def pair_tool_calls(events: Iterable[Event]) -> ToolPairing:
    """Every `tool/call` with the `tool/result` answering it (the rule of `Pairer`), and the
    results that answer no open call."""
    pairer: Pairer[ToolCall] = Pairer()
    calls: list[ToolCall] = []
    unpaired: list[tuple[int, Event]] = []
    for index, event in enumerate(events):
        kind = event.get("type")
        if kind == "tool/call":
            pair = ToolCall(event, index)
            calls.append(pair)
            pairer.call(event, pair)
        elif kind == "tool/result":
            found = pairer.result(event)
            if found is None:
                unpaired.append((index, event))
            else:
                found.result, found.result_index = event, index
    return ToolPairing(calls, unpaired)


@dataclass(slots=True)
class TurnCounter:
    """The one turn numbering, one event at a time (so that a stream and a digest kept between
    hook calls number turns as `turns` does).

    `ordinal` counts the `turn/start` events seen: it groups events, 0 before any turn. `number`
    is the current turn's own number as the harness gives it (`turn/start` data `turn`: what
    a person sees, and a resumed session may start at 7), the ordinal where it gives none; 0
    before any turn."""

    ordinal: int = 0
    number: int = 0

    def add(self, event: Event) -> bool:
        """Count `event` in; True when it starts a turn."""
        if event.get("type") != "turn/start":
            return False
        self.ordinal += 1
        number = (event.get("data") or {}).get("turn")
        self.number = number if isinstance(number, int) else self.ordinal
        return True


def turn_ordinals(events: Iterable[Event]) -> list[int]:
    """For each event, which turn it belongs to: 0 before any `turn/start`, k in the k-th."""
    counter = TurnCounter()
    ordinals = []
    for event in events:
        counter.add(event)
        ordinals.append(counter.ordinal)
    return ordinals


@dataclass(slots=True)
class Turn:
    """One turn: `ordinal` counts turn starts in the log; `number` is the harness's own (what a
    person sees), the ordinal where the harness gives none (`TurnCounter`)."""

    ordinal: int
    number: int
    events: list[Event] = field(default_factory=list)

    @property
    def end_reason(self) -> str | None:
        for event in reversed(self.events):
            if event.get("type") == "turn/end":
                return ((event.get("data") or {}).get("reason") or {}).get("kind")
        return None


def turns(events: Iterable[Event]) -> list[Turn]:
    """Events grouped by turn, in order; events before any `turn/start` form turn 0."""
    counter = TurnCounter()
    result: list[Turn] = []
    for event in events:
        if counter.add(event) or not result:
            result.append(Turn(counter.ordinal, counter.number))
        result[-1].events.append(event)
    return result


@dataclass(frozen=True, slots=True)
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    @property
    def context(self) -> int:
        """Tokens the request occupied in the context window: input + cache read + cache write."""
        return self.input + self.cache_read + self.cache_write


def _usage(raw: dict[str, Any]) -> Usage:
    return Usage(
        int(raw.get("inputTokens") or 0),
        int(raw.get("outputTokens") or 0),
        int(raw.get("cacheReadTokens") or 0),
        int(raw.get("cacheWriteTokens") or 0),
        int(raw.get("reasoningTokens") or 0),
    )


def usages(events: Iterable[Event]) -> Iterator[tuple[Event, Usage]]:
    """Each model request's token usage, in order (buckets do not overlap)."""
    for event in events:
        if event.get("type") in ("assistant/message", "usage/record"):
            raw = (event.get("data") or {}).get("usage")
            if isinstance(raw, dict):
                yield event, _usage(raw)


def total_usage(events: Iterable[Event]) -> Usage:
    totals = [0, 0, 0, 0, 0]
    for _, usage in usages(events):
        for index, value in enumerate(
            (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.reasoning)
        ):
            totals[index] += value
    return Usage(*totals)


def context_window(events: Iterable[Event]) -> int | None:
    """The model's context window as last announced by a `request/context` event."""
    window = None
    for event in events:
        if event.get("type") == "request/context":
            value = (event.get("data") or {}).get("contextWindow")
            if isinstance(value, int) and value > 0:
                window = value
    return window


def session_model(events: Iterable[Event]) -> str | None:
    """The model the session last ran on: named by a `request/context` event (DSH) or by an
    assistant message's `message.source.model` (DSH, Claude Code), the later one winning.
    A placeholder in angle brackets (Claude Code's `<synthetic>` on messages no model wrote)
    names no model."""
    model = None
    for event in events:
        kind = event.get("type")
        if kind == "request/context":
            named = (event.get("data") or {}).get("model")
        elif kind == "assistant/message":
            named = (_message(event).get("source") or {}).get("model")
        else:
            continue
        if isinstance(named, str) and named and not named.startswith("<"):
            model = named
    return model


def context_pressure(events: Iterable[Event]) -> int | None:
    """Context tokens used by the latest request (its input + cache read + cache write)."""
    latest = None
    for _, usage in usages(events):
        latest = usage.context
    return latest


def todo_items(event: Event) -> list[dict[str, Any]] | None:
    """The todo list an event writes, whole (each replaces the previous), or None.

    Recognized by shape, the same in every harness: DSH's `todo/write` record and its
    `todo_write` calls and Claude Code's `TodoWrite` calls carry `todos: [{content, status}]`;
    Codex's `update_plan` calls carry `plan: [{step, status}]`."""
    kind, data = event.get("type"), event.get("data") or {}
    if kind == "todo/write":
        items = data.get("todos")
    elif kind == "tool/call":
        try:
            arguments = orjson.loads(data.get("arguments") or "{}")
        except orjson.JSONDecodeError:
            return None
        items = (
            arguments.get("todos", arguments.get("plan")) if isinstance(arguments, dict) else None
        )
    else:
        return None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else None
