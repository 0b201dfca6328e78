"""Forgetting a session: the store declares every session-keyed table (checked against the
schema itself), and a forgotten session's words are in no byte of the database, its WAL or
the plaintext cache, the LLM calls that carried them included."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from dshkit.llm import LLMConfig
from dshkit.optimizer.pipeline import optimize
from dshkit.optimizer.settings import settings_for
from dshkit.profile.generate import generate
from dshkit.sessions import Scanner, Source
from dshkit.store import SESSION_ROWS, SESSION_ROWS_KEPT, Store

from .support.cli import run_dshkit
from .support.fakes import FakeOpenAI, Reply
from .support.logs import event, human, session_dir, write_log

# Chinese and ASCII, found nowhere else: any trace of it is a trace of the session.
PHRASE = "请忘掉我的暗号 Zebra-7f3q 蓝色鲸鱼"
GONE, KEPT = "s-forget-me", "s-keep-me"


def session_keyed_tables(store: Store) -> set[str]:
    """Every table whose rows belong to a session, read from the schema: those with a
    session_id column, and those linked to one through a foreign key either way (a row
    pointing at a session's row, or a link table holding the session next to the row)."""
    tables = [
        row[0]
        for row in store.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    columns = {t: {c[1] for c in store.db.execute(f"PRAGMA table_info({t})")} for t in tables}
    refers = {
        t: {fk[2] for fk in store.db.execute(f"PRAGMA foreign_key_list({t})")} for t in tables
    }
    keyed = {t for t in tables if "session_id" in columns[t]}
    while True:
        linked = {t for t in tables if refers[t] & keyed}  # points at a session's row
        linked |= {target for t in keyed for target in refers[t]}  # a link table's other end
        if linked <= keyed:
            return keyed
        keyed |= linked


def test_every_session_keyed_table_is_declared(store: Store) -> None:
    derived = session_keyed_tables(store)
    # The derivation sees both kinds of link, so it can catch a table without a session_id.
    assert {"graft_pending", "llm_calls", "llm_call_sessions"} <= derived
    declared = [rows.table for rows in SESSION_ROWS]
    assert len(declared) == len(set(declared)), "a table declared twice"
    missing = derived - set(declared) - set(SESSION_ROWS_KEPT)
    assert not missing, f"session-keyed tables forgetting does not know: {sorted(missing)}"
    assert not set(declared) & set(SESSION_ROWS_KEPT)
    existing = {row[0] for row in store.db.execute("SELECT name FROM sqlite_master")}
    for rows in SESSION_ROWS:  # each declaration names a real table with a working predicate
        assert rows.table in existing, rows.table
        store.db.execute(
            f"SELECT count(*) FROM {rows.table} WHERE {rows.where}",
            {"harness": "dsh", "session_id": GONE},
        ).fetchone()


def traces(state: Path) -> list[str]:
    """Where the phrase (UTF-8, UTF-16 either way) is in the database, its WAL and the cache."""
    forms = [PHRASE.encode(e) for e in ("utf-8", "utf-16-le", "utf-16-be")]
    files = [state / "dshkit.db", state / "dshkit.db-wal", *sorted((state / "plain").iterdir())]
    found = []
    for path in files:
        data = path.read_bytes() if path.exists() else b""
        found += [f"{path.name} ({form!r})" for form in forms if form in data]
    return found


def answer(text: str) -> Reply:
    return Reply(deltas=[text[:10], text[10:]])


@pytest.mark.parametrize("how", ["dshkit forget", "logs vanish"])
def test_forget_leaves_no_trace_of_a_sessions_words(tmp_path: Path, how: str) -> None:
    root, state = tmp_path / "sessions", tmp_path / "state"
    gone_log = session_dir(root, GONE) / "session.v4.jsonl.zstd"
    write_log(
        gone_log,
        [
            [human(0, f"帮我记住：{PHRASE}。然后修一下登录页")],
            [event("turn/start", 1, {"turn": 1})],
        ],
        session_id=GONE,
    )
    write_log(
        session_dir(root, KEPT) / "session.v4.jsonl.zstd",
        [[human(0, "把部署脚本整理一下")]],
        session_id=KEPT,
    )
    gone, kept = ("dsh", GONE), ("dsh", KEPT)
    with FakeOpenAI() as fake, Store(state) as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        assert sorted(keys) == sorted([gone, kept])
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        chosen = settings_for(store, None, {"tier": "basic", "turns": 2})
        # The optimizer's call holds the session's history and raw words; its reply too.
        fake.replies.append(answer(f"开工前先问用户：无\n先确认 {PHRASE} 指的是什么。"))
        optimize(store, f"{PHRASE} 又坏了", chosen, llm, session=gone)
        fake.replies.append(answer("开工前先问用户：无\n整理 deploy.sh。"))
        optimize(store, "整理部署脚本", chosen, llm, session=kept)
        # The profile's call holds the human messages of both sessions. Its evidence items
        # record no session, so the reply here quotes no words of the forgotten one.
        entry = {"id": "A1", "category": "A", "claim": "用中文沟通", "evidence": ["[1]"]}
        fake.replies.append(answer(orjson.dumps({"entries": [entry], "notes": ""}).decode()))
        assert generate(scanner, keys, llm, force=True).ok
        assert any(PHRASE in request.body["messages"][1]["content"] for request in fake.requests)
        links = store.db.execute(
            "SELECT c.purpose, l.session_id FROM llm_call_sessions l "
            "JOIN llm_calls c ON c.id = l.call_id ORDER BY c.id, l.session_id"
        ).fetchall()
        assert [tuple(row) for row in links] == [
            ("optimizer", GONE),
            ("optimizer", KEPT),
            ("profile", GONE),
            ("profile", KEPT),
        ]
        assert traces(state), "the phrase must be in the store before it is forgotten"

        # Forgotten while this connection stays open: the WAL is not removed by a last close.
        if how == "dshkit forget":
            run_dshkit("forget", GONE, "--state-dir", str(state), home=tmp_path)
        else:
            gone_log.unlink()
            assert scanner.scan([Source("dsh", root)]).forgotten == [gone]

        assert traces(state) == []
        calls = store.db.execute("SELECT purpose, prompt FROM llm_calls").fetchall()
        assert [row[0] for row in calls] == ["optimizer"]  # the kept session's own call
        assert "整理部署脚本" in calls[0][1]
        for rows in SESSION_ROWS:
            left = store.db.execute(
                f"SELECT count(*) FROM {rows.table} WHERE {rows.where}",
                {"harness": "dsh", "session_id": GONE},
            ).fetchone()[0]
            assert left == 0, rows.table
        assert scanner.catalog.get(kept) is not None
        assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []
