"""git's rule: what loses uncommitted work, stashes, branches or history is destructive, even
inside the workspace; its look-alikes (switching branches, soft resets, unstaging) are safe."""

from __future__ import annotations

import pytest

from dshkit.guard import DESTRUCTIVE, SAFE, UNKNOWN, classify

WORK = "/home/dev/proj"
HOME = "/home/dev"
WIN_WORK = "C:\\Users\\dev\\proj"
WIN_HOME = "C:\\Users\\dev"
D, S, U = DESTRUCTIVE, SAFE, UNKNOWN

# (command, shell, expected risk); bash runs in WORK, pwsh in WIN_WORK
CASES = [
    # reset: --hard and --merge rewrite the work tree; --keep refuses to lose a change
    ("git reset --hard", "bash", D),
    ("git reset --hard HEAD~1", "bash", D),
    ("git reset --hard origin/main", "bash", D),
    ("git reset -q --hard", "bash", D),
    ("git reset --har", "bash", D),  # an abbreviation git accepts
    ("git reset --merge ORIG_HEAD", "bash", D),
    ("git reset --soft HEAD~1", "bash", S),
    ("git reset --mixed HEAD~1", "bash", S),
    ("git reset HEAD~3", "bash", S),
    ("git reset", "bash", S),
    ("git reset -- src/app.py", "bash", S),
    ("git reset --keep HEAD~1", "bash", S),
    ("git reset HEAD file.txt", "bash", S),
    # checkout: forced, or of paths, overwrites; switching or creating a branch does not
    ("git checkout -f", "bash", D),
    ("git checkout --force main", "bash", D),
    ("git checkout -- src/app.py", "bash", D),
    ("git checkout -- .", "bash", D),
    ("git checkout .", "bash", D),
    ("git checkout HEAD -- .", "bash", D),
    ("git checkout HEAD~2 -- src", "bash", D),
    ("git checkout main -- config", "bash", D),
    ("git checkout origin/main README.md", "bash", D),
    ("git checkout README.md", "bash", D),
    ("git checkout src/*.py", "bash", D),
    ("git checkout ./src", "bash", D),
    ("git checkout --theirs -- conflicted.txt", "bash", D),
    ("git checkout -p", "bash", U),
    ("git checkout main", "bash", S),
    ("git checkout -b feature/new", "bash", S),
    ("git checkout -B hotfix origin/main", "bash", S),
    ("git checkout -b fix -- origin/main", "bash", S),
    ("git checkout feature/login", "bash", S),
    ("git checkout -", "bash", S),
    ("git checkout v1.2.0", "bash", S),
    ("git checkout --track origin/dev", "bash", S),
    ("git checkout -t origin/dev", "bash", S),
    ("git checkout --orphan gh-pages", "bash", S),
    ("git checkout 3f2a1bc", "bash", S),
    ("git checkout --detach", "bash", S),
    # restore: the work tree by default; --staged alone only the index
    ("git restore src/app.py", "bash", D),
    ("git restore .", "bash", D),
    ("git restore --source=HEAD~2 src", "bash", D),
    ("git restore -s main -- config.toml", "bash", D),
    ("git restore --worktree x", "bash", D),
    ("git restore --staged --worktree x", "bash", D),
    ("git restore -SW x", "bash", D),
    ("git restore --staged x", "bash", S),
    ("git restore -S .", "bash", S),
    ("git restore --staged -- a b", "bash", S),
    ("git restore -p", "bash", U),
    # switch
    ("git switch -f main", "bash", D),
    ("git switch --force main", "bash", D),
    ("git switch --discard-changes main", "bash", D),
    ("git switch main", "bash", S),
    ("git switch -c feature", "bash", S),
    ("git switch -C feature origin/feature", "bash", S),
    ("git switch -", "bash", S),
    ("git switch --detach v2", "bash", S),
    # clean -f: untracked files are uncommitted work, inside the workspace too
    ("git -C ~ clean -fdx", "bash", D),
    ("git --work-tree=/srv/app clean -fd", "bash", D),
    ("git -C /srv/app clean -i", "bash", U),
    ("git -C ~ clean -nfd", "bash", S),
    ("git -C ~ clean --dry-run -fd", "bash", S),
    ("git clean -n", "bash", S),
    ("git clean -d", "bash", S),  # git refuses without -f
    # stashes
    ("git stash drop", "bash", D),
    ("git stash drop stash@{2}", "bash", D),
    ("git stash clear", "bash", D),
    ("git stash", "bash", S),
    ("git stash push -m wip", "bash", S),
    ("git stash pop", "bash", S),
    ("git stash apply stash@{1}", "bash", S),
    ("git stash list", "bash", S),
    ("git stash show -p", "bash", S),
    # branches
    ("git branch -D feature", "bash", D),
    ("git branch -Dr origin/x", "bash", D),
    ("git branch --delete --force feature", "bash", D),
    ("git branch -d -f feature", "bash", D),
    ("git branch -df feature", "bash", D),
    ("git branch -M main", "bash", D),
    ("git branch -f main HEAD~3", "bash", D),
    ("git branch --force release origin/release", "bash", D),
    ("git branch -d feature", "bash", S),
    ("git branch --delete merged", "bash", S),
    ("git branch", "bash", S),
    ("git branch -a", "bash", S),
    ("git branch -vv", "bash", S),
    ("git branch new-feature", "bash", S),
    ("git branch -m old new", "bash", S),
    ("git branch --show-current", "bash", S),
    ("git branch -u origin/main", "bash", S),
    ("git branch --merged main", "bash", S),
    # worktrees
    ("git worktree remove --force ../wt", "bash", D),
    ("git worktree remove -f ../wt", "bash", D),
    ("git worktree remove ../wt", "bash", S),
    ("git worktree add ../wt feature", "bash", S),
    ("git worktree prune", "bash", S),
    ("git worktree list", "bash", S),
    # history rewrites and what drops the way back
    ("git filter-branch --tree-filter 'rm -f secrets' HEAD", "bash", D),
    ("git filter-branch -f --index-filter 'git rm --cached x' -- --all", "bash", D),
    ("git filter-repo --path secrets --invert-paths", "bash", D),
    ("git filter-repo --analyze", "bash", S),
    ("git update-ref -d refs/heads/old", "bash", D),
    ("git update-ref refs/heads/x HEAD", "bash", S),
    ("git reflog expire --expire=now --all", "bash", D),
    ("git reflog expire --expire-unreachable=now --all", "bash", D),
    ("git reflog expire --expire now --all", "bash", D),
    ("git reflog delete HEAD@{1}", "bash", D),
    ("git reflog expire --expire=90.days.ago", "bash", S),
    ("git reflog", "bash", S),
    ("git reflog show main", "bash", S),
    ("git gc --prune=now", "bash", D),
    ("git gc --aggressive --prune=all", "bash", D),
    ("git reflog expire --expire=now --all && git gc --prune=now --aggressive", "bash", D),
    ("git gc", "bash", S),
    ("git gc --auto", "bash", S),
    ("git gc --prune=2.weeks.ago", "bash", S),
    ("git prune", "bash", D),
    ("git prune -n", "bash", S),
    ("git rebase -i HEAD~3", "bash", S),
    ("git rebase origin/main", "bash", S),
    # force pushes (kept as they were)
    ("git push --force", "bash", D),
    ("git push -f origin main", "bash", D),
    ("git push --force origin feature/x", "bash", S),
    ("git push origin main", "bash", S),
    # every spelling of the same command
    ("bash -c 'git reset --hard'", "bash", D),
    ('sh -c "git checkout -- ."', "bash", D),
    ("sh <<< 'git stash clear'", "bash", D),
    ("bash <<EOF\ngit reset --hard origin/main\nEOF", "bash", D),
    ("/usr/bin/git reset --hard", "bash", D),
    ("env git reset --hard", "bash", D),
    ("sudo git clean -fdx -C ~", "bash", D),  # the workspace's own untracked files: work too
    ("env GIT_DIR=.git git reset --hard", "bash", D),
    ("git -C ../other reset --hard", "bash", D),
    ("git -C /tmp/repo checkout -- .", "bash", D),
    ("git --git-dir=.git --work-tree=. reset --hard", "bash", D),
    ("git --git-dir .git reset --hard", "bash", D),
    ("git -c core.pager=cat reset --hard", "bash", D),
    ("git --no-pager -c color.ui=never -C src reset --hard", "bash", D),
    ("git -c alias.wipe='reset --hard' wipe", "bash", D),
    ("git -c alias.co=checkout co -- .", "bash", D),
    ("git -c 'alias.x=!rm -rf /' x", "bash", U),
    ("git -c alias.st=status st", "bash", S),
    ("git $SUBCOMMAND", "bash", U),
    ("cd src && git restore .", "bash", D),
    ("git add -A && git reset --hard && echo done", "bash", D),
    # ordinary work
    ("git status", "bash", S),
    ("git status --porcelain", "bash", S),
    ("git diff --stat", "bash", S),
    ("git log --oneline -20", "bash", S),
    ("git add src/app.py", "bash", S),
    ("git commit -m 'reset --hard and checkout -- . explained'", "bash", S),
    ("git fetch --all --prune", "bash", S),
    ("git pull --rebase", "bash", S),
    ("git merge --no-ff feature", "bash", S),
    ("git cherry-pick abc123", "bash", S),
    ("git show HEAD:src/app.py", "bash", S),
    ("git tag v1.0", "bash", S),
    ("git rm --cached secrets.env", "bash", S),
    ("git blame README.md", "bash", S),
    ("echo 'git reset --hard'", "bash", S),
    ("grep -r 'git clean -fdx' docs", "bash", S),
    # PowerShell spells git the same
    ("git reset --hard", "pwsh", D),
    ("git checkout -- .", "pwsh", D),
    ("git stash drop", "pwsh", D),
    ("git.exe branch -D old", "pwsh", D),
    ("pwsh -Command 'git reset --hard'", "pwsh", D),
    ("git restore --staged x", "pwsh", S),
    ("git status; git log", "pwsh", S),
    ("git checkout -b new", "pwsh", S),
]


@pytest.mark.parametrize(("command", "shell", "risk"), CASES)
def test_git(command: str, shell: str, risk: str) -> None:
    work, home = (WIN_WORK, WIN_HOME) if shell == "pwsh" else (WORK, HOME)
    found = classify(command, shell, work, home=home)
    assert found.risk == risk, found.reason


def test_the_reason_names_the_subcommand_and_what_it_loses() -> None:
    found = classify("git status && git checkout -- src/app.py", "bash", WORK, home=HOME)
    assert found.reason == "git checkout of src/app.py: overwrites its uncommitted changes"
    assert "stash drop" in classify("git stash drop", "bash", WORK, home=HOME).reason


@pytest.mark.process
def test_a_command_other_than_git_or_a_remote_one_loads_neither_rule() -> None:
    import subprocess
    import sys

    probe = (
        "import sys; from dshkit.guard import classify; classify('ls -la src', 'bash', '/w')\n"
        "print(sorted(m for m in sys.modules if m in ('dshkit.guard.git', 'dshkit.guard.remote')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True, text=True)
    assert done.stdout.strip() == "[]"
    probe = probe.replace("ls -la src", "git status && ssh host ls")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True, text=True)
    assert done.stdout.strip() == "['dshkit.guard.git', 'dshkit.guard.remote']"


def test_clean_loses_the_workspaces_untracked_work() -> None:
    for command in ("git clean -f", "git clean -fd", "git clean -fdx", "git -C src clean -fd"):
        assert classify(command, "bash", "/home/dev/work").risk == "destructive", command
    assert classify("git clean -i", "bash", "/home/dev/work").risk == "unknown"
