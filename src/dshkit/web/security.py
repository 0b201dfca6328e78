"""The one door every request passes: who may ask, what may change, how much may be sent.

Only the owner of the state directory is served. Three things make a request the owner's
(docs/design/service.md#only-the-owner-reaches-their-data):

- a script sends the install's token in the `X-Dshkit-Token` header (`<state dir>/token`,
  0600 in a 0700 directory, drawn anew each time `dshkit serve` starts);
- the console sends its tab's credential in the `X-Dshkit-Console` header: drawn by this
  process, handed to the page once when it signs in, kept by the page in origin-scoped
  storage (`sessionStorage`: scheme, host *and* port), so no other origin ever receives it;
- Claude Code's resident hooks (`install-hooks --resident`) send their own credential in the
  `X-Dshkit-Hook` header (`<state dir>/hook-token`, 0600, drawn once by `dshkit service
  install` and kept across restarts, since Claude Code's environment holds it): it opens
  `POST /api/hooks/…` and nothing else;
- a browser signs in with a one-time login code (`/?login=…`: printed by `dshkit serve`, or
  minted for `dshkit open` by `POST /api/login-codes` with the token). The answer is the
  console page carrying the tab's credential, and a cookie that opens the page shell
  (`/`, `/static/…`) again on a reload and nothing else: browsers send cookies to every port
  of a host, so a cookie must be worth nothing to whoever receives it. No API route honours
  it.

On Linux a loopback connection is also refused unless its client socket belongs to this
process's user (`peer.owner`), whatever it presents: a leaked value is no use from another
account.

Where requests may come from is checked first: a request is *local* when both its peer
address and its `Host` are loopback (the peer check keeps other machines out whatever `Host`
they claim, the `Host` check keeps DNS-rebinding pages out); one that is not is refused
unless the service was started with `--allow-remote`. A change never comes from a foreign
`Origin`. No CORS header is ever sent, so no other origin can read an answer.

Bodies are bounded for every route: a declared length over the limit is refused unread
(413), reading stops once the limit is passed (413), and a body that arrives slower than the
read timeout gets 408. Handlers read bodies through `routing.read_json`, never unbounded.
"""

from __future__ import annotations

import asyncio
import hmac
import html
import ipaddress
import os
import secrets
import time
from collections.abc import Callable, Mapping
from typing import TypedDict
from urllib.parse import parse_qsl, urlsplit

import orjson
from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import peer
from .link import LOGIN_PARAM

MAX_BODY_BYTES = 1_000_000
READ_TIMEOUT_S = 10.0
TOKEN_HEADER = "x-dshkit-token"
HOOK_HEADER = "x-dshkit-hook"  # install.resident.HOOK_HEADER, as Starlette spells headers
HOOKS_PATH = "/api/hooks/"
CONSOLE_HEADER = "x-dshkit-console"  # the console tab's credential (see the module's text)
CONSOLE_STATE = "dshkit.console"  # scope state: the credential the signed-in page is handed
COOKIE_PREFIX = "dshkit-shell-"  # + the port: two services on one host keep their own cookies
LOGIN_CODES_PATH = "/api/login-codes"
LOGIN_CODE_TTL_S = 120.0  # a code minted for `dshkit open`: long enough to open a browser
_MAX_CODES = 64  # unspent codes kept; the oldest goes first
_OLD_LINK_PARAM = "token"  # the login links of earlier versions carried the token itself
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
<p>This console serves only the person who started it. Run <code>dshkit open</code>: it
opens the console signed in (or open the one-time link <code>dshkit serve</code> printed,
<code>http://&hellip;/?login=&hellip;</code>, if it was not used yet).</p></body></html>
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
    return _body(status, {"ok": False, "error": message}, headers)


class LoginCode(TypedDict):
    """A one-time login code (201; asked with the token only, as `dshkit open` asks): good for
    one sign-in, `/?login=<code>`, within `expiresInS` seconds."""

    ok: bool
    code: str
    expiresInS: float


def _body(
    status: int, value: Mapping[str, object], headers: list[tuple[bytes, bytes]] | None = None
) -> _Answer:
    content = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
    return _Answer(status, orjson.dumps(value), [*content, *(headers or [])])


class _SignIn:
    """Marks a request as the login's: the route is passed the tab's credential, and its
    answer gets the shell cookie."""

    def __init__(self, credential: str, cookie: str) -> None:
        self.credential, self.cookie = credential, cookie


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
        owner_uid: int | None = None,
        peer_tables: tuple[str, ...] = peer.TABLES,
        hook_token: Callable[[], str | None] | None = None,
    ) -> None:
        self.app = app
        self.token = token.encode()
        # The resident hooks' credential, read at each hook call (installed after the start).
        self.hook_token = hook_token
        self.allow_remote = allow_remote
        self.max_body = max_body
        self.read_timeout = read_timeout
        # Whose connections are served: this process's user (None: the default, geteuid).
        self.owner_uid = os.geteuid() if owner_uid is None else owner_uid
        self.peer_tables = peer_tables
        # Both drawn by this process, never derived from the token: a restart makes every
        # signed-in tab and every cookie worthless.
        self.console = secrets.token_urlsafe(32)
        self._shell = secrets.token_urlsafe(32).encode()
        self._codes: dict[str, float] = {}  # unspent login code -> when it expires (monotonic)

    def mint_login(self, ttl: float | None = LOGIN_CODE_TTL_S) -> str:
        """A login code good for one sign-in, within `ttl` seconds (None: while this process
        serves, as for the link `dshkit serve` prints)."""
        now = time.monotonic()
        self._codes = {c: t for c, t in self._codes.items() if t > now}
        while len(self._codes) >= _MAX_CODES:
            del self._codes[next(iter(self._codes))]
        code = secrets.token_urlsafe(24)
        self._codes[code] = float("inf") if ttl is None else now + ttl
        return code

    def _spend(self, code: str) -> bool:
        """Whether `code` is an unspent, unexpired login code; it is spent either way."""
        for known in list(self._codes):
            if hmac.compare_digest(known.encode(), code.encode()):
                return self._codes.pop(known) > time.monotonic()
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no WebSockets are served
            await send({"type": "websocket.close", "code": 1008})
            return
        refusal = self.refusal(scope)
        if isinstance(refusal, _Answer):
            await refusal(send)
            return
        if isinstance(refusal, _SignIn):
            scope = {
                **scope,
                "state": {**scope.get("state", {}), CONSOLE_STATE: refusal.credential},
            }
            send = _with_cookie(send, refusal.cookie)
        await _BoundedBody(self, scope, receive, send).run()

    def refusal(self, scope: Scope) -> _Answer | _SignIn | None:
        """What to answer in the route's place (a refusal, or a minted login code), a sign-in
        to pass on, or None to let the request through."""
        headers = Headers(scope=scope)
        client = scope.get("client")
        peer_address = str(client[0]) if client else None
        local_peer = peer_address is not None and is_loopback_address(peer_address)
        host = headers.get("host")
        if not (local_peer and is_loopback(host)) and not self.allow_remote:
            if not local_peer:
                return _json(
                    403,
                    f"requests from other machines are refused (peer {peer_address}); "
                    "the service was not started with --allow-remote",
                )
            return _json(403, "only loopback host names are served (Host header refused)")
        refused = self._foreign_user(scope, local_peer)
        if refused is not None:
            return refused
        safe = scope["method"] in SAFE_METHODS
        origin = headers.get("origin")
        if not safe and origin is not None:
            netloc = urlsplit(origin).netloc
            if not (is_loopback(netloc) or (self.allow_remote and netloc == host)):
                return _json(403, f"requests from origin {origin!r} are refused")
        verdict = self._authentication(scope, headers, safe)
        if verdict is not None:
            return verdict
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            return _json(413, f"request body over the {self.max_body}-byte limit")
        return None

    def _foreign_user(self, scope: Scope, local_peer: bool) -> _Answer | None:
        """403 when the kernel says another user of this machine opened the connection, over
        loopback or (with --allow-remote) over one of this machine's other addresses; a
        client socket no table of this machine holds is another machine's."""
        uid = peer.owner_of(scope, self.peer_tables)
        if uid is None or uid == self.owner_uid:
            return None  # the owner's, or a platform where the kernel cannot be asked
        if uid == peer.NOBODY_FOUND and not local_peer:
            return None  # another machine's (let in by --allow-remote): its credential decides
        return _json(
            403,
            f"this service answers only its owner (uid {self.owner_uid}); this connection "
            f"comes from {peer.who(uid)}",
        )

    def _authentication(
        self, scope: Scope, headers: Headers, safe: bool
    ) -> _Answer | _SignIn | None:
        """None when the request comes from the owner (the token header, the console tab's
        header, or the shell cookie on a page of the console's own); else the answer to give."""
        hook = headers.get(HOOK_HEADER)
        if hook is not None:
            wanted = self.hook_token() if self.hook_token is not None else None
            door = scope["path"].startswith(HOOKS_PATH) and scope["method"] == "POST"
            if door and wanted and hmac.compare_digest(hook.encode(), wanted.encode()):
                return None
            return _unauthenticated(
                scope, f"wrong {HOOK_HEADER} header (it opens POST {HOOKS_PATH}… only)"
            )
        sent = headers.get(TOKEN_HEADER)
        if sent is not None:
            if not hmac.compare_digest(sent.encode(), self.token):
                return _unauthenticated(
                    scope, f"wrong {TOKEN_HEADER} header (the token is drawn anew at each start)"
                )
            if scope["path"] == LOGIN_CODES_PATH and scope["method"] == "POST":
                code = self.mint_login()
                minted: LoginCode = {"ok": True, "code": code, "expiresInS": LOGIN_CODE_TTL_S}
                return _body(201, minted)
            return None
        console = headers.get(CONSOLE_HEADER)
        if console is not None:
            if hmac.compare_digest(console.encode(), self.console.encode()):
                # Only the console's own page holds it: a change naming another origin (even
                # another port of this host) did not come from that page.
                own = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"
                origin = headers.get("origin")
                if not safe and origin is not None and origin != own:
                    return _json(
                        403, f"a change made from the console needs its own Origin ({own})"
                    )
                return None
            return _unauthenticated(
                scope,
                "this tab signed in to an earlier start of the service: run `dshkit open`",
            )
        if _is_api(scope["path"]):
            return _unauthenticated(
                scope, f"send the {TOKEN_HEADER} header (scripts), or sign the console in"
            )
        if not safe:
            return _unauthenticated(scope, "pages take no changes")
        query = _query(scope)
        login = _last(query, LOGIN_PARAM)
        if login is not None:
            # Spent wherever it is shown: a code seen in any address opens nothing after.
            if not self._spend(login) or scope["path"] != "/":
                return _unauthenticated(
                    scope, "this login link was used already, has expired or is not this service's"
                )
            cookie = (
                f"{_cookie_name(scope)}={self._shell.decode()}; Path=/; HttpOnly; SameSite=Strict"
            )
            if scope.get("scheme") == "https":
                cookie += "; Secure"
            return _SignIn(self.console, cookie)
        if _last(query, _OLD_LINK_PARAM) is not None:
            return _unauthenticated(scope, "this login link is from an older dshkit")
        if not self._has_shell(headers, scope):
            return _unauthenticated(scope, "not signed in")
        return None

    def _has_shell(self, headers: Headers, scope: Scope) -> bool:
        """The shell cookie on a request the browser marks as the console's own or the
        person's: it opens the page and its assets, which hold no data."""
        if headers.get("sec-fetch-site", "none") not in _OWN_FETCH_SITES:
            return False  # another origin made the browser send it: it does not count
        cookie = cookie_parser(headers.get("cookie", "")).get(_cookie_name(scope))
        return cookie is not None and hmac.compare_digest(cookie.encode(), self._shell)


def _with_cookie(send: Send, cookie: str) -> Send:
    """`send` with the shell cookie added to the response's headers."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
            message = {**message, "headers": headers}
        await send(message)

    return sending


def _is_api(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def _query(scope: Scope) -> list[tuple[str, str]]:
    return parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


def _last(query: list[tuple[str, str]], name: str) -> str | None:
    found = [v for k, v in query if k == name]
    return found[-1] if found else None


def _cookie_name(scope: Scope) -> str:
    server = scope.get("server")
    return f"{COOKIE_PREFIX}{server[1]}" if server and server[1] is not None else "dshkit-shell"


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
