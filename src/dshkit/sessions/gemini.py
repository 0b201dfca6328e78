"""Gemini CLI sessions: `<root>/<project slug>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`.

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

The session id is the CLI's own, the one its hooks' payloads carry, read from the first line
(the file's name holds only 8 characters of it; a file whose first line cannot be read goes by
its name without `.jsonl`); the project is the slug directory (`.project_root` in it names
the folder).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any, ClassVar

import orjson

from .events import AGENT_MESSAGE, SUBAGENT, Event
from .harness import LogFile, emit, list_dirs, list_files, remember, turn_step

_SESSION = re.compile(r"^(session-.+)\.jsonl$")
# A hook's additional context, as 0.61.0 puts it in the user message (escaped inside).
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.S)
_WORKSPACE = re.compile(
    r"<session_context>.*?\*\*Workspace Directories:\*\*\n\s*- ([^\n]+)\n", re.S
)
_NOTICES = frozenset({"info", "warning", "error"})
_KEEP = 4096  # ids remembered per kind (a message repeats while its turn goes on)


class GeminiAdapter:
    name: ClassVar[str] = "gemini"
    strict_lines: ClassVar[bool] = False

    def discover(self, root: str, links: list[str] | None = None) -> Iterator[LogFile]:
        for project in list_dirs(root, links):
            for entry in list_files(f"{project.path}/chats"):
                match = _SESSION.match(entry.name)
                if match:
                    session = _session_id(entry.path, match.group(1))
                    yield LogFile(entry.path, self.name, session, project.name, root)

    def log_file(self, path: str) -> LogFile | None:
        parts = path.rstrip("/").split("/")
        match = _SESSION.match(parts[-1])
        if match is None or len(parts) < 4 or parts[-2] != "chats":
            return None
        session = _session_id(path, match.group(1))
        return LogFile(path, self.name, session, parts[-3], "/".join(parts[:-3]) or "/")

    def normalize(self, records: list[Any], state: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        for record in records:
            if not isinstance(record, dict):
                state["unknownLines"] = state.get("unknownLines", 0) + 1
            elif "$set" in record or "$rewindTo" in record:
                # Metadata; a `$set` of messages is the CLI's context or a rewrite, and the
                # first one is where the log says its working directory.
                if "cwd" not in state:
                    self._cwd(record, state)
            elif "sessionId" in record and "projectHash" in record:
                if SUBAGENT not in state:
                    state[SUBAGENT] = record.get("kind") == "subagent"
            elif record.get("type") == "user":
                self._user(record, state, out)
            elif record.get("type") == "gemini":
                self._gemini(record, state, out)
            elif record.get("type") not in _NOTICES:
                state["unknownLines"] = state.get("unknownLines", 0) + 1
        return out

    def _cwd(self, record: dict[str, Any], state: dict[str, Any]) -> None:
        """The first workspace directory of the `<session_context>` the CLI sets up first:
        the folder it runs in (0.61.0 writes no `cwd` of its own; `directories` only for a
        subagent)."""
        update = record.get("$set")
        messages = update.get("messages") if isinstance(update, dict) else None
        for message in messages if isinstance(messages, list) else ():
            if not isinstance(message, dict):
                continue
            found = _WORKSPACE.search(_text(message.get("content")))
            if found:
                state["cwd"] = found.group(1).strip()
                return

    def _user(self, record: dict[str, Any], state: dict[str, Any], out: list[Event]) -> None:
        parts = _parts(record.get("content"))
        results = [
            p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)
        ]
        for response in results:
            self._result(record, response, state, out)
        if results or not remember(state, "messages", str(record.get("id")), _KEEP):
            return
        texts = [str(p["text"]) for p in parts if isinstance(p.get("text"), str)]
        if _continued(record, texts):  # an AfterAgent hook's reason, sent on as a prompt
            _runtime_context(texts, record, state, out)
            return
        typed = [t for t in (_HOOK_CONTEXT.sub("", text).strip() for text in texts) if t]
        injected = [m.group(0).strip() for text in texts for m in _HOOK_CONTEXT.finditer(text)]
        if typed:
            state["turn"] = state.get("turn", 0) + 1
            state["step"] = 0
            kind = AGENT_MESSAGE if state.get(SUBAGENT) else "user"
            content = [{"type": "text", "text": "\n\n".join(typed)}]
            emit(
                out,
                state,
                "user/message",
                record,
                {"role": "user", "content": content, "source": {"kind": kind}},
            )
        if injected:
            _runtime_context(injected, record, state, out)

    def _gemini(self, record: dict[str, Any], state: dict[str, Any], out: list[Event]) -> None:
        key = str(record.get("id"))
        if remember(state, "answers", key, _KEEP):
            state["step"] = state.get("step", 0) + 1
            content: list[dict[str, Any]] = []
            thoughts = [t for t in record.get("thoughts") or () if isinstance(t, dict)]
            reasoning = "\n".join(
                str(t.get("description") or t.get("subject") or "") for t in thoughts
            )
            if reasoning.strip():
                content.append({"type": "reasoning", "text": reasoning})
            text = _text(record.get("content"))
            if text:
                content.append({"type": "text", "text": text})
            if content:
                message = {"role": "assistant", "content": content}
                emit(
                    out,
                    state,
                    "assistant/message",
                    record,
                    {**turn_step(state), "message": message},
                )
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
            emit(out, state, "usage/record", record, {**turn_step(state), "usage": usage})
        for call in record.get("toolCalls") or ():
            if not isinstance(call, dict):
                continue
            call_id = str(call.get("id") or "")
            if remember(state, "calls", call_id, _KEEP):
                arguments = orjson.dumps(call.get("args") or {}).decode()
                data = {
                    **turn_step(state),
                    "callId": call_id,
                    "name": call.get("name"),
                    "arguments": arguments,
                }
                emit(out, state, "tool/call", record, data)
            for part in _parts(call.get("result")):
                if isinstance(part.get("functionResponse"), dict):
                    self._result(record, part["functionResponse"], state, out)

    def _result(
        self,
        record: dict[str, Any],
        response: dict[str, Any],
        state: dict[str, Any],
        out: list[Event],
    ) -> None:
        call_id = str(response.get("id") or "")
        if not remember(state, "results", call_id, _KEEP):
            return
        body = response.get("response")
        failed = isinstance(body, dict) and "error" in body and "output" not in body
        if isinstance(body, dict) and isinstance(
            body.get("output" if not failed else "error"), str
        ):
            text = str(body["output" if not failed else "error"])
        else:
            text = orjson.dumps(body).decode()
        result = {
            "role": "tool",
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "text", "text": text}],
            "isError": failed,
        }
        emit(out, state, "tool/result", record, {**turn_step(state), "message": result})


_HEAD = 4096  # the first line, metadata only, is far shorter
_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def _session_id(path: str, fallback: str) -> str:
    """The `sessionId` of the log's first line (read-only, never through a link), else
    `fallback`."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return fallback
    try:
        head = os.read(fd, _HEAD)
    except OSError:
        return fallback
    finally:
        os.close(fd)
    line, newline, _ = head.partition(b"\n")
    try:
        first = orjson.loads(line) if newline else None
    except orjson.JSONDecodeError:
        return fallback
    found = first.get("sessionId") if isinstance(first, dict) else None
    return found if isinstance(found, str) and found else fallback


def _continued(record: dict[str, Any], texts: list[str]) -> bool:
    """Whether a user message is a hook's continuation: 0.61.0 writes the reason an AfterAgent
    hook blocked with as the content and the person's prompt it answered as `displayContent`
    (a prompt of the person's own has no `displayContent`, or one its content holds)."""
    shown = _text(record.get("displayContent")).strip()
    return bool(shown) and _HOOK_CONTEXT.sub("", shown).strip() not in "\n".join(texts)


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _text(content: Any) -> str:
    return "".join(str(p["text"]) for p in _parts(content) if isinstance(p.get("text"), str))


def _runtime_context(
    texts: list[str], record: dict[str, Any], state: dict[str, Any], out: list[Event]
) -> None:
    """A user-role message the harness itself wrote (hooks' context, a Stop hook's reason sent
    on as a prompt): emitted as runtime context, never as the person's words."""
    content = [{"type": "text", "text": text} for text in texts]
    data = {"role": "user", "content": content, "source": {"kind": "runtime-context"}}
    emit(out, state, "user/message", record, data)
