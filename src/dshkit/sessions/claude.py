"""Claude Code transcripts: `<root>/<encoded cwd>/<session>.jsonl` and its subagent files.

Each line is one entry (`user`, `assistant`, `attachment`, `system`, …). Only typed prompts
become human messages: tool results, meta entries, compaction summaries, slash-command
wrappers, subagent prompts and hook context are recorded under other source kinds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, ClassVar

import orjson

from ..harnesses.claude import REMINDER, SKIPPED_TYPES, SYNTHETIC_MODEL, user_source
from .events import Event
from .harness import LogFile, emit, list_dirs, list_files, real_dir, remember, turn_step

# Entry types this adapter knows and deliberately leaves out of the event stream.
_IGNORED = SKIPPED_TYPES


class ClaudeAdapter:
    name: ClassVar[str] = "claude"
    strict_lines: ClassVar[bool] = False

    def discover(self, root: str, links: list[str] | None = None) -> Iterator[LogFile]:
        for project in list_dirs(root, links):
            for entry in list_files(project.path):
                if entry.name.endswith(".jsonl"):
                    yield LogFile(entry.path, self.name, entry.name[:-6], project.name, root)
            # Subagent transcripts live beside, under `<session>/subagents/` (a directory of
            # its own: a link there is not followed).
            for session_dir in list_dirs(project.path, links):
                subagents = os.path.join(session_dir.path, "subagents")
                for entry in list_files(subagents) if real_dir(subagents, links) else ():
                    if entry.name.endswith(".jsonl"):
                        yield LogFile(entry.path, self.name, session_dir.name, project.name, root)

    def log_file(self, path: str) -> LogFile | None:
        name = os.path.basename(path)
        parent = os.path.dirname(path)
        if not name.endswith(".jsonl"):
            return None
        if self.side_file(path):  # <project>/<session>/subagents/<agent>.jsonl
            session_dir = os.path.dirname(parent)
            project_dir = os.path.dirname(session_dir)
            session_id = os.path.basename(session_dir)
        else:
            project_dir, session_id = parent, name[:-6]
        project = os.path.basename(project_dir)
        return LogFile(path, self.name, session_id, project, os.path.dirname(project_dir))

    def side_file(self, path: str) -> bool:
        """Subagent transcripts (`<session>/subagents/*.jsonl`) are side files of the session."""
        return os.path.basename(os.path.dirname(path)) == "subagents"

    def normalize(self, records: list[Any], state: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        for record in records:
            kind = record.get("type") if isinstance(record, dict) else None
            if kind == "user":
                self._user(record, state, out)
            elif kind == "assistant":
                self._assistant(record, state, out)
            elif kind == "attachment":
                self._attachment(record, state, out)
            elif kind == "summary":
                emit(out, state, "session/title", record, {"title": record.get("summary", "")})
            elif kind not in _IGNORED:
                state["unknownLines"] = state.get("unknownLines", 0) + 1
            if isinstance(record, dict) and record.get("cwd"):
                state["cwd"] = record["cwd"]
        return out

    def _user(self, record: dict[str, Any], state: dict[str, Any], out: list[Event]) -> None:
        message = record.get("message") or {}
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        texts: list[dict[str, Any]] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id", ""))
                result = {
                    "role": "tool",
                    "source": {"kind": "tool", "callId": call_id},
                    "content": _result_content(block.get("content")),
                    "isError": block.get("is_error") is True,
                }
                emit(out, state, "tool/result", record, {**turn_step(state), "message": result})
            elif block.get("type") == "text":
                text = str(block.get("text", ""))
                if not text.lstrip().startswith(REMINDER):
                    texts.append({"type": "text", "text": text})
        if not texts:
            return
        source = user_source(record, texts[0]["text"])
        if source == "user":
            state["turn"] = state.get("turn", 0) + 1
            state["step"] = 0
            emit(out, state, "turn/start", record, {"turn": state["turn"]})
        data = {"role": "user", "content": texts, "source": {"kind": source}}
        if record.get("uuid"):
            data["id"] = record["uuid"]
        emit(out, state, "user/message", record, data)

    def _assistant(self, record: dict[str, Any], state: dict[str, Any], out: list[Event]) -> None:
        message = record.get("message") or {}
        request = str(record.get("requestId") or message.get("id") or "")
        fresh = not request or remember(state, "requests", request)
        if fresh:
            state["step"] = state.get("step", 0) + 1
        content: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        for block in message.get("content") or ():
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                content.append({"type": "text", "text": block.get("text", "")})
            elif kind == "thinking":
                content.append({"type": "reasoning", "text": block.get("thinking", "")})
            elif kind == "tool_use":
                arguments = orjson.dumps(block.get("input") or {}).decode()
                call = {"id": block.get("id"), "name": block.get("name"), "arguments": arguments}
                content.append({"type": "tool-call", **call})
                calls.append(call)
        data: dict[str, Any] = {
            **turn_step(state),
            "message": {
                "role": "assistant",
                "content": content,
                "source": {"kind": "model", "model": message.get("model")},
            },
        }
        if message.get("model") == SYNTHETIC_MODEL:
            # Written by the CLI, not by a model ("No response requested.", an API error):
            # never the model's words (its last ones, an answer to a turn).
            data["synthetic"] = True
            if record.get("isApiErrorMessage") is True:
                text = " ".join(str(block.get("text", "")) for block in content).strip()
                data["error"] = {
                    "code": str(record.get("error") or "api_error"),
                    "message": text or "API Error",
                }
        usage = message.get("usage")
        # Every line of one request repeats the request's usage: count it once.
        if fresh and isinstance(usage, dict):
            data["usage"] = {
                "inputTokens": usage.get("input_tokens") or 0,
                "outputTokens": usage.get("output_tokens") or 0,
                "cacheReadTokens": usage.get("cache_read_input_tokens") or 0,
                "cacheWriteTokens": usage.get("cache_creation_input_tokens") or 0,
            }
        emit(out, state, "assistant/message", record, data)
        for call in calls:
            call_data = {**turn_step(state), "callId": call["id"], "name": call["name"]}
            emit(out, state, "tool/call", record, {**call_data, "arguments": call["arguments"]})

    def _attachment(self, record: dict[str, Any], state: dict[str, Any], out: list[Event]) -> None:
        attachment = record.get("attachment") or {}
        if attachment.get("type") != "hook_additional_context":
            return
        raw = attachment.get("content")
        text = "\n".join(map(str, raw)) if isinstance(raw, list) else str(raw or "")
        data = {
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "hook", "hookEvent": attachment.get("hookEvent")},
        }
        emit(out, state, "user/message", record, data)


def _result_content(raw: Any) -> list[dict[str, Any]]:
    if isinstance(raw, str):
        return [{"type": "text", "text": raw}]
    return [block for block in raw or () if isinstance(block, dict)]
