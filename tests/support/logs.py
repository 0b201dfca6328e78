"""Session logs for tests: DSH zstd logs and JSON lines written as the harness writes them, and
one session's events built in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from dshkit.profile.signals import SignalConfig, session_signals
from dshkit.sessions import Source
from dshkit.sessions.dsh import encode_segment, project_key

from .corpus import encode_frame, header


def dsh(root: Path) -> list[Source]:
    return [Source("dsh", root)]


def session_dir(root: Path, session_id: str, cwd: str = "/home/dev/work") -> Path:
    directory = root / project_key(cwd) / encode_segment(session_id)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def event(kind: str, seq: int, data: Any, time: int | None = None) -> dict[str, Any]:
    return {
        "type": kind,
        "seq": seq,
        "time": 1_790_000_000_000 + seq if time is None else time,
        "data": data,
    }


def human(seq: int, text: str) -> dict[str, Any]:
    return event(
        "user/message",
        seq,
        {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}},
    )


def write_log(
    path: Path,
    batches: list[list[dict[str, Any]]],
    *,
    session_id: str = "s-1",
    version: int = 4,
    mode: str = "wb",
    cwd: str = "/home/dev/work",
    subagent_of: str | None = None,
) -> bytes:
    """Write a DSH zstd log: a header frame (unless appending), then one frame per batch. With
    `subagent_of`, the session is a sub-agent's of that session, its header as DSH writes one."""
    first = header(session_id, version, cwd, 1)
    if subagent_of is not None:
        first.update(origin="subagent", parentSession=subagent_of, delegationDepth=1)
    blob = b"" if mode == "ab" else encode_frame([first])
    blob += b"".join(encode_frame(batch) for batch in batches)
    with open(path, mode) as handle:
        handle.write(blob)
    return blob


def write_lines(path: Path, records: list[dict[str, Any]], mode: str = "wb") -> None:
    with open(path, mode) as handle:
        handle.write(b"".join(orjson.dumps(r) + b"\n" for r in records))


MINUTE = 60_000


class Log:
    """Builds one session's events in order, with explicit times."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.turn = 0
        self.time = 1_790_000_000_000

    def add(self, kind: str, data: dict[str, Any], after_ms: int = 1000) -> dict[str, Any]:
        self.time += after_ms
        event = {"type": kind, "seq": len(self.events), "time": self.time, "data": data}
        self.events.append(event)
        return event

    def turn_start(self, after_ms: int = 1000) -> None:
        self.turn += 1
        self.add("turn/start", {"turn": self.turn}, after_ms)

    def human(self, text: str, after_ms: int = 1000) -> None:
        self.add(
            "user/message",
            {
                "role": "user",
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "user"},
            },
            after_ms,
        )

    def say(self, text: str, reasoning: str = "") -> None:
        content = [{"type": "reasoning", "text": reasoning}] if reasoning else []
        content.append({"type": "text", "text": text})
        self.add(
            "assistant/message",
            {"turn": self.turn, "message": {"role": "assistant", "content": content}},
        )

    def call(self, name: str, call_id: str, arguments: Any = None, after_ms: int = 1000) -> None:
        self.add(
            "tool/call",
            {
                "turn": self.turn,
                "callId": call_id,
                "name": name,
                "arguments": orjson.dumps(arguments or {}).decode(),
            },
            after_ms,
        )

    def result(
        self,
        call_id: str,
        after_ms: int,
        failed: bool = False,
        code: str | None = None,
        text: str = "ok",
        role: str = "tool",
    ) -> None:
        data: dict[str, Any] = {
            "turn": self.turn,
            "message": {
                "role": role,
                "source": {"kind": "tool", "callId": call_id},
                "content": [{"type": "text", "text": text}],
            },
        }
        if failed and code:
            data["error"] = {"name": "ToolError", "code": code}
        elif failed:
            data["message"]["isError"] = True
        self.add("tool/result", data, after_ms)

    def counts(self, config: SignalConfig | None = None) -> dict[str, int]:
        return session_signals(self.events, config or SignalConfig(), "dsh:s").totals()


def assistant(seq: int, text: str, turn: int = 1, **extra: Any) -> dict[str, Any]:
    """A model reply with private reasoning beside its text (reasoning no reader may pass on)."""
    content = [{"type": "reasoning", "text": "私下推理不外传"}, {"type": "text", "text": text}]
    data = {"turn": turn, "step": 1, "message": {"role": "assistant", "content": content}}
    return {**event("assistant/message", seq, data), **extra}


def exchange_events(start: int, turn: int, said: str, *replies: str) -> list[dict[str, Any]]:
    """One exchange as DSH logs it: turn start, the person's words, the replies, turn end."""
    events = [event("turn/start", start, {"turn": turn}), human(start + 1, said)]
    for offset, reply in enumerate(replies, start + 2):
        events.append(assistant(offset, reply, turn))
    events.append(event("turn/end", start + 2 + len(replies), {"turn": turn}))
    return events
