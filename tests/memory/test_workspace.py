"""Workspace identity: the repository root's real path and its remote, never a folder name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
    assert found == Workspace(str(repo.resolve()), "https://github.com/me/mono")


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


def _worktree(main: Path, tree: Path, name: str = "feature") -> Path:
    """A linked worktree of `main` at `tree`, as `git worktree add` leaves it."""
    linked = main / ".git" / "worktrees" / name
    linked.mkdir(parents=True)
    (linked / "commondir").write_text("../..\n")
    (linked / "gitdir").write_text(f"{tree}/.git\n")
    tree.mkdir(parents=True)
    (tree / ".git").write_text(f"gitdir: {linked}\n")
    return tree


def test_worktrees_of_one_repository_are_its_workspace(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", "https://example.com/team/app.git")
    tree = _worktree(main, tmp_path / "feature")
    other = _worktree(main, tmp_path / "elsewhere" / "fix", "fix")
    found = identify(str(tree / "src"))
    assert found == identify(str(main)) == identify(str(other))
    assert found.root == str(main.resolve())
    assert found.remote == "https://example.com/team/app"


def test_a_relative_gitdir_and_commondir_are_followed(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", "git@example.com:team/app.git")
    linked = main / ".git" / "worktrees" / "w"
    linked.mkdir(parents=True)
    (linked / "commondir").write_text("../..\n")
    tree = tmp_path / "w"
    tree.mkdir()
    (tree / ".git").write_text("gitdir: ../main/.git/worktrees/w\n")
    assert identify(str(tree)) == identify(str(main))


def test_a_submodule_stays_its_own_workspace(tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "outer", "https://example.com/o/outer")
    module_dir = outer / ".git" / "modules" / "lib"
    module_dir.mkdir(parents=True)
    (module_dir / "config").write_text('[remote "origin"]\n\turl = https://example.com/o/lib\n')
    sub = outer / "lib"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/lib\n")
    found = identify(str(sub))
    assert found == Workspace(str(sub.resolve()), "https://example.com/o/lib")
    assert found != identify(str(outer))


def test_a_worktree_of_a_bare_repository_is_keyed_by_the_repository(tmp_path: Path) -> None:
    bare = tmp_path / "app.git"
    (bare / "worktrees" / "w").mkdir(parents=True)
    (bare / "config").write_text('[remote "origin"]\n\turl = https://example.com/o/app\n')
    (bare / "worktrees" / "w" / "commondir").write_text("../..\n")
    one, two = tmp_path / "one", tmp_path / "two"
    for tree in (one, two):
        tree.mkdir()
        (tree / ".git").write_text(f"gitdir: {bare}/worktrees/w\n")
    assert (
        identify(str(one))
        == identify(str(two))
        == Workspace(str(bare.resolve()), "https://example.com/o/app")
    )


def test_a_directory_outside_any_repository_is_its_own_workspace(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    assert identify(str(tmp_path / "notes")) == Workspace(str((tmp_path / "notes").resolve()), None)


def test_credentials_in_a_remote_are_never_kept() -> None:
    assert normalize_remote("https://user:s3cret@github.com/me/app.git/") == (
        "https://github.com/me/app"
    )
    assert normalize_remote("ssh://git@host:22/me/app.git") == "https://host/me/app"
    assert normalize_remote("file://me:pw@/srv/git/app.git") == "file:///srv/git/app"


@pytest.mark.parametrize(
    "spelling",
    [
        "https://github.com/o/r",
        "https://github.com/o/r.git",
        "https://github.com/o/r/",
        "https://github.com/o/r.git/",
        "https://GitHub.COM/o/r.git",
        "http://github.com/o/r",
        "https://x-access-token:ghp_abc@github.com/o/r.git",
        "git@github.com:o/r.git",
        "git@github.com:o/r",
        "git@GITHUB.com:o/r.git/",
        "github.com:o/r.git",
        "ssh://git@github.com/o/r",
        "ssh://git@github.com/o/r.git",
        "ssh://git@github.com:22/o/r.git",
        "git+ssh://git@github.com/o/r.git",
        "git://github.com/o/r.git",
        "  https://github.com/o/r.git  ",
        "https://github.com/O/R.git",
        "git@github.com:O/r.git",
        "ssh://git@ssh.github.com:443/o/r.git",
        "https://www.github.com/o/r",
    ],
)
def test_the_spellings_of_one_remote_are_one_remote(spelling: str) -> None:
    assert normalize_remote(spelling) == "https://github.com/o/r"


def test_azure_devops_ssh_and_https_are_one_remote() -> None:
    one = "https://dev.azure.com/org/proj/_git/app"
    assert normalize_remote("git@ssh.dev.azure.com:v3/org/proj/app") == one
    assert normalize_remote("https://org@dev.azure.com/org/proj/_git/app") == one
    assert normalize_remote("org@vs-ssh.visualstudio.com:v3/org/proj/app") == one


def test_different_repositories_stay_different_remotes() -> None:
    spellings = [
        "https://github.com/o/r",
        "https://github.com/o/r2",
        "https://github.com/other/r",
        "https://gitlab.com/o/r",
        "git@github.com:o/r-app.git",
        "/srv/git/r.git",
        "../r",
    ]
    # (a self-hosted server may tell paths apart by case: they stay apart there)
    spellings += ["https://git.example.com/Team/App", "https://git.example.com/team/app"]
    assert len({normalize_remote(s) for s in spellings}) == len(spellings)
    assert normalize_remote("/srv/git/r.git/") == "/srv/git/r"


def test_a_remote_spelled_another_way_in_the_config_is_the_same_workspace(
    tmp_path: Path,
) -> None:
    https = make_repo(tmp_path / "app", "https://github.com/o/r.git")
    before = identify(str(https))
    (https / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:o/r.git\n')
    assert identify(str(https)) == before
