"""Model calls are kept for a while: the newest `[llm] keep_calls`, none older than `keep_days`,
pruned with their links to sessions in the transaction that records a call
(docs/design/llm.md#a-calls-prompt-and-reply-are-kept-for-a-while); forgetting works as before,
and a profile removal is still linked to the sessions pruned profile calls carried."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dshkit.config import ConfigError, load_config
from dshkit.llm import LLMClient, LLMConfig
from dshkit.llm.client import DAY_MS
from dshkit.profile.removals import record_removal
from dshkit.store import Store

from ..support.fakes import FakeOpenAI, Reply

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def call(
    fake: FakeOpenAI,
    store: Store,
    sessions: list[tuple[str, str]],
    purpose: str = "optimizer",
    **config: Any,
) -> None:
    fake.replies.append(Reply(deltas=[f"reply {len(fake.requests)}"]))
    settings = {"base_url": fake.base_url, "api_key": "sk-t", "model": "m", **config}
    with LLMClient(LLMConfig(**settings), store, sessions=sessions) as llm:
        assert llm.complete(MESSAGES, purpose=purpose).ok


def rows(store: Store, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in store.db.execute(sql)]


def test_more_calls_than_kept_leave_exactly_the_newest(tmp_path: Path, fake: FakeOpenAI) -> None:
    with Store(tmp_path) as store:
        for n in range(7):
            call(fake, store, [("dsh", f"s{n}"), ("dsh", "shared")], keep_calls=3)
        kept = rows(store, "SELECT id, response FROM llm_calls ORDER BY id")
        assert [r[1] for r in kept] == ["reply 4", "reply 5", "reply 6"]
        # The links of the deleted calls went with them, in the same transaction.
        links = rows(store, "SELECT call_id, session_id FROM llm_call_sessions ORDER BY 1, 2")
        assert {link[0] for link in links} == {r[0] for r in kept}
        assert sorted(link[1] for link in links) == sorted(["s4", "s5", "s6"] + ["shared"] * 3)
        # Raising the bound keeps more from now on; nothing deleted comes back.
        call(fake, store, [], keep_calls=10)
        assert len(rows(store, "SELECT id FROM llm_calls")) == 4


def test_calls_older_than_kept_go_however_few(tmp_path: Path, fake: FakeOpenAI) -> None:
    with Store(tmp_path) as store:
        call(fake, store, [("dsh", "old")])
        call(fake, store, [("dsh", "recent")])
        with store.transaction() as db:  # the first a month and a day old, the second a week
            now = int(store.db.execute("SELECT max(at) FROM llm_calls").fetchone()[0])
            db.execute(
                "UPDATE llm_calls SET at = ? WHERE response = 'reply 0'", (now - 31 * DAY_MS,)
            )
            db.execute(
                "UPDATE llm_calls SET at = ? WHERE response = 'reply 1'", (now - 7 * DAY_MS,)
            )
        call(fake, store, [("dsh", "new")])
        assert [r[0] for r in rows(store, "SELECT response FROM llm_calls ORDER BY id")] == [
            "reply 1",
            "reply 2",
        ]
        call(fake, store, [], keep_days=5)
        assert [r[0] for r in rows(store, "SELECT response FROM llm_calls ORDER BY id")] == [
            "reply 2",
            "reply 3",
        ]
        assert rows(store, "SELECT session_id FROM llm_call_sessions") == [("new",)]


def test_forgetting_still_takes_the_calls_and_what_pruning_remembered(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    with Store(tmp_path) as store:
        call(fake, store, [("dsh", "gone"), ("dsh", "kept")], purpose="profile", keep_calls=1)
        call(fake, store, [("dsh", "gone")], purpose="profile", keep_calls=1)
        # The first call was pruned; which sessions it carried is remembered, without words.
        assert rows(store, "SELECT purpose, session_id FROM llm_pruned_sessions ORDER BY 2") == [
            ("profile", "gone"),
            ("profile", "kept"),
        ]
        # So a removal is linked to every session a profile call carried, as before pruning.
        with store.transaction() as db:
            removal = record_removal(db, {"id": "A1", "category": "A", "claim": "x"}, 1)
        linked = rows(
            store,
            f"SELECT session_id FROM profile_removal_sessions WHERE removal_id = {removal} "
            "ORDER BY 1",
        )
        assert linked == [("gone",), ("kept",)]
        store.forget_sessions([("dsh", "gone")])
        assert rows(store, "SELECT id FROM llm_calls") == []
        assert rows(store, "SELECT session_id FROM llm_pruned_sessions") == [("kept",)]
        assert rows(store, "SELECT id FROM profile_removals") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("keep_calls = 0", "[llm] keep_calls = 0 (an integer) is not allowed: expected an integer "
         "at least 1 and at most 1,000,000"),
        ("keep_calls = 2.5", "[llm] keep_calls = 2.5 (a number) is not allowed"),
        ("keep_days = 0", "[llm] keep_days = 0 (an integer) is not allowed: expected an integer "
         "at least 1 and at most 36,500"),
        ("keep_days = 'forever'", "[llm] keep_days = 'forever' (a string) is not allowed"),
    ],
)  # fmt: skip
def test_the_bounds_are_checked(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "config.toml").write_text(f"[llm]\n{text}\n")
    with pytest.raises(ConfigError) as raised:
        LLMConfig.load(tmp_path, {})
    assert expected in str(raised.value)
    with pytest.raises(ConfigError):
        LLMConfig(api_key="k", keep_calls=0).check()


def test_the_defaults_and_a_configured_bound(tmp_path: Path) -> None:
    llm = load_config(tmp_path, {})["llm"]
    assert (llm["keep_calls"], llm["keep_days"]) == (500, 30)
    (tmp_path / "config.toml").write_text("[llm]\nkeep_calls = 20\nkeep_days = 7\n")
    config = LLMConfig.load(tmp_path, {})
    assert (config.keep_calls, config.keep_days) == (20, 7)
