"""Forgetting a session: the store declares every session-keyed table (checked against the
schema itself), and a forgotten session's words are in no byte of the database, its WAL or
the plaintext cache, the LLM calls that carried them included, nor in what the profile kept of
them (docs/design/profile.md#forgetting-a-session-takes-its-words-out-of-the-profile)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from dshkit.llm import LLMConfig
from dshkit.optimizer.pipeline import optimize
from dshkit.optimizer.settings import settings_for
from dshkit.profile import generate as profile_generate
from dshkit.profile.generate import generate, last_run
from dshkit.profile.history import profile_versions
from dshkit.profile.model import edit_entry
from dshkit.profile.state import _KEYS, ProfileState, latest_version, save_person_version
from dshkit.sessions import Scanner, Source
from dshkit.store import SESSION_ROWS, SESSION_ROWS_KEPT, SESSION_WORDS, Store

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


def traces(state: Path, phrase: str = PHRASE) -> list[str]:
    """Where the phrase (UTF-8, UTF-16 either way) is in the database, its WAL, the cache and
    any other file under the state directory."""
    forms = [phrase.encode(e) for e in ("utf-8", "utf-16-le", "utf-16-be")]
    files = sorted(path for path in state.rglob("*") if path.is_file())
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
        # The profile's call holds the human messages of both sessions, and its reply quotes
        # the forgotten one: in a claim, in evidence, in an entry that also quotes the kept
        # session, in its notes and in an entry it got wrong (which lastRun's warnings quote).
        fake.replies.append(answer(orjson.dumps(PROFILE_REPLY).decode()))
        assert generate(scanner, keys, llm, force=True).ok
        generated = last_run(store)
        assert generated is not None and any(PHRASE in w for w in generated["warnings"])
        # The person pins the entry that quotes it (a second version: history holds it twice)
        # and copies the profile (its text is remembered).
        _, entries = latest_version(store) or (0, [])
        save_person_version(store, edit_entry(entries, "G1", 1, pinned=True), "pinned G1")
        ProfileState(store).mark_copied(ProfileState(store).effective().text)
        assert PHRASE in ProfileState(store).effective().text
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
        assert_profile_kept_only_the_kept_session(store)


# Entries quoting the session forgotten (G…), the one kept (K…), or both (M1).
PROFILE_REPLY = {
    "entries": [
        {"id": "G1", "category": "A", "claim": f"他的暗号是{PHRASE}", "evidence": ["[1]"]},
        {"id": "G2", "category": "C", "claim": "先修登录页", "evidence": [f"记住：{PHRASE}"]},
        {
            "id": "M1",
            "category": "C",
            "claim": "先整理再动手",
            "evidence": [PHRASE, "把部署脚本整理一下"],
            "confidence": "high",
        },
        {"id": "K1", "category": "A", "claim": "用中文沟通", "evidence": ["[2]"]},
        {"id": "K2", "category": "B", "claim": "部署脚本要常整理", "evidence": ["部署脚本整理"]},
        {"category": "A", "claim": f"没有 id 的条目 {PHRASE}", "evidence": ["[1]"]},
    ],
    "notes": f"“{PHRASE}”像是口令，先记下",
}


def assert_profile_kept_only_the_kept_session(store: Store) -> None:
    """Every version lost the forgotten session's words and kept the rest, coherent: the
    entries left with evidence, the one quoting both sessions with the kept one's only; and
    what the agent is given no longer carries them."""
    history = profile_versions(store)["versions"]
    assert [v["version"] for v in history] == [2, 1]
    for version in history:
        assert [e["id"] for e in version["entries"]] == ["M1", "K1", "K2"]
        assert version["entries"][0]["evidence"] == ["把部署脚本整理一下"]
        assert version["notes"] == ""
    text = ProfileState(store).effective().text
    assert "用中文沟通" in text and "部署脚本要常整理" in text and "暗号" not in text
    run, copied = last_run(store), ProfileState(store).copied_snapshot()
    assert run is not None and run["outcome"] == "ok"
    assert not any("Zebra" in w for w in run["warnings"])
    assert copied is not None and copied["text"] == ""


def test_the_profile_s_words_are_declared() -> None:
    """The profile's own keys for its last run and its copy are the ones forgetting scrubs."""
    meta = [w.where for w in SESSION_WORDS if w.table == "meta"]
    for key in (profile_generate._LAST_RUN, _KEYS["copiedSnapshot"]):
        assert any(f"'{key}'" in where for where in meta), key
    assert {(w.table, w.column) for w in SESSION_WORDS} >= {
        ("profile_versions", "entries"),
        ("profile_versions", "notes"),
    }


SHARED = "每次提交前都跑一遍完整测试 Quokka-9x2"


@pytest.mark.parametrize("how", ["one by one", "both at once"])
def test_a_quote_both_sessions_said_goes_with_the_last_of_them(tmp_path: Path, how: str) -> None:
    """A quote the kept session also said is still its words: it stays, until that session is
    forgotten too (then, or when both go at once, no byte of it is left)."""
    root, state = tmp_path / "sessions", tmp_path / "state"
    logs = {}
    for session, said in ((GONE, f"记住：{SHARED}"), (KEPT, f"{SHARED}，别忘了")):
        logs[session] = session_dir(root, session) / "session.v4.jsonl.zstd"
        write_log(logs[session], [[human(0, said)]], session_id=session)
    reply = {
        "entries": [
            {"id": "S1", "category": "C", "claim": "提交前先跑全部测试", "evidence": [SHARED]},
            {"id": "S2", "category": "A", "claim": SHARED, "evidence": ["[1]", "[2]"]},
        ],
        "notes": "",
    }
    with FakeOpenAI() as fake, Store(state) as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        fake.replies.append(answer(orjson.dumps(reply).decode()))
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        assert generate(scanner, keys, llm, force=True).ok
        if how == "one by one":
            run_dshkit("forget", GONE, "--state-dir", str(state), home=tmp_path)
            version = latest_version(store)
            assert version is not None
            # "[1]" and "[2]" were each session's message: the forgotten one's is gone,
            # with its place; the kept one's stays.
            assert [(e["id"], e["evidence"]) for e in version[1]] == [
                ("S1", [SHARED]),
                ("S2", [f"{SHARED}，别忘了"]),
            ]
            assert [s["session"] for s in version[1][1]["sources"]] == [KEPT]
            assert traces(state, SHARED)  # the kept session's own message, and the profile
            run_dshkit("forget", KEPT, "--state-dir", str(state), home=tmp_path)
        else:
            for log in logs.values():
                log.unlink()
            assert sorted(scanner.scan([Source("dsh", root)]).forgotten) == [
                ("dsh", GONE),
                ("dsh", KEPT),
            ]
        assert latest_version(store) == (1, [])
        assert traces(state, SHARED) == []
        assert ProfileState(store).effective().text == ""


def test_a_generation_the_forget_overtook_stores_nothing(tmp_path: Path) -> None:
    """A session forgotten while the profile's model call was answering: the answer (made from
    its words) and the entries it built on (since rewritten) are not stored."""
    root, state = tmp_path / "sessions", tmp_path / "state"
    for session, said in ((GONE, f"帮我记住：{PHRASE}"), (KEPT, "把部署脚本整理一下")):
        path = session_dir(root, session) / "session.v4.jsonl.zstd"
        write_log(path, [[human(0, said)]], session_id=session)
    first = {"entries": PROFILE_REPLY["entries"][:4], "notes": ""}
    with FakeOpenAI() as fake, Store(state) as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        fake.replies.append(answer(orjson.dumps(first).decode()))
        assert generate(scanner, keys, llm, force=True).ok
        forgot: list[bool] = []

        def forget_once(_: str) -> None:
            if not forgot:  # another connection, as another process would
                with Store(state) as other:
                    forgot.append(Scanner(other).forget(("dsh", GONE)))

        unchanged = {"entries": [], "unchangedIds": ["G1", "G2", "M1", "K1"], "notes": ""}
        fake.replies.append(answer(orjson.dumps(unchanged).decode()))
        run = generate(scanner, keys, llm, force=True, on_delta=forget_once)
        assert forgot == [True]
        assert (run.ok, run.outcome) == (False, "superseded")
        assert "forgotten" in (run.error or "")
        version = latest_version(store)
        assert version is not None and version[0] == 1
        assert [e["id"] for e in version[1]] == ["M1", "K1"]
        rows = store.db.execute("SELECT entries, notes FROM profile_versions").fetchall()
        rows += store.db.execute("SELECT value, '' FROM meta").fetchall()
        assert not [row for row in rows if PHRASE in row[0] or PHRASE in row[1]]
