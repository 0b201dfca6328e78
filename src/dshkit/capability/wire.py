"""The JSON shapes of capability facts: one TypedDict per shape, the `as_json()` of each result
type (`dshkit capability --json` and `/api/capability/` alike)."""

from __future__ import annotations

from typing import Any, TypedDict


class FactsJson(TypedDict):
    """The modes a session runs in (`unknown`: nobody reported it), each with where it was
    read, and whether they restrict nothing or restrict its tools (None: not known)."""

    harness: str
    sandbox: str
    approval: str
    permissionMode: str
    sources: dict[str, str]
    fullAccess: bool
    restricted: bool | None


# One channel's result: {"channel", "ok", "reason"} and what that channel adds (the servers
# and errors of toolServers, where subprocess and screenshot ran: `probes.channel`).
Channel = dict[str, Any]


class CachedJson(TypedDict):
    """What the cache holds for a key, fresh or not, when it was probed and how old it is."""

    at: int
    ageS: float
    fresh: bool
    channels: list[Channel] | None


class ReportJson(TypedDict):
    """What is known of one session's capabilities now: its facts, the cache key, the
    channels probed within the TTL (None: pending), the cache, the errors, and the text the
    agent is told."""

    facts: FactsJson
    cwd: str
    key: str
    pending: bool
    probing: bool
    probedAt: int | None
    ttlS: float
    channels: list[Channel] | None
    cached: CachedJson | None
    errors: list[str]
    text: str


class LookupJson(ReportJson):
    """A capability report (`dshkit capability --json`, `/api/capability/`), and whether
    asking for it started a background probe."""

    started: bool
