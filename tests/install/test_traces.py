"""`install-hooks` creates nothing that was not there and `uninstall-hooks` leaves no trace:
no harness that is not installed is touched, nothing of dshkit's own lies beside a person's
files, what dshkit creates is private, and taking it out gives the home back as it was."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from ..support.cli import run_at_home
from ..support.install import FOREIGN

PRESENT_BY_HOME = {"claude": ".claude", "codex": ".codex", "dsh": ".dsh"}

Tree = dict[str, tuple[str, int, bytes]]


def tree(root: Path) -> Tree:
    """Every path under `root` (itself included): its kind, mode and content (a link's
    target, a file's bytes)."""
    found: Tree = {}
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        name = str(path.relative_to(root))
        if stat.S_ISLNK(info.st_mode):
            found[name] = ("link", 0, os.readlink(path).encode())
        elif stat.S_ISDIR(info.st_mode):
            found[name] = ("dir", stat.S_IMODE(info.st_mode), b"")
        else:
            found[name] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return found


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def fake_cli(tmp_path: Path, program: str) -> str:
    """A directory outside the home holding a do-nothing `program`: the harness's CLI is on
    PATH, nothing of it in the home yet. Returns the PATH to run with."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / program
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    return f"{bin_dir}:/usr/bin:/bin"


def dshkit_files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if ".dshkit-" in p.name)


def test_only_claude_here_so_installing_everywhere_touches_claude_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    done = run_at_home(home, "install-hooks")
    assert "skipped Codex: not installed here" in done.stdout
    assert "skipped DSH: not installed here" in done.stdout
    assert not (home / ".codex").exists()
    # dshkit's own state directory lies in DSH's home by default; nothing else of DSH's does.
    state = home / ".dsh" / "dshkit"
    assert sorted(p.name for p in (home / ".dsh").iterdir()) == ["dshkit"]
    assert sorted(p.name for p in state.iterdir()) == ["install"]
    settings, user_file = home / ".claude" / "settings.json", home / ".claude.json"
    assert "hook SessionStart" in settings.read_text()
    assert "mcpServers" in json.loads(user_file.read_text())
    assert mode(user_file) == 0o600 and mode(settings) == 0o600
    assert mode(home / ".dsh") == mode(state) == mode(state / "install") == 0o700
    assert all(mode(p) == 0o600 for p in (state / "install").iterdir())
    assert dshkit_files(home) == []  # the bookkeeping is in the state directory only
    # Installing again is the same: DSH's home holding only dshkit's state is no DSH.
    again = run_at_home(home, "install-hooks")
    assert "skipped DSH: not installed here" in again.stdout and "already installed" in again.stdout
    run_at_home(home, "uninstall-hooks")
    assert tree(home) == {".": ("dir", mode(home), b""), ".claude": tree(home)[".claude"]}
    assert list((home / ".claude").iterdir()) == []


@pytest.mark.parametrize("harness", ["codex", "dsh"])
def test_an_absent_harness_named_is_refused_unless_created(tmp_path: Path, harness: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    before = tree(home)
    refused = run_at_home(home, "install-hooks", "--harness", harness, check=False)
    assert refused.returncode == 2 and "is not installed here" in refused.stderr
    assert "--create" in refused.stderr
    dry = run_at_home(home, "install-hooks", "--harness", harness, "--dry-run", check=False)
    assert dry.returncode == 2 and tree(home) == before
    run_at_home(home, "install-hooks", "--harness", harness, "--create")
    made = home / PRESENT_BY_HOME[harness]
    assert made.is_dir() and mode(made) == 0o700
    assert all(mode(p) == 0o600 for p in made.rglob("*") if p.is_file())
    run_at_home(home, "uninstall-hooks", "--harness", harness)
    assert tree(home) == before
    everywhere = run_at_home(home, "install-hooks", "--create", check=False)
    assert everywhere.returncode == 2 and "--harness" in everywhere.stderr


@pytest.mark.process
def test_project_scope_leaves_git_status_with_only_the_files_meant(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps(FOREIGN, indent=2) + "\n")

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=project,
            capture_output=True,
            text=True,
            env={"HOME": str(home), "PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"},
            check=True,
        )
        return done.stdout

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "theirs")
    install = ("--harness", "claude", "--scope", "project", "--project", str(project))
    run_at_home(home, "install-hooks", *install)
    status = git("status", "--porcelain", "--untracked-files=all", "--ignored")
    # The hooks in the settings file and the MCP server in .mcp.json; nothing else.
    assert sorted(status.splitlines()) == [" M .claude/settings.json", "?? .mcp.json"]
    run_at_home(home, "uninstall-hooks", *install)
    assert git("status", "--porcelain", "--untracked-files=all", "--ignored") == ""
    assert dshkit_files(tmp_path) == []


@pytest.mark.parametrize("harness", ["claude", "codex", "dsh"])
@pytest.mark.process
def test_install_and_uninstall_give_a_fresh_home_back_as_it_was(
    tmp_path: Path, harness: str
) -> None:
    # The harness's CLI is on PATH and has never run: its home is not there yet either.
    home = tmp_path / "home"
    home.mkdir()
    path = fake_cli(tmp_path, harness)
    before = tree(home)
    run_at_home(home, "install-hooks", "--harness", harness, PATH=path)
    installed = tree(home)
    assert installed != before and dshkit_files(home) == []
    for name, (kind, bits, _) in installed.items():
        if name not in before:  # what dshkit created is its owner's alone
            assert bits == (0o700 if kind == "dir" else 0o600), name
    run_at_home(home, "uninstall-hooks", "--harness", harness, PATH=path)
    assert tree(home) == before


DANGLING = {
    "into nowhere": lambda tmp: tmp / "nonexistent" / "settings.json",
    "into a directory that is there": lambda tmp: tmp / "dotfiles" / "settings.json",
}


@pytest.mark.parametrize("case", DANGLING)
def test_a_dangling_settings_link_is_refused_and_stays_a_link(tmp_path: Path, case: str) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (tmp_path / "dotfiles").mkdir()
    target = DANGLING[case](tmp_path)
    link = home / ".claude" / "settings.json"
    link.symlink_to(target)
    before = tree(tmp_path)
    for dry in ([], ["--dry-run"]):
        done = run_at_home(home, "install-hooks", "--harness", "claude", *dry, check=False)
        assert done.returncode == 1, done.stderr
        assert f"{link} is a symbolic link to {target}, which does not exist" in done.stderr
        assert "Traceback" not in done.stderr
        assert tree(tmp_path) == before  # not even ~/.claude.json: nothing is half-done
    out = run_at_home(home, "uninstall-hooks", "--harness", "claude")
    assert "not installed" in out.stdout and tree(tmp_path) == before


def test_a_dangling_harness_home_link_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude").symlink_to(tmp_path / "gone")
    before = tree(tmp_path)
    done = run_at_home(home, "install-hooks", "--harness", "claude", check=False)
    assert done.returncode == 1 and "is a symbolic link to" in done.stderr
    assert "Traceback" not in done.stderr and tree(tmp_path) == before


@pytest.mark.process
def test_uninstall_removes_only_the_directories_install_created(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".dsh" / "profiles").mkdir(parents=True)  # DSH is here, no profile set up yet
    (home / ".dsh" / "profiles").chmod(0o755)
    state = home / ".dsh" / "dshkit"
    run_at_home(home, "install-hooks", "--harness", "dsh", PATH=fake_cli(tmp_path, "dsh"))
    layer = home / ".dsh" / "profiles" / "headless" / "cordis.patch.yml"
    assert layer.is_file() and mode(layer.parent) == 0o700 and mode(state) == 0o700
    run_at_home(home, "install-hooks", "--harness", "codex", "--create")
    (home / ".codex" / "notes.txt").write_text("mine\n")  # the person's, in a directory made
    (state / "hooks.log").write_text("a hook ran\n")  # the hooks write the state directory
    run_at_home(home, "uninstall-hooks", "--harness", "dsh")
    run_at_home(home, "uninstall-hooks", "--harness", "codex")
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == [
        ".codex",
        ".codex/notes.txt",
        ".dsh",
        ".dsh/dshkit",
        ".dsh/dshkit/hooks.log",
        ".dsh/profiles",  # there before: empty again, and kept
    ]
    assert mode(home / ".dsh" / "profiles") == 0o755


def test_bookkeeping_is_private_and_keyed_by_the_real_path(tmp_path: Path) -> None:
    home = tmp_path / "home"
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (home / ".claude").mkdir(parents=True)
    target = dotfiles / "claude-settings.json"
    original = json.dumps(FOREIGN, indent=2).replace("\n", "\r\n") + "\r\n"  # CRLF kept
    target.write_bytes(original.encode())
    (home / ".claude" / "settings.json").symlink_to(target)
    run_at_home(home, "install-hooks", "--harness", "claude")
    ledger = home / ".dsh" / "dshkit" / "install"
    records = [json.loads(p.read_text()) for p in ledger.iterdir() if p.name != "directories.json"]
    assert sorted(r["path"] for r in records) == sorted([str(target), str(home / ".claude.json")])
    (mine,) = [r for r in records if r["path"] == str(target)]
    assert mine["before"] == original  # the bytes to give back, in the state directory only
    assert sorted(p.name for p in dotfiles.iterdir()) == ["claude-settings.json"]
    run_at_home(home, "uninstall-hooks", "--harness", "claude")
    assert target.read_bytes() == original.encode()
    assert not (home / ".dsh").exists()


def test_marks_an_older_dshkit_left_beside_a_file_are_taken_in_and_removed(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = json.dumps(FOREIGN) + "\n"
    settings.write_text(original)
    run_at_home(home, "install-hooks", "--harness", "claude")
    # As a dshkit that kept its records beside the file left it.
    written = hashlib.sha256(settings.read_bytes()).hexdigest()
    settings.with_name("settings.json.dshkit-written").write_text(written)
    settings.with_name("settings.json.dshkit-backup").write_text(original)
    for record in (home / ".dsh" / "dshkit" / "install").glob("*.json"):
        if record.name != "directories.json" and str(settings) in record.read_text():
            record.unlink()
    run_at_home(home, "uninstall-hooks", "--harness", "claude")
    assert settings.read_text() == original
    assert dshkit_files(home) == [] and not (home / ".dsh").exists()
