"""Real fake servers on 127.0.0.1 for tests: OpenAI chat completions, OpenAI Responses,
Anthropic Messages, Gemini generateContent (all streamed as the real APIs stream), and a
proxy that refuses and records every attempt to reach anything else."""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson


@dataclass
class Reply:
    """One scripted answer: streamed text deltas, or an HTTP error, and how the stream ends."""

    deltas: list[str] = field(default_factory=lambda: ["hello"])
    finish: str | None = "stop"  # None: no finish_reason at all
    usage: dict[str, int] | None = field(
        default_factory=lambda: {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    )
    status: int = 200
    error_body: dict[str, Any] | None = None
    error_event: str | None = None  # an {"error": …} event after the deltas
    done: bool = True  # send `data: [DONE]`
    cut: bool = False  # drop the connection mid-body (no terminating chunk)
    delay_s: float = 0.0  # between deltas
    # Tool calls after the deltas, each (name, arguments JSON text) and streamed as OpenAI
    # does: id and name in the first fragment, the arguments in `pieces` fragments.
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    pieces: int = 3
    # Instead of ending, send only `: ping` keep-alive comments this often (until the client
    # hangs up, at most a minute), or (`silent`) nothing at all for `hold_s`.
    keepalive_s: float | None = None
    silent: bool = False
    hold_s: float = 30.0
    # Instead of a stream, this whole body with status 200 and this content type (a server
    # that ignores `stream`, or a web page where the API should be).
    whole: bytes | None = None
    content_type: str = "application/json"


def calls(*tool_calls: tuple[str, str], **reply: Any) -> Reply:
    """A reply asking for tool calls (finish reason "tool_calls"), no text."""
    return Reply(deltas=[], tool_calls=list(tool_calls), finish="tool_calls", **reply)


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeOpenAI:
    """`POST …/chat/completions`, streamed as SSE over chunked HTTP/1.1; records requests."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Request] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = orjson.loads(self.rfile.read(length)) if length else {}
                fake.requests.append(Request(self.path, dict(self.headers), body))
                reply = fake.replies.popleft() if fake.replies else Reply()
                if reply.whole is not None:
                    self.send_response(200)
                    self.send_header("content-type", reply.content_type)
                    self.send_header("content-length", str(len(reply.whole)))
                    self.end_headers()
                    self.wfile.write(reply.whole)
                    return
                if reply.status >= 400:
                    payload = orjson.dumps(reply.error_body or {"error": {"message": "failed"}})
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                model = body.get("model", "fake")
                for delta in reply.deltas:
                    time.sleep(reply.delay_s)
                    self._event(
                        {"model": model, "choices": [{"index": 0, "delta": {"content": delta}}]}
                    )
                self._tool_calls(model, reply, len(fake.requests))
                if reply.keepalive_s is not None or reply.silent:
                    self._stall(reply)
                    return
                if reply.cut:
                    self.wfile.write(b"5\r\ndata:")  # a chunk, and no end: a broken stream
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if reply.error_event:
                    self._event({"error": {"message": reply.error_event}})
                if reply.finish:
                    self._event(
                        {
                            "model": model,
                            "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish}],
                        }
                    )
                if reply.usage:
                    self._event({"model": model, "choices": [], "usage": reply.usage})
                if reply.done:
                    self._chunk(b"data: [DONE]\n\n")
                self._chunk(b"")

            def _tool_calls(self, model: str, reply: Reply, request: int) -> None:
                for index, (name, arguments) in enumerate(reply.tool_calls):
                    size = -(-len(arguments) // reply.pieces) or 1
                    pieces = [arguments[i : i + size] for i in range(0, len(arguments), size)]
                    first = {
                        "index": index,
                        "id": f"call_{request}_{index}",
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }
                    rest = [{"index": index, "function": {"arguments": p}} for p in pieces]
                    for fragment in [first, *rest]:
                        delta = {"tool_calls": [fragment]}
                        self._event({"model": model, "choices": [{"index": 0, "delta": delta}]})

            def _stall(self, reply: Reply) -> None:
                until = time.monotonic() + (60.0 if reply.keepalive_s is not None else reply.hold_s)
                try:
                    while time.monotonic() < until:
                        if reply.silent:
                            time.sleep(0.05)
                            continue
                        self._chunk(b": ping\n\n")
                        time.sleep(reply.keepalive_s or 0.0)
                except OSError:
                    pass  # the client hung up
                self.close_connection = True

            def _event(self, value: dict[str, Any]) -> None:
                self._chunk(b"data: " + orjson.dumps(value) + b"\n\n")

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = _serving(self.server)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _sse(
    handler: BaseHTTPRequestHandler,
    events: list[tuple[str | None, dict[str, Any]]],
    request_id: str | None = None,
) -> None:
    """Send server-sent events over a plain (close-delimited) HTTP/1.0-style response, under
    a `request-id` of its own (as the real API gives each response)."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("request-id", request_id or _unique("req"))
    handler.send_header("connection", "close")
    handler.end_headers()
    for name, data in events:
        head = f"event: {name}\n".encode() if name else b""
        handler.wfile.write(head + b"data: " + orjson.dumps(data) + b"\n\n")
        handler.wfile.flush()


class _Recorder:
    """A loopback HTTP server recording every POST; `reply(request) -> text` picks answers."""

    def __init__(self, stream: Any) -> None:
        self.requests: list[Request] = []
        self.text = "ok from the fake model"
        # Answers to give, in order, before falling back to `text`: a string is text, a dict
        # {"tool": name, "arguments": {...}} is a tool call (every fake), reporting its
        # optional "input_tokens" as the request's input usage (Anthropic, Responses, chat); a
        # Responses call may name the tool's "namespace" (Codex offers MCP tools in one).
        self.script: deque[Any] = deque()
        # A request this picks (body → True) is refused with `refusal` (an HTTP status and
        # an Anthropic-shaped error type): the harness reports it as the API's error.
        self.refuse: Callable[[dict[str, Any]], bool] | None = None
        self.refusal = (403, "permission_error")
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                recorder.requests.append(Request(self.path, dict(self.headers), {}))
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    body = {"raw": raw.decode(errors="replace")}
                recorder.requests.append(Request(self.path, dict(self.headers), body))
                if recorder.refuse is not None and recorder.refuse(body):
                    status, kind = recorder.refusal
                    error = {"type": "error", "error": {"type": kind, "message": "refused"}}
                    raw_error = orjson.dumps(error)
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw_error)))
                    self.end_headers()
                    self.wfile.write(raw_error)
                    return
                stream(self, body, recorder.answer(body))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = _serving(self.server)

    def answer(self, body: dict[str, Any]) -> Any:
        """The next scripted answer; a scripted tool call goes only to a request that offers
        that tool (a harness's side requests, e.g. a title, offer none and get the text)."""
        if self.script:
            wanted = self.script[0]
            if not isinstance(wanted, dict) or _qualified(wanted) in _offered(body):
                return self.script.popleft()
        return self.text

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> Any:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


_ids = itertools.count(1)


def _unique(prefix: str) -> str:
    """An id no other response of this process has: a harness that counts usage once per
    message or request id (Claude Code's lines of one request repeat it) must see every
    response's usage."""
    return f"{prefix}_fake{next(_ids):06d}"


def _anthropic(handler: BaseHTTPRequestHandler, body: dict[str, Any], text: Any) -> None:
    model = body.get("model", "claude-fake")
    message_id, request_id = _unique("msg"), _unique("req")
    if isinstance(text, dict):  # a scripted tool call: {"tool": name, "arguments": {...}}
        block = {"type": "tool_use", "id": f"toolu_{id(text):x}", "name": text["tool"]}
        delta = {
            "type": "input_json_delta",
            "partial_json": orjson.dumps(text["arguments"]).decode(),
        }
        start = {"type": "content_block_start", "index": 0, "content_block": block | {"input": {}}}
        message = {"id": message_id, "type": "message", "role": "assistant", "model": model}
        usage = {"input_tokens": text.get("input_tokens", 100), "output_tokens": 1}
        _sse(
            handler,
            [
                (
                    "message_start",
                    {
                        "type": "message_start",
                        "message": message
                        | {
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": usage,
                        },
                    },
                ),
                ("content_block_start", start),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "usage": {"output_tokens": 9},
                        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ],
            request_id,
        )
        return
    _sse(
        handler,
        [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 100, "output_tokens": 1},
                    },
                },
            ),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            ("ping", {"type": "ping"}),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": text},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 7},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ],
        request_id,
    )


def _responses(handler: BaseHTTPRequestHandler, body: dict[str, Any], text: Any) -> None:
    """A text answer, or (`text` a dict {"tool", "arguments"}) one `function_call` item."""
    message_id, response_id = _unique("msg"), _unique("resp")
    item: dict[str, Any]
    if isinstance(text, dict):
        call_id = f"call_{len(body.get('input') or [])}"
        item = {
            "type": "function_call",
            "id": f"fc_{call_id}",
            "call_id": call_id,
            **({"namespace": text["namespace"]} if "namespace" in text else {}),
            "name": text["tool"],
            "arguments": orjson.dumps(text["arguments"]).decode(),
            "status": "completed",
        }
        started = {**item, "status": "in_progress", "arguments": ""}
        delta: list[tuple[str | None, dict[str, Any]]] = []
    else:
        item = {
            "type": "message",
            "id": message_id,
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        started = {**item, "status": "in_progress", "content": []}
        delta = [
            (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "output_index": 0,
                    "item_id": message_id,
                    "content_index": 0,
                    "delta": text,
                },
            )
        ]
    usage = {
        "input_tokens": text.get("input_tokens", 120) if isinstance(text, dict) else 120,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 9,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 129,
    }
    _sse(
        handler,
        [
            (
                "response.created",
                {
                    "type": "response.created",
                    "response": {"id": response_id, "status": "in_progress"},
                },
            ),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": started},
            ),
            *delta,
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {
                        "id": response_id,
                        "status": "completed",
                        "output": [item],
                        "usage": usage,
                    },
                },
            ),
        ],
    )


def _offered(body: dict[str, Any]) -> set[str]:
    """The tool names a request offers (OpenAI chat nests them under `function`; a Responses
    namespace's tools are named `<namespace>__<tool>`)."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        tools = []
    names = set()
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        names |= {str(d.get("name")) for d in tool.get("functionDeclarations") or ()}  # Gemini
        names.add(str((tool.get("function") or tool).get("name")))
        if tool.get("type") == "namespace":
            names |= {f"{tool.get('name')}__{inner.get('name')}" for inner in tool.get("tools", [])}
    return names


def _qualified(call: dict[str, Any]) -> str:
    """A scripted tool call's name as `_offered` lists it."""
    return f"{call['namespace']}__{call['tool']}" if "namespace" in call else str(call["tool"])


def _chat(handler: BaseHTTPRequestHandler, body: dict[str, Any], answer: Any) -> None:
    """A text answer, or (`answer` a dict {"tool", "arguments"}) one streamed tool call."""
    chunk = {
        "id": _unique("chatcmpl"),
        "object": "chat.completion.chunk",
        "model": body.get("model", "fake"),
    }
    if isinstance(answer, dict):
        call = {
            "index": 0,
            "id": f"call_{len(body.get('messages', []))}",
            "type": "function",
            "function": {
                "name": answer["tool"],
                "arguments": orjson.dumps(answer["arguments"]).decode(),
            },
        }
        delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": answer}, "stop"
    prompt = answer.get("input_tokens", 100) if isinstance(answer, dict) else 100
    usage = {"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7}
    _sse(
        handler,
        [
            (None, {**chunk, "choices": [{"index": 0, "delta": delta}]}),
            (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
            (None, {**chunk, "choices": [], "usage": usage}),
        ],
    )
    handler.wfile.write(b"data: [DONE]\n\n")


def _gemini(handler: BaseHTTPRequestHandler, body: dict[str, Any], answer: Any) -> None:
    """A text answer, or (`answer` a dict {"tool", "arguments"}) one `functionCall` part, as
    `models/<m>:streamGenerateContent?alt=sse` streams it (one SSE chunk), or as one JSON
    body for a plain `:generateContent` (the Gemini CLI's side requests)."""
    if isinstance(answer, dict):
        part: dict[str, Any] = {
            "functionCall": {"name": answer["tool"], "args": answer["arguments"]}
        }
        prompt = int(answer.get("input_tokens", 100))
    else:
        part, prompt = {"text": answer}, 100
    chunk = {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": 7,
            "totalTokenCount": prompt + 7,
        },
        "modelVersion": "gemini-fake",
        "responseId": _unique("resp"),
    }
    if ":streamGenerateContent" in handler.path:
        _sse(handler, [(None, chunk)])
        return
    raw = orjson.dumps(chunk)
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


def fake_gemini() -> _Recorder:
    """Gemini's generateContent API (`POST /v1beta/models/<model>:…`), as the Gemini CLI
    calls it with `GOOGLE_GEMINI_BASE_URL` and an API key."""
    return _Recorder(_gemini)


def fake_anthropic() -> _Recorder:
    """Anthropic Messages (`POST /v1/messages`), as Claude Code streams it."""
    return _Recorder(_anthropic)


def fake_responses() -> _Recorder:
    """OpenAI Responses (`POST /v1/responses`), as the Codex CLI streams it."""
    return _Recorder(_responses)


def fake_chat() -> _Recorder:
    """OpenAI chat completions, as DSH's deepseek adapter streams it."""
    return _Recorder(_chat)


class RefusingProxy:
    """An HTTP(S) proxy on 127.0.0.1 that refuses everything and records what was asked."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def refuse(self) -> None:
                proxy.attempts.append(f"{self.command} {self.path}")
                self.send_response(403)
                self.send_header("content-length", "0")
                self.end_headers()

            do_CONNECT = do_GET = do_POST = do_PUT = do_HEAD = refuse

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = _serving(self.server)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def env(self) -> dict[str, str]:
        """Send every outside request here; loopback (the fakes) goes direct."""
        return {
            name: self.url
            for name in (
                "HTTP_PROXY",
                "HTTPS_PROXY",
                "ALL_PROXY",
                "http_proxy",
                "https_proxy",
                "all_proxy",
            )
        } | {
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "NODE_USE_ENV_PROXY": "1",
        }

    def __enter__(self) -> RefusingProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# How often a fake server's loop looks for its shutdown: http.server's default (0.5 s) was
# half a second at the end of every test that used one.
POLL_S = 0.02


def _serving(server: ThreadingHTTPServer) -> threading.Thread:
    """The thread that serves `server` until its shutdown (which then returns within
    POLL_S)."""
    return threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True
    )
