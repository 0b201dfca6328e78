"""The gate's verdicts in the store, and which file versions were already sent back for rework."""

from __future__ import annotations

import time
from typing import Any

import orjson

from ..store import Store
from .judge import Verdict


def save_verdict(store: Store, verdict: Verdict) -> Verdict:
    """Store `verdict` with its evidence; sets and returns it with its id."""
    with store.transaction() as db:
        cursor = db.execute(
            "INSERT INTO gate_verdicts (at, path, sha256, verdict, recovered, elapsed_ms, "
            "screenshot, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                int(time.time() * 1000),
                verdict.path,
                verdict.sha256,
                verdict.verdict,
                int(verdict.recovered),
                verdict.elapsed_ms,
                verdict.screenshot,
                orjson.dumps(verdict.evidence()).decode(),
            ),
        )
    verdict.id = cursor.lastrowid
    return verdict


def recent_verdicts(store: Store, limit: int = 50) -> list[dict[str, Any]]:
    """The latest `limit` verdicts, newest first, each with its id, time and evidence."""
    rows = store.db.execute(
        "SELECT id, at, evidence FROM gate_verdicts ORDER BY at DESC, id DESC LIMIT ?", (limit,)
    ).fetchall()
    return [{"id": row["id"], "at": row["at"], **orjson.loads(row["evidence"])} for row in rows]


def reworked(store: Store, path: str, sha256: str) -> bool:
    """Whether this content of `path` was already sent back for rework."""
    row = store.db.execute(
        "SELECT 1 FROM gate_rework WHERE path = ? AND sha256 = ?", (path, sha256)
    ).fetchone()
    return row is not None


def mark_reworked(store: Store, verdict: Verdict) -> None:
    """Record that the agent got `verdict` as a rework instruction (the first record wins)."""
    with store.transaction() as db:
        db.execute(
            "INSERT OR IGNORE INTO gate_rework (path, sha256, at, verdict_id) VALUES (?, ?, ?, ?)",
            (verdict.path, verdict.sha256, int(time.time() * 1000), verdict.id),
        )
