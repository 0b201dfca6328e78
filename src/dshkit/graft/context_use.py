"""A session's context use over its turns, against the lines its hooks decide by, and where a
handoff cut it: the picture behind the console's context chart. Read-only.

Each turn's point is the context of its last model request (input + cache read + cache write,
`sessions.events.usages`; none when no request of the turn reported usage), the figure the
watermark folds (docs/design/graft.md#pressure-is-what-the-harness-measured), measured
against the window the session had then. The warning and forced lines are the watermark as
the hooks would have drawn it at the end of that turn: in `dynamic` mode the forced cut
moves with the growth the session showed so far
(docs/design/graft.md#the-cut-falls-where-the-handoff-still-fits), so each turn carries its
own lines. A handoff's boundary is the seq its identity names: the last
event of the last finished turn when it was cut (`semantic.boundary`,
docs/design/graft.md#cut-at-the-last-turn-end).

Not on the hook path: only the console's API reads it, through `GraftService.context_use`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..sessions.catalog import Catalog, SessionInfo
from ..sessions.events import usages
from ..store import Store
from .settings import GraftSettings
from .watermark import Digest, _watermark
from .wire import BoundaryJson, ContextUseJson, TurnUseJson


@dataclass(frozen=True, slots=True)
class TurnUse:
    """One turn's last context use, its window, and the lines of that moment (ratios of the
    window; None where the session has none)."""

    ordinal: int  # turn starts counted in the log (0: before any)
    turn: int  # the harness's own number, as the rest of the console shows turns
    seq: int | None  # the turn's first event
    start: int | None  # ms: when its first event was logged
    end: int | None  # ms: its last event
    tokens: int | None  # None: no request of the turn reported usage
    window: int
    window_source: str
    warning: float | None
    forced: float | None

    @property
    def ratio(self) -> float | None:
        return None if self.tokens is None else self.tokens / self.window

    def as_json(self) -> TurnUseJson:
        return {
            "ordinal": self.ordinal,
            "turn": self.turn,
            "seq": self.seq,
            "start": self.start,
            "end": self.end,
            "tokens": self.tokens,
            "window": self.window,
            "windowSource": self.window_source,
            "ratio": self.ratio,
            "warning": self.warning,
            "forced": self.forced,
            "warningTokens": None if self.warning is None else round(self.warning * self.window),
            "forcedTokens": None if self.forced is None else round(self.forced * self.window),
        }


@dataclass(frozen=True, slots=True)
class Boundary:
    """Where a handoff of this session cut it (as its source), or the cut it was born from
    (as its target: `role` "target", the seq being the source's)."""

    txn_id: int
    state: str
    role: str  # "source" | "target"
    session_id: str  # the other side's session: the source's for a target, else the target's
    seq: int  # the last event the handoff carried (-1: no finished turn yet)
    turn: int | None  # the harness's turn number holding that seq, in this session
    time: int | None  # ms: when that event was logged, in this session
    at: int  # ms: when the handoff began

    def as_json(self) -> BoundaryJson:
        return {
            "txnId": self.txn_id,
            "state": self.state,
            "role": self.role,
            "otherSessionId": self.session_id,
            "seq": self.seq,
            "turn": self.turn,
            "time": self.time,
            "at": self.at,
        }


@dataclass(frozen=True, slots=True)
class ContextUse:
    """A session's context use per turn, the lines, and its handoff boundaries."""

    info: SessionInfo
    mode: str
    turns: list[TurnUse]
    boundaries: list[Boundary]

    def first(self, line: str) -> int | None:
        """The first turn (its number) whose context reached `line` ("warning" or "forced")."""
        for use in self.turns:
            at = use.warning if line == "warning" else use.forced
            ratio = use.ratio
            if at is not None and ratio is not None and ratio >= at:
                return use.turn
        return None

    def as_json(self) -> ContextUseJson:
        measured = [use for use in self.turns if use.ratio is not None]
        peak = max(measured, key=lambda use: use.ratio or 0.0, default=None)
        return {
            "harness": self.info.harness,
            "session": self.info.session_id,
            "mode": self.mode,
            "turns": [use.as_json() for use in self.turns],
            "boundaries": [b.as_json() for b in self.boundaries],
            "peak": None if peak is None else peak.as_json(),
            "firstWarningTurn": self.first("warning"),
            "firstForcedTurn": self.first("forced"),
        }


def context_use(store: Store, info: SessionInfo, settings: GraftSettings) -> ContextUse:
    """The context use of the scanned session `info` over its turns, from what the last scan
    stored (nothing is read from the harness's files, nothing written)."""
    events = Catalog(store).conversation(info.key)
    digest = Digest()
    turns: list[TurnUse] = []
    opened: dict[str, Any] = {}  # the open turn: its first seq, first and last time
    seen: dict[int, tuple[int, int | None]] = {}  # seq → (turn number, time)
    had_usage = False

    def close() -> None:
        # Events before the first turn count only when a request of theirs reported usage.
        if "seq" not in opened or (digest.ordinal == 0 and not had_usage):
            return
        pressure = digest.pressure(settings)
        line = _watermark(digest, settings, pressure.window)
        turns.append(
            TurnUse(
                digest.ordinal,
                digest.turns.number,
                opened.get("seq"),
                opened.get("start"),
                opened.get("end"),
                digest.context if had_usage else None,
                pressure.window,
                pressure.window_source,
                line.warning,
                line.forced,
            )
        )

    for event in events:
        if event.get("type") == "turn/start" and digest.count:
            close()
            opened, had_usage = {}, False
        digest.extend((event,))
        seq, at = event.get("seq"), event.get("time")
        stamp = at if isinstance(at, int) else None
        if "seq" not in opened:
            opened["seq"] = seq if isinstance(seq, int) else None
            opened["start"] = stamp
        if stamp is not None:
            opened["end"] = stamp
        if isinstance(seq, int):
            seen[seq] = (digest.turns.number, stamp)
        had_usage = had_usage or any(True for _ in usages((event,)))
    close()
    return ContextUse(info, settings.mode, turns, _boundaries(store, info, seen))


def _boundaries(
    store: Store, info: SessionInfo, seen: dict[int, tuple[int, int | None]]
) -> list[Boundary]:
    """The handoffs that cut this session (as their source), then the one it was born from."""
    found: list[Boundary] = []
    rows = store.db.execute(
        "SELECT id, state, target_id, boundary_seq, created_at FROM graft_txns "
        "WHERE harness = ? AND session_id = ? ORDER BY id",
        info.key,
    ).fetchall()
    for txn_id, state, target, seq, at in rows:
        turn, time = seen.get(seq, (None, None))
        found.append(Boundary(txn_id, state, "source", target or "", seq, turn, time, at))
    born = store.db.execute(
        "SELECT id, state, session_id, plan, created_at FROM graft_txns "
        "WHERE target_harness = ? AND target_id = ? ORDER BY id",
        info.key,
    ).fetchall()
    for txn_id, state, source, plan, at in born:
        seq = int(orjson.loads(plan)["identity"]["boundarySeq"])
        found.append(Boundary(txn_id, state, "target", source, seq, None, None, at))
    return found
