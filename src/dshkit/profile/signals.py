"""Four zero-LLM friction signals counted from a session's events (seed 001 §4).

Every rule uses structured fields only, and each carries the correction the seed made after
checking real logs:
- delegateRuns: a turn with no tool call whose *last* assistant message asks the person to
  act, by a request-sentence pattern (not any "需要你", which is mostly "需要你注意").
- longTools: a command tool whose call→result wall time is over the threshold. Waits on a
  person or a background job are counted apart (humanWaitTools), and a call with another
  call or a new turn between it and its result is skipped (concurrentSkipped): its wall time
  measures queueing, not running. The concurrency check comes first.
- repeatFailures: the same tool failing `repeat_fail_min` times in a row; any success resets
  it, and each hit resets it (7 failures at 3 → 2 hits). Streaks span turns, not sessions.
- freeformAnswers: an ask with options, answered by the next human message — later in the
  ask's turn or opening the very next one, within the window — that matches no label.
Results whose call id matches no call are counted as unpairedToolResults.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from .. import harnesses
from ..sessions.catalog import Catalog, SessionKey
from ..sessions.events import (
    Event,
    ToolCall,
    is_failed_result,
    is_human_message,
    message_text,
    pair_tool_calls,
    result_call_id,
    turn_ordinals,
    turns,
)

SIGNALS = (
    "delegateRuns",
    "longTools",
    "repeatFailures",
    "freeformAnswers",
    "humanWaitTools",
    "concurrentSkipped",
    "unpairedToolResults",
)

# The verbs are words, not a class of characters: 处理 and 确认 must not let 理 and 认 alone
# through ("需要你理解的是…" explains, it does not ask).
DELEGATE_PATTERNS = (
    r"(请你|需要你|你自己)\s*(重试|执行|处理|确认|[去来把帮做先再看查改加写跑补删增])",
    r"(请|麻烦|劳驾)你[^，。；\n]{0,12}(一下|一趟|帮忙)",
)
# Tool names across every harness (the registry's vocabularies). Background-job tools are
# commands too, but a wait on them is a wait: human-wait takes precedence.
COMMAND_TOOLS = harnesses.tools(harnesses.COMMAND)
HUMAN_WAIT_TOOLS = harnesses.tools(harnesses.HUMAN_WAIT)

_DETAIL_TEXT = 300  # characters of a message kept in a hit's details


@dataclass(frozen=True)
class SignalConfig:
    """Every knob of the four signals; `key()` identifies results computed with them."""

    delegate_patterns: tuple[str, ...] = DELEGATE_PATTERNS
    long_tool_ms: int = 60_000
    repeat_fail_min: int = 3
    answer_window_ms: int = 30 * 60_000
    command_tools: frozenset[str] = COMMAND_TOOLS
    human_wait_tools: frozenset[str] = HUMAN_WAIT_TOOLS
    ask_tools: frozenset[str] = harnesses.tools(harnesses.ASK)

    def __post_init__(self) -> None:
        if self.long_tool_ms < 0 or self.answer_window_ms < 0:
            raise ValueError("long_tool_ms and answer_window_ms must not be negative")
        if self.repeat_fail_min < 1:
            raise ValueError(f"repeat_fail_min must be at least 1, got {self.repeat_fail_min}")
        for pattern in self.delegate_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"delegate pattern {pattern!r} is not a valid regex: {exc}"
                ) from exc

    def key(self) -> str:
        fields = {
            "delegate": list(self.delegate_patterns),
            "longToolMs": self.long_tool_ms,
            "repeatFailMin": self.repeat_fail_min,
            "answerWindowMs": self.answer_window_ms,
            "command": sorted(self.command_tools),
            "humanWait": sorted(self.human_wait_tools),
            "ask": sorted(self.ask_tools),
        }
        return orjson.dumps(fields, option=orjson.OPT_SORT_KEYS).decode()


@dataclass
class SessionSignals:
    """One session's signal counts, with the details of every hit."""

    human_messages: int = 0
    hits: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {s: [] for s in SIGNALS})

    def totals(self) -> dict[str, int]:
        return {name: len(self.hits[name]) for name in SIGNALS}

    def as_json(self) -> dict[str, Any]:
        return {"humanMessages": self.human_messages, "hits": self.hits}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SessionSignals:
        return cls(value["humanMessages"], {s: value["hits"].get(s, []) for s in SIGNALS})


def session_signals(events: list[Event], config: SignalConfig, session: str) -> SessionSignals:
    """Count every signal in one session's events (in log order)."""
    result = SessionSignals(human_messages=sum(1 for e in events if is_human_message(e)))
    hits = result.hits
    at = _Turns(turn_ordinals(events), {t.ordinal: t.number for t in turns(events)})
    pairing = pair_tool_calls(events)
    for index, event in pairing.unpaired_results:
        hits["unpairedToolResults"].append(
            {
                "session": session,
                "turn": at.number_of(index),
                "seq": event.get("seq"),
                "callId": result_call_id(event),
                "text": message_text(event)[:_DETAIL_TEXT],
            }
        )
    _delegate_runs(events, at, config, session, hits["delegateRuns"])
    _durations(pairing.calls, events, at, config, session, hits)
    _repeat_failures(pairing.calls, config, session, at, hits["repeatFailures"])
    _freeform_answers(events, pairing.calls, at, config, session, hits["freeformAnswers"])
    return result


@dataclass(frozen=True, slots=True)
class _Turns:
    """Which turn each event is in: `ordinal` (turn starts so far) groups events, the
    harness's own `number` is what a hit reports."""

    ordinal: list[int]
    number: dict[int, int]

    def number_of(self, index: int) -> int:
        return self.number[self.ordinal[index]]


def _delegate_runs(
    events: list[Event],
    at: _Turns,
    config: SignalConfig,
    session: str,
    hits: list[dict[str, Any]],
) -> None:
    patterns = [re.compile(p) for p in config.delegate_patterns]
    tool_calls: dict[int, int] = {}
    last_message: dict[int, Event] = {}
    for event, turn in zip(events, at.ordinal, strict=True):
        if turn == 0:
            continue  # only turns something opened
        kind = event.get("type")
        if kind == "tool/call":
            tool_calls[turn] = tool_calls.get(turn, 0) + 1
        elif kind == "assistant/message":
            last_message[turn] = event
    for turn, message in last_message.items():
        if tool_calls.get(turn):
            continue
        text = message_text(message)  # text blocks only: reasoning is not speech
        match = next((m for p in patterns if (m := p.search(text))), None)
        if match:
            hits.append(
                {
                    "session": session,
                    "turn": at.number[turn],
                    "seq": message.get("seq"),
                    "match": match.group(0),
                    "text": text[:_DETAIL_TEXT],
                }
            )


def _durations(
    calls: list[ToolCall],
    events: list[Event],
    at: _Turns,
    config: SignalConfig,
    session: str,
    hits: dict[str, list[dict[str, Any]]],
) -> None:
    # Positions of every call and turn start, to tell whether anything ran in between.
    marks = [i for i, e in enumerate(events) if e.get("type") in ("tool/call", "turn/start")]
    for call in calls:
        duration = call.duration_ms
        if duration is None or call.result is None or call.result_index is None:
            continue
        if duration <= config.long_tool_ms:
            continue
        hit = {
            "session": session,
            "turn": at.number_of(call.index),
            "tool": call.name,
            "durationMs": duration,
            "callSeq": call.call.get("seq"),
            "resultSeq": call.result.get("seq"),
        }
        if _anything_between(marks, call.index, call.result_index):
            hits["concurrentSkipped"].append(hit)
        elif call.name in config.human_wait_tools:
            hits["humanWaitTools"].append(hit)
        elif call.name in config.command_tools:
            hits["longTools"].append(hit)


def _anything_between(marks: list[int], start: int, end: int) -> bool:
    """Whether a mark (a call or a turn start) lies strictly between two event positions."""
    after = bisect_right(marks, start)
    return after < len(marks) and marks[after] < end


def _repeat_failures(
    calls: list[ToolCall],
    config: SignalConfig,
    session: str,
    at: _Turns,
    hits: list[dict[str, Any]],
) -> None:
    streaks: dict[str, int] = {}
    finished = [(c.result_index, c, c.result) for c in calls if c.result_index is not None]
    for index, call, result in sorted(finished, key=lambda item: item[0]):
        if result is None or not is_failed_result(result):
            streaks[call.name] = 0
            continue
        streaks[call.name] = streaks.get(call.name, 0) + 1
        if streaks[call.name] >= config.repeat_fail_min:
            error = (result.get("data") or {}).get("error") or {}
            hits.append(
                {
                    "session": session,
                    "turn": at.number_of(index),
                    "tool": call.name,
                    "failures": streaks[call.name],
                    "errorCode": error.get("code"),
                    "resultSeq": result.get("seq"),
                }
            )
            streaks[call.name] = 0


def _freeform_answers(
    events: list[Event],
    calls: list[ToolCall],
    at: _Turns,
    config: SignalConfig,
    session: str,
    hits: list[dict[str, Any]],
) -> None:
    humans = [i for i, e in enumerate(events) if is_human_message(e)]
    for call in calls:
        if call.name not in config.ask_tools:
            continue
        options = _option_labels(call.call)
        if not options:
            continue
        answer = next((i for i in humans if i > call.index), None)
        if answer is None:
            continue
        asked_turn, answer_turn = at.ordinal[call.index], at.ordinal[answer]
        # The answer belongs to the ask only in its own turn or the one right after it.
        if answer_turn - asked_turn > 1:
            continue
        waited = int(events[answer].get("time") or 0) - int(call.call.get("time") or 0)
        if waited > config.answer_window_ms:
            continue
        text = message_text(events[answer])
        if not _chose_an_option(text, options):
            hits.append(
                {
                    "session": session,
                    "turn": at.number[asked_turn],
                    "options": options,
                    "answer": text[:_DETAIL_TEXT],
                    "askSeq": call.call.get("seq"),
                    "answerSeq": events[answer].get("seq"),
                }
            )


def _option_labels(call: Event) -> list[str]:
    """Every option label of an ask call (DSH's and Claude Code's `questions[].options[]`)."""
    try:
        arguments = orjson.loads((call.get("data") or {}).get("arguments") or "{}")
    except orjson.JSONDecodeError:
        return []
    questions = arguments.get("questions") if isinstance(arguments, dict) else None
    labels: list[str] = []
    for question in questions if isinstance(questions, list) else ():
        for option in (question or {}).get("options") or () if isinstance(question, dict) else ():
            label = option.get("label") if isinstance(option, dict) else option
            if isinstance(label, str) and label.strip():
                labels.append(label.strip())
    return labels


def _chose_an_option(text: str, labels: Iterable[str]) -> bool:
    """Equal to, containing, or contained in a label (trimmed, case-insensitive): lenient, so
    a doubtful answer is missed rather than miscounted."""
    said = text.strip().casefold()
    return any(
        (label := option.casefold()) == said or label in said or said in label for option in labels
    )


@dataclass
class SignalsReport:
    sessions: int = 0  # sessions with at least one human message
    human_messages: int = 0
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SIGNALS, 0))
    details: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {s: [] for s in SIGNALS}
    )
    recomputed: int = 0  # sessions whose signals had to be computed again

    def as_json(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "humanMessages": self.human_messages,
            "totals": self.totals,
            "details": self.details,
        }


def collect_signals(
    catalog: Catalog, keys: Iterable[SessionKey], config: SignalConfig
) -> SignalsReport:
    """The signals of the given sessions, recomputed only where the session changed since (its
    revision moved) or the knobs differ; the rest come from the store."""
    db = catalog.store.db
    revisions = catalog.revisions()
    stored = {
        (h, s): (c, r, v)
        for h, s, c, r, v in db.execute(
            "SELECT harness, session_id, config, revision, result FROM session_signals"
        )
    }
    knobs = config.key()
    report = SignalsReport()
    fresh: list[tuple[str, str, str, int, str]] = []
    for key in keys:
        revision = revisions.get(key)
        if revision is None:
            continue  # no events yet
        saved = stored.get(key)
        if saved is not None and saved[0] == knobs and saved[1] == revision:
            result = SessionSignals.from_json(orjson.loads(saved[2]))
        else:
            result = session_signals(catalog.events(key), config, f"{key[0]}:{key[1]}")
            fresh.append((*key, knobs, revision, orjson.dumps(result.as_json()).decode()))
        report.human_messages += result.human_messages
        report.sessions += result.human_messages > 0
        for name in SIGNALS:
            report.totals[name] += len(result.hits[name])
            report.details[name] += result.hits[name]
    if fresh:
        with catalog.store.transaction():
            db.executemany("INSERT OR REPLACE INTO session_signals VALUES (?, ?, ?, ?, ?)", fresh)
    report.recomputed = len(fresh)
    return report
