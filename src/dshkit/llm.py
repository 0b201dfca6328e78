"""The one LLM client: OpenAI-compatible chat completions, streamed, every failure named.

Failures are never an empty output (seed 001 §1.6): an HTTP error, a network error, a broken
or unfinished stream, a reply cut at `max_tokens` and an abort each come back as their own
outcome, and every call is recorded in the store (never the API key).

Configuration: `<state dir>/config.toml`, section `[llm]` (`base_url`, `api_key`, `model`,
`max_tokens`, `timeout_s`), overridden by `DSHKIT_LLM_BASE_URL`, `DSHKIT_LLM_API_KEY` and
`DSHKIT_LLM_MODEL`. The default provider is DeepSeek's OpenAI-compatible API.
"""

from __future__ import annotations

import os
import threading
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import orjson

from .store import Store

DEFAULT_BASE_URL = "https://api.deepseek.com"
DEFAULT_MODEL = "deepseek-chat"
OUTCOMES = ("ok", "http-error", "network-error", "stream-error", "max-tokens", "aborted")
_ERROR_BODY = 2000  # characters of an error response kept in the message


class LLMConfigError(ValueError):
    """The LLM is not configured well enough to call (the message says what to set)."""


@dataclass(frozen=True)
class LLMConfig:
    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = field(default=None, repr=False)
    model: str = DEFAULT_MODEL
    max_tokens: int = 8192
    timeout_s: float = 120.0

    @classmethod
    def load(cls, state_dir: Path, environ: dict[str, str] | None = None) -> LLMConfig:
        """The config file's `[llm]` section, then the environment on top."""
        env = os.environ if environ is None else environ
        path = Path(state_dir) / "config.toml"
        section: dict[str, Any] = {}
        if path.is_file():
            try:
                section = tomllib.loads(path.read_text()).get("llm", {})
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise LLMConfigError(f"{path} is not valid TOML: {exc}") from exc
        known = {"base_url", "api_key", "model", "max_tokens", "timeout_s"}
        unknown = set(section) - known
        if unknown:
            raise LLMConfigError(
                f"{path} [llm] has unknown keys {sorted(unknown)}; known: {sorted(known)}"
            )
        config = cls(**section)
        overrides: dict[str, Any] = {
            name: env[variable]
            for name, variable in (
                ("base_url", "DSHKIT_LLM_BASE_URL"),
                ("api_key", "DSHKIT_LLM_API_KEY"),
                ("model", "DSHKIT_LLM_MODEL"),
            )
            if env.get(variable)
        }
        return replace(config, **overrides)

    def check(self) -> None:
        """Raise LLMConfigError saying what to set, when a call could not be made."""
        if not self.api_key:
            raise LLMConfigError(
                "no LLM API key: set DSHKIT_LLM_API_KEY, or api_key under [llm] in "
                "<state dir>/config.toml (base_url and model may be set the same way; the "
                f"default is {DEFAULT_MODEL} at {DEFAULT_BASE_URL})"
            )
        if not self.base_url.startswith(("http://", "https://")):
            raise LLMConfigError(f"LLM base_url must be an http(s) URL, got {self.base_url!r}")
        if self.max_tokens < 1:
            raise LLMConfigError(f"LLM max_tokens must be at least 1, got {self.max_tokens}")


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

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


class LLMClient:
    """Streams chat completions from an OpenAI-compatible endpoint."""

    def __init__(
        self,
        config: LLMConfig,
        store: Store | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        config.check()
        self.config = config
        self.store = store
        self._http = httpx.Client(
            base_url=config.base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {config.api_key}"},
            timeout=httpx.Timeout(config.timeout_s, connect=min(10.0, config.timeout_s)),
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        purpose: str = "",
        on_delta: Callable[[str], None] | None = None,
        abort: threading.Event | None = None,
    ) -> Completion:
        """One streamed call. `on_delta` sees text as it arrives; setting `abort` stops it."""
        started = time.monotonic()
        result = self._stream(messages, on_delta, abort)
        result.elapsed_ms = round((time.monotonic() - started) * 1000)
        if self.store is not None:
            _record(self.store, self.config, purpose, messages, result)
        return result

    def _stream(
        self,
        messages: list[dict[str, str]],
        on_delta: Callable[[str], None] | None,
        abort: threading.Event | None,
    ) -> Completion:
        body = {
            "model": self.config.model,
            "messages": messages,
            "max_tokens": self.config.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        parts: list[str] = []
        result = Completion("stream-error", model=self.config.model)
        try:
            with self._http.stream("POST", "/chat/completions", json=body) as response:
                if response.status_code >= 400:
                    return _http_error(response, result)
                for data in _sse_data(response):
                    if abort is not None and abort.is_set():
                        result.outcome, result.error = "aborted", "aborted by the caller"
                        break
                    if data == "[DONE]":
                        break
                    if not _take_chunk(data, result, parts, on_delta):
                        break
        except httpx.TimeoutException as exc:
            result.outcome, result.error = "network-error", f"timed out: {exc!r}"
        except (httpx.TransportError, httpx.StreamError) as exc:
            # Mid-stream drops are stream errors; failing to connect is a network error.
            result.outcome = "stream-error" if parts else "network-error"
            result.error = f"{type(exc).__name__}: {exc}"
        result.text = "".join(parts)
        if result.outcome == "stream-error" and result.error is None:
            if result.finish_reason is None:
                result.error = "the stream ended before the model finished"
            elif result.finish_reason == "length":
                result.outcome = "max-tokens"
                result.error = f"the reply was cut at max_tokens={self.config.max_tokens}"
            elif result.finish_reason in ("stop", "eos"):
                result.outcome = "ok"
            else:
                result.error = f"the model stopped with finish_reason {result.finish_reason!r}"
        return result


def _sse_data(response: httpx.Response) -> Any:
    """The `data:` payloads of a server-sent-event stream, one per event."""
    lines: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
        elif not line and lines:
            yield "\n".join(lines)
            lines = []
    if lines:
        yield "\n".join(lines)


def _take_chunk(
    data: str,
    result: Completion,
    parts: list[str],
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
        delta = (choice.get("delta") or {}).get("content")
        if delta:
            parts.append(delta)
            if on_delta is not None:
                on_delta(delta)
        if choice.get("finish_reason"):
            result.finish_reason = choice["finish_reason"]
    return True


def _http_error(response: httpx.Response, result: Completion) -> Completion:
    response.read()
    detail = response.text[:_ERROR_BODY]
    try:
        error = orjson.loads(response.content).get("error")
        if isinstance(error, dict) and error.get("message"):
            detail = str(error["message"])[:_ERROR_BODY]
    except (orjson.JSONDecodeError, AttributeError):
        pass
    result.outcome = "http-error"
    result.error = f"HTTP {response.status_code} from {response.request.url}: {detail}"
    return result


def _record(
    store: Store,
    config: LLMConfig,
    purpose: str,
    messages: list[dict[str, str]],
    result: Completion,
) -> None:
    with store.transaction() as db:
        db.execute(
            "INSERT INTO llm_calls (at, purpose, base_url, model, outcome, error, "
            "finish_reason, elapsed_ms, usage, prompt, response) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                orjson.dumps(messages).decode(),
                result.text,
            ),
        )
