"""The friction signals as the console shows them: totals per harness and per day, and every
hit of one signal, paged, with where it happened (served by `ProfileService`).

Counts come from `signals.collect_signals`, the same results `dshkit signals` reports and the
store keeps per session (computed again only for sessions that changed); nothing is scanned
here (the service refreshes first when its caller asks), so the numbers are those of the last
scan. A read writes nothing (a GET changes nothing): a session no scan or generation has
counted yet is counted in memory, kept in the caller's `Unstored`, and stored only by a
caller that writes anyway (`memo`). A hit has no time of its own: it counts on
the day (UTC) of its session's last activity.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..errors import Invalid
from ..sessions.catalog import Catalog, SessionInfo
from ..store import Store
from .signals import SIGNALS, SignalConfig, SignalsReport, Unstored, collect_signals
from .wire import (
    DayTotals,
    Hit,
    SessionFriction,
    SignalHitsJson,
    SignalSessionsJson,
    SignalTotalsJson,
)

HITS_LIMIT = 500  # hits of one answer at most
_ALL = 1 << 62  # hits kept in the report's details: all of them


def _sessions(
    catalog: Catalog,
    config: SignalConfig,
    harness: str | None,
    session: str | None,
    memo: bool,
    unstored: Unstored | None,
) -> tuple[SignalsReport, list[tuple[SessionInfo, dict[str, list[dict[str, Any]]]]]]:
    """The report over the chosen sessions (one pass through the stored per-session results)
    and each session's hits by signal, newest session first."""
    infos = [
        info
        for info in catalog.recent(harness, None)
        if session is None or info.session_id == session
    ]
    keys = [info.key for info in infos]
    report = collect_signals(catalog, keys, config, _ALL, memo=memo, unstored=unstored)
    by_session: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name, hits in report.details.items():
        for hit in hits:
            by_session.setdefault(hit["session"], {s: [] for s in SIGNALS})[name].append(hit)
    empty: dict[str, list[dict[str, Any]]] = {s: [] for s in SIGNALS}
    return report, [
        (info, by_session.get(f"{info.harness}:{info.session_id}", empty)) for info in infos
    ]


def _day(info: SessionInfo) -> str | None:
    if info.last_time is None:
        return None
    return time.strftime("%Y-%m-%d", time.gmtime(info.last_time / 1000))


@dataclass(frozen=True)
class SignalTotals:
    """Every signal's totals: over all, per harness, and per day and harness."""

    sessions: int
    human_messages: int
    totals: dict[str, int]
    harnesses: dict[str, dict[str, int]]
    days: list[DayTotals]  # oldest first
    config: SignalConfig

    def as_json(self) -> SignalTotalsJson:
        return {
            "signals": list(SIGNALS),
            "sessions": self.sessions,
            "humanMessages": self.human_messages,
            "totals": self.totals,
            "harnesses": self.harnesses,
            "days": self.days,
            "config": {
                "longToolMs": self.config.long_tool_ms,
                "repeatFailMin": self.config.repeat_fail_min,
                "answerWindowMs": self.config.answer_window_ms,
            },
        }


@dataclass(frozen=True)
class SignalHits:
    """One page of one signal's hits, each with its harness, session id and day; `total`
    counts every match."""

    signal: str
    total: int
    offset: int
    hits: list[Hit]

    def as_json(self) -> SignalHitsJson:
        return {
            "signal": self.signal,
            "total": self.total,
            "offset": self.offset,
            "hits": self.hits,
        }


def signal_totals(
    store: Store, config: SignalConfig, *, memo: bool = False, unstored: Unstored | None = None
) -> SignalTotals:
    """Totals of every signal: over all, per harness, and per day and harness (oldest first)."""
    report, sessions = _sessions(Catalog(store), config, None, None, memo, unstored)
    by_harness: dict[str, dict[str, int]] = {}
    by_day: dict[tuple[str | None, str], dict[str, int]] = {}
    for info, hits in sessions:
        for target in (
            by_harness.setdefault(info.harness, dict.fromkeys(SIGNALS, 0)),
            by_day.setdefault((_day(info), info.harness), dict.fromkeys(SIGNALS, 0)),
        ):
            for name in SIGNALS:
                target[name] += len(hits[name])
    days: list[DayTotals] = [
        {"day": day, "harness": harness, "totals": counts}
        for (day, harness), counts in sorted(by_day.items(), key=lambda item: item[0][0] or "")
    ]
    return SignalTotals(
        report.sessions, report.human_messages, report.totals, by_harness, days, config
    )


def signal_sessions(
    store: Store,
    config: SignalConfig,
    harness: str | None = None,
    session: str | None = None,
    *,
    unstored: Unstored | None = None,
) -> SignalSessionsJson:
    """Each session with friction (of `harness`, the session id `session`, when given): its
    count of every signal, with its harness, project and day (the day its hits count on), so
    the console can draw the signals over time for one harness or one project and say which
    sessions a bar stands for. A read: it writes nothing."""
    rows: list[SessionFriction] = []
    for info, hits in _sessions(Catalog(store), config, harness, session, False, unstored)[1]:
        totals = {name: len(hits[name]) for name in SIGNALS}
        if not any(totals.values()):
            continue
        rows.append(
            {
                "harness": info.harness,
                "sessionId": info.session_id,
                "project": info.project,
                "day": _day(info),
                "totals": totals,
            }
        )
    return {"signals": list(SIGNALS), "sessions": rows}


def signal_hits(
    store: Store,
    config: SignalConfig,
    signal: str,
    *,
    harness: str | None = None,
    session: str | None = None,
    day: str | None = None,
    offset: int = 0,
    limit: int = 50,
    memo: bool = False,
    unstored: Unstored | None = None,
) -> SignalHits:
    """The hits of `signal` (of a harness, a session id, a day), newest session first and in
    log order within one, from `offset` (Invalid on bad input, naming it)."""
    if signal not in SIGNALS:
        raise Invalid(f"signal must be one of {', '.join(SIGNALS)}, got {signal!r}", field="signal")
    if not 1 <= limit <= HITS_LIMIT:
        raise Invalid(f"limit must be from 1 to {HITS_LIMIT}, got {limit}", field="limit")
    if offset < 0:
        raise Invalid(f"offset must not be negative, got {offset}", field="offset")
    total = 0
    shown: list[Hit] = []
    for info, hits in _sessions(Catalog(store), config, harness, session, memo, unstored)[1]:
        when = _day(info)
        if day is not None and when != day:
            continue
        for hit in hits[signal]:
            if offset <= total < offset + limit:
                shown.append(
                    {**hit, "harness": info.harness, "sessionId": info.session_id, "day": when}
                )
            total += 1
    return SignalHits(signal, total, offset, shown)
