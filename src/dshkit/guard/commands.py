"""Per-command rules: what one command does to the places it names, judged by where they land.

A rule reads its command's arguments (options through `options.parse`), records what it finds
in `Findings` and returns what the command pipes on. `rule_for` finds it in a dispatch table,
one per shell: the same name is another command there (`rm` in PowerShell is Remove-Item).
Commands that only run other commands (wrappers, shells, eval, inline code) are the walker's.
"""

from __future__ import annotations

from .lexer import Word
from .options import SLASH_ANY, SLASH_LETTER, Parsed, Syntax, abbreviation, parse
from .paths import NOWHERE, OUTSIDE, WORKSPACE, Places, device, remote
from .policy import DESTRUCTIVE, UNKNOWN, Kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import TypeVar

    Handler = TypeVar("Handler")

    Fed = list[Word] | None  # what a command pipes on: None for nothing
    Rule = Callable[["Findings", "Command"], Fed]

# What a command pipes on when it is not known (its output): a word only known when it runs.
OPAQUE: list[Word] = [Word("\0", dynamic=True)]


class FromFile(Word):
    """What a `< FILE` redirection feeds a command: the file's content, not read here (a
    shell or an interpreter reading it runs a script file, the project's own; a database
    client runs the statements in it)."""

    __slots__ = ("path",)

    def __init__(self, path: Word) -> None:
        super().__init__("\0", dynamic=True)
        self.path = path


def from_file(fed: Fed) -> FromFile | None:
    """The file a command's input is redirected from, or None (a pipe, nothing)."""
    first = fed[0] if fed else None
    return first if isinstance(first, FromFile) else None


HERE = Word(".")

DELETE = {"rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put", "trash-cli", "rimraf",
          "del-cli"}  # fmt: skip
_ALWAYS_RECURSIVE_DELETE = {"rimraf", "del-cli"}
_HTTP_DELETES = {"DELETE", "PURGE"}
_HTTPIE = {"http", "https", "xh"}  # the method is their first operand
_PWSH_DELETE = {"remove-item", "ri", "rm", "rmdir", "rd", "del", "erase"}
_SWITCHED_DELETE = {"rd", "rmdir", "del", "erase"}  # cmd's `/s`, `/q` (bash: rmdir)
_PWSH_MOVE = {"move-item", "mi", "move", "mv", "rename-item", "rni", "ren"}
_RSYNC_DELETES = {"--delete", "--del", "--delete-before", "--delete-during", "--delete-delay",
                  "--delete-after", "--delete-excluded", "--delete-missing-args"}  # fmt: skip
_RSYNC_VALUED = {"-e", "-f", "-T", "-B", "-M", "--rsh", "--exclude", "--include", "--filter",
                 "--exclude-from", "--include-from", "--files-from", "--temp-dir", "--backup-dir",
                 "--partial-dir", "--compare-dest", "--copy-dest", "--link-dest", "--chmod",
                 "--chown", "--log-file", "--password-file", "--port", "--suffix", "--timeout",
                 "--max-size", "--min-size", "--bwlimit", "--out-format", "--usermap",
                 "--groupmap", "--rsync-path"}  # fmt: skip
# macOS `diskutil` verbs that wipe or repartition a disk
_DISKUTIL_WIPES = ("erase", "zerodisk", "randomdisk", "secureerase", "partitiondisk", "reformat")
_DISK = {"mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "gdisk",
         "sgdisk", "blkdiscard", "format-volume", "clear-disk", "initialize-disk",
         "remove-partition", "diskpart", "format"}  # fmt: skip
_DISK_LOOKS = {"-l", "--list", "-p", "--print", "print", "-h", "--help", "-V", "--version"}
_DISK_WRITES = {"mklabel", "mkpart", "rm", "resizepart", "-o", "--clear", "-Z", "--zap-all",
                "-z", "--zap", "-d", "--delete", "-n", "--new", "-w", "--wipe"}  # fmt: skip
_UNIX_PERMISSIONS = {"chmod", "chown", "chgrp", "setfacl", "chattr"}
_WINDOWS_PERMISSIONS = {"icacls", "takeown", "set-acl", "cacls"}  # switches: `/t`
_SEARCH = {"grep", "egrep", "fgrep", "rg", "ag", "ack", "fd", "fdfind", "ls", "dir", "tree",
           "du", "get-childitem", "gci", "select-string", "sls", "findstr"}  # fmt: skip
_LISTINGS = {"ls", "dir", "get-childitem", "gci"}  # what they pipe on: the entries they list
_NO_PATTERN = {"ls", "dir", "tree", "du", "get-childitem", "gci"}  # every operand is a place
_GREPS = {"grep", "egrep", "fgrep"}
_ALWAYS_RECURSIVE = {"rg", "ag", "ack", "fd", "fdfind", "tree", "du"}
# PowerShell's path parameters: their value is an operand, as if given positionally.
_PWSH_MOVE_PATHS = ("-path", "-literalpath", "-lp", "-pspath")
_PWSH_SEARCH_PATHS = ("-path", "-literalpath", "-lp", "-pa")


def _pwsh_delete_takes(name: str) -> bool:
    return len(name) > 2 and any(
        p.startswith(name) for p in ("-filter", "-include", "-exclude", "-credential", "-stream")
    )


def _pwsh_move_takes(name: str) -> bool:
    return len(name) > 1 and (
        "-destination".startswith(name)
        or any(p.startswith(name) for p in ("-filter", "-include", "-exclude"))
    )


def _pwsh_search_takes(name: str) -> bool:
    if "-recurse".startswith(name) or name in _PWSH_SEARCH_PATHS:
        return False
    return (len(name) > 2 and "-depth".startswith(name)) or name.startswith(
        ("-fi", "-in", "-ex", "-pat", "-at")
    )


# How each command spells its options (options.py), read once.
_DELETE_OPTIONS = Syntax(quoted=False)
_SWITCHED_DELETE_OPTIONS = Syntax(quoted=False, slash=SLASH_LETTER)
_PWSH_DELETE_OPTIONS = Syntax(_pwsh_delete_takes, colon=True, quoted=False, slash=SLASH_LETTER)
_MOVE_OPTIONS = Syntax({"-t", "--target-directory", "-S", "--suffix"})
_PWSH_MOVE_OPTIONS = Syntax(_pwsh_move_takes, binds=_PWSH_MOVE_PATHS, colon=True)
_RSYNC_OPTIONS = Syntax(_RSYNC_VALUED, end=False)
_SEARCH_OPTIONS = Syntax(
    {"-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "-g", "-t", "-T", "-j", "-M", "-E", "-x"},
    quoted=False,
    end=False,
)
_PWSH_SEARCH_OPTIONS = Syntax(_pwsh_search_takes, colon=True, end=False)
_PWSH_DIR_OPTIONS = Syntax(_pwsh_search_takes, colon=True, end=False, slash=SLASH_LETTER)
_PERMISSION_OPTIONS = Syntax(end=False, dash=True)
_ACL_OPTIONS = Syntax({"-m", "-M", "-x", "-X", "--modify", "--remove", "--set", "--set-file",
                       "--modify-file", "--remove-file"}, end=False)  # fmt: skip
_SED_OPTIONS = Syntax({"-e", "-f", "--expression", "--file", "-l", "--line-length"}, end=False)
_PWSH_CONTENT_OPTIONS = Syntax(
    lambda o: o in ("-value", "-encoding", "-inputobject", "-width", "-stream", "-filter",
                    "-include", "-exclude", "-credential", "-delimiter", "-itemtype", "-type",
                    "-name", "-target"),
    binds=("-path", "-literalpath", "-lp", "-filepath", "-pspath"),
    colon=True,
)  # fmt: skip
_WINDOWS_PERMISSION_OPTIONS = Syntax(fold=True, slash=SLASH_ANY, end=False, dash=True)
_ECHO_OPTIONS = Syntax(end=False, dash=True)


class Command:
    """One simple command as the walker meets it: the name it runs, its arguments, the shell
    reading it, the directory it runs in (None: only known when it runs), how deep in nested
    shells it is, and what the stage before pipes into it."""

    __slots__ = ("args", "cwd", "depth", "fed", "name", "shell")

    def __init__(
        self, name: str, args: list[Word], shell: str, cwd: str | None, depth: int, fed: Fed
    ) -> None:
        self.name = name
        self.args = args
        self.shell = shell
        self.cwd = cwd
        self.depth = depth
        self.fed = fed

    @property
    def pwsh(self) -> bool:
        return self.shell == "pwsh"


class Findings:
    """What the rules found on one command line: (risk, reason, kind) in the order found
    (`policy.Kind`: what a person can do instead), the global searches and the opaque code
    run (their reasons), with the places it is judged for; of each secret sent off the
    machine (`Kind.LEAK`, by the index of its finding), what leaves and where to."""

    __slots__ = ("every", "found", "leaks", "opaque", "places", "searches")

    def __init__(self, places: Places) -> None:
        self.places = places
        self.every = False  # a substitution lists every container (`$(docker ps -aq)`)
        self.found: list[tuple[str, str, str]] = []
        self.searches: list[str] = []
        self.opaque: list[str] = []
        self.leaks: dict[int, tuple[str, str]] = {}

    def flag(self, risk: str, reason: str, kind: str = "") -> None:
        self.found.append((risk, reason, kind or risk))

    def leaked(self, name: str, what: str, where: str) -> None:
        """`name` sends the secret `what` off the machine, to `where`: destructive."""
        self.leaks[len(self.found)] = (what, where)
        to = f" to {where}," if where else ""
        self.flag(
            DESTRUCTIVE,
            f"{name}: sends {what}{to} off the machine, where no one can take it back",
            Kind.LEAK,
        )

    def searched(self, reason: str) -> None:
        self.searches.append(reason)

    def hidden(self, reason: str) -> None:
        """Code is run that the guard cannot see (a download piped to a shell, eval of a
        variable): unknown, and opaque, which no mode lets through unasked."""
        self.found.append((UNKNOWN, reason, Kind.OPAQUE))
        self.opaque.append(reason)

    def mark(self) -> tuple[int, int, int]:
        """How much was found so far (for `cut`)."""
        return len(self.found), len(self.searches), len(self.opaque)

    def cut(self, mark: tuple[int, int, int]) -> None:
        """Forgets what was found since `mark` (a command the person's rules allow)."""
        del self.found[mark[0] :], self.searches[mark[1] :], self.opaque[mark[2] :]
        for index in [i for i in self.leaks if i >= mark[0]]:
            del self.leaks[index]

    def landing(
        self,
        words: list[Word],
        cwd: str | None,
        outside: str,
        whole: str | None,
        unknown: str,
        remote_is_outside: bool = False,
    ) -> None:
        """Flags each word that lands outside the workspace or on all of it (destructive) or
        nowhere known (unknown), with the reason templates given (`{}`: the word)."""
        for word in words:
            shown = word.shown
            kind = Kind.OUTSIDE
            if remote_is_outside and remote(word.text, self.places.nt):
                place, kind = OUTSIDE, Kind.REMOTE
            else:
                place = self.places.where(word, cwd)
            if place == OUTSIDE:
                self.flag(DESTRUCTIVE, outside.replace("{}", shown), kind)
            elif place == WORKSPACE and whole is not None:
                self.flag(DESTRUCTIVE, whole.replace("{}", shown), Kind.WORKSPACE)
            elif place == NOWHERE:
                self.flag(UNKNOWN, unknown.replace("{}", shown))


# The words a command's subcommand (or option) is named with when it deletes, drops or resets
# what it manages: a tool this module has no rule for (a message queue's, a payment API's, a
# project's own `./manage.py flush`) saying one of them is asked about, not let through.
_DELETE_WORDS = frozenset({
    "delete", "del", "rm", "rmdir", "remove", "purge", "destroy", "drop", "dropdb",
    "truncate", "flush", "flushall", "flushdb", "wipe", "erase", "terminate", "uninstall",
    "reset", "nuke", "prune", "deregister", "unregister", "revoke", "yank", "unpublish",
    "obliterate", "deprovision", "decommission", "teardown", "evict", "discard", "expunge",
    "shred", "zap", "clobber", "overwrite", "rollback", "rebuild-index", "downgrade",
    "fresh"})  # fmt: skip
# A word with one of these endings names a file, not a subcommand (`drop.sql`, `ecto.drop` is
# Mix's task).
_FILE_ENDINGS = (".py", ".js", ".ts", ".sql", ".sh", ".json", ".yml", ".yaml", ".txt", ".md",
                 ".rb", ".go", ".rs", ".toml", ".cfg", ".ini", ".lock", ".log", ".csv", ".xml",
                 ".html", ".css", ".conf", ".env", ".ps1", ".bat", ".mjs", ".cjs", ".tsx",
                 ".jsx", ".java", ".c", ".h", ".cpp", ".php", ".tf", ".db")  # fmt: skip
# Tools whose removal verbs are everyday project work (a dependency removed from a manifest),
# that only show a word's page, or that only print their words.
_ROUTINE_REMOVERS = frozenset({
    "pip", "pip3", "pipx", "npm", "yarn", "pnpm", "bun", "poetry", "uv", "pipenv", "go",
    "bundle", "composer", "dotnet", "mvn", "gradle", "man", "help", "tldr", "info", "which",
    "whatis", "apropos", "type", "hash", "complete", "compgen", "unalias", "unset", "set",
    "export", "declare", "local", "readonly", "test", "[", "[[", "true", "false", ":",
    # what only prints its words
    "cowsay", "figlet", "toilet", "banner", "logger", "notify-send", "say", "espeak", "wall",
    "write-host", "write-output", "write-verbose", "write-warning"})  # fmt: skip
_ROUTINE_WORDS = frozenset({"remove", "uninstall", "rm", "del", "prune", "clean", "reset"})
_MAX_VERB_WORDS = 3  # how many leading operands may name the subcommand (`nats stream rm`)


def said_delete(command: Command) -> str | None:
    """The word of a command with no rule that names a delete (`rabbitmqctl delete_queue`,
    `nats stream rm`, `kafka-topics --delete`), or None. Only the leading operands, before
    any option, name a subcommand (`pytest -k delete` names a test); `--dry-run` and
    `--help` only look."""
    routine = command.name.lower() in _ROUTINE_REMOVERS
    name = command.name.lower()
    if (
        not routine
        and name != "reset"
        and _names_delete(name)
        and (command.pwsh or rule_for(name, True) is None)  # (Remove-Item: bash's reading of it)
    ):
        return command.name  # `kafka-delete-records`, `./drop_db.sh`
    found: str | None = None
    leading = True
    count = 0
    for word in command.args:
        text = word.text
        if text.startswith("-"):
            leading = False
            option = text.lstrip("-").split("=", 1)[0].lower()
            if option in ("dry-run", "dryrun", "help", "h", "n", "what-if", "whatif"):
                return None
            plain = text.startswith("--") and not option.startswith("no-") and option != "rm"
            if plain and found is None and _names_delete(option, routine):
                found = text
            continue
        if not leading or word.dynamic or count >= _MAX_VERB_WORDS:
            continue
        count += 1
        named = "/" not in text and not text.lower().endswith(_FILE_ENDINGS)
        if found is None and named and _names_delete(text, routine):
            found = text
    return found


def _names_delete(text: str, routine: bool = False) -> bool:
    words = _DELETE_WORDS - _ROUTINE_WORDS if routine else _DELETE_WORDS
    lower = text.lower().rsplit("/", 1)[-1]
    if lower in words:
        return True
    parts = lower.replace("_", "-").replace(":", "-").replace(".", "-").split("-")
    return len(parts) > 1 and any(part in words for part in parts)


def rule_for(name: str, pwsh: bool) -> Rule | None:
    """The rule judging the command `name` in PowerShell or bash, or None (nothing to judge)."""
    rule = (_PWSH_RULES if pwsh else _BASH_RULES).get(name)
    if rule is None and name.startswith("mkfs"):  # mkfs.ext4, mkfs.xfs…
        return _disk
    return rule


def command_name(text: str, pwsh: bool) -> str:
    """The name a command word runs: `/bin/rm` is rm; `RM.EXE` (and in PowerShell, any case)
    is rm."""
    name = text.replace("\\", "/").rsplit("/", 1)[-1]
    if pwsh or name.lower().endswith(".exe"):
        name = name.lower().removesuffix(".exe")
    return name


def entries(roots: list[Word]) -> list[Word]:
    """Words for the entries below `roots` (what a listing pipes on)."""
    return [Word(w.text.rstrip("/\\") + "/\0", dynamic=True) for w in roots]


# What a build, a package manager or a test run makes again at will: a recursive delete of it
# (or of anything below it) inside the workspace is routine. The rest of the work tree is the
# person's own edits, which "inside the workspace" does not cover (docs/guard.md, What it does).
BUILD_OUTPUT = frozenset({
    "node_modules", "dist", "build", "out", "target", "obj", "_build", ".next", ".nuxt",
    ".svelte-kit", ".turbo", ".angular", ".parcel-cache", ".vite", ".expo", ".docusaurus",
    "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".pytype", ".hypothesis",
    ".tox", ".nox", ".venv", "venv", ".eggs", "coverage", "htmlcov", ".coverage",
    ".nyc_output", ".cache", ".gradle", ".dart_tool", ".sass-cache", ".eslintcache",
    ".ipynb_checkpoints", "tmp", "temp", ".tmp", "cmake-build-debug", "cmake-build-release",
    ".ds_store"})  # fmt: skip
# The endings of files a build leaves (a wildcard before them still names only such files).
BUILD_OUTPUT_ENDINGS = (".pyc", ".pyo", ".o", ".obj", ".class", ".egg-info", ".tsbuildinfo")
_WHOLE, _OUTPUT, _OWN = "whole", "output", "own"


def build_output(part: str) -> bool:
    """Whether one part of a path (a name, or a wildcard like `*.pyc`) names build output."""
    lower = part.lower()
    return lower in BUILD_OUTPUT or lower.endswith(BUILD_OUTPUT_ENDINGS)


def swept(places: Places, word: Word, cwd: str | None) -> str:
    """What a recursive delete of `word`, inside the workspace, takes: _WHOLE (every entry of
    the workspace: `*`, `./*`, `.*`), _OUTPUT (build output or below it), or _OWN (the
    person's own files: `src`, `src/*`, a name only known when it runs)."""
    parts = places.below(word, cwd)
    if parts is None or ".." in parts:
        return _OWN
    if word.glob and len(parts) == 1 and not parts[0].strip("*?."):
        return _WHOLE
    return _OUTPUT if any(build_output(part) for part in parts) else _OWN


def deleted(
    findings: Findings, name: str, targets: list[Word], recursive: bool, cwd: str | None
) -> None:
    """Flags the deletes of `targets`: outside the workspace (but for a named entry of a
    temporary directory) or all of it, destructive; a recursive delete of the person's own
    files inside it (not build output), or of a place only known when it runs, unknown."""
    kind = "recursive delete" if recursive else "delete"
    places = findings.places
    for target in targets:  # a repository's history, stashes and unpushed branches
        if ".git" in target.text.replace("\\", "/").split("/"):
            findings.flag(UNKNOWN, f"{name}: deletes {target.shown}, a repository's history")
            break
    for target in targets:
        shown = target.shown
        place = places.where(target, cwd)
        if place == OUTSIDE:
            if not places.temporary(target, cwd):
                findings.flag(
                    DESTRUCTIVE, f"{name}: {kind} of {shown} outside the workspace", Kind.OUTSIDE
                )
        elif place == NOWHERE:
            findings.flag(UNKNOWN, f"{name}: {kind} of {shown}, only known when it runs")
        elif not recursive:
            continue
        elif place == WORKSPACE:
            findings.flag(DESTRUCTIVE, f"{name}: {kind} of the whole workspace", Kind.WORKSPACE)
        else:
            what = swept(places, target, cwd)
            if what == _WHOLE:
                findings.flag(
                    DESTRUCTIVE,
                    f"{name}: {kind} of {shown}: all the workspace holds",
                    Kind.WORKSPACE,
                )
            elif what == _OWN:
                findings.flag(
                    UNKNOWN, f"{name}: {kind} of {shown}, your own files (not build output)"
                )


def overwritten(findings: Findings, what: str, targets: list[Word], cwd: str | None) -> None:
    """Flags as unknown each file written over outside the workspace (a dotfile, a system
    file, another project's): what it held is lost, yet installing or configuring writes
    there too. A scratch place (`/tmp`, `/dev/null`) loses nothing; a place only known when
    it runs is left to the rest of the line."""
    places = findings.places
    for target in targets:
        if not places.confined and not target.text.startswith(("/", "~", "..", "\\")):
            continue  # no workspace (the home directory): a name here is what one works on
        if places.where(target, cwd) == OUTSIDE and not places.scratch(target, cwd):
            findings.flag(UNKNOWN, f"{what} {target.shown}, outside the workspace")


# -- the rules: each (findings, command) -> what the command pipes on ---------------------


def _delete(findings: Findings, command: Command) -> Fed:
    name, args = command.name, command.args
    if command.pwsh:
        parsed = parse(args, _PWSH_DELETE_OPTIONS)
        recursive = any(
            f.short and ("-recurse".startswith(f.name) or f.name in ("-rf", "-fr"))
            for f in parsed.flags
        )
    else:
        syntax = _SWITCHED_DELETE_OPTIONS if name in _SWITCHED_DELETE else _DELETE_OPTIONS
        parsed = parse(args, syntax)
        recursive = parsed.letters("rR")  # -r, -R, -rf, -fR…
    recursive |= name in _ALWAYS_RECURSIVE_DELETE or bool(parsed.longs(("--recursive",)))
    recursive |= any(f.name.lower() == "/s" for f in parsed.flags)
    targets = parsed.operands
    if command.fed is not None and not targets and from_file(command.fed) is None:
        targets = command.fed  # (rm reads no file, but a pipe's names through xargs do)
    deleted(findings, name, targets, recursive, command.cwd)
    return OPAQUE


def _move(findings: Findings, command: Command) -> Fed:
    """A move deletes its sources where they are and writes over what its destination
    names. So: a source outside the workspace is a delete outside it (destructive), and
    so is the workspace itself moved away. A destination outside the workspace is also
    destructive, not merely unknown: the files leave the project (beyond its history and
    the harness's checkpoints, unlike a delete inside it, which stays recoverable there),
    and mv / Move-Item silently replace whatever the destination already names."""
    name, cwd = command.name, command.cwd
    if command.pwsh:
        parsed = parse(command.args, _PWSH_MOVE_OPTIONS)
        named = parsed.values(lambda option: len(option) > 1 and "-destination".startswith(option))
    else:
        parsed = parse(command.args, _MOVE_OPTIONS)
        named = parsed.values(("-t", "--target-directory").__contains__)
    sources = parsed.operands
    destination = named[-1] if named else None
    if destination is None and len(sources) >= 2:
        *sources, destination = sources
    if not sources or destination is None:
        return OPAQUE  # too few operands to move anything
    # A named entry below a temporary directory is scratch: moving it away loses nothing
    # (a download brought into the project), as deleting it does not.
    sources = [s for s in sources if not findings.places.temporary(s, cwd)]
    findings.landing(
        sources,
        cwd,
        f"{name}: moves {{}} away, outside the workspace",
        f"{name}: moves the whole workspace away",
        f"{name}: moves {{}}, only known when it runs",
    )
    findings.landing(
        [destination],
        cwd,
        f"{name}: moves files out of the workspace to {{}}, over what is there",
        None,
        f"{name}: moves files to {{}}, only known when it runs",
    )
    return OPAQUE


def _rsync(findings: Findings, command: Command) -> Fed:
    """rsync copies, which is safe anywhere; it deletes with `--delete` (what the
    destination has and the source lacks) and `--remove-source-files` (the sources), and
    those deletes are judged like rm's: outside the workspace, or all of it, destructive.
    A remote place (`host:path`, `rsync://`) is outside the workspace."""
    parsed = parse(command.args, _RSYNC_OPTIONS)
    if len(parsed.operands) < 2:
        return OPAQUE
    *sources, destination = parsed.operands
    given = {f.name for f in parsed.flags}
    for what, places in (
        ("rsync --delete: deletes below", [destination] if given & _RSYNC_DELETES else []),
        (
            "rsync --remove-source-files: deletes",
            sources if "--remove-source-files" in given else [],
        ),
    ):
        _synced_deletes(findings, places, command.cwd, what)
    _copied_over(findings, command, destination, sources)
    return OPAQUE


# Places on a machine whose overwrite breaks it (a copy there replaces what the system runs
# on, or who may log in): `host:/etc/…`, `host:.ssh/authorized_keys`.
_SYSTEM_PLACES = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/boot", "/root",
                  "/sys", "/proc", "/dev", "/var/lib", "/var/spool", "/opt")  # fmt: skip
_ACCESS_FILES = (".ssh/authorized_keys", ".ssh/authorized_keys2", ".bashrc", ".profile",
                 ".bash_profile", ".zshrc")  # fmt: skip
_SCP_OPTIONS = Syntax({"-c", "-F", "-i", "-J", "-l", "-o", "-P", "-S", "-X", "-D"})


def runs_on(path: str) -> bool:
    """Whether a path on another machine is what it runs on or who may log in (`/etc/…`,
    `~/.ssh/authorized_keys`): a copy over it breaks that machine."""
    return (
        path == "/"
        or path.rstrip("/") in _SYSTEM_PLACES
        or path.startswith(tuple(p + "/" for p in _SYSTEM_PLACES))
        or path.lstrip("~/").endswith(_ACCESS_FILES)
    )


def _copied_over(
    findings: Findings, command: Command, destination: Word, sources: list[Word]
) -> None:
    """A copy (scp, rsync) to a system path of another machine writes over what it runs on:
    destructive; one from another machine to a place outside the workspace here, unknown."""
    text = destination.text
    nt = findings.places.nt
    if remote(text, nt) and not text.startswith("rsync://"):
        host, _, path = text.partition(":")
        path = path or "~"
        if runs_on(path):
            findings.flag(
                DESTRUCTIVE,
                f"{command.name}: writes over {path} on {host}, what that machine runs on",
                Kind.REMOTE,
            )
    elif any(remote(s.text, nt) for s in sources):
        overwritten(findings, f"{command.name}: copies over", [destination], command.cwd)


def _scp(findings: Findings, command: Command) -> Fed:
    """scp (and pscp) copies; to a system path of another machine it writes over what that
    machine runs on."""
    operands = parse(command.args, _SCP_OPTIONS).operands
    if len(operands) >= 2:
        _copied_over(findings, command, operands[-1], operands[:-1])
    return OPAQUE


def _synced_deletes(findings: Findings, places: list[Word], cwd: str | None, what: str) -> None:
    """A copying tool's deletes at `places` (`what` it does, in words), judged like rm's:
    outside the workspace (a remote place included) or all of it, destructive."""
    findings.landing(
        places,
        cwd,
        f"{what} {{}}, outside the workspace",
        f"{what} {{}}: the whole workspace",
        f"{what} {{}}, only known when it runs",
        remote_is_outside=True,
    )


def _http(findings: Findings, command: Command) -> Fed:
    """An HTTP client sending DELETE (or PURGE) deletes whatever the API holds there (an
    index, a repository, a project); an Elasticsearch `_delete_by_query` as much. Unknown:
    the server decides what it means."""
    method = ""
    args = command.args
    for at, word in enumerate(args):
        text = word.text
        lower = text.lower()
        if lower in ("-x", "--request", "--method", "-method") and at + 1 < len(args):
            method = args[at + 1].text
        elif lower.startswith(("-x", "--request=", "--method=", "-method:")) and len(text) > 2:
            method = (
                text.split("=", 1)[-1].split(":", 1)[-1]
                if "=" in text or ":" in text
                else (text[2:])
            )
        elif at == 0 and text.upper() in _HTTP_DELETES and command.name in _HTTPIE:
            method = text
        if "_delete_by_query" in lower:
            method = "DELETE"
    if method.upper() in _HTTP_DELETES:
        findings.flag(UNKNOWN, f"{command.name}: sends {method.upper()}, deleting what it names")
        return OPAQUE
    writes = method.upper() not in ("", "GET", "HEAD", "OPTIONS") or any(
        w.text.split("=", 1)[0] in _HTTP_BODIES or w.text.startswith("-d") for w in args
    )
    if command.name in _HTTPIE and args and args[0].text.upper() in ("POST", "PUT", "PATCH"):
        writes = True
    if writes:  # a URL or a body naming a delete (`/documents/delete-all`, a GraphQL mutation)
        said = _http_delete(args)
        if said is not None:
            findings.flag(UNKNOWN, f"{command.name}: {said}, deleting what it names")
    return OPAQUE


_HTTP_BODIES = {"-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--json",
                "-F", "--form", "-T", "--upload-file", "--post-data", "--post-file",
                "--body-data", "--body-file", "-Body", "-body", "-InFile", "-infile"}  # fmt: skip
_URL_DELETES = frozenset({"delete", "deleteall", "destroy", "purge", "truncate", "drop", "wipe",
                          "clear", "remove", "erase", "flushall", "flushdb",
                          "deletebyquery"})  # fmt: skip


def _http_delete(args: list[Word]) -> str | None:
    """What names a delete in an HTTP call that writes: a URL's path word (`delete-all`,
    `clear`), a GraphQL mutation deleting (`mutation { deleteRepository … }`), or an XML
    `<delete>` body (Solr)."""
    for word in args:
        text = word.text
        lower = text.lower()
        if "://" in text or lower.startswith(("localhost", "127.0.0.1")):
            path = lower.split("://", 1)[-1].partition("/")[2]
            for part in path.replace("?", "/").replace("&", "/").split("/"):
                name = part.split("=", 1)[0]
                words = name.replace("-", "_").replace(".", "_").split("_")
                if name in _URL_DELETES or any(w in _URL_DELETES for w in words if w):
                    return f"calls {text}"
                if any(w in name for w in ("delete", "destroy", "purge", "truncate")):
                    return f"calls {text}"  # `doDelete`, `deleteUser`
        elif "mutation" in lower:
            import re  # only for a GraphQL body

            hit = re.search(r"mutation\b[^{]*\{\s*(?:\w+\s*:\s*)?(\w+)", text, re.IGNORECASE)
            if hit is not None and _names_delete_camel(hit.group(1)):
                return f"sends the GraphQL mutation {hit.group(1)}"
        elif "<delete>" in lower:
            return "sends an XML <delete>"
    return None


def _names_delete_camel(name: str) -> bool:
    """`deleteRepository`, `removeMember`, `destroyProject`, `purge_cache`."""
    lower = name.lower()
    return lower.startswith(("delete", "remove", "destroy", "purge", "drop", "truncate", "wipe",
                             "archive", "erase")) or "_delete" in lower  # fmt: skip


def _robocopy(findings: Findings, command: Command) -> Fed:
    """`robocopy SOURCE DEST /MIR` (or `/PURGE`) deletes what DEST has and SOURCE lacks, like
    rsync's --delete; `/MOVE` deletes the sources. Judged like rm's deletes."""
    switches = {w.text.lower() for w in command.args if w.text.startswith("/")}
    places = [w for w in command.args if not w.text.startswith("/")]
    if len(places) < 2:
        return OPAQUE
    source, destination = places[0], places[1]
    for wanted, place, what in (
        (("/mir", "/purge"), destination, "robocopy /MIR: deletes below"),
        (("/move", "/mov"), source, "robocopy /MOVE: deletes"),
    ):
        if switches.intersection(wanted):
            _synced_deletes(findings, [place], command.cwd, what)
    return OPAQUE


# find's tests that select entries by name (their value: a pattern), and the others that leave
# only some entries (by age, size, owner…); `-type f` leaves every file.
_FIND_NAMES = {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
               "-iregex"}  # fmt: skip
_FIND_NARROWS = {"-newer", "-anewer", "-cnewer", "-mtime", "-mmin", "-atime", "-amin", "-ctime",
                 "-cmin", "-size", "-empty", "-user", "-group", "-uid", "-gid", "-perm",
                 "-links", "-inum", "-samefile", "-nouser", "-nogroup", "-newermt"}  # fmt: skip
_FIND_NOT = {"!", "\\!", "-not"}
_FIND_OR = {"-o", "-or", ","}


def _find(findings: Findings, command: Command) -> Fed:
    """Notes a global search and deletes below the roots (`-delete`, `-exec rm`), judged as
    recursive deletes: outside the workspace (but below a temporary directory), destructive;
    every entry of the workspace (`find . -delete`, `find . -type f -delete`), destructive;
    only entries a name test picks as build output (`-name '*.pyc'`, `-name __pycache__`),
    or below build output, routine; the person's own files, unknown. Pipes on the entries
    below the roots (with the name a single name test picks, for what reads them)."""
    cwd = command.cwd
    places = findings.places
    roots: list[Word] = []
    rest = list(command.args)
    while rest and rest[0].text in ("-H", "-L", "-P"):
        rest = rest[1:]
    while rest and not (rest[0].text.startswith("-") or rest[0].text in ("(", "!", "\\(")):
        roots.append(rest.pop(0))
    roots = roots or [HERE]
    for root in roots:
        if places.is_global(root, cwd):
            findings.searched(f"find: a recursive search rooted at {root.text}")
    texts = [w.text for w in rest]
    deletes = "-delete" in texts
    names: list[str] = []  # the patterns of the name tests that pick what is deleted
    only_names, narrows, alternatives, clause = True, False, False, False
    for index, text in enumerate(texts):
        if clause:  # the command -exec runs, up to `;` or `{} +`
            clause = text != ";" and not (text == "+" and texts[index - 1] == "{}")
            continue
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            if index + 1 < len(texts):
                deletes |= command_name(texts[index + 1], False) in DELETE
            clause = True
            continue
        negated = index > 0 and texts[index - 1] in _FIND_NOT
        alternatives |= text in _FIND_OR
        if text in _FIND_NAMES and index + 1 < len(texts):
            if not negated:
                names.append(texts[index + 1])
                narrows = True
        elif text in _FIND_NARROWS or text.startswith("-newer"):
            only_names = False
            narrows |= not negated
        elif text == "-type":
            only_names = False
    output = bool(names) and (not alternatives or only_names)
    output = output and all(
        any(build_output(part) for part in name.replace("\\", "/").split("/")) for name in names
    )
    # `find . -name node_modules | xargs rm -rf`: what it pipes on keeps the name picked
    picked = [n for n in names if "/" not in n] if output or len(names) == 1 else []
    below = (
        [Word(r.text.rstrip("/\\") + "/\0/" + n, dynamic=True) for r in roots for n in picked]
        if picked and (output or not alternatives)
        else entries(roots)
    )
    if deletes:
        for root in roots:
            entry = entries([root])[0]
            place = places.where(entry, cwd)
            if place == OUTSIDE:
                if not places.temporary(entry, cwd):
                    findings.flag(
                        DESTRUCTIVE,
                        f"find deletes below {root.text}, outside the workspace",
                        Kind.OUTSIDE,
                    )
            elif place == NOWHERE:
                findings.flag(UNKNOWN, f"find deletes below {root.shown}, only known when it runs")
            elif output or swept(places, root, cwd) == _OUTPUT:
                continue
            elif places.where(root, cwd) == WORKSPACE and not narrows:
                findings.flag(
                    DESTRUCTIVE, "find deletes every entry of the whole workspace", Kind.WORKSPACE
                )
            else:
                findings.flag(UNKNOWN, f"find deletes below {root.shown}, your own files")
    return below


def _search(findings: Findings, command: Command) -> Fed:
    """Notes a recursive search rooted at a global place; a listing pipes on the entries
    below the places it lists."""
    name, args = command.name, command.args
    recursive = name in _ALWAYS_RECURSIVE
    pattern_given = name in _NO_PATTERN
    if command.pwsh:
        syntax = _PWSH_DIR_OPTIONS if name in ("dir", "findstr") else _PWSH_SEARCH_OPTIONS
        parsed = parse(args, syntax)
        for flag in parsed.flags:
            option = flag.name
            recursive |= option == "/s" or (
                option.startswith("-")
                and (
                    "-recurse".startswith(option)
                    or (len(option) > 2 and "-depth".startswith(option))
                )
            )
    else:
        parsed = parse(args, _SEARCH_OPTIONS)
        for flag in parsed.flags:
            option = flag.name
            if option.startswith("--"):
                recursive |= option == "--files" or (
                    abbreviation(option, ("--recursive", "--dereference-recursive")) is not None
                )
                pattern_given |= option.startswith("--regexp") or option == "--files"
                continue
            if name in ("ls", "dir"):
                recursive |= "R" in option
            elif name in _GREPS:
                recursive |= "r" in option or "R" in option
            pattern_given |= option in ("-e", "-f")
    # grep's `-d recurse`, `--directories=recurse`
    recursive |= any(f.value is not None and f.value.text == "recurse" for f in parsed.flags)
    places = parsed.operands
    if not pattern_given and places and name not in ("ls", "dir", "tree", "du"):
        places = places[1:]  # the pattern: data, never a place
    for root in places if recursive else ():
        if findings.places.is_global(root, command.cwd):
            findings.searched(f"{name}: a recursive search rooted at {root.text}")
    return entries(places or [HERE]) if name in _LISTINGS else OPAQUE


def _disk(findings: Findings, command: Command) -> Fed:
    """A partition table listed (`fdisk -l`, `parted -l`, `sgdisk -p`) only looks; wipefs
    without `-a` (or an offset) only lists the signatures."""
    texts = {w.text for w in command.args}
    if texts & _DISK_LOOKS and not texts & _DISK_WRITES:
        return OPAQUE
    if command.name == "wipefs" and not any(
        t.startswith(("-a", "--all", "-o", "--offset")) for t in texts
    ):
        findings.flag(UNKNOWN, "wipefs: lists (or, told to, wipes) a disk's signatures")
        return OPAQUE
    findings.flag(DESTRUCTIVE, f"{command.name} wipes or repartitions a disk", Kind.DISK)
    return OPAQUE


def _diskutil(findings: Findings, command: Command) -> Fed:
    args = command.args
    if args and args[0].text.lower().startswith(_DISKUTIL_WIPES):
        findings.flag(
            DESTRUCTIVE, f"diskutil {args[0].text} wipes or repartitions a disk", Kind.DISK
        )
    return OPAQUE


def _dd(findings: Findings, command: Command) -> Fed:
    for arg in command.args:
        if arg.text.startswith("of=") and device(arg.text[3:]):
            findings.flag(DESTRUCTIVE, f"dd writes over the disk device {arg.text[3:]}", Kind.DISK)
        elif arg.text.startswith("of="):
            path = arg.text[3:]
            if path == "~" or path.startswith("~/"):  # bash expands `~` after `=`
                path = findings.places.home + path[1:]
            target = Word(path, dynamic=arg.dynamic)
            overwritten(findings, "dd writes over", [target], command.cwd)
    return OPAQUE


def _sed(findings: Findings, command: Command) -> Fed:
    """`sed -i` edits its files in place: outside the workspace, a system file or a dotfile."""
    parsed = parse(command.args, _SED_OPTIONS)
    in_place = any(
        (f.short and "i" in f.name.split(".", 1)[0]) or f.name.startswith("--in-place")
        for f in parsed.flags
    )
    scripts = [f.value.text for f in parsed.flags if f.name in ("-e", "--expression") and f.value]
    if not any(f.name in ("-e", "--expression", "-f", "--file") for f in parsed.flags):
        scripts = [w.text for w in parsed.operands[:1]]
    if any(_sed_runs(script) for script in scripts):
        findings.flag(UNKNOWN, f"{command.name}: its e command runs a shell command")
    if in_place:
        script_given = any(f.name in ("-e", "-f", "--expression", "--file") for f in parsed.flags)
        files = parsed.operands if script_given else parsed.operands[1:]
        overwritten(findings, f"{command.name} -i edits", files, command.cwd)
    return OPAQUE


def _sed_runs(script: str) -> bool:
    """Whether a sed script runs a shell command: GNU's `e` command (`1e rm -rf ~`) or the `e`
    flag of `s` (the pattern space run). Text and file names (`a`, `w FILE`) are skipped."""
    at, size = 0, len(script)
    while at < size:
        while at < size and script[at] in " \t\n;{}!":
            at += 1
        while at < size and (script[at].isdigit() or script[at] in "$,~+/\\"):
            if script[at] in "/\\":  # an address's pattern, `/re/` or `\cREc`
                if script[at] == "\\":
                    at += 1
                at = _sed_part(script, at) + 1
                while at < size and script[at] in "IM":
                    at += 1
            else:
                at += 1
        while at < size and script[at] in " !":
            at += 1
        if at >= size:
            return False
        letter = script[at]
        if letter == "e":
            return True
        if letter in "sy" and at + 1 < size:
            at = _sed_part(script, _sed_part(script, at + 1)) + 1
            flags = at
            while at < size and script[at] not in ";\n}":
                if script[at] == "w":  # a file name to the end of the line
                    break
                at += 1
            if letter == "s" and "e" in script[flags:at]:
                return True
        if at < size and script[at] in "aicrRwWbtT:":
            ends = ";\n" if script[at] in "btT:" else "\n"
            while at < size and script[at] not in ends:
                at += 1
        at += 1
    return False


def _sed_part(script: str, at: int) -> int:
    """Where the part of a sed script opened by the delimiter at `at` closes (its end)."""
    delimiter, at = script[at], at + 1
    while at < len(script) and script[at] != delimiter:
        at += 2 if script[at] == "\\" else 1
    return min(at, len(script))


# Servers told to stop by a signal on their command line: the option and the words that stop.
_STOPS = {"nginx": ("-s", ("stop", "quit")), "httpd": ("-k", ("stop", "graceful-stop")),
          "apachectl": ("", ("stop", "graceful-stop")),
          "apache2ctl": ("", ("stop", "graceful-stop"))}  # fmt: skip
_STDIN_FILES = ("/dev/stdin", "-", "/dev/fd/0")


def _server(findings: Findings, command: Command) -> Fed:
    """`nginx -s stop`, `apachectl stop`: the site goes down for whoever relies on it."""
    option, stops = _STOPS[command.name]
    texts = [w.text for w in command.args]
    for at, text in enumerate(texts):
        signal = texts[at + 1] if option and text == option and at + 1 < len(texts) else text
        if (not option or text == option) and signal in stops:
            findings.flag(UNKNOWN, f"{command.name} {signal}: stops the server")
            break
    return OPAQUE


def _make(findings: Findings, command: Command) -> Fed:
    """A makefile read from what is fed, or only known when it runs (`make -f /dev/stdin`,
    `make -f <(curl …)`), is code not seen; the project's own makefile is its own."""
    args = command.args
    for at, word in enumerate(args):
        text = word.text
        given: Word | None = None
        if text in ("-f", "--file", "--makefile") and at + 1 < len(args):
            given = args[at + 1]
        elif text.startswith(("--file=", "--makefile=")):
            given = Word(text.partition("=")[2], dynamic=word.dynamic)
        elif text.startswith("-f") and len(text) > 2:
            given = Word(text[2:], dynamic=word.dynamic)
        if given is not None and (given.dynamic or given.text in _STDIN_FILES):
            findings.hidden(f"{command.name} runs a makefile read from its input or a download")
            break
    said = said_delete(command)  # `make db-drop`: a target that deletes what it manages
    if said is not None:
        findings.flag(UNKNOWN, f"{command.name} {said}: may delete what it manages")
    return OPAQUE


def _content(findings: Findings, command: Command) -> Fed:
    """Set-Content, Clear-Content and Out-File write over the file they name."""
    parsed = parse(command.args, _PWSH_CONTENT_OPTIONS)
    if any(f.name.startswith("-app") for f in parsed.flags):  # -Append
        return OPAQUE
    if command.name in ("new-item", "ni") and not any(
        f.name.startswith("-fo") for f in parsed.flags
    ):
        return OPAQUE  # New-Item refuses to replace what is there, unless -Force
    whole = command.name in ("clear-content", "clc", "clear-item", "cli")
    targets = parsed.operands if whole else parsed.operands[:1]
    overwritten(findings, f"{command.name} writes over", targets, command.cwd)
    return OPAQUE


def _permissions(findings: Findings, command: Command) -> Fed:
    """A recursive permission change outside the workspace; Set-Acl replaces a path's whole
    list, as sweeping as a recursive change."""
    name = command.name
    if name in _WINDOWS_PERMISSIONS:  # switches start with `/`, the paths do not
        parsed = parse(command.args, _WINDOWS_PERMISSION_OPTIONS)
        recursive = name == "set-acl" or any(f.name in ("/t", "/r") for f in parsed.flags)
        places = parsed.operands
    else:
        acl = name == "setfacl"  # its entries are options' values: every operand is a path
        parsed = parse(command.args, _ACL_OPTIONS if acl else _PERMISSION_OPTIONS)
        recursive = parsed.letters("rR") or any(
            f.name.lower() == "--recursive" for f in parsed.flags
        )
        places = parsed.operands if acl else parsed.operands[1:]  # after the mode (the owner)
    if name == "chmod" and parsed.operands and _world_writable(parsed.operands[0].text):
        findings.flag(UNKNOWN, f"chmod {parsed.operands[0].text}: anyone may write there")
    if (
        name == "chmod"
        and not recursive
        and parsed.operands
        and _private(findings.places, parsed, command.cwd)
    ):
        return OPAQUE  # `chmod 600 ~/.ssh/id_rsa`: one's own files kept from others
    if not recursive:  # one file's permissions outside: a key, a system file, maybe
        overwritten(findings, f"{name}: changes the permissions of", places, command.cwd)
    else:
        for target in places:
            if findings.places.where(target, command.cwd) == OUTSIDE:
                findings.flag(
                    DESTRUCTIVE,
                    f"{name}: a recursive permission change of {target.text} outside the workspace",
                    Kind.OUTSIDE,
                )
    return OPAQUE


def _private(places: Places, parsed: Parsed, cwd: str | None) -> bool:
    """Whether chmod only keeps files below the home directory from others: a mode with
    nothing for group and others and read for the owner (`600`, `700`), or one only taking
    group's or others' permissions away (`go-rwx`)."""
    mode = parsed.operands[0].text
    if mode.isdigit():
        digits = mode[-3:].rjust(3, "0")
        private = len(mode) <= 4 and digits[1:] == "00" and int(digits[0]) >= 4
    else:
        private = all(
            "-" in part and "+" not in part and "=" not in part
            and part.split("-", 1)[0] in ("g", "o", "go", "og")
            for part in mode.split(",")
        )  # fmt: skip
    home = places.home
    targets = parsed.operands[1:]
    return (
        private
        and bool(targets)
        and all(
            not t.dynamic and places._within(places.resolve(t.text, cwd), home) for t in targets
        )
    )


def _world_writable(mode: str) -> bool:
    """A chmod mode giving every user write access: `777`, `0666`, `o+w`, `a+rwx`."""
    if mode.isdigit():
        return len(mode) >= 3 and int(mode[-1]) & 2 == 2
    return any(
        "+" in part and part.split("+", 1)[0] in ("o", "a", "ugo", "go", "uo") and "w" in part
        for part in mode.split(",")
    )


def _echo(findings: Findings, command: Command) -> Fed:
    """What it prints is what it pipes on (a shell or an interpreter may read it): printf's
    and `echo -e`'s escapes decoded (`printf '\\x72\\x6d -rf /' | sh`)."""
    parsed = parse(command.args, _ECHO_OPTIONS)
    operands = parsed.operands
    if command.name == "printf" or any("e" in f.name for f in parsed.flags if f.short):
        from .lexer import c_escapes

        operands = [Word(c_escapes(w.text), w.quoted, w.dynamic, w.glob) for w in operands]
    return operands or None


def _cat(findings: Findings, command: Command) -> Fed:
    """`cat <<EOF | psql`: with no file, cat pipes on what it is fed; with one, the file's
    content, not read here (`cat x.sh | bash` runs a script of one's own, as `bash x.sh`)."""
    files = [w for w in command.args if w.text != "-" and not w.text.startswith("-")]
    if not files:
        return command.fed if command.fed is not None else OPAQUE
    return [FromFile(files[0])] if len(files) == 1 and not files[0].dynamic else OPAQUE


# System commands that end the work in progress or wipe what no undo brings back: the
# arguments that make them so (None: any but those that only look or cancel), and what.
_SYSTEM: dict[str, tuple[tuple[str, ...] | None, str]] = {
    "shutdown": (None, "shuts the machine down or restarts it"),
    "reboot": (None, "restarts the machine"),
    "halt": (None, "stops the machine"),
    "poweroff": (None, "powers the machine off"),
    "stop-computer": (None, "shuts the machine down"),
    "restart-computer": (None, "restarts the machine"),
    "crontab": (("-r",), "deletes the user's crontab, keeping no copy"),
    "iptables": (("-F", "--flush", "-X"), "flushes the firewall's rules"),
    "ip6tables": (("-F", "--flush", "-X"), "flushes the firewall's rules"),
    "nft": (("flush",), "flushes the firewall's rules"),
    "npm": (("unpublish",), "unpublishes a package from the registry"),
}
_SYSTEM_HARMLESS = {"-c", "/a", "--help", "--version", "-k"}  # cancel, help, warn only
_FIREWALL_CHANGES = ("-P", "--policy", "-D", "--delete", "-Z", "--zero", "-R", "--replace",
                     "-I", "--insert", "-A", "--append", "-t")  # fmt: skip
_SYSTEM_REPLACES = {"iptables": _FIREWALL_CHANGES, "ip6tables": _FIREWALL_CHANGES,
                    "nft": ("delete", "replace", "-f"), "npm": ("deprecate",)}  # fmt: skip


def _system(findings: Findings, command: Command) -> Fed:
    name, texts = command.name, [w.text for w in command.args]
    script = texts[1] if len(texts) > 1 and texts[0] in ("run", "run-script") else ""
    if name == "npm" and script and _names_delete(script):  # `npm run db:drop`
        findings.flag(UNKNOWN, f"npm run {texts[1]}: may delete what it manages")
    wanted, what = _SYSTEM[name]
    if wanted is None:
        hit = not (_SYSTEM_HARMLESS & set(texts))
    else:
        hit = any(t in wanted for t in texts) or (name == "crontab" and "-ri" in texts)
    if hit:
        findings.flag(DESTRUCTIVE, f"{name} {what}", Kind.MACHINE)
    elif any(t in _SYSTEM_REPLACES.get(name, ()) for t in texts) or (
        name == "crontab" and any(not t.startswith("-") or t == "-" for t in texts)
    ):  # a crontab replaced by a file or a pipe, a firewall's policy or rules changed
        findings.flag(UNKNOWN, f"{name}: replaces or changes what is set up")
    return OPAQUE


def _kill(findings: Findings, command: Command) -> Fed:
    """`kill -9 -1`: every process the user may signal (the pid -1), their unsaved work too;
    pid 1 is init. Processes only known when it runs (`kill $(pgrep node)`, a pipe through
    xargs), a process group (`-PGID`) or, in PowerShell, Stop-Process by name, are unknown."""
    args = command.args
    if command.pwsh:
        findings.flag(UNKNOWN, "kill (Stop-Process): stops processes")
        return OPAQUE
    at = 0
    if at < len(args) and args[at].text in ("-s", "-n"):
        at += 2  # the signal named
    elif at < len(args) and args[at].text.startswith("-") and args[at].text not in ("--", "-1"):
        at += 1  # -9, -KILL, -SIGTERM
    elif len(args) >= 2 and args[at].text == "-1":
        at += 1  # `kill -1 PID`: SIGHUP to that process
    if at < len(args) and args[at].text == "--":
        at += 1
    pids = args[at:]
    if command.fed is not None and not pids:
        pids = command.fed
    for pid in pids:
        if pid.text in ("-1", "1"):
            findings.flag(
                DESTRUCTIVE, f"kill {pid.text}: signals init or every process", Kind.MACHINE
            )
            return OPAQUE
    if any(p.dynamic or p.text.startswith("-") for p in pids):  # (`%1`: the shell's own job)
        findings.flag(UNKNOWN, "kill: signals processes only known when it runs")
    return OPAQUE


# The tools of resources.py's tables (cloud, clusters, containers, databases): the module is
# imported when one is met, not by every shell command (its tables cost the hook a millisecond).
RESOURCE_TOOLS = frozenset({
    "kubectl", "oc", "helm", "helmfile", "terraform", "tofu", "terragrunt", "pulumi", "aws",
    "gcloud", "gsutil", "az", "azcopy", "doctl", "flyctl", "fly", "heroku", "vercel", "netlify",
    "firebase", "gh", "glab", "docker", "podman", "nerdctl", "docker-compose", "podman-compose",
    "rclone", "s3cmd", "mc", "restic", "borg", "bq", "dropdb", "dropuser", "pg_dropcluster",
    "mysqladmin", "pg_restore", "mongorestore", "psql", "pgcli", "mysql", "mariadb", "sqlite3",
    "duckdb", "redis-cli", "valkey-cli", "mongosh", "mongo", "cqlsh", "clickhouse-client",
    "sqlcmd", "snowsql", "sftp", "lftp", "smbclient",
    # the machine's services, processes, accounts and packages (resources.py's HOST_TOOLS)
    "systemctl", "service", "launchctl", "init", "telinit", "pkill", "killall", "skill",
    "killall5", "fuser", "ufw", "ip", "ifconfig", "swapoff", "umount", "sysctl", "modprobe",
    "rmmod", "userdel", "deluser", "groupdel", "delgroup", "passwd", "usermod", "chpasswd",
    "history", "apt", "apt-get", "aptitude", "yum", "dnf", "zypper", "apk", "brew", "snap",
    "flatpak", "port", "choco", "winget", "scoop", "pacman", "conda", "mamba", "cargo", "gem",
    "influx", "etcdctl", "consul", "vault", "stop-process", "spps", "taskkill", "stop-service",
    "spsv", "set-service", "remove-itemproperty", "rp", "reg", "vssadmin", "wmic", "wbadmin",
    "bcdedit", "wevtutil", "clear-eventlog", "netsh", "clear-recyclebin", "remove-localuser",
    "remove-localgroup", "disable-localuser", "uninstall-module", "uninstall-package",
    "sdelete", "dpkg", "rpm", "nvme", "cryptsetup", "lvremove", "vgremove", "pvremove", "mdadm",
    "tmutil", "salt", "logoff", "net", "sc", "schtasks", "set-executionpolicy",
    "set-itemproperty", "disable-windowsoptionalfeature", "disable-netadapter",
    "set-netfirewallprofile", "remove-appxpackage", "zip", "7z", "dmsetup", "lvreduce",
    "vgreduce", "lvresize", "pvmove", "nbd-client", "mount",
    # secret stores, CI servers, search services, DNS, smaller clouds (resources.ADMIN_TOOLS)
    "cmdkey", "remove-storedcredential", "security", "doppler", "op", "bw", "infisical", "pass",
    "gopass", "sops", "b2", "kopia", "duplicity",
    "jenkins-cli", "circleci", "argocd", "flux", "nomad", "cf", "algolia", "meilisearch",
    "typesense", "nsupdate", "cli53", "flarectl", "oci", "ibmcloud", "linode-cli", "hcloud",
    "scw", "vultr-cli", "exo", "upctl", "wrangler", "railway", "supabase", "neonctl", "pscale",
    "turso", "atlas", "databricks", "tea"})  # fmt: skip


def _resources(findings: Findings, command: Command) -> Fed:
    from .resources import judge

    return judge(findings, command)


def _git(findings: Findings, command: Command) -> Fed:
    from .git import git  # its tables, only for a git command

    return git(findings, command)


def dispatch_table(*groups: tuple[Iterable[str], Handler]) -> dict[str, Handler]:
    """A dispatch table from (names, handler) groups; a name in two groups would make the
    order they are given in matter, so it is refused."""
    table: dict[str, Handler] = {}
    for names, handler in groups:
        for name in names:
            if name in table:
                raise ValueError(f"{name!r} is in two groups of the dispatch table")
            table[name] = handler
    return table


_SHARED_RULES: tuple[tuple[Iterable[str], Rule], ...] = (
    (("rsync",), _rsync),
    (("scp", "pscp"), _scp),
    (("robocopy",), _robocopy),
    (
        (
            "curl",
            "wget",
            "http",
            "https",
            "xh",
            "curlie",
            "invoke-webrequest",
            "iwr",
            "invoke-restmethod",
            "irm",
        ),
        _http,
    ),
    (("find",), _find),
    (_SEARCH, _search),
    (_DISK, _disk),
    (("diskutil",), _diskutil),
    (("dd",), _dd),
    (("sed", "gsed"), _sed),
    (
        ("set-content", "clear-content", "clc", "out-file", "clear-item", "cli", "new-item", "ni"),
        _content,
    ),
    (_UNIX_PERMISSIONS | _WINDOWS_PERMISSIONS, _permissions),
    (("git",), _git),
    (("echo", "printf", "write-output"), _echo),
    (("cat",), _cat),
    (_SYSTEM, _system),
    (("kill",), _kill),
    (_STOPS, _server),
    (("make", "gmake"), _make),
    (RESOURCE_TOOLS, _resources),
)
_BASH_RULES = dispatch_table((DELETE, _delete), (("mv",), _move), *_SHARED_RULES)
_PWSH_RULES = dispatch_table((_PWSH_DELETE, _delete), (_PWSH_MOVE, _move), *_SHARED_RULES)
