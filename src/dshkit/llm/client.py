"""The one LLM client: OpenAI-compatible chat completions, streamed, every failure named.

Failures are never an empty output (docs/design/llm.md#a-failure-is-never-an-empty-reply): an
HTTP error, a network error, a broken
or unfinished stream, a reply cut at `max_tokens`, a call past its deadline and an abort each
come back as their own outcome, and every call is recorded in the store (never the API key),
linked to the sessions whose words it carries, and kept for a while: the newest `keep_calls`
of them, none older than `keep_days`
(docs/design/llm.md#a-calls-prompt-and-reply-are-kept-for-a-while).

Messages may have every role (system, user, assistant with `tool_calls`, tool with
`tool_call_id`); given `tools` (OpenAI function schemas) the model may answer with tool calls,
which arrive in streamed fragments and are put together here.

One deadline bounds the whole call, however the server streams: the HTTP exchange runs on a
worker thread and the caller waits for its bytes no longer than the time left, so neither
a silent server nor one sending `: ping` keep-alives forever can hold a caller past it. An
abort is honoured the same way, within `_ABORT_POLL_S`, whether or not bytes are arriving.
"""

from __future__ import annotations

import queue
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import orjson

from ..config import DEFAULT_BASE_URL, DEFAULT_MODEL, ConfigError, check_section, load_config
from ..store import Store
from .budget import estimate_messages, estimate_tokens

OUTCOMES = (
    "ok",
    "http-error",
    "network-error",
    "stream-error",
    "max-tokens",
    "prompt-too-large",  # refused before any call: it could not fit the model's window
    "deadline",
    "aborted",
)
ROLES = ("system", "user", "assistant", "tool")
_ERROR_BODY = 2000  # characters of an error response kept in the message
_ABORT_POLL_S = 0.05  # how soon a set abort ends a call that receives nothing
DAY_MS = 86_400_000

Message = dict[str, Any]

# What callers of the LLM catch: any configuration that cannot be used, the key missing.
LLMConfigError = ConfigError


@dataclass(frozen=True)
class LLMConfig:
    """The `[llm]` section: where to call, with which key and model, and how long to wait."""

    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = field(default=None, repr=False)
    model: str = DEFAULT_MODEL
    max_tokens: int = 8192
    timeout_s: float = 120.0  # silence allowed: to connect, and between two reads
    deadline_s: float = 300.0  # the whole call, however the server streams
    context_tokens: int = 65_536  # the model's window: a prompt that cannot fit is not sent
    keep_calls: int = 500  # the newest calls kept, prompt and reply
    keep_days: int = 30  # and none older than this
    # Sent as `reasoning_effort` when set (a caller's choice, e.g. the optimizer's setting).
    reasoning_effort: str = ""

    @classmethod
    def load(cls, state_dir: Path, environ: dict[str, str] | None = None) -> LLMConfig:
        """The config file's `[llm]` section, checked, then the environment on top."""
        return cls(**load_config(state_dir, environ)["llm"])

    def check(self) -> None:
        """Raise LLMConfigError saying what to set, when a call could not be made."""
        check_section("llm", vars(self), "the LLM configuration")
        if not self.api_key:
            raise LLMConfigError(
                "no LLM API key: set DSHKIT_LLM_API_KEY, or api_key under [llm] in "
                "<state dir>/config.toml (base_url and model may be set the same way; the "
                f"default is {DEFAULT_MODEL} at {DEFAULT_BASE_URL})"
            )


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for; `arguments` is its JSON text, as sent."""

    id: str
    name: str
    arguments: str

    def as_message_part(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass
class Completion:
    """What one model call produced; `outcome` is one of OUTCOMES."""

    outcome: str
    text: str = ""
    error: str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None
    elapsed_ms: int = 0
    tool_calls: list[ToolCall] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def message(self) -> Message:
        """The assistant message to append to the conversation for the next call."""
        message: Message = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [call.as_message_part() for call in self.tool_calls]
        return message


class LLMClient:
    """Streams chat completions from an OpenAI-compatible endpoint.

    `sessions` are the sessions (harness, session id) whose words its calls carry: each
    recorded call is linked to them, and forgetting one of them deletes the call."""

    def __init__(
        self,
        config: LLMConfig,
        store: Store | None = None,
        transport: httpx.BaseTransport | None = None,
        *,
        sessions: Iterable[tuple[str, str]] = (),
    ) -> None:
        config.check()
        self.config = config
        self.store = store
        self.sessions = tuple(dict.fromkeys(sessions))
        self._http = httpx.Client(
            base_url=config.base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {config.api_key}"},
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _too_large(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None
    ) -> Completion | None:
        """A refusal, before any call, of a prompt whose estimate and room for the answer do
        not fit the model's window (docs/design/provenance.md#every-prompt-has-a-budget)."""
        estimate = estimate_messages(messages) + (
            estimate_tokens(orjson.dumps(list(tools)).decode()) if tools else 0
        )
        needed = estimate + self.config.max_tokens
        if needed <= self.config.context_tokens:
            return None
        return Completion(
            "prompt-too-large",
            error=(
                f"the prompt is about {estimate:,} tokens; with max_tokens "
                f"{self.config.max_tokens:,} it needs {needed:,}, over the model's window of "
                f"{self.config.context_tokens:,} ([llm] context_tokens): it was not sent"
            ),
        )

    def complete(
        self,
        messages: Sequence[Message],
        *,
        purpose: str = "",
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        on_delta: Callable[[str], None] | None = None,
        abort: threading.Event | None = None,
        deadline_s: float | None = None,
    ) -> Completion:
        """One streamed call, over within `deadline_s` (default: the config's) whatever happens.

        `on_delta` sees text as it arrives; setting `abort` stops the call. With `tools`, the
        model may answer with `tool_calls` (finish reason "tool_calls", an ok outcome).
        """
        _check_messages(messages)
        too_large = self._too_large(messages, tools)
        if too_large is not None:
            return too_large
        deadline = self.config.deadline_s if deadline_s is None else deadline_s
        if not deadline > 0:
            raise ValueError(f"deadline_s must be above 0, got {deadline}")
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": list(messages),
            "max_tokens": self.config.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if self.config.reasoning_effort:
            body["reasoning_effort"] = self.config.reasoning_effort
        if tools:
            body["tools"] = list(tools)
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        # The sessions stored when the call starts: one of them gone when it is recorded was
        # forgotten meanwhile, and the call's words are its words (nothing of them is kept).
        stored = _stored(self.store, self.sessions) if self.store is not None else set()
        started = time.monotonic()
        result = self._stream(body, started + deadline, on_delta, abort)
        if result.outcome == "deadline":
            result.error = (
                f"the call passed its deadline of {deadline:g} s before the model finished"
                f" ({len(result.text)} characters had arrived)"
            )
        result.elapsed_ms = round((time.monotonic() - started) * 1000)
        if self.store is not None:
            _record(self.store, self.config, purpose, messages, result, self.sessions, stored)
        return result

    def _stream(
        self,
        body: dict[str, Any],
        deadline_at: float,
        on_delta: Callable[[str], None] | None,
        abort: threading.Event | None,
    ) -> Completion:
        # No single wait may outlast the deadline: the worker's reads are bounded by it too,
        # so it ends soon after a caller that stopped waiting.
        wait = min(self.config.timeout_s, deadline_at - time.monotonic())
        timeout = httpx.Timeout(wait, connect=min(10.0, wait))
        inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        stop = threading.Event()
        worker = threading.Thread(
            target=self._exchange, args=(body, timeout, inbox, stop), daemon=True
        )
        result = Completion("stream-error", model=self.config.model)
        parts: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        events = _ServerEvents()
        began = b""  # the body's first bytes: what a server that sent no events sent instead
        seen = 0  # events received
        worker.start()
        try:
            while True:
                left = deadline_at - time.monotonic()
                if abort is not None and abort.is_set():
                    result.outcome, result.error = "aborted", "aborted by the caller"
                    break
                if left <= 0:
                    result.outcome = "deadline"
                    break
                try:
                    # With an abort to honour, wake often: a silent or keep-alive-only stream
                    # brings no event that would carry it.
                    kind, value = inbox.get(timeout=min(left, _ABORT_POLL_S) if abort else left)
                except queue.Empty:
                    continue
                if kind == "refused":
                    _http_error(value, result)
                    break
                if kind == "unstreamed":
                    _unstreamed(value, result)
                    break
                if kind == "failed":
                    _failed(value, result, parts or calls, time.monotonic() >= deadline_at)
                    break
                payloads = events.feed(value) if kind == "bytes" else events.end()
                began = began if len(began) >= 300 else (began + value)[:300]
                seen += len(payloads)
                if not self._take(payloads, result, parts, calls, on_delta, abort):
                    break
                if kind == "end":
                    break
                if time.monotonic() >= deadline_at:
                    result.outcome = "deadline"
                    break
        finally:
            stop.set()
        result.text = "".join(parts)
        if result.outcome == "stream-error" and result.error is None:
            self._finish(result, calls)
            if not seen and began.strip():
                text = " ".join(began.decode("utf-8", "replace").split())
                result.error = f"the server's 200 answer held no event stream; it began: {text!r}"
        return result

    def _exchange(
        self,
        body: dict[str, Any],
        timeout: httpx.Timeout,
        inbox: queue.SimpleQueue[tuple[str, Any]],
        stop: threading.Event,
    ) -> None:
        """The HTTP exchange, on the worker thread: hands every piece to the caller's thread."""
        try:
            with self._http.stream(
                "POST", "/chat/completions", json=body, timeout=timeout
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    inbox.put(("refused", response))
                    return
                kind = response.headers.get("content-type", "").lower()
                if "json" in kind or "html" in kind:  # an answer, but not an event stream
                    response.read()
                    inbox.put(("unstreamed", response))
                    return
                for chunk in response.iter_bytes():
                    if stop.is_set():
                        return
                    inbox.put(("bytes", chunk))
            inbox.put(("end", b""))
        except Exception as exc:  # the caller's thread names it (or raises it)
            inbox.put(("failed", exc))

    def _take(
        self,
        payloads: Iterable[str],
        result: Completion,
        parts: list[str],
        calls: dict[int, dict[str, str]],
        on_delta: Callable[[str], None] | None,
        abort: threading.Event | None,
    ) -> bool:
        """Apply the stream's events; False once the stream is over (done, failed, aborted)."""
        for data in payloads:
            if abort is not None and abort.is_set():
                result.outcome, result.error = "aborted", "aborted by the caller"
                return False
            if data == "[DONE]":
                return False
            if not _take_chunk(data, result, parts, calls, on_delta):
                return False
        return True

    def _finish(self, result: Completion, calls: dict[int, dict[str, str]]) -> None:
        """Name how a stream that ended without an error ended."""
        if result.finish_reason is None:
            result.error = "the stream ended before the model finished"
        elif result.finish_reason == "length":
            result.outcome = "max-tokens"
            result.error = f"the reply was cut at max_tokens={self.config.max_tokens}"
        elif result.finish_reason == "tool_calls" and not calls:
            result.error = "the model stopped for tool calls but sent none"
        elif result.finish_reason in ("stop", "eos", "tool_calls"):
            for index, call in sorted(calls.items()):
                if not (call["id"] and call["name"]):
                    result.error = f"tool call {index} came without an id or a function name"
                    return
                result.tool_calls.append(ToolCall(call["id"], call["name"], call["arguments"]))
            result.outcome = "ok"
        else:
            result.error = f"the model stopped with finish_reason {result.finish_reason!r}"


class _ServerEvents:
    """The `data:` payloads of a server-sent-event stream fed in raw chunks; comments skipped."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[str]:
        *lines, self._buffer = (self._buffer + chunk).split(b"\n")
        return [payload for line in lines if (payload := self._line(line)) is not None]

    def end(self) -> list[str]:
        last = [self._line(self._buffer)] if self._buffer else []
        pending = ["\n".join(self._data)] if self._data else []
        self._buffer, self._data = b"", []
        return [payload for payload in last if payload is not None] + pending

    def _line(self, raw: bytes) -> str | None:
        line = raw.removesuffix(b"\r").decode("utf-8", "replace")
        if line.startswith("data:"):
            self._data.append(line[5:].removeprefix(" "))
        elif not line and self._data:
            payload, self._data = "\n".join(self._data), []
            return payload
        return None


def _take_chunk(
    data: str,
    result: Completion,
    parts: list[str],
    calls: dict[int, dict[str, str]],
    on_delta: Callable[[str], None] | None,
) -> bool:
    """Apply one streamed chunk; False when the stream reported an error."""
    try:
        chunk = orjson.loads(data)
    except orjson.JSONDecodeError:
        result.error = f"unreadable stream chunk: {data[:200]!r}"
        return False
    if not isinstance(chunk, dict):
        result.error = f"unexpected stream chunk: {data[:200]!r}"
        return False
    if chunk.get("error"):
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else str(error)
        result.error = f"the stream reported an error: {message}"
        return False
    result.model = chunk.get("model") or result.model
    if isinstance(chunk.get("usage"), dict):
        result.usage = chunk["usage"]
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        if delta.get("content"):
            parts.append(delta["content"])
            if on_delta is not None:
                on_delta(delta["content"])
        for position, fragment in enumerate(delta.get("tool_calls") or ()):
            _take_tool_fragment(calls, position, fragment)
        if choice.get("finish_reason"):
            result.finish_reason = choice["finish_reason"]
    return True


def _take_tool_fragment(calls: dict[int, dict[str, str]], position: int, fragment: Any) -> None:
    """Add one streamed piece of a tool call: its id and name come once, arguments in pieces."""
    if not isinstance(fragment, dict):
        return
    index = fragment.get("index")
    if not isinstance(index, int):
        index = position
    call = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
    call["id"] = call["id"] or str(fragment.get("id") or "")
    function = fragment.get("function") or {}
    call["name"] += str(function.get("name") or "")
    call["arguments"] += str(function.get("arguments") or "")


def _check_messages(messages: Sequence[Message]) -> None:
    """Refuse a conversation the API would refuse, naming the message and what is wrong."""
    if not messages:
        raise ValueError("messages is empty: a call needs at least one message")
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            raise ValueError(f"messages[{i}] has role {role!r}; allowed: {', '.join(ROLES)}")
        content = message.get("content")
        if role == "tool" and not (message.get("tool_call_id") and isinstance(content, str)):
            raise ValueError(f"messages[{i}]: a tool message needs tool_call_id and text content")
        if role == "assistant" and content is None and not message.get("tool_calls"):
            raise ValueError(f"messages[{i}]: an assistant message needs content or tool_calls")
        if role in ("system", "user") and not isinstance(content, str | list):
            raise ValueError(f"messages[{i}]: a {role} message needs content")


def _failed(exc: Exception, result: Completion, received: object, past_deadline: bool) -> None:
    """Name an exception of the HTTP exchange; anything but a transport failure is raised."""
    if past_deadline:
        result.outcome = "deadline"
    elif isinstance(exc, httpx.TimeoutException):
        result.outcome, result.error = "network-error", f"timed out: {exc!r}"
    elif isinstance(exc, httpx.TransportError | httpx.StreamError):
        # Mid-stream drops are stream errors; failing to connect is a network error.
        result.outcome = "stream-error" if received else "network-error"
        result.error = f"{type(exc).__name__}: {exc}"
    else:
        raise exc


def _unstreamed(response: httpx.Response, result: Completion) -> None:
    """Name a 2xx answer that is no event stream for what it is: a whole JSON reply (an
    endpoint that ignores `stream`), or an HTML page (a base_url that is no API)."""
    kind = response.headers.get("content-type", "")
    text = response.text
    url = response.request.url
    if "html" in kind.lower():
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
        named = f" titled {' '.join(title.group(1).split())[:120]!r}" if title else ""
        result.error = (
            f"HTTP {response.status_code} from {url} is an HTML page{named}, not an API's "
            "event stream: is [llm] base_url the API's address?"
        )
    else:
        result.error = (
            f"HTTP {response.status_code} from {url} is one JSON reply ({kind}), not the event "
            f"stream asked for (stream=true): {' '.join(text.split())[:300]}"
        )


def _http_error(response: httpx.Response, result: Completion) -> None:
    detail = response.text[:_ERROR_BODY]
    try:
        error = orjson.loads(response.content).get("error")
        if isinstance(error, dict) and error.get("message"):
            detail = str(error["message"])[:_ERROR_BODY]
    except (orjson.JSONDecodeError, AttributeError):
        pass
    result.outcome = "http-error"
    result.error = f"HTTP {response.status_code} from {response.request.url}: {detail}"


def _stored(store: Store, sessions: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
    """Those of `sessions` the store holds now."""
    return {key for key in sessions if store.holds_session(key)}


def _record(
    store: Store,
    config: LLMConfig,
    purpose: str,
    messages: Sequence[Message],
    result: Completion,
    sessions: Sequence[tuple[str, str]],
    stored: set[tuple[str, str]],
) -> None:
    """The call in llm_calls, linked to `sessions`; when one of those `stored` at its start,
    or any of them, was forgotten while it ran, it is kept without its prompt, reply and tool
    calls (they carried that session's words) and linked to the sessions still held only."""
    with store.transaction() as db:
        now = _stored(store, sessions)
        forgotten = any(
            db.execute(
                "SELECT 1 FROM forgotten_sessions WHERE harness = ? AND session_id = ?", key
            ).fetchone()
            for key in sessions
        )
        if forgotten or stored - now:
            sessions = [key for key in sessions if key in now]
            messages, result = [], replace(result, text="", tool_calls=[])
            result.error = "; ".join(
                filter(None, [result.error, "a session it carried was forgotten while it ran"])
            )
        call = db.execute(
            "INSERT INTO llm_calls (at, purpose, base_url, model, outcome, error, "
            "finish_reason, elapsed_ms, usage, prompt, response, tool_calls) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                int(time.time() * 1000),
                purpose,
                config.base_url,
                result.model,
                result.outcome,
                result.error,
                result.finish_reason,
                result.elapsed_ms,
                orjson.dumps(result.usage).decode() if result.usage else None,
                orjson.dumps(list(messages)).decode(),
                result.text,
                orjson.dumps([c.as_message_part() for c in result.tool_calls]).decode()
                if result.tool_calls
                else None,
            ),
        )
        db.executemany(
            "INSERT INTO llm_call_sessions (call_id, harness, session_id) VALUES (?, ?, ?)",
            [(call.lastrowid, harness, session_id) for harness, session_id in sessions],
        )
        _prune(db, config)


# The calls past what [llm] keeps: beyond the newest :keep, or recorded before :since.
_PAST = (
    "SELECT id FROM llm_calls WHERE at < :since OR id < "
    "(SELECT min(id) FROM (SELECT id FROM llm_calls ORDER BY id DESC LIMIT :keep))"
)


def _prune(db: sqlite3.Connection, config: LLMConfig) -> None:
    """Delete the calls past what `config` keeps, with their links to sessions (inside the
    transaction recording the newest). Which sessions' words pruned calls of each purpose
    carried stays in llm_pruned_sessions (no words), for what a person's removal of a profile
    entry is linked to (profile/removals.py); forgetting a session deletes its rows there."""
    bounds = {
        "keep": config.keep_calls,
        "since": int(time.time() * 1000) - config.keep_days * DAY_MS,
    }
    db.execute(
        "INSERT OR IGNORE INTO llm_pruned_sessions (purpose, harness, session_id) "
        "SELECT DISTINCT c.purpose, l.harness, l.session_id FROM llm_call_sessions l "
        f"JOIN llm_calls c ON c.id = l.call_id WHERE l.call_id IN ({_PAST})",
        bounds,
    )
    db.execute(f"DELETE FROM llm_call_sessions WHERE call_id IN ({_PAST})", bounds)
    db.execute(f"DELETE FROM llm_calls WHERE id IN ({_PAST})", bounds)
