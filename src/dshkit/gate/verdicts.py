"""The gate's verdicts in the store, and which file versions were already sent back for rework.

A verdict's evidence is stored as JSON (`Verdict.evidence`); keys only ever get added, so a
verdict stored by an older version reads as it was, with its `findings` empty and its
`report` made from what it has.
"""

from __future__ import annotations

import time
from typing import Any, cast

import orjson

from ..store import Store
from .judge import Verdict, report_lines
from .wire import StoredVerdictJson


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


def recent_verdicts(store: Store, limit: int = 50) -> list[StoredVerdictJson]:
    """The latest `limit` verdicts, newest first, each with its id, time and evidence."""
    rows = store.db.execute(
        "SELECT id, at, evidence FROM gate_verdicts ORDER BY at DESC, id DESC LIMIT ?", (limit,)
    ).fetchall()
    return [stored_evidence(row["id"], row["at"], row["evidence"]) for row in rows]


def stored_evidence(verdict_id: int, at: int, evidence: str | bytes) -> StoredVerdictJson:
    """One stored verdict as read back: its id, time and evidence, `findings` and `report`
    filled in for a verdict stored before they existed."""
    read: dict[str, Any] = {"id": verdict_id, "at": at, **orjson.loads(evidence)}
    read.setdefault("findings", [])
    if "report" not in read:
        read["report"] = report_lines(
            str(read.get("verdict")),
            bool(read.get("recovered")),
            int(read.get("elapsedMs") or 0),
            read["findings"],
        )
    return cast(StoredVerdictJson, read)  # as stored: keys only ever get added


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
