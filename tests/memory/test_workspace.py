"""Workspace identity: the repository root's real path and its remote, never a folder name."""

from __future__ import annotations

import os
from pathlib import Path

from dshkit.memory.workspace import Workspace, identify, normalize_remote

from ..support.memory import make_repo


def test_two_folders_of_the_same_name_are_two_workspaces(tmp_path: Path) -> None:
    one = make_repo(tmp_path / "a" / "app")
    two = make_repo(tmp_path / "b" / "app")
    assert identify(str(one)) != identify(str(two))
    assert identify(str(one)).root == str(one.resolve())


def test_a_subdirectory_belongs_to_its_repository_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "mono", "git@github.com:me/mono.git")
    (repo / "packages" / "web" / "src").mkdir(parents=True)
    found = identify(str(repo / "packages" / "web" / "src"))
    assert found == Workspace(str(repo.resolve()), "git@github.com:me/mono")


def test_configured_roots_split_a_monorepo(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "mono")
    web, api = repo / "packages" / "web", repo / "packages" / "api"
    for place in (web / "src", api):
        place.mkdir(parents=True)
    configured = [str(web), str(api)]
    assert identify(str(web / "src"), configured).root == str(web.resolve())
    assert identify(str(api), configured).root == str(api.resolve())
    assert identify(str(repo), configured).root == str(repo.resolve())
    # a configured root outside the repository does not move it
    assert identify(str(repo), [str(tmp_path)]).root == str(repo.resolve())


def test_a_symlinked_directory_is_the_same_workspace(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "real" / "app")
    link = tmp_path / "link"
    os.symlink(repo, link)
    assert identify(str(link)) == identify(str(repo))


def test_a_worktree_reads_the_remote_of_its_common_repository(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", "https://example.com/team/app.git")
    linked = main / ".git" / "worktrees" / "feature"
    linked.mkdir(parents=True)
    (linked / "commondir").write_text("../..\n")
    tree = tmp_path / "feature"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {linked}\n")
    found = identify(str(tree))
    assert found.root == str(tree.resolve())
    assert found.remote == "https://example.com/team/app"


def test_a_directory_outside_any_repository_is_its_own_workspace(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    assert identify(str(tmp_path / "notes")) == Workspace(str((tmp_path / "notes").resolve()), None)


def test_credentials_in_a_remote_are_never_kept() -> None:
    assert normalize_remote("https://user:s3cret@github.com/me/app.git/") == (
        "https://github.com/me/app"
    )
    assert normalize_remote("ssh://git@host:22/me/app.git") == "ssh://host:22/me/app"
