"""A capability's API as one `Router` under `/api/<name>/`, and what its handlers share.

Handlers do no access checks of their own (the guard in `security` has done them for every
route) and refuse with `ApiError`. What a service raises from the error tree is mapped here
once, by class (`STATUS`), so handlers catch nothing: both become the same JSON error shape
everywhere, `ErrorBody`.

Each handler says what it answers and takes, and the types say it too, so docs/api.md is
written from them (scripts/gen-docs.py): its docstring is what the endpoint does; a JSON
answer is `Json[X]` (`json_response`), X the TypedDict of its body, checked by mypy; a route
that takes a body names its parse (`body=`, a function from the JSON object to the body's
TypedDict that refuses what it cannot take with ApiError 400), and its handler is given the
parsed body after the request.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, NotRequired, TypedDict, TypeVar, overload

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
T = TypeVar("T")
B = TypeVar("B")
# A request body as read: a JSON object (see `read_object`).
JsonObject = dict[str, Any]
# What a route that takes a body is given: the request, and the body its parse made.
BodyHandler = Callable[[Request, B], Awaitable[Response]]

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


class ErrorBody(TypedDict):
    """Every error's answer: the message; for an error of the tree its kind (`STATUS`), the
    input it concerns (`field`), the rule that refused (`code`) and its detail."""

    ok: bool
    error: str
    kind: NotRequired[str]
    field: NotRequired[str]
    code: NotRequired[str]
    detail: NotRequired[Any]


def error_response(error: DshkitError) -> Json[ErrorBody]:
    """The JSON error answer for an error of the tree."""
    status, kind = next(((s, k) for cls, s, k in STATUS if isinstance(error, cls)), (500, "error"))
    body: ErrorBody = {"ok": False, "error": error.message, "kind": kind}
    if error.field:
        body["field"] = error.field
    rule, detail = getattr(error, "code", None), getattr(error, "detail", None)
    if rule:
        body["code"] = rule
    if detail:
        body["detail"] = detail
    headers = {"Retry-After": "1"} if isinstance(error, Busy) else None
    return json_response(body, status, headers)


class Json(Response, Generic[T]):
    """A JSON answer whose body is a `T` (a TypedDict): a handler annotated `-> Json[X]`
    answers X, which mypy checks and docs/api.md names."""

    media_type = "application/json"


def json_response(value: T, status: int = 200, headers: dict[str, str] | None = None) -> Json[T]:
    return Json(orjson.dumps(value), status, headers=headers, media_type="application/json")


def error(status: int, message: str) -> Json[ErrorBody]:
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


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One route: its method and path (segments), its handler, and the parse of its body
    (None: it takes none); `empty`: no body at all reads as {}."""

    method: str
    segments: tuple[str, ...]
    handler: Callable[..., Awaitable[Response]]
    body: Callable[[JsonObject], Any] | None = None
    empty: bool = False


class Router:
    """The endpoints of one capability, mounted at `/api/<name>`.

    Paths are exact (a trailing slash is ignored); a `{param}` segment matches one segment
    and lands in `request.path_params`; the first route that matches answers. Anything else
    is a JSON 404, whatever the method.
    """

    def __init__(self, name: str) -> None:
        if not _NAME.fullmatch(name):
            raise ValueError(f"router name must match {_NAME.pattern}, got {name!r}")
        self.name = name
        self.prefix = f"/api/{name}"
        self.routed: list[Endpoint] = []

    def route(
        self,
        method: str,
        path: str,
        body: Callable[[JsonObject], Any] | None = None,
        empty: bool = False,
    ) -> Callable[[Callable[..., Awaitable[Response]]], Any]:
        def add(handler: Callable[..., Awaitable[Response]]) -> Any:
            self.routed.append(Endpoint(method.upper(), _segments(path), handler, body, empty))
            return handler

        return add

    def get(self, path: str) -> Callable[[H], H]:
        added: Callable[[H], H] = self.route("GET", path)
        return added

    @overload
    def post(self, path: str) -> Callable[[H], H]: ...
    @overload
    def post(
        self, path: str, *, body: Callable[[JsonObject], B], empty: bool = False
    ) -> Callable[[BodyHandler[B]], BodyHandler[B]]: ...
    def post(
        self, path: str, *, body: Callable[[JsonObject], Any] | None = None, empty: bool = False
    ) -> Any:
        """A POST route; with `body`, its handler is given the body `body` parsed."""
        return self.route("POST", path, body, empty)

    @overload
    def put(self, path: str) -> Callable[[H], H]: ...
    @overload
    def put(
        self, path: str, *, body: Callable[[JsonObject], B], empty: bool = False
    ) -> Callable[[BodyHandler[B]], BodyHandler[B]]: ...
    def put(
        self, path: str, *, body: Callable[[JsonObject], Any] | None = None, empty: bool = False
    ) -> Any:
        """A PUT route; with `body`, its handler is given the body `body` parsed."""
        return self.route("PUT", path, body, empty)

    def delete(self, path: str) -> Callable[[H], H]:
        added: Callable[[H], H] = self.route("DELETE", path)
        return added

    def path(self, endpoint: Endpoint) -> str:
        """The endpoint's full path, `/api/<name>/…`."""
        return f"{self.prefix}/{'/'.join(endpoint.segments)}"

    @property
    def endpoints(self) -> list[str]:
        """ "METHOD /api/<name>/path" for every endpoint, sorted."""
        return sorted(f"{e.method} {self.path(e)}" for e in self.routed)

    def routes(self) -> list[BaseRoute]:
        """The Starlette routes that mount this router."""
        endpoint = _Endpoint(self)  # an ASGI app, so that every method reaches the dispatcher
        return [Route(self.prefix, endpoint), Route(self.prefix + "/{rest:path}", endpoint)]

    async def _dispatch(self, request: Request) -> Response:
        segments = _segments(request.path_params.get("rest", ""))
        for endpoint in self.routed:
            params = (
                _match(endpoint.segments, segments) if endpoint.method == request.method else None
            )
            if params is not None:
                request.scope["path_params"] = params
                try:
                    if endpoint.body is None:
                        return await endpoint.handler(request)
                    given = await read_object(request, empty=endpoint.empty)
                    return await endpoint.handler(request, endpoint.body(given))
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
