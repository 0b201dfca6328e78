"""Gemini CLI chat recordings as dshkit's events: the mapping the Gemini adapter applies
(`sessions.gemini`), importable on the hot path (no orjson or dataclasses; `re` only for a
line that holds a person's words or the CLI's first context): graft's fold maps a recording's
new lines with it (`harnesses.EventLog.mapping`).

As 0.61.0 writes them (its ChatRecordingService, append-only): a first line of metadata
(`sessionId`, `projectHash`, `startTime`, `kind` "main" or "subagent"), then message records
`{id, timestamp, type, content, …}` and `{"$set": {…}}` metadata updates (`$rewindTo` after
a rewind). A message is written again, whole, under the same id each time it grows (its
tokens, its tool calls and their results): events are emitted once per message, tool call,
result and usage, by id. `type` "user" is the person's prompt, or the tool results sent
back (`functionResponse` parts); `<hook_context>` blocks in it are hooks' additional context
and the `<session_context>` the CLI sets up first arrives in a `$set` of `messages`: neither
is speech. `type` "gemini" is the model's answer (`content` its text, `thoughts`, `tokens`,
`toolCalls` with `result`); "info", "warning" and "error" are the CLI's own notices.
"""

from __future__ import annotations

from .mapping import AGENT_MESSAGE, SUBAGENT, remember, turn_step

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Mapped = list[tuple[str, Any]]  # (event kind, event data), in order

# A hook's additional context, as 0.61.0 puts it in the user message (escaped inside).
_HOOK_CONTEXT = r"<hook_context>.*?</hook_context>\s*"
_WORKSPACE = r"<session_context>.*?\*\*Workspace Directories:\*\*\n\s*- ([^\n]+)\n"
_NOTICES = frozenset({"info", "warning", "error"})
_KEEP = 4096  # ids remembered per kind (a message repeats while its turn goes on)


def events(record: Any, state: dict[str, Any], dumps: Callable[[Any], str]) -> Mapped:
    """The events one recording line maps to, in order, as (kind, data), `state` (the
    adapter's own, kept with the log's cursor) moved on; `dumps` writes a value as JSON text
    (a call's arguments, a tool's result that is not text)."""
    out: Mapped = []
    if not isinstance(record, dict):
        state["unknownLines"] = state.get("unknownLines", 0) + 1
    elif "$set" in record or "$rewindTo" in record:
        # Metadata; a `$set` of messages is the CLI's context or a rewrite, and the first one
        # is where the log says its working directory.
        if "cwd" not in state:
            _cwd(record, state)
    elif "sessionId" in record and "projectHash" in record:
        if SUBAGENT not in state:
            state[SUBAGENT] = record.get("kind") == "subagent"
    elif record.get("type") == "user":
        _user(record, state, out, dumps)
    elif record.get("type") == "gemini":
        _gemini(record, state, out, dumps)
    elif record.get("type") not in _NOTICES:
        state["unknownLines"] = state.get("unknownLines", 0) + 1
    return out


def _cwd(record: dict[str, Any], state: dict[str, Any]) -> None:
    """The first workspace directory of the `<session_context>` the CLI sets up first:
    the folder it runs in (0.61.0 writes no `cwd` of its own; `directories` only for a
    subagent)."""
    import re  # (once per session: its first `$set`)

    update = record.get("$set")
    messages = update.get("messages") if isinstance(update, dict) else None
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict):
            continue
        found = re.search(_WORKSPACE, _text(message.get("content")), re.S)
        if found:
            state["cwd"] = found.group(1).strip()
            return


def _user(
    record: dict[str, Any], state: dict[str, Any], out: Mapped, dumps: Callable[[Any], str]
) -> None:
    parts = _parts(record.get("content"))
    results = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
    for response in results:
        _result(response, state, out, dumps)
    if results or not remember(state, "messages", str(record.get("id")), _KEEP):
        return
    texts = [str(p["text"]) for p in parts if isinstance(p.get("text"), str)]
    if _continued(record, texts):  # an AfterAgent hook's reason, sent on as a prompt
        out.append(_runtime_context(texts))
        return
    import re  # (a person's words, or hooks' context: once a turn)

    typed = [
        t for t in (re.sub(_HOOK_CONTEXT, "", text, flags=re.S).strip() for text in texts) if t
    ]
    injected = [
        m.group(0).strip() for text in texts for m in re.finditer(_HOOK_CONTEXT, text, re.S)
    ]
    if typed:  # (a prompt: it begins a turn, as the adapter's state has always counted it)
        state["turn"] = state.get("turn", 0) + 1
        state["step"] = 0
        out.append(("turn/start", {"turn": state["turn"]}))
        kind = AGENT_MESSAGE if state.get(SUBAGENT) else "user"
        content = [{"type": "text", "text": "\n\n".join(typed)}]
        out.append(("user/message", {"role": "user", "content": content, "source": {"kind": kind}}))
    if injected:
        out.append(_runtime_context(injected))


def _gemini(
    record: dict[str, Any], state: dict[str, Any], out: Mapped, dumps: Callable[[Any], str]
) -> None:
    key = str(record.get("id"))
    if remember(state, "answers", key, _KEEP):
        state["step"] = state.get("step", 0) + 1
        content: list[dict[str, Any]] = []
        thoughts = [t for t in record.get("thoughts") or () if isinstance(t, dict)]
        reasoning = "\n".join(str(t.get("description") or t.get("subject") or "") for t in thoughts)
        if reasoning.strip():
            content.append({"type": "reasoning", "text": reasoning})
        text = _text(record.get("content"))
        if text:
            content.append({"type": "text", "text": text})
        if content:
            message = {"role": "assistant", "content": content}
            out.append(("assistant/message", {**turn_step(state), "message": message}))
    tokens = record.get("tokens")
    if isinstance(tokens, dict) and remember(state, "usage", key, _KEEP):
        cached = int(tokens.get("cached") or 0)
        usage = {
            # Gemini counts cached tokens inside the prompt's; dshkit's buckets do not overlap.
            "inputTokens": max(0, int(tokens.get("input") or 0) - cached),
            "outputTokens": int(tokens.get("output") or 0),
            "cacheReadTokens": cached,
            "cacheWriteTokens": 0,
            "reasoningTokens": int(tokens.get("thoughts") or 0),
        }
        out.append(("usage/record", {**turn_step(state), "usage": usage}))
    for call in record.get("toolCalls") or ():
        if not isinstance(call, dict):
            continue
        call_id = str(call.get("id") or "")
        if remember(state, "calls", call_id, _KEEP):
            arguments = dumps(call.get("args") or {})
            data = {
                **turn_step(state),
                "callId": call_id,
                "name": call.get("name"),
                "arguments": arguments,
            }
            out.append(("tool/call", data))
        for part in _parts(call.get("result")):
            if isinstance(part.get("functionResponse"), dict):
                _result(part["functionResponse"], state, out, dumps)


def _result(
    response: dict[str, Any], state: dict[str, Any], out: Mapped, dumps: Callable[[Any], str]
) -> None:
    call_id = str(response.get("id") or "")
    if not remember(state, "results", call_id, _KEEP):
        return
    body = response.get("response")
    failed = isinstance(body, dict) and "error" in body and "output" not in body
    if isinstance(body, dict) and isinstance(body.get("output" if not failed else "error"), str):
        text = str(body["output" if not failed else "error"])
    else:
        text = dumps(body)
    result = {
        "role": "tool",
        "source": {"kind": "tool", "callId": call_id},
        "content": [{"type": "text", "text": text}],
        "isError": failed,
    }
    out.append(("tool/result", {**turn_step(state), "message": result}))


def _continued(record: dict[str, Any], texts: list[str]) -> bool:
    """Whether a user message is a hook's continuation: 0.61.0 writes the reason an AfterAgent
    hook blocked with as the content and the person's prompt it answered as `displayContent`
    (a prompt of the person's own has no `displayContent`, or one its content holds)."""
    import re  # (a person's words: once a turn)

    shown = _text(record.get("displayContent")).strip()
    return bool(shown) and re.sub(_HOOK_CONTEXT, "", shown, flags=re.S).strip() not in "\n".join(
        texts
    )


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _text(content: Any) -> str:
    return "".join(str(p["text"]) for p in _parts(content) if isinstance(p.get("text"), str))


def _runtime_context(texts: list[str]) -> tuple[str, Any]:
    """A user-role message the harness itself wrote (hooks' context, a Stop hook's reason sent
    on as a prompt): runtime context, never the person's words."""
    content = [{"type": "text", "text": text} for text in texts]
    return "user/message", {
        "role": "user",
        "content": content,
        "source": {"kind": "runtime-context"},
    }
