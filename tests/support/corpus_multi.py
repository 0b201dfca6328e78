"""Writes Claude Code transcripts, Codex rollouts, and a three-harness corpus at scale.

For tests and benchmarks: deterministic from a seed, and written line by line as it is made,
so a session of any size costs little memory. Lines are shaped like the real ones
(tests/data/fixtures, ../shared/notes/real-clis-offline.md): Claude Code `user`/`assistant`
entries with usage repeated across the lines of one request, tool_use/tool_result pairs,
hook attachments, meta and command entries, compaction summaries, subagent transcripts;
Codex `session_meta`, `turn_context`, `response_item`, `event_msg` and `token_usage_record`
lines. Each writer counts, as it writes, what the session layer must find (sessions,
events, human messages) from what each line *is*, not by running the adapters: only typed
prompts are human speech.
"""

from __future__ import annotations

import base64
import math
import os
import random
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from .corpus import Corpus, CorpusStats, text

CLAUDE_VERSION = "2.1.332"
CODEX_VERSION = "0.171.0"
CONTEXT_WINDOW = 258_400
_START = 1_790_000_000_000
_DELEGATE = "这个需要你手动处理：请你去控制台确认一下部署配置，然后告诉我结果。"
_ASK = {
    "question": "要不要我先跑一遍测试？",
    "header": "测试",
    "options": [
        {"label": "是", "description": "先跑测试"},
        {"label": "否", "description": "直接提交"},
    ],
    "multiSelect": False,
}
_BASE_INSTRUCTIONS = (
    "You are a coding agent running in the Codex CLI, a terminal-based coding assistant. "
    "You are expected to be precise, safe, and helpful.\n\n"
) * 24


def iso(ms: int) -> str:
    """`2026-11-30T04:13:07.724Z` for epoch milliseconds, as both harnesses write it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def claude_project(cwd: str) -> str:
    """Claude Code's directory name for a cwd: every non-alphanumeric character becomes `-`."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


class _Lines:
    """One JSONL log being written, and what the session layer must find in it."""

    def __init__(self, path: Path, stats: CorpusStats) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.handle: BinaryIO = open(path, "wb")  # noqa: SIM115 (closed by close())
        self.stats = stats
        self.bytes = 0
        self.parent: str | None = None  # Claude Code chains entries by uuid
        self.sidechain = False  # a Claude Code subagent's transcript
        stats.files += 1

    def put(self, record: dict[str, Any], events: int = 0, human: int = 0) -> None:
        """Write one line that the adapter maps to `events` events, `human` of them human."""
        self.bytes += self.handle.write(orjson.dumps(record) + b"\n")
        self.stats.events += events
        self.stats.human_messages += human

    def close(self) -> None:
        self.handle.close()
        self.stats.bytes += self.bytes


class _Writer:
    """What both transcript writers share: a seeded generator and a clock."""

    def __init__(self, root: Path, seed: int | str = 0, clock: int = _START) -> None:
        self.root = Path(root)
        self.rng = random.Random(seed)
        self.clock = clock

    def _tick(self, low: int = 20, high: int = 3000) -> int:
        self.clock += self.rng.randint(low, high)
        return self.clock

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _text(self, nbytes: int) -> str:
        return text(self.rng, nbytes)

    def _tool_output(self) -> str:
        # Tool output dominates real transcripts: mostly small, now and then a whole file.
        return self._text(min(40_000, int(self.rng.lognormvariate(7.0, 1.2))))

    def _duration(self) -> int:
        """How long a command runs: mostly seconds, sometimes minutes (a long tool)."""
        if self.rng.random() < 0.03:
            return self.rng.randint(65_000, 400_000)
        return self.rng.randint(50, 8_000)

    def generate(
        self, sessions: int, target_bytes: int, first_index: int = 0
    ) -> tuple[CorpusStats, list[Path]]:
        """`sessions` sessions of about `target_bytes` each; their stats and files."""
        stats = CorpusStats()
        files: list[Path] = []
        for index in range(first_index, first_index + sessions):
            files += self.session(index, target_bytes, stats)
        return stats, files

    def session(self, index: int, target_bytes: int, stats: CorpusStats) -> list[Path]:
        raise NotImplementedError


class ClaudeCorpus(_Writer):
    """Claude Code transcripts: `<root>/<encoded cwd>/<session>.jsonl` (+ `subagents/`)."""

    def session(self, index: int, target_bytes: int, stats: CorpusStats) -> list[Path]:
        """Write one session of about `target_bytes` (all its files); returns its files."""
        rng = self.rng
        cwd = f"/home/dev/project-{index % 23}"
        session_id = self._uuid()
        project = self.root / claude_project(cwd)
        self.common = {
            "userType": "external",
            "entrypoint": "cli",
            "cwd": cwd,
            "sessionId": session_id,
            "version": CLAUDE_VERSION,
            "gitBranch": "main",
        }
        self.subagents = project / session_id / "subagents"
        self.stats = stats
        self.files: list[Path] = []
        self.written = 0
        out = self._open(project / f"{session_id}.jsonl")
        stats.sessions += 1
        if rng.random() < 0.05:  # a resumed session starts with its title
            out.put({"type": "summary", "summary": self._text(40), "leafUuid": self._uuid()}, 1)
        prompt = self._text(rng.choice((20, 80, 300)))
        for operation in ("enqueue", "dequeue"):
            queued = {"type": "queue-operation", "operation": operation}
            out.put({**queued, "timestamp": iso(self._tick()), "sessionId": session_id})
        while True:
            self._turn(out, prompt)
            if self.written + out.bytes >= target_bytes:
                break
            prompt = self._text(rng.choice((20, 80, 300, 1200)))
        out.put({"type": "last-prompt", "lastPrompt": prompt[:200], "sessionId": session_id})
        out.close()
        return self.files

    def _open(self, path: Path) -> _Lines:
        self.files.append(path)
        lines = _Lines(path, self.stats)
        lines.sidechain = path.parent == self.subagents
        return lines

    def _entry(
        self, out: _Lines, kind: str, fields: dict[str, Any], events: int, human: int = 0
    ) -> None:
        uid = self._uuid()
        record = {
            "parentUuid": out.parent,
            "isSidechain": out.sidechain,
            **fields,
            "type": kind,
            "uuid": uid,
            "timestamp": iso(self.clock),
            **self.common,
        }
        out.parent = uid
        out.put(record, events, human)

    def _user(self, out: _Lines, content: Any, events: int, human: int = 0, **extra: Any) -> None:
        fields = {**extra, "message": {"role": "user", "content": content}}
        self._entry(out, "user", fields, events, human)

    def _turn(self, out: _Lines, prompt: str) -> None:
        rng = self.rng
        self._tick(2_000, 120_000)
        content: Any = prompt
        if rng.random() < 0.1:
            reminder = f"<system-reminder>{self._text(200)}</system-reminder>"
            content = [{"type": "text", "text": reminder}, {"type": "text", "text": prompt}]
        # The person's prompt: a turn/start and a human user/message.
        self._user(out, content, 2, 1, promptId=self._uuid(), permissionMode="default")
        if rng.random() < 0.15:
            hook = {
                "type": "hook_additional_context",
                "content": [self._text(300)],
                "hookEvent": "UserPromptSubmit",
            }
            self._entry(out, "attachment", {"attachment": hook}, 1)
        if rng.random() < 0.1:
            listing = {"type": "skill_listing", "content": self._text(600)}
            self._entry(out, "attachment", {"attachment": listing}, 0)
        streak = rng.random() < 0.03  # the same command failing again and again
        for step in range(3 if streak else rng.randint(0, 4)):
            self._request(out, tool=True, fail=streak or None, streak=step if streak else None)
        self._request(out, tool=False)
        self._extras(out)

    def _extras(self, out: _Lines) -> None:
        """Entries between turns that are not the person's speech."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.02:
            self._user(out, [{"type": "text", "text": "[Request interrupted by user]"}], 1)
        elif roll < 0.04:
            caveat = "Caveat: The messages below were generated by the user while running local "
            self._user(out, caveat + "commands. DO NOT respond to these messages.", 1, isMeta=True)
            command = "<command-name>/compact</command-name>\n<command-message>compact"
            self._user(out, command + "</command-message>\n<command-args></command-args>", 1)
            self._user(out, "<local-command-stdout>Compacted</local-command-stdout>", 1)
            boundary = {"subtype": "compact_boundary", "content": "Conversation compacted"}
            self._entry(out, "system", boundary, 0)
            summary = "This session is being continued from a previous conversation. "
            self._user(out, summary + self._text(1500), 1, isCompactSummary=True)
        elif roll < 0.06:
            reminder = f"<system-reminder>{self._text(150)}</system-reminder>"
            self._user(out, [{"type": "text", "text": reminder}], 0)  # nothing left to map
        elif roll < 0.2:
            snapshot = {"messageId": self._uuid(), "trackedFileBackups": {}, "timestamp": ""}
            out.put({"type": "file-history-snapshot", "snapshot": snapshot})
        elif roll < 0.21:
            out.put({"type": "mode-change-from-the-future", "mode": "x"})  # skipped, counted

    def _request(
        self, out: _Lines, tool: bool, fail: bool | None = None, streak: int | None = None
    ) -> None:
        """One model request: its assistant lines (sharing id and usage), then tool results."""
        rng = self.rng
        self._tick(500, 20_000)
        usage = {
            "input_tokens": rng.randint(3, 4000),
            "cache_creation_input_tokens": rng.randint(0, 8000),
            "cache_read_input_tokens": rng.randint(0, 150_000),
            "output_tokens": rng.randint(5, 2000),
            "service_tier": "standard",
        }
        message = {
            "id": f"msg_{rng.getrandbits(96):024x}",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "stop_reason": "tool_use" if tool else "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        request = f"req_{rng.getrandbits(96):024x}"

        def line(*blocks: dict[str, Any], events: int = 1) -> None:
            fields = {"message": {**message, "content": list(blocks)}, "requestId": request}
            self._entry(out, "assistant", fields, events)

        if rng.random() < 0.3:
            signature = base64.b64encode(rng.randbytes(96)).decode()
            line({"type": "thinking", "thinking": self._text(400), "signature": signature})
        if not tool or rng.random() < 0.6:
            said = self._text(rng.choice((60, 200, 800)))
            if not tool and rng.random() < 0.05:
                said += _DELEGATE
            line({"type": "text", "text": said})
        if not tool:
            return
        calls = [self._call(streak) for _ in range(2 if rng.random() < 0.1 else 1)]
        for call in calls:  # each tool_use block on its own line: a message and a call
            self._tick(100, 2000)
            line(
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["name"],
                    "input": call["input"],
                },
                events=2,
            )
        started = self.clock
        for call in calls:
            self._result(out, call, fail, started)

    def _call(self, streak: int | None) -> dict[str, Any]:
        rng = self.rng
        call_id = f"toolu_{rng.getrandbits(96):024x}"
        roll = rng.random()
        if streak is not None or roll < 0.35:
            command = "make test" if streak is not None else self._text(40)
            return {"id": call_id, "name": "Bash", "input": {"command": command}}
        path = f"/home/dev/src/{rng.getrandbits(24):06x}.py"
        if roll < 0.65:
            return {"id": call_id, "name": "Read", "input": {"file_path": path}}
        if roll < 0.8:
            edit = {"file_path": path, "old_string": self._text(80), "new_string": self._text(90)}
            return {"id": call_id, "name": "Edit", "input": edit}
        if roll < 0.93:
            return {"id": call_id, "name": "Grep", "input": {"pattern": self._text(12)}}
        if roll < 0.99:
            return {"id": call_id, "name": "AskUserQuestion", "input": {"questions": [_ASK]}}
        task = {
            "description": self._text(30),
            "prompt": self._text(300),
            "subagent_type": "Explore",
        }
        return {"id": call_id, "name": "Task", "input": task}

    def _result(self, out: _Lines, call: dict[str, Any], fail: bool | None, started: int) -> None:
        rng = self.rng
        name = call["name"]
        failed = fail if fail is not None else name == "Bash" and rng.random() < 0.08
        took = self._duration() if name == "Bash" else rng.randint(20, 900)
        self.clock = max(self.clock, started + took)
        if name == "Task":
            self._subagent(call)
        if name == "AskUserQuestion":
            output = 'User has answered your questions: "要不要我先跑一遍测试？"="是".'
            detail: dict[str, Any] = {"answers": {_ASK["question"]: "是"}}
        elif name == "Bash":
            output = ("Exit code 1\n" if failed else "") + self._tool_output()
            detail = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        else:
            output = self._tool_output()
            detail = {"type": "text", "file": {"filePath": call["input"].get("file_path", "")}}
            detail["file"]["content"] = output
        block = {"tool_use_id": call["id"], "type": "tool_result", "content": output}
        if failed:
            block["is_error"] = True
        self._user(out, [block], 1, toolUseResult=detail)  # one tool/result

    def _subagent(self, call: dict[str, Any]) -> None:
        """A subagent's own transcript: its prompt is not the person's, its tools are real."""
        agent = self._open(self.subagents / f"agent-{self.rng.getrandbits(32):08x}.jsonl")
        saved = self.clock
        self._user(agent, call["input"]["prompt"], 1, agentId=agent.path.stem[6:])
        for _ in range(self.rng.randint(1, 3)):
            self._request(agent, tool=True)
        self._request(agent, tool=False)
        agent.close()
        self.written += agent.bytes
        self.clock = max(self.clock, saved)


class CodexCorpus(_Writer):
    """Codex rollouts: `<root>/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`."""

    def session(self, index: int, target_bytes: int, stats: CorpusStats) -> list[Path]:
        """Write one rollout of about `target_bytes`; returns its file."""
        rng = self.rng
        session_id = self._uuid()
        cwd = f"/home/dev/project-{index % 23}"
        day = time.gmtime(self.clock // 1000)
        stamp = time.strftime("%Y-%m-%dT%H-%M-%S", day)
        path = self.root / time.strftime("%Y/%m/%d", day) / f"rollout-{stamp}-{session_id}.jsonl"
        out = _Lines(path, stats)
        self.ordinal = 0
        stats.sessions += 1
        meta = {
            "id": session_id,
            "session_id": session_id,
            "timestamp": iso(self.clock),
            "cwd": cwd,
            "originator": "codex_cli_rs",
            "cli_version": CODEX_VERSION,
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": _BASE_INSTRUCTIONS},
            "git": {"commit_hash": f"{rng.getrandbits(160):040x}", "branch": "main"},
        }
        self._line(out, "session_meta", meta, 0)
        turn = 0
        while turn == 0 or out.bytes < target_bytes:
            self._turn(out, turn, cwd)
            turn += 1
        out.close()
        return [path]

    def _line(
        self, out: _Lines, kind: str, payload: dict[str, Any], events: int, human: int = 0
    ) -> None:
        record = {
            "timestamp": iso(self.clock),
            "ordinal": self.ordinal,
            "type": kind,
            "payload": payload,
        }
        self.ordinal += 1
        out.put(record, events, human)

    def _message(
        self, out: _Lines, role: str, texts: list[str], events: int, human: int = 0, **extra: Any
    ) -> None:
        kind = "output_text" if role == "assistant" else "input_text"
        payload = {
            "type": "message",
            "id": f"msg_{self.rng.getrandbits(96):024x}",
            "role": role,
            "content": [{"type": kind, "text": t} for t in texts],
            **extra,
        }
        self._line(out, "response_item", payload, events, human)

    def _turn(self, out: _Lines, turn: int, cwd: str) -> None:
        rng = self.rng
        self._tick(2_000, 120_000)
        turn_id = self._uuid()
        started = {
            "type": "task_started",
            "turn_id": turn_id,
            "model_context_window": CONTEXT_WINDOW,
        }
        # A turn/start; the first turn also tells the window (request/context).
        self._line(out, "event_msg", started, 2 if turn == 0 else 1)
        context = {
            "turn_id": turn_id,
            "cwd": cwd,
            "approval_policy": "on-request",
            "model": "gpt-5.5",
        }
        self._line(out, "turn_context", context, 0)
        if turn == 0:
            permissions = f"<permissions instructions>{self._text(800)}</permissions instructions>"
            self._message(out, "developer", [permissions], 1)  # a developer/message
            environment = f"<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>"
            self._message(out, "user", [environment], 1)  # context, not speech
            if rng.random() < 0.3:
                agents = f"# AGENTS.md instructions for {cwd}\n\n{self._text(600)}"
                self._message(out, "user", [agents], 1)
            self._line(out, "world_state", {"full": True, "state": {"cwd": cwd}}, 0)
        prompt = self._text(rng.choice((20, 80, 300, 1200)))
        roll = rng.random()
        if roll < 0.8:  # provenance recorded: the item is the person's
            provenance = {"content_item_metadata": [{"provenance": {"type": "user"}}]}
            meta = {
                "internal_chat_message_metadata_passthrough": {"turn_id": turn_id, **provenance}
            }
            self._message(out, "user", [prompt], 1, 1, **meta)
        elif roll < 0.9:  # an older version: no provenance, known tags tell context apart
            self._message(out, "user", [prompt], 1, 1)
        else:  # one message holding context and speech: two user/message events
            instructions = f"<user_instructions>{self._text(200)}</user_instructions>"
            self._message(out, "user", [instructions, prompt], 2, 1)
        self._line(out, "event_msg", {"type": "user_message", "message": prompt, "images": []}, 0)
        streak = rng.random() < 0.03
        for _ in range(3 if streak else rng.randint(0, 4)):
            self._step(out, turn_id, fail=True if streak else None)
        self._tick()
        self._message(out, "assistant", [self._text(rng.choice((60, 200, 800)))], 1)
        self._usage(out, turn_id)
        if rng.random() < 0.05:
            self._line(out, "event_msg", {"type": "turn_aborted", "turn_id": turn_id}, 1)
            aborted = "<turn_aborted>The user interrupted the previous turn.</turn_aborted>"
            self._message(out, "user", [aborted], 1)
        else:
            done = {"type": "task_complete", "turn_id": turn_id, "last_agent_message": ""}
            self._line(out, "event_msg", done, 1)  # a turn/end
        if rng.random() < 0.01:
            self._line(out, "compacted", {"message": self._text(600), "replacement_history": []}, 0)
        if rng.random() < 0.01:
            self._line(out, "rollout_thing_from_the_future", {"x": 1}, 0)  # skipped, counted

    def _step(self, out: _Lines, turn_id: str, fail: bool | None) -> None:
        rng = self.rng
        self._tick(300, 15_000)
        summary = [] if rng.random() < 0.3 else [{"type": "summary_text", "text": self._text(200)}]
        encrypted = base64.b64encode(rng.randbytes(600)).decode()
        reasoning = {"type": "reasoning", "summary": summary, "encrypted_content": encrypted}
        self._line(out, "response_item", reasoning, 1 if summary else 0)
        call_id = f"call_{rng.getrandbits(96):024x}"
        roll = rng.random()
        if fail is None and roll < 0.15:
            patch = f"*** Begin Patch\n*** Update File: src/a.py\n{self._text(600)}\n*** End Patch"
            call = {
                "type": "custom_tool_call",
                "call_id": call_id,
                "name": "apply_patch",
                "input": patch,
            }
            self._line(out, "response_item", call, 1)
            self._tick()
            output = {"type": "custom_tool_call_output", "call_id": call_id, "output": "Success."}
            self._line(out, "response_item", output, 1)
        elif fail is None and roll < 0.18:
            ask = {"questions": [{**_ASK, "id": "q1"}]}
            name, arguments = "request_user_input", orjson.dumps(ask).decode()
            self._exec(out, call_id, name, arguments, failed=False, answer="是")
        else:
            command = "make test" if fail else self._text(40)
            arguments = orjson.dumps({"cmd": command, "workdir": "/home/dev"}).decode()
            failed = fail if fail is not None else rng.random() < 0.08
            self._exec(out, call_id, "exec_command", arguments, failed, None)
        self._usage(out, turn_id)

    def _exec(
        self, out: _Lines, call_id: str, name: str, arguments: str, failed: bool, answer: str | None
    ) -> None:
        call = {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}
        self._line(out, "response_item", call, 1)  # a tool/call
        self.clock += self._duration() if answer is None else self.rng.randint(2_000, 60_000)
        body = answer or self._tool_output()
        ended = {"type": "exec_command_end", "call_id": call_id, "aggregated_output": body}
        self._line(out, "event_msg", ended, 0)
        code = 1 if failed else 0
        text_output = f"Wall time: 0.4 seconds\nProcess exited with code {code}\nOutput:\n{body}"
        output: Any = {"content": text_output, "success": False} if failed else text_output
        result = {"type": "function_call_output", "call_id": call_id, "output": output}
        self._line(out, "response_item", result, 1)  # a tool/result

    def _usage(self, out: _Lines, turn_id: str) -> None:
        rng = self.rng
        usage = {
            "input_tokens": rng.randint(2_000, 120_000),
            "cached_input_tokens": rng.randint(0, 1_500),
            "output_tokens": rng.randint(5, 3_000),
            "reasoning_output_tokens": rng.randint(0, 1_000),
        }
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        response_id = f"resp_{rng.getrandbits(96):024x}"
        record = {"turn_id": turn_id, "response_id": response_id, "usage": usage}
        self._line(out, "token_usage_record", record, 1)  # a usage/record
        # Reported again by token_count: not counted twice, the window has not changed.
        info = {"last_token_usage": usage, "model_context_window": CONTEXT_WINDOW}
        self._line(out, "event_msg", {"type": "token_count", "info": info}, 0)


# -- the three harnesses at scale ---------------------------------------------------------

# Session i belongs to MIX[i % 5]: 40% DSH, 40% Claude Code, 20% Codex, interleaved so that
# any prefix of the sessions has the same mix and the same spread of sizes.
MIX = ("dsh", "claude", "codex", "dsh", "claude")
ROOTS = {"dsh": "dsh", "claude": "claude", "codex": "codex"}
_SIZE_SIGMA = 1.0  # session sizes are log-normal: many small sessions, a few big ones
_SIZE_CAP = 24.0  # times the mean
# DSH tools at scale: asking the person is rarer than `Corpus`'s even choice (1 in 6), whose
# answers, random words, would count as free-form answers by the tens of thousands.
_DSH_TOOLS = ("bash", "read", "edit", "grep", "write") * 6 + ("ask_user_question",)


@dataclass
class Planned:
    index: int
    harness: str
    target_bytes: int


@dataclass
class Made:
    """One generated session: its harness, files (relative to the corpus) and ground truth."""

    index: int
    harness: str
    files: list[str] = field(default_factory=list)
    events: int = 0
    human_messages: int = 0
    bytes: int = 0


def plan(sessions: int, total_bytes: int, seed: int) -> list[Planned]:
    """Each session's harness and size on disk; the sizes add up to `total_bytes`."""
    weights = []
    for index in range(sessions):
        rng = random.Random(f"{seed}:{index}:size")
        weights.append(min(_SIZE_CAP, rng.lognormvariate(-(_SIZE_SIGMA**2) / 2, _SIZE_SIGMA)))
    scale = total_bytes / sum(weights)
    return [
        Planned(index, MIX[index % len(MIX)], max(4096, math.ceil(w * scale)))
        for index, w in enumerate(weights)
    ]


def write_session(
    directory: Path, planned: Planned, seed: int, frame_bytes: float | None = None
) -> Made:
    """Write one planned session under `directory/<harness>/`, from its own seed (so any
    prefix of a plan is the same whatever the plan's length)."""
    own = f"{seed}:{planned.index}"
    root = directory / ROOTS[planned.harness]
    clock = _START + planned.index * 2_220_000  # sessions start 37 minutes apart
    stats = CorpusStats()
    if planned.harness == "dsh":
        corpus = Corpus(root, seed=random.Random(own).getrandbits(64))
        corpus.clock = clock
        corpus.tools = _DSH_TOOLS
        frames = max(3, round(planned.target_bytes / (frame_bytes or Corpus.mean_frame_bytes())))
        paths = corpus.stream_session(planned.index, frames, stats)
    else:
        writer = ClaudeCorpus if planned.harness == "claude" else CodexCorpus
        paths = writer(root, seed=own, clock=clock).session(
            planned.index, planned.target_bytes, stats
        )
    return Made(
        planned.index,
        planned.harness,
        [str(p.relative_to(directory)) for p in paths],
        stats.events,
        stats.human_messages,
        stats.bytes,
    )


def scale_corpus(
    directory: Path,
    sessions: int,
    total_bytes: int,
    seed: int,
    on_session: Callable[[Made], None] | None = None,
) -> list[Made]:
    """A corpus of `sessions` sessions and about `total_bytes` of logs over the three
    harnesses' roots (`directory/dsh`, `directory/claude`, `directory/codex`)."""
    frame_bytes = Corpus.mean_frame_bytes()
    for name in ROOTS.values():
        (directory / name).mkdir(parents=True, exist_ok=True)
    made = []
    for planned in plan(sessions, total_bytes, seed):
        made.append(write_session(directory, planned, seed, frame_bytes))
        if on_session is not None:
            on_session(made[-1])
    return made


def link_subset(directory: Path, made: list[Made], target: Path) -> None:
    """The sessions `made` of the corpus in `directory` again under `target`, as hard links
    (the same bytes, no new ones; copies across file systems)."""
    for name in ROOTS.values():
        (target / name).mkdir(parents=True, exist_ok=True)
    for session in made:
        for name in session.files:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(directory / name, target / name)
            except OSError:
                shutil.copy2(directory / name, target / name)
