"""Four zero-LLM friction signals counted from a session's events.

Every rule uses structured fields only, and each carries the correction made after checking
real logs (docs/design/profile.md#friction-signals-read-structured-fields-only):
- delegateRuns: a turn with no tool call whose *last* assistant message asks the person to
  act, by a request-sentence pattern (not any "需要你", which is mostly "需要你注意"; not any
  "you can", which is mostly "you can see"), Chinese or English; config.toml's [signals] adds
  patterns or replaces them (`configured`).
- longTools: a command tool whose call→result wall time is over the threshold. Waits on a
  person or a background job are counted apart (humanWaitTools), and a call with another
  call or a new turn between it and its result is skipped (concurrentSkipped): its wall time
  measures queueing, not running. The concurrency check comes first.
- repeatFailures: the same tool failing `repeat_fail_min` times in a row; any success resets
  it, and each hit resets it (7 failures at 3 → 2 hits). Streaks span turns, not sessions.
- freeformAnswers: an ask with options, answered by the next human message — later in the
  ask's turn or opening the very next one, within the window — that matches no label.
Results whose call id matches no call are counted as unpairedToolResults.

Memory stays bounded: a session's events are streamed from the cache and counted in one pass
(nothing of an event is kept but what a later event needs), and a report over many sessions
keeps the first `details` hits of each signal in its details (in the order the sessions are
given, each session's in log order) and counts the rest as omitted, with full totals.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .. import harnesses
from ..config import load_config
from ..sessions.catalog import Catalog, SessionKey, bulk_load
from ..sessions.events import (
    Event,
    Pairer,
    TurnCounter,
    is_failed_result,
    is_human_message,
    message_text,
    result_call_id,
)
from .wire import SessionSignalsJson, SignalsReportJson

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
_DELEGATE_ZH = (
    r"(请你|请您|需要你|需要您|你自己|您自己)\s*(重试|执行|处理|确认|[去来把帮做先再看查改加写跑补删增])",
    r"(请|麻烦|劳驾)[你您][^，。；\n]{0,12}(一下|一趟|帮忙)",
)
# English asks are told by what is asked, not by "you": a verb of doing something, from this
# list, after a request form. "You can see…", "please note…", "would you like me to run…" and
# "if you need to run it again…" tell or offer; they do not hand the work over.
_DOING = (
    r"(?:re-?run|run|execute|try|restart|reinstall|install|reboot|reload|refresh|check|verify|"
    r"confirm|test|open|paste|share|send|upload|provide|apply|set|export|add|update|create|"
    r"delete|remove|copy|log\s?in|sign\s?in|click|start|stop|kill|grant|enable|disable|"
    r"configure|edit|change|replace|rename|move|download|clone|pull|push|commit|merge|build|"
    r"deploy|type|enter|press|approve|restore|clear)(?:n?ing|e?d)?\b"
)
_SENTENCE = r"(?:^|(?<=[.!?:;]\s))\s*"  # where an imperative starts (with re.M)
_DELEGATE_EN = (
    # please run …, kindly restart …
    rf"(?i)\b(?:please|kindly)\s+(?:go\s+ahead\s+and\s+)?{_DOING}",
    # could you run …, can you paste …, would you mind running …
    rf"(?i)\b(?:could|can|would|will)\s+you\s+(?:please\s+)?(?:mind\s+)?{_DOING}",
    # you can run …, you could try restarting …, you should check …
    rf"(?i)\byou\s+(?:can|could|may|might|should)\s+(?:also\s+|now\s+|then\s+|just\s+)?"
    rf"(?:want\s+to\s+)?(?:try\s+)?{_DOING}",
    # you'll need to run …, you will have to restart …, you need to set … (not "if you need to")
    rf"(?i)(?<!\bif )(?<!\bwhen )\byou(?:'ll|\s+will|'d|\s+would)?\s+(?:need|have)\s+to\s+"
    rf"(?:manually\s+)?{_DOING}",
    # Run the following command: …, Paste this into …
    rf"(?im){_SENTENCE}(?:now,?\s+|then,?\s+|next,?\s+|first,?\s+|just\s+)?"
    r"(?:re-?run|run|execute|paste|type|enter|copy)\s+(?:the\s+following|this|these|that)\b",
    # Try running …, Try restarting … (a sentence of its own: "I'll try running" is not one)
    rf"(?im){_SENTENCE}(?:now\s+|then\s+)?try\s+{_DOING}",
    # let me know once you've run it
    rf"(?i)\blet\s+me\s+know\s+(?:once|when|after)\s+you(?:'ve|\s+have)?\s+{_DOING}",
)
# What delegateRuns counts by default ([signals] in config.toml adds to it or replaces it).
DELEGATE_PATTERNS = _DELEGATE_ZH + _DELEGATE_EN
# Tool names across every harness (the registry's vocabularies). Background-job tools are
# commands too, but a wait on them is a wait: human-wait takes precedence.
COMMAND_TOOLS = harnesses.tools(harnesses.COMMAND)
HUMAN_WAIT_TOOLS = harnesses.tools(harnesses.HUMAN_WAIT)

_DETAIL_TEXT = 300  # characters of a message kept in a hit's details
DETAILS = 50  # hits of each signal a report keeps in its details by default
# Recomputed results written per transaction: bounds what waits in memory to be stored.
_FLUSH_BYTES = 1 << 22


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


def configured(state_dir: Path) -> SignalConfig:
    """The knobs every reader of the signals counts with (`dshkit signals`, a profile
    generation, the console): the delegate patterns as the state directory's config.toml sets
    them in [signals] (the built-in ones unless `delegate_builtin` is off, then its own
    `delegate_patterns`), the thresholds' defaults. ConfigError when the file is unusable
    (docs/design/profile.md#the-delegate-patterns-are-the-persons-to-change)."""
    settings = load_config(state_dir)["signals"]
    builtin = DELEGATE_PATTERNS if settings["delegate_builtin"] else ()
    return SignalConfig(delegate_patterns=builtin + tuple(settings["delegate_patterns"]))


@dataclass
class SessionSignals:
    """One session's signal counts, with the details of every hit."""

    human_messages: int = 0
    hits: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {s: [] for s in SIGNALS})

    def totals(self) -> dict[str, int]:
        return {name: len(self.hits[name]) for name in SIGNALS}

    def as_json(self) -> SessionSignalsJson:
        return {"humanMessages": self.human_messages, "hits": self.hits}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SessionSignals:
        return cls(value["humanMessages"], {s: value["hits"].get(s, []) for s in SIGNALS})


def session_signals(events: Iterable[Event], config: SignalConfig, session: str) -> SessionSignals:
    """Count every signal in one session's events, in log order, in one pass.

    `events` may be a stream (`Catalog.iter_events`): nothing is kept of an event once it is
    counted but what a later event can still need (a call waiting for its result, an ask
    waiting for its answer, the turn's last assistant message), so memory does not grow with
    the session.
    """
    counter = _Counter(config, session, [re.compile(p) for p in config.delegate_patterns])
    for event in events:
        counter.add(event)
    return counter.finish()


@dataclass(slots=True)
class _Call:
    """What the rules still need of a `tool/call`: for its result, and (asks) its answer."""

    order: int  # calls before it in the session: the order hits about calls are listed in
    name: str
    seq: Any
    time: Any
    turn: int  # the turn's ordinal (`TurnCounter.ordinal`)
    number: int  # the harness's own turn number
    marks: int  # calls and turn starts so far, itself included
    options: list[str] = field(default_factory=list)  # the labels of an ask


class _Counter:
    """The rules of the module's docstring, applied one event at a time.

    Turns are numbered by `events.TurnCounter` (`turns`): its `ordinal` groups events, its
    `number`, the harness's own, is what a hit reports (as `events.turns` gives it). Calls and
    results are paired by `events.Pairer`, the rule `pair_tool_calls` uses.
    """

    def __init__(self, config: SignalConfig, session: str, patterns: list[re.Pattern[str]]):
        self.config, self.session, self.patterns = config, session, patterns
        self.result = SessionSignals()
        self.hits = self.result.hits
        self.turns = TurnCounter()
        self.marks = 0  # calls and turn starts so far: a change tells one came in between
        self.calls = 0
        self.pairer: Pairer[_Call] = Pairer()  # calls without their result yet
        self.asks: list[_Call] = []  # asks with options since the last human message
        self.streaks: dict[str, int] = {}  # failures in a row, by tool name
        self.timed: list[tuple[int, str, dict[str, Any]]] = []  # (call order, signal, hit)
        # The current turn: whether it called a tool, and its last assistant message so far.
        self.turn_calls = False
        self.speech: tuple[Any, str] | None = None  # (seq, text)

    def add(self, event: Event) -> None:
        kind = event.get("type")
        if kind == "turn/start":
            self._end_turn()
            self.turns.add(event)
            self.marks += 1
        elif kind == "tool/call":
            self._call(event)
        elif kind == "tool/result":
            self._result(event)
        elif kind == "assistant/message":
            if self.turns.ordinal and not self.turn_calls:  # else the turn cannot be a delegate run
                self.speech = event.get("seq"), message_text(event)  # text only, not reasoning
        elif is_human_message(event):
            self.result.human_messages += 1
            if self.asks:
                self._answer(event)

    def finish(self) -> SessionSignals:
        self._end_turn()
        self.timed.sort(key=lambda item: item[0])  # listed by call, not by result
        for _, name, hit in self.timed:
            self.hits[name].append(hit)
        return self.result

    # -- delegateRuns ------------------------------------------------------------------------

    def _end_turn(self) -> None:
        """A delegate run: a turn without tool calls whose last assistant message asks the
        person to act (turn 0, before any turn start, is no turn)."""
        if self.speech is not None and not self.turn_calls:
            seq, text = self.speech
            match = next((m for p in self.patterns if (m := p.search(text))), None)
            if match:
                self.hits["delegateRuns"].append(
                    {
                        "session": self.session,
                        "turn": self.turns.number,
                        "seq": seq,
                        "match": match.group(0),
                        "text": text[:_DETAIL_TEXT],
                    }
                )
        self.turn_calls, self.speech = False, None

    # -- calls and results -------------------------------------------------------------------

    def _call(self, event: Event) -> None:
        data = event["data"]
        self.marks += 1
        self.turn_calls = True
        name = str(data.get("name", ""))
        call = _Call(
            self.calls,
            name,
            event.get("seq"),
            event.get("time"),
            self.turns.ordinal,
            self.turns.number,
            self.marks,
        )
        self.calls += 1
        self.pairer.call(event, call)
        if name in self.config.ask_tools and (options := _option_labels(event)):
            call.options = options
            self.asks.append(call)

    def _result(self, event: Event) -> None:
        call = self.pairer.result(event)
        if call is None:
            self.hits["unpairedToolResults"].append(
                {
                    "session": self.session,
                    "turn": self.turns.number,
                    "seq": event.get("seq"),
                    "callId": result_call_id(event),
                    "text": message_text(event)[:_DETAIL_TEXT],
                }
            )
            return
        self._duration(call, event)
        self._failure(call, event)

    def _duration(self, call: _Call, result: Event) -> None:
        """longTools, humanWaitTools or concurrentSkipped: the concurrency check first."""
        start, end = call.time, result.get("time")
        if not isinstance(start, int) or not isinstance(end, int):
            return
        if end - start <= self.config.long_tool_ms:
            return
        hit = {
            "session": self.session,
            "turn": call.number,
            "tool": call.name,
            "durationMs": end - start,
            "callSeq": call.seq,
            "resultSeq": result.get("seq"),
        }
        if self.marks > call.marks:  # a call or a turn start came in between
            self.timed.append((call.order, "concurrentSkipped", hit))
        elif call.name in self.config.human_wait_tools:
            self.timed.append((call.order, "humanWaitTools", hit))
        elif call.name in self.config.command_tools:
            self.timed.append((call.order, "longTools", hit))

    def _failure(self, call: _Call, result: Event) -> None:
        """repeatFailures: a streak per tool, reset by a success and by each hit."""
        streaks = self.streaks
        if not is_failed_result(result):
            streaks[call.name] = 0
            return
        streaks[call.name] = streaks.get(call.name, 0) + 1
        if streaks[call.name] >= self.config.repeat_fail_min:
            self.hits["repeatFailures"].append(
                {
                    "session": self.session,
                    "turn": self.turns.number,
                    "tool": call.name,
                    "failures": streaks[call.name],
                    "errorCode": _error_code((result.get("data") or {}).get("error")),
                    "resultSeq": result.get("seq"),
                }
            )
            streaks[call.name] = 0

    # -- freeformAnswers ---------------------------------------------------------------------

    def _answer(self, human: Event) -> None:
        """The next human message answers every ask with options still waiting for one, if
        it comes in the ask's turn or the one right after, within the window."""
        text = message_text(human)
        for ask in self.asks:
            if self.turns.ordinal - ask.turn > 1:
                continue
            waited = int(human.get("time") or 0) - int(ask.time or 0)
            if waited > self.config.answer_window_ms:
                continue
            if not _chose_an_option(text, ask.options):
                self.hits["freeformAnswers"].append(
                    {
                        "session": self.session,
                        "turn": ask.number,
                        "options": ask.options,
                        "answer": text[:_DETAIL_TEXT],
                        "askSeq": ask.seq,
                        "answerSeq": human.get("seq"),
                    }
                )
        self.asks.clear()


def _error_code(error: Any) -> Any:
    return error.get("code") if isinstance(error, dict) else None


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
    """Signals over many sessions: full totals, and the first `detail_limit` hits of each
    signal in `details` (the rest counted in `omitted`)."""

    sessions: int = 0  # sessions with at least one human message
    human_messages: int = 0
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SIGNALS, 0))
    details: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {s: [] for s in SIGNALS}
    )
    omitted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SIGNALS, 0))
    recomputed: int = 0  # sessions whose signals had to be computed again
    detail_limit: int = DETAILS

    def add(self, result: SessionSignals) -> None:
        """Count one session's signals in."""
        self.human_messages += result.human_messages
        self.sessions += result.human_messages > 0
        for name in SIGNALS:
            hits = result.hits[name]
            self.totals[name] += len(hits)
            room = max(0, self.detail_limit - len(self.details[name]))
            self.details[name] += hits[:room]
            self.omitted[name] += max(0, len(hits) - room)

    def as_json(self) -> SignalsReportJson:
        return {
            "sessions": self.sessions,
            "humanMessages": self.human_messages,
            "totals": self.totals,
            "details": self.details,
            "omitted": self.omitted,
        }


class Unstored:
    """Signals computed for a read, which writes nothing: kept in memory (at most `limit`
    sessions, the least recently used dropped first), by session, knobs and revision, so the
    console's next read of a session no scan has counted yet is not counted again. Shared by
    a service's threads."""

    def __init__(self, limit: int = 2048) -> None:
        self.limit = limit
        self._results: OrderedDict[tuple[str, str, str, int], SessionSignals] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, str, int]) -> SessionSignals | None:
        with self._lock:
            found = self._results.get(key)
            if found is not None:
                self._results.move_to_end(key)
            return found

    def put(self, key: tuple[str, str, str, int], result: SessionSignals) -> None:
        with self._lock:
            self._results[key] = result
            self._results.move_to_end(key)
            while len(self._results) > self.limit:
                self._results.popitem(last=False)

    def prune(self, revisions: dict[SessionKey, int]) -> None:
        """Drop what is not of a session's current revision (changed or forgotten since)."""
        with self._lock:
            for key in [k for k in self._results if revisions.get((k[0], k[1])) != k[3]]:
                del self._results[key]


def collect_signals(
    catalog: Catalog,
    keys: Iterable[SessionKey],
    config: SignalConfig,
    details: int = DETAILS,
    *,
    memo: bool = False,
    unstored: Unstored | None = None,
) -> SignalsReport:
    """The signals of the given sessions, recomputed only where the session changed since (its
    revision moved) or the knobs differ; the rest come from the store, one row at a time.
    `details` is how many hits of each signal the report keeps.

    Only a caller that writes anyway (a scan, a generation: `memo`) stores what it computed
    in `session_signals`; a read writes nothing (a GET changes nothing), computing in memory
    what has no stored result yet, and keeping it in `unstored` when given."""
    if details < 0:
        raise ValueError(f"details must not be negative, got {details}")
    db = catalog.store.db
    revisions = catalog.revisions()
    if unstored is not None:
        unstored.prune(revisions)
    knobs = config.key()
    report = SignalsReport(detail_limit=details)
    fresh: list[tuple[str, str, str, int, str]] = []
    fresh_bytes = 0
    for key in keys:
        revision = revisions.get(key)
        if revision is None:
            continue  # no events yet
        saved = db.execute(
            "SELECT result FROM session_signals "
            "WHERE harness = ? AND session_id = ? AND config = ? AND revision = ?",
            (*key, knobs, revision),
        ).fetchone()
        kept = None if unstored is None else unstored.get((*key, knobs, revision))
        if saved is not None:
            result = SessionSignals.from_json(orjson.loads(saved[0]))
        else:
            if kept is not None:
                result = kept
            else:
                with bulk_load():
                    result = session_signals(catalog.iter_events(key), config, f"{key[0]}:{key[1]}")
                report.recomputed += 1
            if memo:
                stored = orjson.dumps(result.as_json()).decode()
                fresh.append((*key, knobs, revision, stored))
                fresh_bytes += len(stored)
                if fresh_bytes >= _FLUSH_BYTES:
                    _store(catalog, fresh)
                    fresh_bytes = 0
            elif unstored is not None:
                unstored.put((*key, knobs, revision), result)
        report.add(result)
    _store(catalog, fresh)
    return report


def _store(catalog: Catalog, fresh: list[tuple[str, str, str, int, str]]) -> None:
    """Write recomputed results (each is exact for its revision, so any batch may stand)."""
    if fresh:
        with catalog.store.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO session_signals VALUES (?, ?, ?, ?, ?)", fresh)
        fresh.clear()
