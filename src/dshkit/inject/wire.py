"""The JSON shapes of the injection preview: one TypedDict per shape, the `as_json()` of each
result type (`dshkit inject show --json` and `GET /api/inject/` alike)."""

from __future__ import annotations

from typing import TypedDict


class PieceJson(TypedDict):
    """One piece of a part's text, where it comes from, and its length as harnesses count it."""

    source: str
    chars: int
    text: str


class HookDecisionJson(TypedDict):
    """A block or a deny (`kind`), and the reason given."""

    kind: str
    reason: str


class PartPreviewJson(TypedDict):
    """One handler's part of an event: what it would put in (none when not `previewed`: its
    output depends on the event, `why` says), from where, its length, whether the answer would
    carry it or the cap drop it whole, its pieces, its decision, and what the hook would start
    besides answering."""

    handler: str
    order: int
    previewed: bool
    source: str
    text: str
    chars: int
    delivered: bool
    dropped: bool
    pieces: list[PieceJson]
    why: str
    decision: HookDecisionJson | None
    effects: list[str]


class EventPreviewJson(TypedDict):
    """What one event would bring: the exact context text, its length and the cap, a block or
    deny, its parts, and what the cap left out."""

    event: str
    text: str
    chars: int
    limit: int
    decision: HookDecisionJson | None
    parts: list[PartPreviewJson]
    notes: list[str]


class InjectPreviewJson(TypedDict):
    """Every event previewed for one session (or, `new`, a session about to start in `cwd`),
    each as if it fired next, nothing delivered in between."""

    harness: str
    sessionId: str | None
    new: bool
    catalogued: bool
    cwd: str
    transcript: str | None
    source: str
    permissionMode: str | None
    asIfNext: str
    events: list[EventPreviewJson]
