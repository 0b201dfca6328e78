"""The one door every request passes: who may ask, what may change, how much may be sent.

Only the owner of the state directory is served: every route, reads included, needs the
install's token (`<state dir>/token`, 0600 in a 0700 directory, so no other user of the
machine can read it), presented one of two ways:

- scripts send it in the `X-Dshkit-Token` header;
- a browser opens the login link `dshkit serve` prints (or `dshkit open` opens),
  `/?token=…`: the token is accepted there only, on a GET of a page, and exchanged for an
  HttpOnly, SameSite=Strict cookie (its value an HMAC of the token under a key this process
  drew, so a restart logs browsers out), then the browser is sent to the same URL without
  the token, out of the address bar and the history.

Other pages the browser shows cannot act with that cookie. Another port of 127.0.0.1 is the
same *site* (SameSite does not keep it out) but another *origin*: the cookie counts only on
a request the browser marks as coming from the console's own origin or from the person
(`Sec-Fetch-Site`), and a change made with it must also carry `X-Dshkit-Request` (no form
can set a header; a cross-origin script that sets one needs a CORS preflight, which is never
granted) and the console's own `Origin`. No CORS header is ever sent, so no other origin can
read an answer.

Where requests may come from is checked first: a request is *local* when both its peer
address and its `Host` are loopback (the peer check keeps other machines out whatever `Host`
they claim, the `Host` check keeps DNS-rebinding pages out); one that is not is refused
unless the service was started with `--allow-remote`. A change never comes from a foreign
`Origin`.

Bodies are bounded for every route: a declared length over the limit is refused unread
(413), reading stops once the limit is passed (413), and a body that arrives slower than the
read timeout gets 408. Handlers read bodies through `routing.read_json`, never unbounded.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import ipaddress
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson
from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .link import LOGIN_PARAM

MAX_BODY_BYTES = 1_000_000
READ_TIMEOUT_S = 10.0
TOKEN_HEADER = "x-dshkit-token"
REQUEST_HEADER = "x-dshkit-request"  # the console's mark on the changes it asks for
COOKIE_PREFIX = "dshkit-auth-"  # + the port: two services on one host keep their own cookies
SAFE_METHODS = frozenset({"GET", "HEAD"})
# What a browser says of who asked (Fetch Metadata): the console's own pages, or the person
# (a typed or opened URL). Another site's page, or another port of 127.0.0.1, is neither.
_OWN_FETCH_SITES = frozenset({"same-origin", "none"})
_DISCONNECT: Message = {"type": "http.disconnect"}
_PAGE_HEADERS = [
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
]
_SIGN_IN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dshkit: sign in</title></head>
<body><h1>dshkit</h1><p>{reason}</p>
<p>This console serves only the person who started it. Open the link
<code>dshkit serve</code> printed (<code>http://&hellip;/?token=&hellip;</code>), or run
<code>dshkit open</code>.</p></body></html>
"""


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


class _Answer:
    """A response the guard gives in the route's place."""

    def __init__(self, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        self.status, self.body, self.headers = status, body, headers

    async def __call__(self, send: Send) -> None:
        headers = [*self.headers, (b"content-length", b"%d" % len(self.body))]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


def _json(status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> _Answer:
    body = orjson.dumps({"ok": False, "error": message})
    return _Answer(status, body, [(b"content-type", b"application/json"), *(headers or [])])


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
        # The cookie holds a MAC of the token, not the token: a cookie that leaks (a browser
        # profile copied, a debugging dump) is worth nothing once this process has ended.
        key = secrets.token_bytes(32)
        self._session = hmac.new(key, self.token, hashlib.sha256).hexdigest().encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no WebSockets are served
            await send({"type": "websocket.close", "code": 1008})
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            await refusal(send)
            return
        await _BoundedBody(self, scope, receive, send).run()

    def refusal(self, scope: Scope) -> _Answer | None:
        """What to answer in the route's place (a refusal, or the login link's redirect), or
        None to let the request through."""
        headers = Headers(scope=scope)
        client = scope.get("client")
        peer = str(client[0]) if client else None
        local_peer = peer is not None and is_loopback_address(peer)
        host = headers.get("host")
        if not (local_peer and is_loopback(host)) and not self.allow_remote:
            if not local_peer:
                return _json(
                    403,
                    f"requests from other machines are refused (peer {peer}); "
                    "the service was not started with --allow-remote",
                )
            return _json(403, "only loopback host names are served (Host header refused)")
        safe = scope["method"] in SAFE_METHODS
        origin = headers.get("origin")
        if not safe and origin is not None:
            netloc = urlsplit(origin).netloc
            if not (is_loopback(netloc) or (self.allow_remote and netloc == host)):
                return _json(403, f"requests from origin {origin!r} are refused")
        refused = self._authentication(scope, headers, safe)
        if refused is not None:
            return refused
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            return _json(413, f"request body over the {self.max_body}-byte limit")
        return None

    def _authentication(self, scope: Scope, headers: Headers, safe: bool) -> _Answer | None:
        """None when the request comes from the owner (the token header, or the console's
        cookie on a request of the console's own); else the answer to give."""
        sent = headers.get(TOKEN_HEADER)
        if sent is not None:
            if self._is_token(sent):
                return None
            return _unauthenticated(scope, f"wrong {TOKEN_HEADER} header")
        page = not _is_api(scope["path"])
        link = _login_token(scope) if safe and page else None
        if link is not None:
            if self._is_token(link):
                return self._sign_in(scope)
            return _unauthenticated(
                scope, "the token in this link is wrong (or from another install)"
            )
        if not self._has_session(scope, headers):
            return _unauthenticated(
                scope, f"sign in first: the {TOKEN_HEADER} header, or the login link's cookie"
            )
        if safe:
            return None
        if headers.get(REQUEST_HEADER) != "1":
            return _json(403, f"a change made from the console needs the {REQUEST_HEADER} header")
        own = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"
        if headers.get("origin") != own:
            return _json(403, f"a change made from the console needs its own Origin ({own})")
        return None

    def _is_token(self, sent: str) -> bool:
        return hmac.compare_digest(sent.encode(), self.token)

    def _has_session(self, scope: Scope, headers: Headers) -> bool:
        if headers.get("sec-fetch-site", "none") not in _OWN_FETCH_SITES:
            return False  # another origin made the browser send it: it does not count
        cookie = cookie_parser(headers.get("cookie", "")).get(_cookie_name(scope))
        return cookie is not None and hmac.compare_digest(cookie.encode(), self._session)

    def _sign_in(self, scope: Scope) -> _Answer:
        """The login link's answer: the cookie, and the same URL without the token."""
        rest = [(k, v) for k, v in _query(scope) if k != LOGIN_PARAM]
        path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        # One leading slash: `//host/…` would send the browser to another host.
        location = "/" + path.lstrip("/") + (f"?{urlencode(rest)}" if rest else "")
        cookie = (
            f"{_cookie_name(scope)}={self._session.decode()}; Path=/; HttpOnly; SameSite=Strict"
        )
        if scope.get("scheme") == "https":
            cookie += "; Secure"
        headers = [
            (b"location", location.encode("latin-1")),
            (b"set-cookie", cookie.encode()),
            *_PAGE_HEADERS,
        ]
        return _Answer(303, b"", headers)


def _is_api(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def _query(scope: Scope) -> list[tuple[str, str]]:
    return parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


def _login_token(scope: Scope) -> str | None:
    found = [v for k, v in _query(scope) if k == LOGIN_PARAM]
    return found[-1] if found else None


def _cookie_name(scope: Scope) -> str:
    server = scope.get("server")
    return f"{COOKIE_PREFIX}{server[1]}" if server and server[1] is not None else "dshkit-auth"


def _unauthenticated(scope: Scope, reason: str) -> _Answer:
    """401: a JSON error under /api/, a page saying how to sign in elsewhere."""
    challenge = (b"www-authenticate", b'DshkitToken realm="dshkit"')
    if _is_api(scope["path"]):
        return _json(401, reason, [challenge])
    body = _SIGN_IN_PAGE.format(reason=html.escape(reason)).encode()
    headers = [(b"content-type", b"text/html; charset=utf-8"), challenge, *_PAGE_HEADERS]
    return _Answer(401, body, headers)


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
            await _json(status, message)(self._send)
            self.answered = True
        return _DISCONNECT

    async def send(self, message: Message) -> None:
        if self.answered:
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)
