"""The one door every request passes: who may ask, what may change, how much may be sent.

A request is *local* when both its peer address and its `Host` are loopback: the peer check
keeps other machines out whatever `Host` they claim, the `Host` check keeps DNS-rebinding
pages out. Local reads are free; a local request that changes state needs the install's
token and no foreign `Origin` (no web page the user visits can act for them). A request
that is not local is refused, unless the service was started with `--allow-remote`: then it
needs the token for every method, reads included.

Bodies are bounded for every route: a declared length over the limit is refused unread
(413), reading stops once the limit is passed (413), and a body that arrives slower than the
read timeout gets 408. Handlers read bodies through `routing.read_json`, never unbounded.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
from urllib.parse import urlsplit

import orjson
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 1_000_000
READ_TIMEOUT_S = 10.0
TOKEN_HEADER = "x-dshkit-token"
SAFE_METHODS = frozenset({"GET", "HEAD"})
_DISCONNECT: Message = {"type": "http.disconnect"}


def is_loopback(host: str | None) -> bool:
    """Whether a `Host` (or origin netloc) names this machine's loopback, port or not."""
    if not host:
        return False
    if host.startswith("["):  # [::1]:8765
        name = host[1 : host.find("]")] if "]" in host else ""
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name.lower() == "localhost" or is_loopback_address(name)


def is_loopback_address(address: str) -> bool:
    """Whether an IP address is loopback; not a prefix test, so `127.evil.example` is not."""
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


class Guard:
    """Pure ASGI middleware applying the rules above to every HTTP request."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        *,
        allow_remote: bool = False,
        max_body: int = MAX_BODY_BYTES,
        read_timeout: float = READ_TIMEOUT_S,
    ) -> None:
        self.app = app
        self.token = token.encode()
        self.allow_remote = allow_remote
        self.max_body = max_body
        self.read_timeout = read_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no WebSockets are served
            await send({"type": "websocket.close", "code": 1008})
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            await _answer(send, *refusal)
            return
        await _BoundedBody(self, scope, receive, send).run()

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """The status and reason to refuse this request with, before it reaches a route."""
        headers = Headers(scope=scope)
        client = scope.get("client")
        peer = str(client[0]) if client else None
        local_peer = peer is not None and is_loopback_address(peer)
        host = headers.get("host")
        local = local_peer and is_loopback(host)
        if not local and not self.allow_remote:
            if not local_peer:
                return 403, (
                    f"requests from other machines are refused (peer {peer}); "
                    "the service was not started with --allow-remote"
                )
            return 403, "only loopback host names are served (Host header refused)"
        method = scope["method"]
        if method not in SAFE_METHODS:
            origin = headers.get("origin")
            if origin is not None:
                netloc = urlsplit(origin).netloc
                if not (is_loopback(netloc) or (self.allow_remote and netloc == host)):
                    return 403, f"requests from origin {origin!r} are refused"
        if method not in SAFE_METHODS or not local:
            sent = headers.get(TOKEN_HEADER, "").encode()
            if not hmac.compare_digest(sent, self.token):
                return 403, f"missing or wrong {TOKEN_HEADER} header (see <state-dir>/token)"
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            return 413, f"request body over the {self.max_body}-byte limit"
        return None


class _BoundedBody:
    """One request passed on with its body bounded in size and time.

    Past a bound the guard answers itself and tells the route the client is gone, so the
    route stops reading; whatever the route then tries to answer is dropped.
    """

    def __init__(self, guard: Guard, scope: Scope, receive: Receive, send: Send) -> None:
        self.guard, self.scope, self._receive, self._send = guard, scope, receive, send
        self.received = 0
        self.complete = False
        self.deadline: float | None = None
        self.started = False  # the route began its response
        self.answered = False  # the guard answered in the route's place

    async def run(self) -> None:
        try:
            await self.guard.app(self.scope, self.receive, self.send)
        except Exception:
            if not self.answered:
                raise  # the route's own failure; the route was told the client left otherwise

    async def receive(self) -> Message:
        if self.answered:
            return _DISCONNECT
        if self.complete:  # later calls only wait for a disconnect (streamed responses)
            return await self._receive()
        loop = asyncio.get_running_loop()
        if self.deadline is None:
            self.deadline = loop.time() + self.guard.read_timeout
        try:
            async with asyncio.timeout_at(self.deadline):
                message = await self._receive()
        except TimeoutError:
            seconds = self.guard.read_timeout
            return await self.refuse(408, f"request body not received within {seconds:g} s")
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.guard.max_body:
                return await self.refuse(
                    413, f"request body over the {self.guard.max_body}-byte limit"
                )
            self.complete = not message.get("more_body", False)
        return message

    async def refuse(self, status: int, message: str) -> Message:
        if not self.started:
            await _answer(self._send, status, message)
            self.answered = True
        return _DISCONNECT

    async def send(self, message: Message) -> None:
        if self.answered:
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)


async def _answer(send: Send, status: int, message: str) -> None:
    body = orjson.dumps({"ok": False, "error": message})
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
