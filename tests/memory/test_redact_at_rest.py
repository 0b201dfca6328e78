"""Records stored before secrets were redacted at write are redacted in place, once by the
next harvest or on demand (`dshkit memory redact`): no byte of a secret is left in the
database, its WAL or the text index; the record keeps its id, times and source, and still
reaches the next session."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson

from dshkit.memory import records as rec
from dshkit.memory.service import MemoryService
from dshkit.store import Store

from ..support.cli import run_dshkit
from ..support.logs import Log
from ..support.memory import make_repo, scan, write_session

AWS = "AKIAIOSFODNN7EXAMPLQ"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PASSWORD = "s3cr3t-P4ssw0rd-zz"
POSTGRES = f"postgresql://app:{PASSWORD}@db.internal:5432/app"
T0 = 1_790_000_000_000


def _planted(state: Path, repo: Path) -> list[int]:
    """Records as a dshkit from before redaction at write stored them: the secrets whole, in
    the text, the subject, the detail and the index."""
    service = MemoryService(state)
    where = service.workspace(str(repo))
    rows = [
        (
            "fact",
            "topic:deploy_token",
            f"the deploy token is {GITHUB}, use it for pushes",
            {"said": f"remember: the deploy token is {GITHUB}"},
            "person",
        ),
        (
            "negative",
            "",
            "`make deploy` 曾失败：OperationalError。之后`make deploy` 成功（seq 5）。",
            {
                "failed": "make deploy",
                "error": f"AWS_ACCESS_KEY_ID={AWS}\npsycopg.OperationalError: {POSTGRES}",
                "fix": "make deploy",
                "remedy": [{"kind": "command", "text": f"export DATABASE_URL={POSTGRES}"}],
            },
            "tool",
        ),
        (
            "fact",
            "command:test",
            "本工作区的测试命令：`pytest -q`（seq 3 时 4 个通过）",
            {"command": "pytest -q", "passed": 4},
            "tool",
        ),
    ]
    ids = []
    with Store(state) as store, store.transaction() as db:
        for n, (kind, subject, text, detail, grade) in enumerate(rows):
            cursor = db.execute(
                "INSERT INTO memory_records (kind, subject, text, detail, workspace, remote, "
                "valid_from, recorded_at, harness, session_id, seq, grade, digest) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'dsh', 's-old', ?, ?, ?)",
                (
                    kind,
                    subject,
                    text,
                    orjson.dumps(detail).decode(),
                    where.root,
                    where.remote,
                    T0 + n,
                    T0 + n,
                    n + 1,
                    grade,
                    f"old-{n}",
                ),
            )
            ids.append(int(cursor.lastrowid or 0))
            db.execute("INSERT INTO memory_fts (rowid, text) VALUES (?, ?)", (ids[-1], text))
    return ids


def _bytes(state: Path) -> bytes:
    with Store(state) as store:
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    found = b""
    for name in ("dshkit.db", "dshkit.db-wal"):
        path = state / name
        found += path.read_bytes() if path.exists() else b""
    return found


def _no_secret_left(state: Path) -> None:
    data = _bytes(state)
    for secret in (AWS, GITHUB, PASSWORD):
        assert secret.encode() not in data, secret
    for piece in (b"P4ss", b"a1B2c3D4", b"ODNN7"):  # not even a trigram's worth in the index
        assert piece not in data, piece
    with sqlite3.connect(state / "dshkit.db") as db:
        dumped = "\n".join(
            str(r) for r in db.execute("SELECT text, subject, detail FROM memory_records")
        )
        indexed = "\n".join(str(r) for r in db.execute("SELECT text FROM memory_fts"))
    assert "[secret:" in dumped and "[secret:" in indexed


def test_a_harvest_redacts_records_stored_before_redaction_once(tmp_path: Path) -> None:
    state = tmp_path / "state"
    repo = make_repo(tmp_path / "work" / "app")
    ids = _planted(state, repo)
    assert GITHUB.encode() in _bytes(state) and PASSWORD.encode() in _bytes(state)
    with Store(state) as store:
        before = {r.id: r for r in rec.select(store, None, current_only=False)}
    log = Log()
    log.human("fix the build")
    write_session(tmp_path / "sessions", "s-new", repo, log)
    with Store(state) as store:
        scan(store, tmp_path / "sessions")
    service = MemoryService(state)
    report = service.harvest(["s-new"])
    assert report.redacted == 2 and report.as_json()["redacted"] == 2
    _no_secret_left(state)
    with Store(state) as store:
        after = {r.id: r for r in rec.select(store, None, current_only=False)}
        assert store.get_meta(rec.REDACTED_META) == rec.REDACTED_VERSION
        assert rec.search_ids(store, "deploy token", 5) == [ids[0]]
    assert set(after) == set(before)
    for ident in ids:
        old, new = before[ident], after[ident]
        assert (new.valid_from, new.recorded_at, new.source, new.grade, new.kind) == (
            old.valid_from,
            old.recorded_at,
            old.source,
            old.grade,
            old.kind,
        )
    assert after[ids[2]].text == before[ids[2]].text  # nothing secret: untouched
    assert "[secret:" in after[ids[1]].detail["remedy"][0]["text"]
    # Once: the next harvest does not read every record again.
    assert service.harvest(["s-new"]).redacted == 0


def test_memory_redact_on_demand_from_the_cli(tmp_path: Path) -> None:
    state = tmp_path / "state"
    repo = make_repo(tmp_path / "work" / "app")
    _planted(state, repo)
    done = run_dshkit("memory", "redact", "--state-dir", str(state), "--json", home=tmp_path)
    assert orjson.loads(done.stdout) == {"redacted": 2}
    _no_secret_left(state)
    given = MemoryService(state).inject(MemoryService(state).workspace(str(repo)), "test")
    assert "pytest -q" in given.chosen.text
    for secret in (AWS, GITHUB, PASSWORD):
        assert secret not in given.chosen.text
    assert MemoryService(state).redact() == 0  # nothing left to redact
