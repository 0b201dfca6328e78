"""Which local user opened the other end of a loopback TCP connection (Linux: `/proc/net/tcp`).

A loopback port is reachable by every user of the machine, and a credential can leak (a
browser sends cookies to every port of a host). The kernel knows who is at the other end: the
client's own socket is a row of `/proc/net/tcp` (or `tcp6`) whose local address is the
connection's client address, and that row names the socket's owner (`uid`). The service and
`mcp --http` refuse every connection whose client socket is not their own user's
(docs/design/service.md#a-connection-is-refused-unless-its-peer-is-the-owner).

The table is believed only when it also lists the server's side of the same connection: where
it does not (no `/proc`, another platform, a namespace that hides it), nothing can be told and
`owner` says so (None) instead of guessing.
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Mapping
from typing import Any

TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
NOBODY_FOUND = -1  # the table can be believed, and no socket of this machine is the client's

Address = tuple[str, int]
_Endpoint = tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]


def owner(client: Address, server: Address, tables: tuple[str, ...] = TABLES) -> int | None:
    """The uid owning the client side of the TCP connection `client` → `server` (both as the
    ASGI scope gives them: address text and port), `NOBODY_FOUND` when the kernel's tables can
    be believed and hold no such socket, or None when they cannot tell (not Linux, not readable,
    or the server's own side of the connection is not listed either)."""
    try:
        near, far = _endpoint(*client), _endpoint(*server)
    except ValueError:
        return None
    found: int | None = NOBODY_FOUND
    ours = False
    for path in tables:
        try:
            with open(path, "rb") as handle:
                lines = handle.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 8:
                continue
            try:
                local, remote = _decoded(fields[1]), _decoded(fields[2])
            except ValueError:
                continue
            if local == near and remote == far:
                found = int(fields[7])
            elif local == far and remote == near:
                ours = True  # the server's side of this very connection: the table is whole
    return found if ours else None


def owner_of(scope: Mapping[str, Any], tables: tuple[str, ...] = TABLES) -> int | None:
    """`owner` of the connection an ASGI request came on (its scope's client and server);
    None where the scope does not name both ends."""
    client, server = scope.get("client"), scope.get("server")
    if not client or not server or server[1] is None:
        return None
    return owner((str(client[0]), int(client[1])), (str(server[0]), int(server[1])), tables)


def who(uid: int) -> str:
    """`owner`'s answer in words, for a refusal."""
    return "a socket of no user of this machine" if uid == NOBODY_FOUND else f"uid {uid}"


def _endpoint(address: str, port: int) -> _Endpoint:
    ip = ipaddress.ip_address(address.strip("[]"))
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped, int(port)  # a dual-stack socket's view of an IPv4 peer
    return ip, int(port)


def _decoded(field: bytes) -> _Endpoint:
    """`0100007F:1F90` → (127.0.0.1, 8080): the address as the kernel's words hold it, each
    32-bit word in this machine's byte order, then the port in hex."""
    text, _, port = field.decode("ascii").partition(":")
    raw = bytes.fromhex(text)
    words = b"".join(
        int.from_bytes(raw[i : i + 4], "big").to_bytes(4, sys.byteorder)
        for i in range(0, len(raw), 4)
    )
    if len(words) == 4:
        return ipaddress.IPv4Address(words), int(port, 16)
    ip = ipaddress.IPv6Address(words)
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped, int(port, 16)
    return ip, int(port, 16)
