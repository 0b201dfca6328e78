"""A person's removal of a profile entry is honoured by every later regeneration, against the
real fake model: the prompt names what was removed, and an answer that writes it again (same
id, or the same claim in the same category, said alike) is dropped and reported; undoing the
removal lets it back; forgetting a session its words came from takes the record with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from dshkit.errors import NotFound
from dshkit.llm import LLMConfig
from dshkit.profile.generate import generate, last_run
from dshkit.profile.model import ParsedOutput, assemble
from dshkit.profile.removals import Removal, match_removal
from dshkit.profile.service import ProfileService
from dshkit.profile.state import latest_version
from dshkit.sessions import Scanner, SessionsService, Source
from dshkit.store import Store
from dshkit.words import normalise

from ..support.cli import run_dshkit
from ..support.fakes import FakeOpenAI
from ..support.logs import human, session_dir, write_log
from ..support.profile import A1, B1, TRUSTING, answer, generated


@pytest.fixture
def world(tmp_path: Path) -> Any:
    yield from generated(tmp_path)


def ids(store: Store) -> set[str]:
    found = latest_version(store)
    assert found is not None
    return {e["id"] for e in found[1]}


def test_a_removed_entry_the_model_writes_again_does_not_come_back(world: Any) -> None:
    fake, scanner, keys, llm, service = world
    service.change_entry("B1", "remove")
    assert ids(scanner.store) == {"A1"}
    # The same evidence, the same entry: the model adds it back under its old id.
    fake.replies.append(answer({"entries": [B1], "unchangedIds": ["A1"]}))
    run = generate(scanner, keys, llm, force=True)
    assert run.outcome == "unchanged" and ids(scanner.store) == {"A1"}
    prompt = fake.requests[-1].body["messages"][1]["content"]
    assert "他亲手删掉的条目" in prompt and B1["claim"] in prompt
    (dropped,) = run.dropped_as_removed
    assert dropped["id"] == "B1" and dropped["removedId"] == "B1" and "id" in dropped["why"]
    assert any("B1" in w and "removed" in w for w in run.warnings)
    assert last_run(scanner.store)["droppedAsRemoved"] == run.dropped_as_removed  # type: ignore[index]
    # A new id, the same claim said a little differently: still the removed entry.
    again = {**B1, "id": "n7", "claim": "不要未经确认就改代码！"}
    fake.replies.append(answer({"entries": [again], "unchangedIds": ["A1"]}))
    run = generate(scanner, keys, llm, force=True)
    assert run.outcome == "unchanged" and ids(scanner.store) == {"A1"}
    assert run.dropped_as_removed[0]["id"] == "n7"
    assert "removed entry 'B1'" in run.dropped_as_removed[0]["why"]
    # The removal is kept by the store, shown to the console.
    assert [r["id"] for r in service.state().as_json()["removed"]] == ["B1"]


def test_undoing_a_removal_lets_the_entry_come_back(world: Any) -> None:
    fake, scanner, keys, llm, service = world
    service.change_entry("B1", "remove")
    restored = service.change_entry("B1", "restore")
    assert restored.action == "restore" and restored.version == 2
    assert service.removals() == []
    fake.replies.append(answer({"entries": [B1], "unchangedIds": ["A1"]}))
    run = generate(scanner, keys, llm, force=True)
    assert run.ok and ids(scanner.store) == {"A1", "B1"} and run.dropped_as_removed == []
    assert "他亲手删掉的条目" not in fake.requests[-1].body["messages"][1]["content"]
    with pytest.raises(NotFound) as missing:
        service.restore_entry("B1")
    assert missing.value.field == "id"


def test_a_rewrite_into_a_removed_claim_keeps_the_entry_as_it_was(world: Any) -> None:
    fake, scanner, keys, llm, service = world
    service.change_entry("B1", "remove")
    rewritten = {**A1, "category": "B", "claim": B1["claim"]}
    fake.replies.append(answer({"entries": [rewritten]}))
    run = generate(scanner, keys, llm, force=True)
    assert run.outcome == "unchanged" and run.dropped_as_removed[0]["id"] == "A1"
    found = latest_version(scanner.store)
    assert found is not None and found[1][0]["claim"] == A1["claim"]


def test_what_counts_as_the_removed_claim() -> None:
    removed = [Removal(1, "B1", "B", "不要未经确认就改代码", 0)]
    assert normalise(" Don't， Touch it！") == "donttouchit"
    same = [
        {"id": "x", "category": "B", "claim": "不要 未经确认 就改代码。"},
        {"id": "x", "category": "B", "claim": "不要未经他确认就改代码"},
        {"id": "B1", "category": "A", "claim": "另一件事"},
    ]
    assert all(match_removal(e, removed) is not None for e in same)
    other = [
        {"id": "x", "category": "A", "claim": "不要未经确认就改代码"},
        {"id": "x", "category": "B", "claim": "改代码前先跑测试"},
    ]
    assert all(match_removal(e, removed) is None for e in other)
    # Without a check, assembly is as it was.
    built = assemble([], ParsedOutput(entries=[B1]), 1, 1, TRUSTING)
    assert [e["id"] for e in built.entries] == ["B1"] and built.dropped_as_removed == []


PHRASE = "请记住我的暗号 Kestrel-9q 紫色海象"


def test_forgetting_the_session_a_removal_quotes_forgets_the_removal(tmp_path: Path) -> None:
    root, state = tmp_path / "sessions", tmp_path / "state"
    write_log(
        session_dir(root, "s-gone") / "session.v4.jsonl.zstd",
        [[human(0, f"{PHRASE}，以后都这样叫")]],
        session_id="s-gone",
    )
    quoting = {
        "id": "A9",
        "category": "A",
        "claim": f"喜欢被称作 {PHRASE}",
        "evidence": [PHRASE],
        "confidence": "high",
    }
    with FakeOpenAI() as fake, Store(state) as store:
        scanner = Scanner(store)
        keys = scanner.scan([Source("dsh", root)]).keys
        llm = LLMConfig(base_url=fake.base_url, api_key="sk-t", model="m")
        fake.replies.append(answer({"entries": [A1, quoting]}))
        assert generate(scanner, keys, llm, force=True).ok
    service = ProfileService(state, sources=[])
    service.change_entry("A9", "remove")
    assert [r.entry_id for r in service.removals()] == ["A9"]
    with Store(state) as store:
        links = store.db.execute("SELECT harness, session_id FROM profile_removal_sessions")
        assert [tuple(r) for r in links] == [("dsh", "s-gone")]
    SessionsService(state, sources=[Source("dsh", root)]).forget("s-gone", "dsh")
    assert service.removals() == []
    with Store(state) as store:
        rows = store.db.execute(
            "SELECT (SELECT count(*) FROM profile_removals), "
            "(SELECT count(*) FROM profile_removal_sessions)"
        ).fetchone()
        assert tuple(rows) == (0, 0)
        # No row of the removal tables quotes the phrase (the versions are another matter).
        dumped = orjson.dumps([list(r) for r in store.db.execute("SELECT * FROM profile_removals")])
        assert PHRASE.encode() not in dumped


def test_the_command_line_removes_and_restores(world: Any, tmp_path: Path) -> None:
    service = world[4]
    state = ["--state-dir", str(service.state_dir)]
    run_dshkit("profile", "entry", "remove", "B1", *state, home=tmp_path)
    assert [r.entry_id for r in service.removals()] == ["B1"]
    done = run_dshkit("profile", "entry", "restore", "B1", *state, "--json", home=tmp_path)
    assert orjson.loads(done.stdout)["action"] == "restore" and service.removals() == []
    again = run_dshkit("profile", "entry", "restore", "B1", *state, home=tmp_path, check=False)
    assert again.returncode != 0 and "no removal" in again.stderr
