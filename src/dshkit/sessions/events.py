"""The normalized event model shared by every harness, and the questions asked of it.

An event is a plain dict shaped like a DSH log record — `{"type", "seq", "time", "data"}` plus
DSH's optional `ignorable`, `surfaceOp` and `sourceEventSeqs` — so DSH records are used as
they are and Claude Code / Codex lines are mapped onto the same vocabulary:

- `user/message`: `data` *is* the message (`{role, content[], source}`); human speech only
  when `source.kind == "user"` (seed 001 §1.9(b), §1.9(c)).
- `assistant/message`: `{turn, step, message, usage?}`.
- `tool/call`: `{turn, step, callId, name, arguments}` (`arguments` a JSON string).
- `tool/result`: `{turn, step, message{source{callId}, content[], isError?}, error?}`.
- `turn/start`, `turn/end`, `request/context {contextWindow}`, and `usage/record {turn,
  usage}` for harnesses that report usage apart from the message (Codex).

Plain dicts keep scanning within reach of the bare decode-and-parse cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from operator import lt
from typing import Any

import orjson

Event = dict[str, Any]


def _message(event: Event) -> dict[str, Any]:
    data = event.get("data") or {}
    return data if event.get("type") == "user/message" else (data.get("message") or {})


def is_human_message(event: Event) -> bool:
    """A message the person typed: `user/message` whose source kind is `user`."""
    if event.get("type") != "user/message":
        return False
    source = (event.get("data") or {}).get("source") or {}
    return source.get("kind") == "user"


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
    """The call id a `tool/result` answers (seed 001 §1.9(a): not `data.toolCallId`)."""
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
    call: Event
    result: Event | None = None

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
        if self.result is None:
            return None
        return int(self.result.get("time", 0)) - int(self.call.get("time", 0))


@dataclass(slots=True)
class ToolPairing:
    calls: list[ToolCall]
    unpaired_results: list[Event]


def pair_tool_calls(events: Iterable[Event]) -> ToolPairing:
    """Each `tool/call` with the `tool/result` carrying its call id; unmatched results apart."""
    calls: list[ToolCall] = []
    by_id: dict[str, ToolCall] = {}
    unpaired: list[Event] = []
    for event in events:
        kind = event.get("type")
        if kind == "tool/call":
            pair = ToolCall(event)
            calls.append(pair)
            by_id[pair.call_id] = pair
        elif kind == "tool/result":
            call_id = result_call_id(event)
            found = by_id.get(call_id) if call_id else None
            if found is not None and found.result is None:
                found.result = event
            else:
                unpaired.append(event)
    return ToolPairing(calls, unpaired)


@dataclass(slots=True)
class Turn:
    number: int
    events: list[Event] = field(default_factory=list)

    @property
    def end_reason(self) -> str | None:
        for event in reversed(self.events):
            if event.get("type") == "turn/end":
                return ((event.get("data") or {}).get("reason") or {}).get("kind")
        return None


def turns(events: Iterable[Event]) -> list[Turn]:
    """Events grouped by turn: a `turn/start` opens one; events before any turn form turn 0."""
    result: list[Turn] = [Turn(0)]
    for event in events:
        if event.get("type") == "turn/start":
            result.append(Turn(int((event.get("data") or {}).get("turn", len(result)))))
        result[-1].events.append(event)
    return result if result[0].events else result[1:]


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


def context_pressure(events: Iterable[Event]) -> int | None:
    """Context tokens used by the latest request (its input + cache read + cache write)."""
    latest = None
    for _, usage in usages(events):
        latest = usage.context
    return latest


def dedupe(events: Iterable[Event]) -> list[Event]:
    """Union without doubling (seed 001 §3.7): key `seq`, else `type@time`; drop only exact twins.

    Same key with different content keeps both: a stray duplicate is cheaper than a lost
    human message. Contents are compared only when keys collide.
    """
    groups: dict[object, list[Event]] = {}
    bodies: dict[int, bytes] = {}

    def body(event: Event) -> bytes:
        if id(event) not in bodies:
            content = [event.get("type"), event.get("data")]
            bodies[id(event)] = orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
        return bodies[id(event)]

    kept: list[Event] = []
    for event in events:
        seq = event.get("seq")
        key: object = seq if seq is not None else f"{event.get('type')}@{event.get('time')}"
        group = groups.get(key)
        if group is None:
            groups[key] = [event]
        elif any(body(other) == body(event) for other in group):
            continue
        else:
            group.append(event)
        kept.append(event)
    return kept


def new_stats() -> dict[str, Any]:
    """An empty summary; `accumulate` fills it from events, `merge_stats` adds two together."""
    return {
        "events": 0,
        "humanMessages": 0,
        "toolCalls": 0,
        "firstTime": None,
        "lastTime": None,
        "firstSeq": None,
        "lastSeq": None,
        "maxSeq": None,
        "monotonic": True,  # seqs strictly increase: no two events can be twins
        "firstPrompt": "",
        "title": "",
    }


def accumulate(stats: dict[str, Any], events: list[Event]) -> dict[str, Any]:
    """Fold events, in order, into a summary (in place); returns `stats`."""
    return merge_stats(stats, _summarize(events)) if events else stats


def _summarize(events: list[Event]) -> dict[str, Any]:
    stats = new_stats()
    human = tools = 0
    for event in events:
        kind = event.get("type")
        if kind == "user/message":
            if is_human_message(event):
                human += 1
                if not stats["firstPrompt"]:
                    stats["firstPrompt"] = message_text(event)[:200]
        elif kind == "tool/call":
            tools += 1
        elif kind == "session/title":
            stats["title"] = str((event.get("data") or {}).get("title", ""))[:200]
    times = [t for event in events if type(t := event.get("time")) is int]
    if times:
        stats["firstTime"], stats["lastTime"] = min(times), max(times)
    seqs = [seq for event in events if (seq := event.get("seq")) is not None]
    if seqs:
        stats["firstSeq"], stats["lastSeq"], stats["maxSeq"] = seqs[0], seqs[-1], max(seqs)
        stats["monotonic"] = all(map(lt, seqs, islice(seqs, 1, None)))
    stats["events"], stats["humanMessages"], stats["toolCalls"] = len(events), human, tools
    return stats


def merge_stats(into: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """Add the summary of later events to `into` (in place); returns `into`."""
    if not later["events"]:
        return into
    for count in ("events", "humanMessages", "toolCalls"):
        into[count] += later[count]
    for key, pick in (("firstTime", min), ("lastTime", max), ("firstSeq", min), ("maxSeq", max)):
        values = [v for v in (into[key], later[key]) if v is not None]
        into[key] = pick(values) if values else None
    into["monotonic"] = (
        into["monotonic"]
        and later["monotonic"]
        and (into["lastSeq"] is None or later["firstSeq"] is None
             or later["firstSeq"] > into["lastSeq"])
    )  # fmt: skip
    if later["lastSeq"] is not None:
        into["lastSeq"] = later["lastSeq"]
    into["firstPrompt"] = into["firstPrompt"] or later["firstPrompt"]
    into["title"] = later["title"] or into["title"]
    return into
