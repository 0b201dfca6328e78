"""Session summaries and generation unions: the scanner's bookkeeping over normalized events.

A summary counts a session's events, human messages and tool calls, its time and seq span, and
whether its seqs strictly increase (then no two events can be twins). Summaries of later events
add to earlier ones, which is what lets a scan read only what is new.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from operator import lt
from typing import Any

import orjson

from .events import Event, is_human_message, message_text


def dedupe(events: Iterable[Event]) -> list[Event]:
    """Union without doubling (docs/design/sessions.md#generations-are-unioned-without-doubling):
    key `seq`, else `type@time`; drop only exact twins.

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


HumanRow = tuple[int | None, int | None, str]  # (seq, time, text) of a human message


def accumulate(
    stats: dict[str, Any], events: list[Event], humans: list[HumanRow] | None = None
) -> dict[str, Any]:
    """Fold events, in order, into a summary (in place); returns `stats`. With `humans`, the
    human messages met are appended to it too (one pass for both)."""
    return merge_stats(stats, _summarize(events, humans)) if events else stats


def human_rows(events: list[Event]) -> list[HumanRow]:
    """The human messages of `events` as rows."""
    rows: list[HumanRow] = []
    _summarize(events, rows)
    return rows


def _summarize(events: list[Event], humans: list[HumanRow] | None) -> dict[str, Any]:
    stats = new_stats()
    human = tools = 0
    for event in events:
        kind = event.get("type")
        if kind == "user/message":
            if is_human_message(event):
                human += 1
                text = message_text(event)
                if not stats["firstPrompt"]:
                    stats["firstPrompt"] = text[:200]
                if humans is not None:
                    humans.append((event.get("seq"), event.get("time"), text))
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
