"""git's rule: the subcommands that lose work (uncommitted changes, untracked files, stashes,
branches, history) or force-push a shared branch, one rule per subcommand in a table.

The work tree is the person's, so throwing its changes away (`reset --hard`, `checkout --
PATH`, `restore PATH`, `switch -f`, `stash drop`…) is destructive wherever the repository is;
`clean` stays judged by where it deletes, like a delete (the workspace's untracked files are
its own work). git's global options (`-C`, `-c`, `--git-dir`…) may stand in any order before
the subcommand, and an alias defined with `-c alias.NAME=…` is expanded.
"""

from __future__ import annotations

from .lexer import Word
from .options import Syntax, abbreviation, parse
from .paths import NOWHERE, OUTSIDE
from .policy import DESTRUCTIVE, UNKNOWN, Kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .commands import Command, Fed, Findings
    from .options import Parsed

    # (findings, the subcommand's arguments, where git runs, the command) -> None
    Verb = Callable[["Findings", list[Word], Word, "Command"], None]

_OPAQUE: list[Word] = [Word("\0", dynamic=True)]  # what git prints: unknown
_HERE = Word(".")
_MAX_ALIASES = 8  # an alias naming an alias…: deeper than this is not followed

_GLOBAL_VALUED = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                  "--super-prefix", "--list-cmds", "--attr-source"}  # fmt: skip
_GIT_OPTIONS = Syntax(_GLOBAL_VALUED, stop=True, end=False, dash=True)

_SHARED_BRANCHES = {"main", "master", "develop", "development", "trunk"}
_PUSH_LONGS = ("--force", "--force-with-lease", "--mirror", "--all", "--delete")
_PUSH_OPTIONS = Syntax({"--repo", "--push-option", "--receive-pack", "--exec", "-o"}, end=False)
_RESET_LONGS = ("--hard", "--merge", "--keep", "--soft", "--mixed", "--patch")
_RESET_OPTIONS = Syntax({"--pathspec-from-file"})
_CHECKOUT_LONGS = ("--force", "--ours", "--theirs", "--patch", "--pathspec-from-file")
_CHECKOUT_OPTIONS = Syntax({"-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"})
_RESTORE_LONGS = ("--staged", "--worktree", "--patch", "--pathspec-from-file")
_RESTORE_OPTIONS = Syntax({"-s", "--source", "--conflict", "--pathspec-from-file"})
_SWITCH_LONGS = ("--force", "--discard-changes")
_SWITCH_OPTIONS = Syntax({"-c", "-C", "--create", "--force-create", "--orphan", "--conflict"})
_CLEAN_OPTIONS = Syntax({"-e", "--exclude"}, end=False)
_BRANCH_LONGS = ("--delete", "--force", "--move")
_BRANCH_OPTIONS = Syntax({"-u", "--set-upstream-to", "--contains", "--no-contains", "--merged",
                          "--no-merged", "--points-at", "--format", "--sort"})  # fmt: skip
_WORKTREE_OPTIONS = Syntax()
_PLAIN_OPTIONS = Syntax()
_EXPIRES = ("--expire", "--expire-unreachable")
_REFLOG_OPTIONS = Syntax(_EXPIRES, end=False)
_GC_OPTIONS = Syntax(end=False)
_NOW = ("now", "all", "never")  # an expiry that keeps nothing unreachable


def git(findings: Findings, command: Command) -> Fed:
    """Judges one git command by its subcommand's rule."""
    args = command.args
    aliases: dict[str, list[Word]] = {}
    repository = _HERE  # where git runs: `-C DIR`, or here
    for _ in range(_MAX_ALIASES):
        parsed = parse(args, _GIT_OPTIONS)
        for flag in parsed.flags:
            if flag.value is None:
                continue
            if flag.name in ("-C", "--work-tree"):
                repository = flag.value
            elif flag.name == "-c" and flag.value.text.lower().startswith("alias."):
                name, _, value = flag.value.text[6:].partition("=")
                aliases[name.lower()] = [Word(part) for part in value.split()]
        if not parsed.operands:
            return _OPAQUE
        verb, rest = parsed.operands[0], parsed.operands[1:]
        expansion = aliases.get(verb.text.lower())
        if expansion is None:
            break
        if expansion and expansion[0].text.startswith("!"):  # a shell line of its own
            findings.flag(UNKNOWN, f"git alias {verb.text} runs a shell command")
            return _OPAQUE
        args = expansion + rest
    else:
        findings.flag(UNKNOWN, "git aliases nested too deep: not read")
        return _OPAQUE
    if verb.dynamic:
        findings.flag(UNKNOWN, "git runs a subcommand only known when it runs")
        return _OPAQUE
    rule = _VERBS.get(verb.text)
    if rule is not None:
        rule(findings, rest, repository, command)
    return _OPAQUE


def _loses(findings: Findings, what: str) -> None:
    findings.flag(DESTRUCTIVE, f"git {what}", Kind.WORK)


def _reset(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """`--hard` and `--merge` rewrite the work tree to the commit; `--soft`, `--mixed` and
    `--keep` (which refuses to lose a change) keep it."""
    given = parse(args, _RESET_OPTIONS).longs(_RESET_LONGS)
    for mode in ("--hard", "--merge"):
        if mode in given:
            _loses(findings, f"reset {mode}: throws away the uncommitted changes")
            return


def _checkout(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """A forced checkout, or one of paths (`-- PATH`, `REF -- PATH`, `.`, a file), overwrites
    the work tree's changes; switching branches (`checkout main`, `-b new`) keeps them."""
    parsed = parse(args, _CHECKOUT_OPTIONS)
    given = parsed.longs(_CHECKOUT_LONGS)
    if parsed.letters("f") or "--force" in given:
        _loses(findings, "checkout --force: throws away the uncommitted changes")
        return
    if any(f.name in ("-b", "-B", "--orphan") for f in parsed.flags):
        return  # a new branch from a start point: nothing overwritten
    paths = _checkout_paths(parsed.operands, parsed.end_at is not None, args, parsed.end_at)
    if parsed.letters("p") or "--patch" in given:
        findings.flag(UNKNOWN, "git checkout --patch: discards the hunks it is told to")
    elif paths or "--pathspec-from-file" in given:
        shown = paths[0].shown if paths else "the paths listed"
        _loses(findings, f"checkout of {shown}: overwrites its uncommitted changes")


def _checkout_paths(
    operands: list[Word], ended: bool, args: list[Word], end_at: int | None
) -> list[Word]:
    """The paths a checkout overwrites: all after `--`; else what is plainly a path (`.`, a
    wildcard, a file's name) or the words after a first, the commit."""
    if ended and end_at is not None:
        return args[end_at + 1 :]
    if len(operands) >= 2:
        return operands[1:]
    return [w for w in operands if _plainly_a_path(w)]


def _plainly_a_path(word: Word) -> bool:
    text = word.text
    if word.glob or text in (".", "..", "*") or text.startswith(("./", "../", "/", ":/", "~")):
        return True
    name = text.rsplit("/", 1)[-1]
    stem, dot, extension = name.rpartition(".")
    return bool(dot and stem and extension.isalpha() and not text.endswith(".lock"))


def _restore(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """`restore PATH` overwrites the work tree (the default); `--staged` alone only the
    index."""
    parsed = parse(args, _RESTORE_OPTIONS)
    given = parsed.longs(_RESTORE_LONGS)
    staged = parsed.letters("S") or "--staged" in given
    worktree = parsed.letters("W") or "--worktree" in given
    if staged and not worktree:
        return
    if parsed.letters("p") or "--patch" in given:
        findings.flag(UNKNOWN, "git restore --patch: discards the hunks it is told to")
    elif parsed.operands or "--pathspec-from-file" in given:
        shown = parsed.operands[0].shown if parsed.operands else "the paths listed"
        _loses(findings, f"restore of {shown}: overwrites its uncommitted changes")


def _switch(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    parsed = parse(args, _SWITCH_OPTIONS)
    if parsed.letters("f") or parsed.longs(_SWITCH_LONGS):
        _loses(findings, "switch --discard-changes: throws away the uncommitted changes")


def _clean(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """`git clean -f` deletes the untracked files of the repository it runs in: new files the
    person has not committed yet are among them, so it loses work inside the workspace too
    (what it removes is not build output only). `-n` only lists them; `-i` asks about each."""
    parsed = parse(args, _CLEAN_OPTIONS)
    if parsed.letters("n") or parsed.longs(("--dry-run",)):
        return
    interactive = parsed.letters("i") or bool(parsed.longs(("--interactive",)))
    if not (interactive or parsed.letters("f") or parsed.longs(("--force",))):
        return  # git refuses to clean without -f (clean.requireForce)
    place = findings.places.where(repository, command.cwd)
    if place == NOWHERE:
        findings.flag(UNKNOWN, "git clean in a directory only known when it runs")
        return
    where = findings.places.resolve(repository.text, command.cwd)
    if interactive:
        findings.flag(UNKNOWN, f"git clean -i: deletes what it is told to in {where}")
    elif place == OUTSIDE:
        findings.flag(
            DESTRUCTIVE,
            f"git clean deletes untracked files in {where}, outside the workspace",
            Kind.OUTSIDE,
        )
    else:
        _loses(findings, "clean -f: deletes untracked files, uncommitted new work among them")


def _stash(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    if args and args[0].text in ("drop", "clear"):
        _loses(findings, f"stash {args[0].text}: deletes stashed changes")


def _branch(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """`-D` (or `--delete --force`) deletes a branch whatever it holds; `-M` and `-f` move a
    name over a branch that exists, dropping what only it held. `-d` refuses an unmerged one."""
    parsed = parse(args, _BRANCH_OPTIONS)
    given = parsed.longs(_BRANCH_LONGS)
    force = parsed.letters("f") or "--force" in given
    delete = parsed.letters("d") or "--delete" in given
    if parsed.letters("D") or (delete and force):
        _loses(findings, "branch -D: deletes a branch with its unmerged commits")
    elif parsed.letters("M") or (force and ("--move" in given or parsed.letters("m"))):
        _loses(findings, "branch -M: renames over an existing branch")
    elif force and parsed.operands:
        _loses(findings, "branch --force: moves an existing branch, dropping its commits")


def _worktree(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    if not args or args[0].text != "remove":
        return
    parsed = parse(args[1:], _WORKTREE_OPTIONS)
    if parsed.letters("f") or parsed.longs(("--force",)):
        _loses(findings, "worktree remove --force: deletes a work tree with its changes")


def _filter_branch(
    findings: Findings, args: list[Word], repository: Word, command: Command
) -> None:
    _loses(findings, "filter-branch: rewrites the repository's history")


def _filter_repo(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    if not parse(args, _PLAIN_OPTIONS).longs(("--analyze", "--dry-run")):  # these only look
        _loses(findings, "filter-repo: rewrites the repository's history")


def _update_ref(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    if any(w.text in ("-d", "--delete") for w in args):
        _loses(findings, "update-ref -d: deletes a ref")


def _reflog(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """Expiring the reflog now (or deleting entries) drops the only way back to lost
    commits."""
    if not args:
        return
    if args[0].text == "delete":
        _loses(findings, "reflog delete: drops the way back to lost commits")
    elif args[0].text == "expire" and _now(parse(args[1:], _REFLOG_OPTIONS), _EXPIRES):
        _loses(findings, "reflog expire: drops the way back to lost commits")


def _gc(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    if _now(parse(args, _GC_OPTIONS), ("--prune",)):
        _loses(findings, "gc --prune=now: deletes unreachable commits")


def _prune(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """`git prune` deletes every unreachable object (no grace period unless told one)."""
    parsed = parse(args, _GC_OPTIONS)
    if not (parsed.letters("n") or parsed.longs(("--dry-run",))):
        _loses(findings, "prune: deletes unreachable commits")


def _now(parsed: Parsed, names: tuple[str, ...]) -> bool:
    """Whether one of the options `names` (an expiry) is given as now: nothing is kept."""
    return any(
        flag.value is not None and flag.value.text in _NOW and abbreviation(flag.name, names)
        for flag in parsed.flags
    )


def _push(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """A force push (or a delete) to a shared branch, or with no branch named."""
    parsed = parse(args, _PUSH_OPTIONS)
    if parsed.letters("n") or any(f.name == "--dry-run" for f in parsed.flags):
        return  # it only says what it would push
    given = parsed.longs(_PUSH_LONGS)
    force = parsed.letters("fd") or bool(given - {"--all"})
    every = bool(given & {"--all", "--mirror"})
    branches = []
    if "--prune" in {f.name for f in parsed.flags}:  # remote branches missing here: deleted
        findings.flag(UNKNOWN, "git push --prune: deletes the remote branches not here")
    for spec in [w.text for w in parsed.operands[1:]]:  # after the remote
        force |= spec.startswith("+") or spec.startswith(":")
        branches.append(spec.lstrip("+").rsplit(":", 1)[-1].removeprefix("refs/heads/"))
    if not force:
        return
    shared = ["every branch"] if every else [b for b in branches if _shared(b)]
    if not branches and not every:
        findings.flag(
            DESTRUCTIVE,
            "git push --force without a branch named (it may be a shared one)",
            Kind.SHARED,
        )
    elif shared:
        findings.flag(
            DESTRUCTIVE, f"git push --force to the shared branch {shared[0]}", Kind.SHARED
        )
    elif any(spec.startswith(":") for spec in (w.text for w in parsed.operands[1:])) or (
        "--delete" in given or parsed.letters("d")
    ):  # a remote branch or tag deleted: what only it held goes (a force push keeps them)
        findings.flag(UNKNOWN, f"git push --delete of {branches[0] if branches else 'a ref'}")


def _rm(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """`git rm -f` deletes files with their uncommitted changes (without -f git refuses);
    `--cached` leaves the work tree alone."""
    parsed = parse(args, _PLAIN_OPTIONS)
    if parsed.longs(("--cached", "--dry-run")) or parsed.letters("n"):
        return
    if parsed.letters("f") or parsed.longs(("--force",)):
        _loses(findings, "rm --force: deletes files with their uncommitted changes")


def _checkout_index(
    findings: Findings, args: list[Word], repository: Word, command: Command
) -> None:
    if parse(args, _PLAIN_OPTIONS).letters("f") or "--force" in (w.text for w in args):
        _loses(findings, "checkout-index --force: overwrites the uncommitted changes")


def _read_tree(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    texts = {w.text for w in args}
    if "-u" in texts and texts & {"--reset", "-m"}:
        _loses(findings, "read-tree -u --reset: overwrites the uncommitted changes")


def _submodule(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """`deinit -f` deletes a submodule's work tree with its changes; `update --force` and
    `foreach` (a shell line in each) are left unknown."""
    if not args:
        return
    forced = any(w.text in ("-f", "--force") for w in args[1:])
    if args[0].text == "deinit" and forced:
        _loses(findings, "submodule deinit --force: deletes work trees with their changes")
    elif args[0].text == "update" and forced:
        findings.flag(UNKNOWN, "git submodule update --force: overwrites submodules' changes")
    elif args[0].text == "foreach":
        findings.flag(UNKNOWN, "git submodule foreach: runs a shell line in each")


def _rebase(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """`rebase --exec LINE` (`-x`) runs a shell line after each commit."""
    if any(w.text in ("-x", "--exec") or w.text.startswith("--exec=") for w in args):
        findings.flag(UNKNOWN, "git rebase --exec: runs a shell line after each commit")


def _unsure(name: str, triggers: tuple[str, ...], what: str) -> Verb:
    """A verb that, given one of `triggers`, deletes or rewrites what may be hard to get back."""

    def verb(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
        if any(w.text in triggers for w in args):
            findings.flag(UNKNOWN, f"git {name}: {what}")

    return verb


def _config(findings: Findings, args: list[Word], repository: Word, command: Command) -> None:
    """An alias defined to lose work (`git config alias.x 'reset --hard'`) is judged by what
    it runs, as unknown: it loses nothing until it runs."""
    operands = [w for w in args if not w.text.startswith("-")]
    if len(operands) < 2 or not operands[0].text.lower().startswith("alias."):
        return
    body = operands[1].text
    if body.startswith("!"):
        findings.flag(UNKNOWN, f"git {operands[0].text} runs a shell command")
        return
    from .commands import Command as Ran  # (the type checker's import is not the runtime's)
    from .commands import Findings as Scratch

    scratch = Scratch(findings.places)
    words = [Word(part) for part in body.split()]
    git(scratch, Ran("git", words, command.shell, command.cwd, command.depth + 1, None))
    if any(risk != "safe" for risk, _, _ in scratch.found):
        findings.flag(UNKNOWN, f"git {operands[0].text}: an alias that runs {body!r}")


def _shared(branch: str) -> bool:
    """A shared branch, or a pattern (`refs/heads/*`) that takes them all."""
    return (
        branch in _SHARED_BRANCHES
        or branch.startswith("release")
        or branch == "HEAD"
        or "*" in branch
    )


_VERBS: dict[str, Verb] = {
    "reset": _reset,
    "checkout": _checkout,
    "restore": _restore,
    "switch": _switch,
    "clean": _clean,
    "stash": _stash,
    "branch": _branch,
    "worktree": _worktree,
    "filter-branch": _filter_branch,
    "filter-repo": _filter_repo,
    "update-ref": _update_ref,
    "reflog": _reflog,
    "gc": _gc,
    "prune": _prune,
    "push": _push,
    "rm": _rm,
    "checkout-index": _checkout_index,
    "read-tree": _read_tree,
    "submodule": _submodule,
    "rebase": _rebase,
    "config": _config,
    "tag": _unsure("tag", ("-d", "--delete"), "deletes a tag"),
    "symbolic-ref": _unsure("symbolic-ref", ("-d", "--delete"), "deletes a ref"),
    "replace": _unsure("replace", ("-d", "--delete"), "deletes a replacement"),
    "lfs": _unsure("lfs", ("prune", "migrate"), "deletes or rewrites large files"),
    "remote": _unsure("remote", ("remove", "rm", "prune"), "removes a remote or its branches"),
}
