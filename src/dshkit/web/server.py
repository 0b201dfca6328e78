"""Serving the app: a socket bound before anything is announced, and uvicorn with a deadline
for request heads (uvicorn has none: a client that never finishes its headers would hold its
connection forever)."""

from __future__ import annotations

import asyncio
import socket

import h11
import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from .security import READ_TIMEOUT_S

SHUTDOWN_GRACE_S = 5.0  # open event streams are cut after this on shutdown


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port` (port 0: any free one) and listening; OSError when the
    address cannot be had (in use, not this machine's)."""
    family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen()
    except OSError:
        sock.close()
        raise
    return sock


def resolve(host: str) -> str:
    """The address `listen(host, …)` would bind."""
    return str(socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0][4][0])


def make_server(app: ASGIApp, *, head_timeout: float = READ_TIMEOUT_S) -> uvicorn.Server:
    """A uvicorn server for `app` (run it with `.run(sockets=[listen(...)])`) that drops a
    connection whose request head is not complete within `head_timeout` seconds."""
    protocol = type("HeadDeadlineProtocol", (_HeadDeadline,), {"head_timeout": head_timeout})
    config = uvicorn.Config(
        app,
        http=protocol,
        log_level="warning",
        timeout_graceful_shutdown=int(SHUTDOWN_GRACE_S),
    )
    return uvicorn.Server(config)


class _HeadDeadline(H11Protocol):
    """h11 with a timer from the start of each request head (a new connection, or the first
    byte of a later request on a kept-alive one) until the whole head has arrived; expired,
    the connection is closed. An idle kept-alive connection is left to uvicorn's keep-alive
    timeout: closing it at the head deadline raced a client's next request (reset by peer)."""

    head_timeout: float = READ_TIMEOUT_S
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # a whole head has arrived
            self._disarm()
        elif self._head_timer is None and not self.transport.is_closing():
            self._arm()  # part of a later head: its deadline runs from its first byte

    def _unsupported_upgrade_warning(self) -> None:
        # uvicorn's own warning invites installing a WebSocket library; dshkit serves no
        # WebSockets on purpose (the guard closes them), so an upgrade asked for is answered
        # as plain HTTP and worth no warning.
        self.logger.debug("a protocol upgrade was asked for and refused: none is served")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.head_timeout, self._expired)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _expired(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()
