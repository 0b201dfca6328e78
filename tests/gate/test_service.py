"""The gate service reads stored verdicts back as the judge reports them now: a verdict
stored before findings existed gets them (none) and its report's first line, one after or
in a list alike."""

from __future__ import annotations

import time
from pathlib import Path

import orjson

from dshkit.gate import GateService
from dshkit.gate.judge import MEANING
from dshkit.store import Store

# Evidence as an older gate stored it: no findings, no report.
OLD = {
    "verdict": "blank-canvas",
    "recovered": False,
    "elapsedMs": 4000,
    "screenshot": None,
    "canvas": [],
    "errors": [],
    "overlayText": None,
    "path": "/work/page.html",
    "sha256": "0" * 64,
    "history": ["waiting", "blank-canvas"],
}


def _store_old(state: Path) -> int:
    with Store(state) as store, store.transaction() as db:
        cursor = db.execute(
            "INSERT INTO gate_verdicts (at, path, sha256, verdict, recovered, elapsed_ms, "
            "screenshot, evidence) VALUES (?, ?, ?, ?, 0, 4000, NULL, ?)",
            (
                int(time.time() * 1000),
                OLD["path"],
                OLD["sha256"],
                OLD["verdict"],
                orjson.dumps(OLD).decode(),
            ),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid


def test_an_old_stored_verdict_reads_back_with_findings_and_report(tmp_path: Path) -> None:
    gate = GateService(tmp_path / "state")
    verdict_id = _store_old(gate.state_dir)
    read = gate.verdict(verdict_id)
    assert read["findings"] == []
    assert read["report"] == [f"blank-canvas after 4.0 s: {MEANING['blank-canvas']}"]
    assert read["history"] == OLD["history"] and read["id"] == verdict_id  # nothing lost
    assert gate.verdicts(1).as_json()["verdicts"] == [read]
