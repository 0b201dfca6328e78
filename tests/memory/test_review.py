"""The approval queue (`[memory] confirm = true`): what a harvest learned on its own waits,
pending and given to no session, until the person accepts it; the person's own "remember …"
words stand at once; a rejected record is kept and shown, never given."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshkit.errors import Invalid, Refused
from dshkit.memory.service import MemoryService
from dshkit.store import Store

from ..support.logs import Log
from ..support.memory import PASSED_TEST, fix_session, make_repo, scan, write_session


def confirm(state: Path, on: bool = True) -> None:
    state.mkdir(mode=0o700, exist_ok=True)
    (state / "config.toml").write_text(f"[memory]\nconfirm = {'true' if on else 'false'}\n")


def harvest(state: Path, root: Path, *sessions: str) -> MemoryService:
    with Store(state) as store:
        scan(store, root)
    service = MemoryService(state)
    service.harvest(list(sessions))
    return service


def remembered(repo: Path) -> Log:
    log = fix_session()
    log.human("记住：部署命令是 make ship")
    return log


def test_what_was_learned_waits_and_the_persons_words_stand(tmp_path: Path) -> None:
    state, root = tmp_path / "state", tmp_path / "sessions"
    repo = make_repo(tmp_path / "app")
    confirm(state)
    write_session(root, "s-1", repo, remembered(repo))
    service = harvest(state, root, "s-1")
    here = service.workspace(str(repo))
    given = service.inject(here, "修复测试")
    assert "make ship" in given.chosen.text  # the person's own words: no review needed
    assert "KeyError" not in given.chosen.text and "pytest" not in given.chosen.text
    assert given.chosen.left_out["pending"] >= 2
    waiting = service.pending(here).records
    assert {r.kind for r in waiting} == {"negative", "fact", "experience"}
    assert all(r.state == "pending" for r in waiting)
    assert "make ship" not in {r.text for r in waiting}
    assert service.counts()["pending"] == len(waiting)

    negative = next(r for r in waiting if r.kind == "negative")
    experience = next(r for r in waiting if r.kind == "experience")
    assert service.review(negative.id, accept=True).record.state == "accepted"
    assert service.review(experience.id, accept=False).record.state == "rejected"
    given = service.inject(here, "修复测试")
    assert f"M{negative.id}" in given.chosen.text
    assert f"M{experience.id}" not in given.chosen.text
    left = {r.id for r in service.pending(here).records}
    assert negative.id not in left and experience.id not in left
    shown = {r.id: r.state for r in service.pending(here, rejected=True).records}
    assert shown[experience.id] == "rejected"  # kept, and shown
    assert service.get(negative.id).record.detail["reviewedAt"] > 0


def test_without_confirm_nothing_waits(tmp_path: Path) -> None:
    state, root = tmp_path / "state", tmp_path / "sessions"
    repo = make_repo(tmp_path / "app")
    write_session(root, "s-1", repo, fix_session())
    service = harvest(state, root, "s-1")
    assert service.pending().records == []
    assert "KeyError" in service.inject(service.workspace(str(repo)), "修复测试").chosen.text


def test_a_pending_fact_supersedes_only_once_accepted(tmp_path: Path) -> None:
    state, root = tmp_path / "state", tmp_path / "sessions"
    repo = make_repo(tmp_path / "app")
    write_session(root, "s-1", repo, fix_session())
    service = harvest(state, root, "s-1")
    here = service.workspace(str(repo))
    (old,) = service.records(here, kinds=("fact",)).records
    assert old.subject == "command:test"

    confirm(state)
    later = Log()
    later.time += 3_600_000
    later.human("跑一下测试")
    later.call("bash", "c1", {"command": "tox -q"})
    later.result("c1", 500, text=PASSED_TEST)
    write_session(root, "s-2", repo, later)
    harvest(state, root, "s-2")
    (new,) = [r for r in service.pending(here).records if r.kind == "fact"]
    assert service.get(old.id).current  # a pending fact closes nothing
    assert "tox -q" not in service.inject(here).chosen.text

    view = service.review(new.id, accept=True)
    assert [r.id for r in view.supersedes] == [old.id]
    assert not service.get(old.id).current
    given = service.inject(here).chosen.text
    assert f"[M{new.id}·" in given and f"[M{old.id}·" not in given


def test_a_rejected_fact_never_wins_a_supersession(tmp_path: Path) -> None:
    state, root = tmp_path / "state", tmp_path / "sessions"
    repo = make_repo(tmp_path / "app")
    confirm(state)
    write_session(root, "s-1", repo, fix_session())
    service = harvest(state, root, "s-1")
    here = service.workspace(str(repo))
    (fact,) = [r for r in service.pending(here).records if r.kind == "fact"]
    service.review(fact.id, accept=False)
    confirm(state, on=False)
    later = Log()
    later.time += 3_600_000
    later.human("跑一下测试")
    later.call("bash", "c1", {"command": "tox -q"})
    later.result("c1", 500, text=PASSED_TEST)
    write_session(root, "s-2", repo, later)
    harvest(state, root, "s-2")
    assert "tox -q" in service.inject(here).chosen.text
    assert service.get(fact.id).record.state == "rejected"


def test_what_review_refuses(tmp_path: Path) -> None:
    state, root = tmp_path / "state", tmp_path / "sessions"
    repo = make_repo(tmp_path / "app")
    confirm(state)
    write_session(root, "s-1", repo, remembered(repo))
    service = harvest(state, root, "s-1")
    here = service.workspace(str(repo))
    said = next(r for r in service.records(here, kinds=("fact",)).records if "make ship" in r.text)
    with pytest.raises(Refused) as refused:
        service.review(said.id, accept=False)  # the person's own words are not pending
    assert refused.value.code == "MEMORY_NOT_PENDING"
    waiting = service.pending(here).records[0]
    service.review(waiting.id, accept=False)
    assert service.review(waiting.id, accept=True).record.state == "accepted"  # a change of mind
    with pytest.raises(Refused):
        service.review(waiting.id, accept=False)
    with pytest.raises(Invalid):
        service.pending(limit=0)
