"""Forgetting a session takes graft's rows that hold its words: its handoffs (their plan holds
its card and first message) with their ledger, pending and notice rows, and its audit trail."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from dshkit.graft import ledger
from dshkit.graft.lifecycle import ROLLBACK_NOTICE, begin, handoff
from dshkit.sessions import Scanner, Source
from dshkit.store import Store

from ..support.graft_driver import FAST, World, plan_for

pytestmark = pytest.mark.process

_OWNED = "txn_id IN (SELECT id FROM graft_txns WHERE session_id = ?)"
# Each graft table, and which of its rows are about a session: by its key, or through the
# handoffs it is the source of.
WHERE = {
    "graft_txns": "session_id = ?",
    "graft_ledger": f"session_id = ? OR {_OWNED}",
    "graft_pending": _OWNED,
    "graft_notices": f"session_id = ? OR {_OWNED}",
    "graft_audit": f"session_id = ? OR {_OWNED}",
    "graft_watch": "session_id = ?",
}


def rows(store: Store, session: str) -> dict[str, int]:
    """How many rows of each graft table are about `session`."""
    return {
        table: store.db.execute(
            f"SELECT count(*) FROM {table} WHERE {where}", (session,) * where.count("?")
        ).fetchone()[0]
        for table, where in WHERE.items()
    }


def words(store: Store) -> bytes:
    """Every graft row, as text: what a forgotten session's words must be gone from."""
    dump = [list(row) for table in WHERE for row in store.db.execute(f"SELECT * FROM {table}")]
    return orjson.dumps(dump)


def source(world: World, store: Store, text: str) -> tuple[str, Path]:
    """A real (fake) Claude Code session with `text` as its first prompt, scanned."""
    before = set(world.claude.glob("projects/*/*.jsonl"))
    world.run_cli(text, world.cwd)
    (path,) = set(world.claude.glob("projects/*/*.jsonl")) - before
    Scanner(store).scan([Source("claude", world.claude / "projects")])
    return path.stem, path


@pytest.mark.parametrize("how", ["forget", "logs-vanish"])
def test_forgetting_a_source_takes_its_graft_rows_and_only_its(world: World, how: str) -> None:
    with Store(world.state) as store:
        gone, log = source(world, store, "给支付模块补上回归测试")
        kept, _ = source(world, store, "整理部署脚本")
        done = handoff(store, plan_for(gone, str(world.cwd)), ignition=FAST)
        # …and sliced again, waiting for the next session (a pending row, a reslice's prior)
        again = plan_for(gone, str(world.cwd), boundary=43)
        begin(store, again, ignite=False, allow_reslice=True)
        waiting = begin(store, plan_for(kept, str(world.cwd)), ignite=False)
        for session, txn in ((gone, done.id), (kept, waiting.id)):
            ledger.audit(store, "model-nudge", harness="claude", session_id=session, ratio=0.71)
            ledger.queue_notice(store, "claude", session, txn + 100, ROLLBACK_NOTICE)
            store.db.execute(
                "INSERT INTO graft_watch (harness, session_id, digest, state, updated_at) "
                "VALUES ('claude', ?, ?, '{}', 0)",
                (session, orjson.dumps({"todos": [f"{session} 的待办"]}).decode()),
            )
        assert done.target_id is not None
        before_gone, before_kept = rows(store, gone), rows(store, kept)
        assert all(before_gone.values()) and before_gone["graft_txns"] == 2
        assert before_kept["graft_pending"] == 1 and before_kept["graft_txns"] == 1

        if how == "forget":
            assert Scanner(store).forget(("claude", gone)) is True
        else:
            log.unlink()
            Scanner(store).scan([Source("claude", world.claude / "projects")])

        assert rows(store, gone) == dict.fromkeys(WHERE, 0)
        assert rows(store, kept) == before_kept
        assert gone.encode() not in words(store)
        assert "给支付模块".encode() not in words(store)
        assert ledger.retirement(store, "claude", gone) is None
        waiting_part = ledger.retirement(store, "claude", kept)
        assert waiting_part is not None and waiting_part.txn_id == waiting.id
        # The target carries on: its own session is not the forgotten one's to take.
        assert ledger.retirement(store, "claude", done.target_id) is None
        assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_forgetting_a_session_drops_its_exclusion_from_the_forced_cut(tmp_path: Path) -> None:
    with Store(tmp_path / "state") as store:
        ledger.set_excluded(store, "claude", "s-gone", True, by="cli", reason="私人项目")
        ledger.set_excluded(store, "claude", "s-kept", True, by="cli", reason=None)
        store.forget_sessions([("claude", "s-gone")])
        assert [x.session_id for x in ledger.exclusions(store)] == ["s-kept"]
