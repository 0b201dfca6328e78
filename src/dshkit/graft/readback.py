"""Read-back over a handoff's source session: the exact text of an event by seq, and search.

A handoff card cites evidence by `seq`; the new session reads the original through
`graft_read_result(sourceSessionId, seq)` or finds it with `graft_search_history`
(docs/design/graft.md#the-source-can-be-read-back). Both read the session's conversation
(`Catalog.conversation`, where each seq
names one event) from the store's cache: no session directory is opened.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..errors import NotFound
from ..sessions.catalog import Catalog, SessionAmbiguous, SessionInfo, SessionNotFound
from ..sessions.events import Event, message_text, pair_tool_calls

MAX_READ_LIMIT = 100_000  # characters one read_result page may hold
MAX_SEARCH_LIMIT = 100  # hits one search may return
MAX_CONTEXT_CHARS = 1_000  # characters of context either side of a match
MAX_QUERY_CHARS = 500
# All snippets of one search together; with the bounds above one snippet always fits.
SEARCH_CHAR_BUDGET = 8_000
ELLIPSIS = "…"


class ReadBackError(NotFound, LookupError):
    """The session or the event asked for is not there (the message says what is)."""


def read_result(
    catalog: Catalog,
    source_session_id: str,
    seq: int,
    *,
    offset: int = 0,
    limit: int = 20_000,
    harness: str | None = None,
) -> dict[str, Any]:
    """The exact text of the event `seq` of the source session, `limit` characters from
    `offset`; `nextOffset` says where the next page starts (None when this one ends it).

    A tool result gives its full text, a tool call its name and arguments, a message its text,
    any other event its data as JSON.
    """
    _require("seq", seq, 0)
    _require("limit", limit, 1, MAX_READ_LIMIT)
    _require("offset", offset, 0)
    info = _session(catalog, source_session_id, harness)
    events = catalog.conversation(info.key)
    index = next((i for i, e in enumerate(events) if e.get("seq") == seq), None)
    if index is None:
        raise ReadBackError(f"seq {seq} is not in session {_name(info)}: {_seq_range(events)}")
    event = events[index]
    tools = _result_tools(events)
    text = event_text(event)
    if offset > len(text):
        raise ValueError(
            f"offset {offset} is past the end of seq {seq}'s text ({len(text)} characters)"
        )
    page = text[offset : offset + limit]
    end = offset + len(page)
    result: dict[str, Any] = {
        "sourceSessionId": info.session_id,
        "harness": info.harness,
        "seq": seq,
        "type": event.get("type"),
    }
    tool = _tool(event, index, tools)
    if tool is not None:
        result["tool"] = tool
    result.update(
        text=page, offset=offset, totalChars=len(text), nextOffset=end if end < len(text) else None
    )
    return result


def search_history(
    catalog: Catalog,
    source_session_id: str,
    query: str,
    *,
    limit: int = 20,
    context_chars: int = 120,
    harness: str | None = None,
) -> dict[str, Any]:
    """Messages, tool calls and tool results of the source session that contain `query`
    (case-insensitive), newest first; an event without the whole query matches when it holds
    every whitespace-separated term of it.

    At most `limit` hits and `SEARCH_CHAR_BUDGET` characters of snippets are returned;
    `totalHits` counts every match and `truncated` says when some were left out.
    """
    if not isinstance(query, str) or not query.strip():
        raise ValueError("query must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(f"query must be at most {MAX_QUERY_CHARS} characters, got {len(query)}")
    _require("limit", limit, 1, MAX_SEARCH_LIMIT)
    _require("context_chars", context_chars, 0, MAX_CONTEXT_CHARS)
    info = _session(catalog, source_session_id, harness)
    events = catalog.conversation(info.key)
    tools = _result_tools(events)
    phrase = re.compile(re.escape(query.strip()), re.IGNORECASE)
    terms = [re.compile(re.escape(term), re.IGNORECASE) for term in query.split()]
    hits: list[dict[str, Any]] = []
    total = used = 0
    truncated = False
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if not _searchable(event):
            continue
        text = event_text(event)
        span = _match(text, phrase, terms)
        if span is None:
            continue
        total += 1
        if truncated:
            continue
        snippet = _snippet(text, span, context_chars)
        if len(hits) >= limit or used + len(snippet) > SEARCH_CHAR_BUDGET:
            truncated = True
            continue
        used += len(snippet)
        hit: dict[str, Any] = {"seq": event.get("seq"), "type": event.get("type")}
        tool = _tool(event, index, tools)
        if tool is not None:
            hit["tool"] = tool
        hit["snippet"] = snippet
        hits.append(hit)
    return {
        "sourceSessionId": info.session_id,
        "harness": info.harness,
        "query": query,
        "hits": hits,
        "totalHits": total,
        "truncated": truncated,
    }


def event_text(event: Event) -> str:
    """The text read-back gives for an event: a tool call's name and arguments, a message's or
    tool result's text, any other event's data as JSON."""
    kind = event.get("type")
    data = event.get("data") or {}
    if kind == "tool/call":
        return f"{data.get('name', '')}\n{data.get('arguments', '')}"
    if kind == "tool/result" or _is_message(event):
        return message_text(event)
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()


def _require(name: str, value: object, low: int, high: int | None = None) -> None:
    """Refuse an argument that is not an integer within [low, high], naming it and the bound."""
    if type(value) is int and low <= value and (high is None or value <= high):
        return
    bound = f"at least {low:,}" if high is None else f"between {low:,} and {high:,}"
    raise ValueError(f"{name} must be an integer {bound}, got {value!r}")


def _session(catalog: Catalog, session_id: str, harness: str | None) -> SessionInfo:
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValueError("source_session_id must be a non-empty session id")
    try:
        return catalog.find(session_id, harness)
    except (SessionNotFound, SessionAmbiguous) as error:
        raise ReadBackError(str(error)) from error


def _name(info: SessionInfo) -> str:
    return f"{info.harness}:{info.session_id}"


def _seq_range(events: list[Event]) -> str:
    seqs = [e["seq"] for e in events if isinstance(e.get("seq"), int)]
    if not seqs:
        return "its conversation has no events"
    return f"its seqs run from {min(seqs)} to {max(seqs)} ({len(seqs)} events)"


def _is_message(event: Event) -> bool:
    return str(event.get("type", "")).endswith("/message")


def _searchable(event: Event) -> bool:
    return _is_message(event) or event.get("type") in ("tool/call", "tool/result")


def _result_tools(events: list[Event]) -> dict[int, str]:
    """Position of each paired tool result → the name of the tool it answers, paired by the
    session layer's one rule (`events.Pairer`)."""
    return {
        pair.result_index: pair.name
        for pair in pair_tool_calls(events).calls
        if pair.result_index is not None
    }


def _tool(event: Event, index: int, tools: dict[int, str]) -> str | None:
    """The tool a call calls, or the one the result at `index` answers (None: unpaired)."""
    kind = event.get("type")
    if kind == "tool/call":
        return str((event.get("data") or {}).get("name", ""))
    if kind == "tool/result":
        return tools.get(index)
    return None


def _match(
    text: str, phrase: re.Pattern[str], terms: list[re.Pattern[str]]
) -> tuple[int, int] | None:
    """Where the query first occurs in `text`; else, when every term occurs, the first term
    occurrence; else None."""
    found = phrase.search(text)
    if found:
        return found.span()
    spans = []
    for term in terms:
        found = term.search(text)
        if found is None:
            return None
        spans.append(found.span())
    return min(spans)


def _snippet(text: str, span: tuple[int, int], context_chars: int) -> str:
    start = max(0, span[0] - context_chars)
    end = min(len(text), span[1] + context_chars)
    head = ELLIPSIS if start > 0 else ""
    tail = ELLIPSIS if end < len(text) else ""
    return f"{head}{text[start:end]}{tail}"
