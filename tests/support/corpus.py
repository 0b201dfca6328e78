"""Writes realistic DSH session roots (v4 logs, some v0 generations), deterministic from a seed.

For tests and benchmarks: zstd multi-frame logs framed as DSH writes them (a header frame,
then one frame per durable append batch; checksum on, no content size), several generations
per session, torn tails, and exact ground-truth counts of what a reader must find.
"""

from __future__ import annotations

import random
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import orjson
import zstandard

from dshkit.sessions.dsh import encode_segment, project_key

_COMPRESSOR = zstandard.ZstdCompressor(level=3, write_checksum=True, write_content_size=False)
# fmt: off
_WORDS = ("the", "file", "test", "build", "error", "function", "module", "import", "return",
          "value", "config", "session", "读取", "日志", "增量", "画像", "工具", "失败", "用户",
          "确认", "修改", "运行", "测试", "提交", "检查", "上下文", "窗口")
# fmt: on
_TOOLS = ("bash", "read", "edit", "grep", "write", "ask_user_question")
_ASKS = ("要不要我先跑一遍测试？", "这个改动你确认一下？", "Shall I restart the service?")


def encode_frame(records: list[dict[str, Any]]) -> bytes:
    """One zstd frame holding `records` as JSON lines, framed like DSH's appends."""
    return _COMPRESSOR.compress(b"".join(orjson.dumps(r) + b"\n" for r in records))


def header(session_id: str, version: int, cwd: str, created_at: int) -> dict[str, Any]:
    if version == 0:
        return {
            "type": "session",
            "version": 0,
            "id": session_id,
            "createdAt": created_at,
            "cwd": cwd,
            "delegationDepth": 0,
        }
    return {
        "type": "session",
        "version": version,
        "id": session_id,
        "createdAt": created_at,
        "isSeeded": False,
        "delegationDepth": 0,
        "cwd": cwd,
    }


@dataclass
class CorpusStats:
    files: int = 0
    sessions: int = 0
    events: int = 0
    human_messages: int = 0
    frames: int = 0  # complete frames on disk, header frames included
    bytes: int = 0
    torn_files: int = 0


@dataclass
class _Stream:
    """One session's events as they happen: seqs contiguous, turns one after another."""

    seq: int = 0
    turn: int = 0
    pending: deque[tuple[str, dict[str, Any]]] = field(default_factory=deque)


@dataclass
class _Log:
    path: Path
    stream: _Stream
    torn_batch: list[dict[str, Any]] = field(default_factory=list)
    torn_rest: bytes = b""  # the unwritten end of a torn last frame
    live: bool = True  # the newest generation, the one a running session appends to


class Corpus:
    """A generated sessions root that can keep growing like live sessions do."""

    tools: tuple[str, ...] = _TOOLS  # what the model calls, chosen evenly

    def __init__(self, root: Path, seed: int = 0) -> None:
        self.root = Path(root)
        self.rng = random.Random(seed)
        self.logs: list[_Log] = []
        self.clock = 1_790_000_000_000

    def generate(self, sessions: int = 200, frames: int = 60_000) -> CorpusStats:
        stats = CorpusStats(sessions=sessions)
        per_session = max(2, frames // sessions)
        for index in range(sessions):
            self._session(index, per_session, stats)
        return stats

    def _place(self, index: int) -> tuple[str, str, Path]:
        """The cwd, id and directory of the `index`-th session (the directory is created)."""
        cwd = f"/home/dev/project-{index % 23}"
        session_id = f"session-{uuid.UUID(int=self.rng.getrandbits(128), version=4)}"
        directory = self.root / project_key(cwd) / encode_segment(session_id)
        directory.mkdir(parents=True, exist_ok=True)
        return cwd, session_id, directory

    def _session(self, index: int, frames: int, stats: CorpusStats) -> None:
        rng = self.rng
        cwd, session_id, directory = self._place(index)
        stream = _Stream()
        batches = [self._batch(stream) for _ in range(frames - 1)]
        events = [e for batch in batches for e in batch]
        stats.events += len(events)
        stats.human_messages += sum(1 for e in events if _is_human(e))
        kind = rng.random()
        if kind < 0.1:
            # Migrated session: an old v0 generation, and a v4 one repeating its first events.
            split = len(batches) // 3
            old = directory / "session.jsonl.zstd"
            self._write(old, stream, session_id, 0, cwd, batches[:split], stats, torn=False)
            self.logs[-1].live = False
            path = directory / "session.v4.jsonl.zstd"
        elif kind < 0.13:
            path = directory / "session.jsonl"
        else:
            path = directory / "session.v4.jsonl.zstd"
        self._write(path, stream, session_id, 4 if ".v4." in path.name else 0, cwd, batches, stats)

    def stream_session(self, index: int, frames: int, stats: CorpusStats) -> list[Path]:
        """One session of the kinds `generate` writes, its batches written as they are made:
        memory stays small whatever the size (for corpora too large to hold). Returns its
        files; `stats` counts the session, its events and human messages."""
        rng = self.rng
        cwd, session_id, directory = self._place(index)
        stream = _Stream()
        count = max(1, frames - 1)
        kind = rng.random()
        stats.sessions += 1
        start = len(self.logs)
        batches: Iterable[list[dict[str, Any]]]
        if kind < 0.1:
            # Migrated: a v0 generation of the first batches (at most 2,000, held to be
            # repeated), and a v4 one repeating them before going on.
            early = [self._batch(stream) for _ in range(min(count // 3, 2000))]
            old = directory / "session.jsonl.zstd"
            self._write(old, stream, session_id, 0, cwd, early, stats, torn=False)
            self.logs[-1].live = False
            later = (self._batch(stream) for _ in range(count - len(early)))
            batches, path = chain(early, later), directory / "session.v4.jsonl.zstd"
        else:
            batches = (self._batch(stream) for _ in range(count))
            path = directory / ("session.jsonl" if kind < 0.13 else "session.v4.jsonl.zstd")
        version = 4 if ".v4." in path.name else 0
        self._write(path, stream, session_id, version, cwd, self._counted(batches, stats), stats)
        return [log.path for log in self.logs[start:]]

    @staticmethod
    def _counted(
        batches: Iterable[list[dict[str, Any]]], stats: CorpusStats
    ) -> Iterator[list[dict[str, Any]]]:
        for batch in batches:
            stats.events += len(batch)
            stats.human_messages += sum(1 for e in batch if _is_human(e))
            yield batch

    def _write(
        self,
        path: Path,
        stream: _Stream,
        session_id: str,
        version: int,
        cwd: str,
        batches: Iterable[list[dict[str, Any]]],
        stats: CorpusStats,
        torn: bool | None = None,
    ) -> None:
        """Write one log file, frame by frame (or line by line) as `batches` come."""
        log = _Log(path, stream)
        head = header(session_id, version, cwd, self.clock)
        with open(path, "wb") as out:
            if path.suffix == ".zstd":
                written = out.write(encode_frame([head]))
                stats.frames += 1
                for batch in batches:
                    written += out.write(encode_frame(batch))
                    stats.frames += 1
                tear = self.rng.random() < 0.15 if torn is None else torn
                if tear:
                    # A live session: the next append batch is half on disk.
                    log.torn_batch = self._batch(stream)
                    frame = encode_frame(log.torn_batch)
                    cut = self.rng.randrange(1, len(frame))
                    written += out.write(frame[:cut])
                    log.torn_rest = frame[cut:]
                    stats.torn_files += 1
            else:
                written = out.write(orjson.dumps(head) + b"\n")
                for batch in batches:
                    written += out.write(b"".join(orjson.dumps(e) + b"\n" for e in batch))
        stats.files += 1
        stats.bytes += written
        self.logs.append(log)

    def append(self, frames: int = 4000, target_bytes: int = 8 << 20) -> CorpusStats:
        """Grow the zstd logs like live sessions: finish torn frames, then append new frames."""
        stats = CorpusStats()
        logs = [log for log in self.logs if log.live and log.path.suffix == ".zstd"]
        text_bytes = self._text_size_for(target_bytes / max(1, frames))
        for log in logs:  # new activity starts new turns (seqs are given out when written)
            log.stream.pending.clear()
        for n in range(frames):
            log = logs[n % len(logs)]
            batch = self._batch(log.stream, text_bytes)
            frame = encode_frame(batch)
            data = log.torn_rest + frame
            if log.torn_rest:
                stats.events += len(log.torn_batch)
                stats.human_messages += sum(1 for e in log.torn_batch if _is_human(e))
                stats.frames += 1
                log.torn_rest, log.torn_batch = b"", []
            with open(log.path, "ab") as handle:
                handle.write(data)
            stats.frames += 1
            stats.bytes += len(data)
            stats.events += len(batch)
            stats.human_messages += sum(1 for e in batch if _is_human(e))
        return stats

    @staticmethod
    def mean_frame_bytes(frames: int = 2000) -> float:
        """The mean size of an append frame as `stream_session` writes them (a fixed probe)."""
        probe = Corpus(Path("."), seed=0)
        stream = _Stream()
        sizes = [len(encode_frame(probe._batch(stream))) for _ in range(frames)]
        return sum(sizes) / len(sizes)

    def _text_size_for(self, frame_bytes: float) -> int:
        """The text size whose turns compress to about `frame_bytes` a frame on average.

        Measured on a probe stream with its own generator (this corpus's stays untouched):
        bytes per frame grow about linearly with the text size, so two probes fit the line.
        """
        probe = Corpus(self.root, seed=0)

        def bytes_per_frame(size: int) -> float:
            stream = _Stream()
            frames = [encode_frame(probe._batch(stream, size)) for _ in range(300)]
            return sum(map(len, frames)) / len(frames)

        low, high = 1_000, 20_000
        at_low, at_high = bytes_per_frame(low), bytes_per_frame(high)
        slope = (at_high - at_low) / (high - low)
        return max(64, int(low + (frame_bytes - at_low) / slope))

    # -- content ------------------------------------------------------------------------

    def _text(self, nbytes: int) -> str:
        return text(self.rng, nbytes)

    def _message(self, text: str, kind: str) -> dict[str, Any]:
        message_id = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        return {
            "id": message_id,
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": kind},
        }

    def _tick(self, low: int = 5, high: int = 4000) -> int:
        self.clock += self.rng.randint(low, high)
        return self.clock

    def _batch(self, stream: _Stream, text_bytes: int | None = None) -> list[dict[str, Any]]:
        """The next durable append batch of a session: one or two events."""
        size = 1 if self.rng.random() < 0.5 else 2
        while len(stream.pending) < size:
            stream.turn += 1
            stream.pending.extend(self._turn(stream.turn, text_bytes))
        batch = []
        for _ in range(size):
            kind, data = stream.pending.popleft()
            batch.append({"type": kind, "seq": stream.seq, "time": self._tick(), "data": data})
            stream.seq += 1
        return batch

    def _turn(self, turn: int, text_bytes: int | None) -> list[tuple[str, dict[str, Any]]]:
        rng = self.rng
        size = text_bytes or rng.choice((80, 200, 600, 1500))
        steps: list[tuple[str, dict[str, Any]]] = [
            ("turn/start", {"turn": turn}),
            ("user/message", self._message(self._text(min(size, 300)), "user")),
        ]
        if rng.random() < 0.3:
            steps.append(("user/message", self._message(self._text(200), "runtime-context")))
        steps.append(
            (
                "request/context",
                {
                    "provider": "deepseek-official",
                    "model": "deepseek-v4-flash",
                    "contextWindow": 1_000_000,
                },
            )
        )
        for step in range(1, rng.randint(2, 4)):
            call_id = f"call_{rng.getrandbits(48):012x}"
            tool = rng.choice(self.tools)
            arguments = orjson.dumps({"command": self._text(40)}).decode()
            if tool == "ask_user_question":
                arguments = orjson.dumps(
                    {
                        "questions": [
                            {
                                "id": "q1",
                                "question": rng.choice(_ASKS),
                                "options": [{"label": "是"}, {"label": "否"}],
                            }
                        ]
                    }
                ).decode()
            steps += [
                ("step/start", {"turn": turn, "step": step}),
                (
                    "assistant/message",
                    {
                        "turn": turn,
                        "step": step,
                        "message": {
                            "role": "assistant",
                            "content": [
                                {"type": "text", "text": self._text(min(size, 400))},
                                {
                                    "type": "tool-call",
                                    "id": call_id,
                                    "name": tool,
                                    "arguments": arguments,
                                },
                            ],
                        },
                        "usage": {
                            "inputTokens": rng.randint(500, 5000),
                            "outputTokens": rng.randint(20, 800),
                            "cacheReadTokens": rng.randint(0, 90_000),
                        },
                    },
                ),
                (
                    "tool/call",
                    {
                        "turn": turn,
                        "step": step,
                        "callId": call_id,
                        "name": tool,
                        "arguments": arguments,
                    },
                ),
                (
                    "tool/result",
                    _result(turn, step, call_id, self._text(size), failed=rng.random() < 0.08),
                ),
                ("step/end", {"turn": turn, "step": step}),
            ]
        steps.append(("turn/end", {"turn": turn, "reason": {"kind": "completed"}}))
        return steps


def text(rng: random.Random, nbytes: int) -> str:
    """About `nbytes` of words with ids and numbers among them: compresses about like real
    tool output."""
    count = max(1, nbytes // 7)
    words = rng.choices(_WORDS, k=count)
    for index in rng.sample(range(count), count // 4):
        words[index] = f"{rng.getrandbits(32):08x}"
    return " ".join(words)


def _result(turn: int, step: int, call_id: str, text: str, failed: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "turn": turn,
        "step": step,
        "message": {
            "role": "tool",
            "toolCallId": call_id,
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "text", "text": text}],
            "isError": failed,
        },
    }
    if failed:
        data["error"] = {"name": "ToolError", "code": "EXIT_NONZERO"}
    return data


def _is_human(event: dict[str, Any]) -> bool:
    return event["type"] == "user/message" and event["data"]["source"]["kind"] == "user"
