"""Real fake servers on 127.0.0.1 for tests: an OpenAI-compatible chat completions API."""

from __future__ import annotations

import threading
import time
from collections import deque
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


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeOpenAI:
    """`POST /v1/chat/completions`, streamed as SSE over chunked HTTP/1.1; records requests."""

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

            def _event(self, value: dict[str, Any]) -> None:
                self._chunk(b"data: " + orjson.dumps(value) + b"\n\n")

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
