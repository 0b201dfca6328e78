"""A capability's API as one `Router` under `/api/<name>/`, and what its handlers share.

Handlers do no access checks of their own (the guard in `security` has done them for every
route); they read bodies with `read_json` and refuse with `ApiError`. What a service raises
from the error tree is mapped here once, by class (`STATUS`), so handlers catch nothing:
both become the same JSON error shape everywhere, `{"ok": false, "error": "…"}` with `kind`,
and `field`, `code` and `detail` where the error has them.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from ..errors import (
    Ambiguous,
    Busy,
    DshkitError,
    Failed,
    Invalid,
    NotFound,
    Refused,
    TooLarge,
    Unavailable,
)
from ..store import SQLITE_INT_MAX

Handler = Callable[[Request], Awaitable[Response]]
H = TypeVar("H", bound=Handler)

_NAME = re.compile(r"[a-z][a-z0-9-]*")
_DIGITS = re.compile(r"[0-9]+")


class ApiError(Exception):
    """Raised by a handler to answer `status` with `message` in the JSON error shape."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# The error tree as HTTP, most specific first: (class, status, kind).
STATUS: tuple[tuple[type[DshkitError], int, str], ...] = (
    (TooLarge, 413, "too-large"),
    (Invalid, 400, "invalid"),
    (NotFound, 404, "not-found"),
    (Ambiguous, 400, "ambiguous"),
    (Refused, 409, "refused"),
    (Busy, 503, "busy"),
    (Unavailable, 503, "unavailable"),
    (Failed, 422, "failed"),
)


def error_response(error: DshkitError) -> Response:
    """The JSON error answer for an error of the tree."""
    status, kind = next(((s, k) for cls, s, k in STATUS if isinstance(error, cls)), (500, "error"))
    body: dict[str, Any] = {"ok": False, "error": error.message, "kind": kind}
    if error.field:
        body["field"] = error.field
    for name in ("code", "detail"):
        value = getattr(error, name, None)
        if value:
            body[name] = value
    headers = {"Retry-After": "1"} if isinstance(error, Busy) else None
    return json_response(body, status, headers)


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(value), status, headers=headers, media_type="application/json")


def error(status: int, message: str) -> Response:
    return json_response({"ok": False, "error": message}, status)


def decimal(text: str | None) -> int | None:
    """`text` as a whole number SQLite can hold (0 to SQLITE_INT_MAX), or None when it is not
    one: ASCII digits only (`str.isdigit` takes '²', which `int` refuses), and no larger than
    a row id or a LIMIT can be (a larger id names nothing)."""
    if not text or not _DIGITS.fullmatch(text):
        return None
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(SQLITE_INT_MAX)):
        return None  # also spares int() a string of thousands of digits, which it refuses
    value = int(digits)
    return value if value <= SQLITE_INT_MAX else None


def whole_number(text: str, name: str, low: int, high: int) -> int:
    """`text` as a whole number from `low` to `high`; ApiError 400 naming `name` otherwise."""
    value = decimal(text)
    if value is None or not low <= value <= high:
        raise ApiError(400, f"{name} must be a whole number from {low} to {high}, got {text!r}")
    return value


async def read_json(request: Request) -> Any:
    """The request body as JSON (null when empty); its size and pace are already bounded by
    the guard, which answers 413/408 itself. Not JSON: ApiError 400."""
    body = await request.body()
    try:
        return orjson.loads(body or b"null")
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"request body is not valid JSON: {exc}") from exc


_JSON_KINDS = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null (or nothing)",
}


async def read_object(request: Request, *, empty: bool = False) -> dict[str, Any]:
    """The request body as a JSON object (`empty`: no body at all reads as {}); anything else
    is ApiError 400 saying what was sent instead."""
    body = await read_json(request)
    if body is None and empty:
        return {}
    if not isinstance(body, dict):
        got = _JSON_KINDS.get(type(body), type(body).__name__)
        raise ApiError(400, f"the request body must be a JSON object, got {got}")
    return body


class Router:
    """The endpoints of one capability, mounted at `/api/<name>`.

    Paths are exact (a trailing slash is ignored); a `{param}` segment matches one segment
    and lands in `request.path_params`. Anything else is a JSON 404, whatever the method.
    """

    def __init__(self, name: str) -> None:
        if not _NAME.fullmatch(name):
            raise ValueError(f"router name must match {_NAME.pattern}, got {name!r}")
        self.name = name
        self.prefix = f"/api/{name}"
        self._routes: list[tuple[str, tuple[str, ...], Handler]] = []

    def route(self, method: str, path: str) -> Callable[[H], H]:
        def add(handler: H) -> H:
            self._routes.append((method.upper(), _segments(path), handler))
            return handler

        return add

    def get(self, path: str) -> Callable[[H], H]:
        return self.route("GET", path)

    def post(self, path: str) -> Callable[[H], H]:
        return self.route("POST", path)

    def put(self, path: str) -> Callable[[H], H]:
        return self.route("PUT", path)

    def delete(self, path: str) -> Callable[[H], H]:
        return self.route("DELETE", path)

    @property
    def endpoints(self) -> list[str]:
        """ "METHOD /api/<name>/path" for every endpoint, sorted."""
        return sorted(f"{m} {self.prefix}/{'/'.join(p)}" for m, p, _ in self._routes)

    def routes(self) -> list[BaseRoute]:
        """The Starlette routes that mount this router."""
        endpoint = _Endpoint(self)  # an ASGI app, so that every method reaches the dispatcher
        return [Route(self.prefix, endpoint), Route(self.prefix + "/{rest:path}", endpoint)]

    async def _dispatch(self, request: Request) -> Response:
        segments = _segments(request.path_params.get("rest", ""))
        for method, pattern, handler in self._routes:
            params = _match(pattern, segments) if method == request.method else None
            if params is not None:
                request.scope["path_params"] = params
                try:
                    return await handler(request)
                except ApiError as exc:
                    return error(exc.status, exc.message)
                except DshkitError as exc:
                    return error_response(exc)
                except OSError as exc:  # what the system refused (a full or read-only disk)
                    reason = f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)
                    return error_response(Unavailable(reason))
        return error(404, f"no {request.method} {self.prefix}/{'/'.join(segments)}")


class _Endpoint:
    def __init__(self, router: Router) -> None:
        self.router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.router._dispatch(Request(scope, receive))
        await response(scope, receive, send)


def _segments(path: str) -> tuple[str, ...]:
    path = path.strip("/")
    return tuple(path.split("/")) if path else ()


def _match(pattern: tuple[str, ...], segments: tuple[str, ...]) -> dict[str, str] | None:
    if len(pattern) != len(segments):
        return None
    params: dict[str, str] = {}
    for want, got in zip(pattern, segments, strict=True):
        if want.startswith("{") and want.endswith("}"):
            if not got:
                return None
            params[want[1:-1]] = got
        elif want != got:
            return None
    return params
