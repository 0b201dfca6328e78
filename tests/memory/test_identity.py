"""A workspace's memory survives what changes its identity and nothing else: its remote
spelled another way, a remote added after its first sessions, a folder moved (`rekey`), a
worktree of the same repository; while another repository at the same path stays apart."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dshkit.errors import Ambiguous, Invalid, NotFound
from dshkit.memory.service import MemoryService
from dshkit.store import Store

from ..support.logs import Log
from ..support.memory import fix_session, make_repo, scan, write_session


def harvested(tmp_path: Path, repo: Path, session: str, error: str) -> MemoryService:
    root = tmp_path / "sessions"
    write_session(root, session, repo, fix_session(error=error))
    service = MemoryService(tmp_path / "state")
    with Store(tmp_path / "state") as store:
        scan(store, root)
    service.harvest([session])
    return service


def given(service: MemoryService, directory: Path) -> str:
    """The stored text of the records a new session in `directory` is given (the injected
    text says them in dshkit's template, not in the tool's words that name them here)."""
    chosen = service.inject(service.workspace(str(directory)), "测试").chosen
    return "\n".join(r.text for r in chosen.records)


def set_remote(repo: Path, url: str) -> None:
    (repo / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {url}\n')


def test_a_remote_switched_from_https_to_ssh_keeps_the_memory(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", "https://github.com/o/app.git")
    service = harvested(tmp_path, repo, "s-1", "KeyError: 'https-era'")
    set_remote(repo, "git@github.com:o/app.git")
    assert "https-era" in given(service, repo)


def test_a_remote_added_after_the_first_sessions_joins_their_memory(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")  # no remote yet
    service = harvested(tmp_path, repo, "s-1", "KeyError: 'before-remote'")
    set_remote(repo, "https://github.com/o/app")
    workspace = service.workspace(str(repo))
    assert workspace.remote == "https://github.com/o/app"
    assert "before-remote" in given(service, repo)
    listed = service.records(workspace).records
    assert listed and {r.remote for r in listed} == {"https://github.com/o/app"}


def test_records_stored_under_an_old_spelling_join_the_canonical_remote(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", "git@github.com:o/app.git")
    service = harvested(tmp_path, repo, "s-1", "KeyError: 'old-spelling'")
    with Store(tmp_path / "state") as store, store.transaction() as db:  # as stored before
        db.execute("UPDATE memory_records SET remote = 'git@github.com:o/app'")
    assert "old-spelling" in given(service, repo)


def test_the_same_path_holding_another_repository_stays_apart(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", "https://github.com/o/one")
    service = harvested(tmp_path, repo, "s-1", "KeyError: 'repo-one'")
    shutil.rmtree(repo)
    make_repo(repo, "https://github.com/o/two")
    assert "repo-one" not in given(service, repo)
    assert service.records(service.workspace(str(repo))).records == []


def test_worktrees_of_one_repository_share_its_memory(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", "https://github.com/o/app")
    linked = main / ".git" / "worktrees" / "feature"
    linked.mkdir(parents=True)
    (linked / "commondir").write_text("../..\n")
    tree = tmp_path / "feature"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {linked}\n")
    service = harvested(tmp_path, tree, "s-1", "KeyError: 'from-a-worktree'")
    assert "from-a-worktree" in given(service, main)
    (tree / "src").mkdir()
    assert "from-a-worktree" in given(service, tree / "src")


def test_rekey_moves_a_moved_folders_memory_by_path(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "old" / "app", "https://github.com/o/app")
    service = harvested(tmp_path, repo, "s-1", "KeyError: 'moved-along'")
    other = make_repo(tmp_path / "else", "https://github.com/o/else")
    before = len(service.records(service.workspace(str(repo))).records)
    moved_to = tmp_path / "new" / "renamed"
    moved_to.parent.mkdir()
    shutil.move(str(repo), str(moved_to))
    assert "moved-along" not in given(service, moved_to)
    done = service.rekey(str(repo), str(moved_to))
    assert done.records == before and done.new.root == str(moved_to.resolve())
    assert "moved-along" in given(service, moved_to)
    assert "moved-along" not in given(service, other)
    shown = done.as_json()
    assert shown["from"]["root"] == str(repo) and shown["to"]["id"] == done.new.id


def test_rekey_by_workspace_id_and_what_it_refuses(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", "https://github.com/o/app")
    service = harvested(tmp_path, repo, "s-1", "KeyError: 'by-id'")
    target = make_repo(tmp_path / "target")
    [entry] = service.workspace_entries()
    assert entry.workspace.root == str(repo.resolve()) and entry.records > 0
    with pytest.raises(Invalid):
        service.rekey(entry.workspace.id, str(repo))  # the same workspace
    with pytest.raises(NotFound):
        service.rekey(str(tmp_path / "never"), str(target))
    with pytest.raises(NotFound):
        service.rekey(entry.workspace.id, str(tmp_path / "not-there"))
    with pytest.raises(Invalid):
        service.rekey("relative/dir", str(target))
    done = service.rekey(entry.workspace.id, str(target))
    assert done.records == entry.records
    assert "by-id" in given(service, target) and "by-id" not in given(service, repo)


def test_rekey_asks_for_an_id_where_a_path_held_two_repositories(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", "https://github.com/o/one")
    service = harvested(tmp_path, repo, "s-1", "KeyError: 'one'")
    set_remote(repo, "https://github.com/o/two")
    write_session(tmp_path / "sessions", "s-2", repo, fix_session(error="KeyError: 'two'"))
    with Store(tmp_path / "state") as store:
        scan(store, tmp_path / "sessions")
    service.harvest(["s-2"])
    target = make_repo(tmp_path / "target")
    with pytest.raises(Ambiguous) as raised:
        service.rekey(str(repo), str(target))
    assert all(e.workspace.id in str(raised.value) for e in service.workspace_entries())


@pytest.mark.parametrize("newer_moves", [True, False])
def test_rekey_into_a_workspace_with_records_settles_supersession(
    tmp_path: Path, newer_moves: bool
) -> None:
    # One folder knew the deploy command as make deploy, the other (later) as make ship.
    source = make_repo(tmp_path / "old" / "app")
    target = make_repo(tmp_path / "new" / "app")
    early, late = Log(), Log()
    early.human("记住：部署命令是 make deploy")
    late.time += 3_600_000
    late.human("记住：部署命令是 make ship")
    root = tmp_path / "sessions"
    write_session(root, "s-source", source, late if newer_moves else early)
    write_session(root, "s-target", target, early if newer_moves else late)
    service = MemoryService(tmp_path / "state")
    with Store(tmp_path / "state") as store:
        scan(store, root)
    service.harvest(["s-source", "s-target"])
    done = service.rekey(str(source), str(target))
    assert done.records == 1 and done.superseded == 1 and done.as_json()["superseded"] == 1
    where = service.workspace(str(target))
    facts = [r.text for r in service.records(where, kinds=("fact",)).records]
    assert facts == ["部署命令是 make ship"]
    given_text = service.inject(where, "部署").chosen.text
    assert "make ship" in given_text and "make deploy" not in given_text
    (chain,) = service.timeline(where)["chains"]
    assert [r["text"] for r in chain["records"]] == [
        "部署命令是 make deploy",
        "部署命令是 make ship",
    ]
    old, new = chain["records"]
    assert old["supersededBy"] == new["id"] and old["validTo"] == new["validFrom"]


def test_rekey_into_an_empty_workspace_closes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    service = harvested(tmp_path, repo, "s-1", "KeyError: 'alone'")
    done = service.rekey(str(repo), str(make_repo(tmp_path / "target")))
    assert done.records > 0 and done.superseded == 0
