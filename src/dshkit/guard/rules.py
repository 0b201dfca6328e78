"""Judging each command of a lexed line: wrappers unwrapped, nested lines read, the worst wins.

Only a command word is a command: the arguments of `echo`, a search pattern or a commit
message are data, unless a shell is handed them (`bash -c`, `eval`, `echo … | sh`, `xargs`).
Code handed to an interpreter (`python -c`, `node -e`, a here-document fed to `python3`) is
not understood: at least `unknown`, and destructive when a call in it plainly is (code.py).
"""

from __future__ import annotations

import os

from .code import DELETE, code_calls
from .lexer import LexError, Token, Word, lex
from .paths import NOWHERE, OUTSIDE, WORKSPACE, Places, device, remote
from .policy import DESTRUCTIVE, SAFE, UNKNOWN

_RANK = {SAFE: 0, UNKNOWN: 1, DESTRUCTIVE: 2}
MAX_DEPTH = 8  # nested shells (`bash -c "bash -c …"`) deeper than this are not read
MAX_COMMAND_CHARS = 100_000

_WRAPPERS = {"sudo", "doas", "nohup", "nice", "time", "command", "builtin", "exec", "env",
             "timeout", "stdbuf", "ionice", "unbuffer", "caffeinate", "busybox",
             "npx", "bunx"}  # fmt: skip
_WRAPPER_ARGS = {  # the options of a wrapper that take a value
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-U", "-r", "-t", "-D", "-T"},
    "env": {"-u", "-C", "-S"},
    "timeout": {"-s", "-k"},
    "nice": {"-n"},
    "ionice": {"-c", "-n", "-p"},
    "npx": {"-p", "--package"},
    "bunx": {"-p", "--package"},
}
_SU = {"su", "runuser"}  # `su -c LINE`: a shell run as another user
_SU_VALUED = {"-s", "--shell", "-g", "--group", "-G", "--supp-group", "-u", "--user", "-w"}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh", "fish", "ash"}
_PWSH = {"pwsh", "powershell"}
_PWSH_VALUED = ("-executionpolicy", "-windowstyle", "-outputformat", "-inputformat",
                "-workingdirectory", "-configurationname", "-version", "-settingsfile",
                "-psconsolefile", "-custompipename")  # fmt: skip
# Interpreters: the language of their code (code.py), the letters that end a short option
# followed by inline code (`-c`, `-Bc`; `-e`, `-ne`, `-lane`), the long ones, and the options
# that take a value (so it is not mistaken for a script).
_INTERPRETERS: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "python": ("python", "c", (), ("-W", "-X")),
    "node": ("node", "ep", ("--eval", "--print"), ("-r", "--require", "--import")),
    "perl": ("perl", "eE", (), ("-I",)),
    "ruby": ("ruby", "e", (), ("-I", "-r")),
    "php": ("php", "r", ("--run",), ("-c", "-d")),
}
_INTERPRETER_NAMES = {"python2": "python", "python3": "python", "pypy": "python",
                      "pypy3": "python", "nodejs": "node", "bun": "node"}  # fmt: skip
_DELETE = {"rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put", "rimraf"}
_ALWAYS_RECURSIVE_DELETE = {"rimraf"}
_MOVE = {"mv"}
_PWSH_MOVE = {"move-item", "mi", "move", "mv"}
_RSYNC_DELETES = ("--delete", "--del", "--delete-before", "--delete-during", "--delete-delay",
                  "--delete-after", "--delete-excluded", "--delete-missing-args")  # fmt: skip
_RSYNC_VALUED = {"-e", "-f", "-T", "-B", "-M", "--rsh", "--exclude", "--include", "--filter",
                 "--exclude-from", "--include-from", "--files-from", "--temp-dir", "--backup-dir",
                 "--partial-dir", "--compare-dest", "--copy-dest", "--link-dest", "--chmod",
                 "--chown", "--log-file", "--password-file", "--port", "--suffix", "--timeout",
                 "--max-size", "--min-size", "--bwlimit", "--out-format", "--usermap",
                 "--groupmap", "--rsync-path"}  # fmt: skip
# macOS `diskutil` verbs that wipe or repartition a disk
_DISKUTIL_WIPES = ("erase", "zerodisk", "randomdisk", "secureerase", "partitiondisk", "reformat")
_PWSH_DELETE = {"remove-item", "ri", "rm", "rmdir", "rd", "del", "erase"}
_DISK = {"mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "gdisk",
         "sgdisk", "blkdiscard", "format-volume", "clear-disk", "initialize-disk",
         "remove-partition", "diskpart", "format"}  # fmt: skip
_PERMISSIONS = {"chmod", "chown", "chgrp", "setfacl", "chattr", "icacls", "takeown", "set-acl",
                "cacls"}  # fmt: skip
_WINDOWS_PERMISSIONS = {"icacls", "takeown", "set-acl", "cacls"}
_SEARCH = {"grep", "egrep", "fgrep", "rg", "ag", "ack", "fd", "fdfind", "ls", "dir", "tree",
           "du", "get-childitem", "gci", "select-string", "sls", "findstr"}  # fmt: skip
_LISTINGS = {"ls", "dir", "get-childitem", "gci"}
_ALWAYS_RECURSIVE = {"rg", "ag", "ack", "fd", "fdfind", "tree", "du"}
_SHARED_BRANCHES = {"main", "master", "develop", "development", "trunk"}
_EVAL = {"eval", "iex", "invoke-expression"}
_SOURCE = {"source", ".", "invoke-command", "icm"}
_CD = {"cd", "pushd", "chdir", "set-location", "sl", "push-location"}
_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}",
             "case", "esac", "in", "function", "&"}  # fmt: skip


class Classification:
    """A command line's risk, whether it is a global search, and why (names the command)."""

    __slots__ = ("global_search", "reason", "risk")

    def __init__(self, risk: str, global_search: bool, reason: str) -> None:
        self.risk = risk
        self.global_search = global_search
        self.reason = reason

    def __repr__(self) -> str:
        return f"Classification({self.risk!r}, global_search={self.global_search}, {self.reason!r})"


def classify_command(
    command: str,
    shell: str = "bash",
    cwd: str | None = None,
    *,
    home: str | None = None,
    workdir: str | None = None,
) -> Classification:
    """Judge `command` (a bash or pwsh line) run in `workdir` (default: `cwd`) for the
    workspace `cwd` (default: the current directory). `home` defaults to the user's."""
    if shell not in ("bash", "pwsh"):
        raise ValueError(f"unknown shell {shell!r} (known: bash, pwsh)")
    if len(command) > MAX_COMMAND_CHARS:
        return Classification(UNKNOWN, False, f"over {MAX_COMMAND_CHARS} characters: not read")
    workspace = cwd if cwd is not None else os.getcwd()
    judge = _Judge(workspace, home, shell)
    judge.line(command, shell, judge.places.resolve(workdir) if workdir else judge.workspace, 0)
    risk, reason = max(judge.findings, key=lambda f: _RANK[f[0]], default=(SAFE, ""))
    if risk == SAFE:
        reason = judge.searches[0] if judge.searches else "no destructive or opaque command"
    elif judge.searches:
        reason = f"{reason}; {judge.searches[0]}"
    return Classification(risk, bool(judge.searches), reason)


class _Judge:
    def __init__(self, workspace: str, home: str | None, shell: str) -> None:
        self.places = Places(workspace, home)
        self.workspace = self.places.workspace
        self.home = self.places.home
        self.findings: list[tuple[str, str]] = []
        self.searches: list[str] = []
        self.variables: dict[str, str] = {}

    # -- lines and commands -------------------------------------------------------------

    def flag(self, risk: str, reason: str) -> None:
        self.findings.append((risk, reason))

    def line(self, text: str, shell: str, cwd: str | None, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.flag(UNKNOWN, f"shells nested over {MAX_DEPTH} deep: not read")
            return
        variables = self.places.expansions(shell, cwd, self.variables)
        try:
            lexed = lex(text, shell, variables, self.home)
            if shell == "bash" and self._assigned(lexed.tokens):  # `X=/; rm -rf $X`
                lexed = lex(
                    text, shell, self.places.expansions(shell, cwd, self.variables), self.home
                )
        except LexError as exc:
            self.flag(UNKNOWN, f"cannot be read: {exc}")
            return
        for nested in lexed.nested:
            self.line(nested, shell, cwd, depth + 1)
        stack: list[str | None] = []
        stages: list[list[Token]] = [[]]
        for token in [*lexed.tokens, "\n"]:
            if token == "|" or token == "|&":
                stages.append([])
            elif isinstance(token, str) and token in ("&&", "||", ";", ";;", "&", "\n", "(", ")"):
                if any(stages):
                    cwd = self.pipeline(stages, shell, cwd, depth)
                stages = [[]]
                if token == "(":
                    stack.append(cwd)
                elif token == ")" and stack:
                    cwd = stack.pop()
            else:
                stages[-1].append(token)

    def _assigned(self, tokens: list[Token]) -> bool:
        """Records the literal assignments that start a command; whether there were any new."""
        new = False
        start = True
        for token in tokens:
            if isinstance(token, str):
                start = token in ("&&", "||", ";", "\n", "(", ")", "|", "&")
                continue
            if start and self._assignment(token, pwsh=False):
                name, _, value = token.text.partition("=")
                if not token.dynamic and self.variables.get(name) != value:
                    self.variables[name] = value
                    new = True
                continue
            start = False
        return new

    def pipeline(
        self, stages: list[list[Token]], shell: str, cwd: str | None, depth: int
    ) -> str | None:
        """Judges each stage with what the one before feeds it; the directory after it."""
        fed: list[Word] | None = None  # None: nothing piped in; a dynamic word: unknown
        for tokens in stages:
            words: list[Word] = []
            redirect = ""
            for token in tokens:
                if isinstance(token, str):
                    redirect = token
                    continue
                if redirect:
                    if redirect in (">", ">>", ">|", "&>", "&>>") and device(token.text):
                        self.flag(DESTRUCTIVE, f"writes over the disk device {token.text}")
                    elif redirect in ("<<", "<<<"):  # a here-document or here-string feeds it
                        fed = [token]
                    redirect = ""
                    continue
                words.append(token)
            cwd, fed = self.command(words, shell, cwd, depth, fed)
        return cwd

    def command(
        self, words: list[Word], shell: str, cwd: str | None, depth: int, fed: list[Word] | None
    ) -> tuple[str | None, list[Word] | None]:
        """Judges one simple command; returns the directory after it and what it pipes on."""
        pwsh = shell == "pwsh"
        while words and (
            self._assignment(words[0], pwsh) or (words[0].text in _KEYWORDS and not words[0].quoted)
        ):
            words = words[1:]  # assignments were recorded by `_assigned`
        if not words:
            return cwd, None
        head = words[0]
        if head.dynamic:
            self.flag(
                UNKNOWN,
                f"the command name {head.text.replace(chr(0), '…')!r} is only known when it runs",
            )
            return cwd, _opaque()
        name = self._name(head.text, pwsh)
        args = words[1:]
        if name == "for":
            return cwd, None
        if name in _CD:
            return self._cd(args, cwd), None
        if name in ("popd", "pop-location"):
            return None, None
        if name in _WRAPPERS:
            return self.command(self._unwrap(name, args), shell, cwd, depth, fed)
        if name == "xargs":
            inner = self._xargs(args)
            items = fed if fed is not None else _opaque()
            return cwd, self.command(inner + items, shell, cwd, depth, None)[1] if inner else None
        if name in _SHELLS or name in _PWSH or name == "cmd":
            self._shell(name, args, shell, cwd, depth, fed)
            return cwd, _opaque()
        if name in _SU:
            self._su(name, args, cwd, depth)
            return cwd, _opaque()
        interpreter = _interpreter(name)
        if interpreter is not None:
            code = self._inline_code(interpreter, args)
            if code is None and fed is not None and (not args or args[0].text == "-"):
                if any(w.dynamic for w in fed):
                    self.flag(UNKNOWN, f"{name} runs what the pipe sends it")
                    return cwd, _opaque()
                code = [w.text for w in fed]  # a here-document or an echo: the code itself
            if code is not None:
                self._code(name, interpreter, code, cwd, depth)
            return cwd, _opaque()  # a script file or a module: the project's own
        if name in _EVAL:
            self.flag(UNKNOWN, f"{name} runs text built at run time")
            literal = [w for w in args if not w.dynamic]
            if literal:
                self.line(" ".join(w.text for w in literal), shell, cwd, depth + 1)
            return cwd, _opaque()
        if name in _SOURCE and any(w.dynamic for w in args):
            self.flag(UNKNOWN, f"{name} runs a script only known when it runs")
            return cwd, _opaque()
        if (pwsh and name in _PWSH_DELETE) or (not pwsh and name in _DELETE):
            self._delete(name, args, cwd, pwsh, fed)
        elif (pwsh and name in _PWSH_MOVE) or (not pwsh and name in _MOVE):
            self._move(name, args, cwd, pwsh)
        elif name == "rsync":
            self._rsync(args, cwd)
        elif name == "find":
            return cwd, self._entries(self._find(args, cwd))
        elif name in _SEARCH:
            roots = self._search(name, args, cwd, pwsh)
            if name in _LISTINGS:  # what it pipes on: entries below the roots
                return cwd, self._entries(roots or [Word(".", False, False, False)])
        elif name in _DISK or name.startswith("mkfs"):
            self.flag(DESTRUCTIVE, f"{name} wipes or repartitions a disk")
        elif name == "diskutil" and args and args[0].text.lower().startswith(_DISKUTIL_WIPES):
            self.flag(DESTRUCTIVE, f"diskutil {args[0].text} wipes or repartitions a disk")
        elif name == "dd":
            for arg in args:
                if arg.text.startswith("of=") and device(arg.text[3:]):
                    self.flag(DESTRUCTIVE, f"dd writes over the disk device {arg.text[3:]}")
        elif name in _PERMISSIONS:
            self._permissions(name, args, cwd)
        elif name == "git":
            self._git(args, cwd)
        elif name in ("echo", "printf", "write-output"):
            return cwd, [w for w in args if not w.text.startswith("-")] or None
        return cwd, _opaque()

    @staticmethod
    def _assignment(word: Word, pwsh: bool) -> bool:
        name, equal, _ = word.text.partition("=")
        return bool(equal) and not pwsh and name.isidentifier()

    @staticmethod
    def _name(text: str, pwsh: bool) -> str:
        name = text.replace("\\", "/").rsplit("/", 1)[-1]
        if pwsh or name.lower().endswith(".exe"):
            name = name.lower().removesuffix(".exe")
        return name

    def _cd(self, args: list[Word], cwd: str | None) -> str | None:
        targets = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        if not targets:
            return self.home
        target = targets[0]
        if target.dynamic or target.text == "-" or cwd is None:
            return None
        return self.places.resolve(target.text, cwd)

    @staticmethod
    def _unwrap(name: str, args: list[Word]) -> list[Word]:
        """The command a wrapper runs (its own options and values skipped)."""
        takes = _WRAPPER_ARGS.get(name, set())
        rest = list(args)
        while rest:
            text = rest[0].text
            if text == "--":
                return rest[1:]
            if name == "env" and "=" in text and not text.startswith("-"):
                rest = rest[1:]
            elif text.startswith("-") and len(text) > 1:
                rest = rest[2:] if text in takes else rest[1:]
            elif name == "timeout" or (name == "nice" and text.lstrip("-").isdigit()):
                name = ""  # the duration: the command follows
                rest = rest[1:]
            else:
                break
        return rest

    @staticmethod
    def _xargs(args: list[Word]) -> list[Word]:
        takes = {"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "-i"}
        rest = list(args)
        while rest and rest[0].text.startswith("-"):
            rest = rest[2:] if rest[0].text in takes else rest[1:]
        return rest

    def _shell(
        self,
        name: str,
        args: list[Word],
        shell: str,
        cwd: str | None,
        depth: int,
        fed: list[Word] | None,
    ) -> None:
        """A shell started by the line: what it is told to run is judged as a line."""
        inner_shell = "pwsh" if name in _PWSH or name == "cmd" else "bash"
        skip = False
        for index, arg in enumerate(args):
            text = arg.text.lower()
            if skip:  # the value of the option before
                skip = False
                continue
            if name in _PWSH:
                skip = len(text) > 2 and any(o.startswith(text) for o in _PWSH_VALUED)
            else:
                skip = text in ("-o", "+o", "-O", "+O")
            if skip:
                continue
            command = (
                (name == "cmd" and text in ("/c", "/k", "/r"))
                or (
                    name in _PWSH
                    and text.startswith("-")
                    and "-command".startswith(text)
                    and len(text) > 1
                )
                or (
                    name not in _PWSH
                    and name != "cmd"
                    and text.startswith("-")
                    and not text.startswith("--")
                    and "c" in text
                )
            )
            if name in _PWSH and text.startswith("-e") and "-encodedcommand".startswith(text):
                self.flag(UNKNOWN, f"{name} runs an encoded command")
                return
            if command:
                rest = args[index + 1 :]
                if name not in _PWSH and name != "cmd":
                    rest = rest[:1]
                if not rest or any(w.dynamic for w in rest):
                    self.flag(UNKNOWN, f"{name} runs a command only known when it runs")
                    return
                self.line(" ".join(w.text for w in rest), inner_shell, cwd, depth + 1)
                return
            if not text.startswith("-") and not (name == "cmd" and text.startswith("/")):
                if arg.dynamic:
                    self.flag(UNKNOWN, f"{name} runs a script only known when it runs")
                return  # a script file: the project's own
        if fed is not None:
            if any(w.dynamic for w in fed):
                self.flag(
                    UNKNOWN, f"{name} runs what the pipe sends it (a download or a decoded payload)"
                )
            else:
                self.line(" ".join(w.text for w in fed), inner_shell, cwd, depth + 1)

    def _delete(
        self, name: str, args: list[Word], cwd: str | None, pwsh: bool, fed: list[Word] | None
    ) -> None:
        recursive = name in _ALWAYS_RECURSIVE_DELETE
        targets: list[Word] = []
        options = True
        takes_value = ("-filter", "-include", "-exclude", "-credential", "-stream")
        skip = False
        for arg in args:
            text = arg.text
            if skip:
                skip = False
                continue
            if options and text == "--":
                options = False
            elif options and text.startswith("--") and not arg.quoted:
                recursive |= _long(text, ("--recursive",)) == "--recursive"
            elif options and text.startswith("-") and len(text) > 1 and not arg.quoted:
                lowered = text.lower().split(":", 1)[0]
                if not pwsh:
                    recursive |= "r" in lowered  # -r, -R, -rf, -fR…
                elif "-recurse".startswith(lowered) or lowered in ("-rf", "-fr"):
                    recursive = True
                elif len(lowered) > 2 and any(p.startswith(lowered) for p in takes_value):
                    skip = True
            elif (
                options
                and text.startswith("/")
                and len(text) == 2
                and (pwsh or name in ("rd", "rmdir", "del", "erase"))
            ):
                recursive |= text.lower() == "/s"
            else:
                targets.append(arg)
        if fed is not None and not targets:
            targets = fed
        self._deleted(name, targets, recursive, cwd)

    def _deleted(self, name: str, targets: list[Word], recursive: bool, cwd: str | None) -> None:
        """Flags the deletes of `targets` that leave the workspace (or take all of it)."""
        kind = "recursive delete" if recursive else "delete"
        for target in targets:
            place = self.places.where(target, cwd)
            shown = target.text.replace("\0", "…")
            if place == OUTSIDE:
                self.flag(DESTRUCTIVE, f"{name}: {kind} of {shown} outside the workspace")
            elif place == WORKSPACE and recursive:
                self.flag(DESTRUCTIVE, f"{name}: {kind} of the whole workspace")
            elif place == NOWHERE:
                self.flag(UNKNOWN, f"{name}: {kind} of {shown}, only known when it runs")

    def _entries(self, roots: list[Word]) -> list[Word]:
        """What a listing of `roots` pipes on: entries below them."""
        return [Word(w.text.rstrip("/\\") + "/\0", False, True, False) for w in roots]

    def _find(self, args: list[Word], cwd: str | None) -> list[Word]:
        """Notes a global search and deletes below the roots; the roots."""
        roots: list[Word] = []
        rest = list(args)
        while rest and rest[0].text in ("-H", "-L", "-P"):
            rest = rest[1:]
        while rest and not (rest[0].text.startswith("-") or rest[0].text in ("(", "!", "\\(")):
            roots.append(rest.pop(0))
        roots = roots or [Word(".", False, False, False)]
        for root in roots:
            if self.places.is_global(root, cwd):
                self.searches.append(f"find: a recursive search rooted at {root.text}")
        texts = [w.text for w in rest]
        deletes = "-delete" in texts
        for index, text in enumerate(texts):
            if text in ("-exec", "-execdir", "-ok", "-okdir") and index + 1 < len(texts):
                deletes |= self._name(texts[index + 1], False) in _DELETE
        if deletes:
            for root in roots:
                entries = Word(root.text.rstrip("/") + "/\0", False, True, False)
                if self.places.where(entries, cwd) == OUTSIDE:
                    self.flag(DESTRUCTIVE, f"find deletes below {root.text}, outside the workspace")
        return roots

    def _search(self, name: str, args: list[Word], cwd: str | None, pwsh: bool) -> list[Word]:
        """Notes a recursive search rooted at a global place; the places it looks at."""
        recursive = name in _ALWAYS_RECURSIVE
        positional: list[Word] = []
        pattern_given = name in ("ls", "dir", "tree", "du", "get-childitem", "gci")
        takes = {"-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "-g", "-t", "-T", "-j", "-M",
                 "--max-depth", "--glob", "--type", "-E", "-x", "--exclude"}  # fmt: skip
        skip = False
        for arg in args:
            text = arg.text
            if skip:
                skip = False
                if text == "recurse":
                    recursive = True
                continue
            lowered = text.lower().split(":", 1)[0]
            if pwsh and text.startswith("-") and len(text) > 1:
                depth_option = "-depth".startswith(lowered) and len(lowered) > 2
                if "-recurse".startswith(lowered) or depth_option:
                    recursive = True
                    skip = depth_option
                elif lowered in ("-path", "-literalpath", "-lp", "-pa"):
                    continue
                elif lowered.startswith(("-fi", "-in", "-ex", "-pat", "-at")):
                    skip = True
                continue
            if text.startswith("/") and len(text) == 2 and name in ("dir", "findstr") and pwsh:
                recursive |= text.lower() == "/s"
                continue
            if text.startswith("--"):
                recursive |= _long(text, ("--recursive", "--dereference-recursive")) is not None
                recursive |= text in ("--directories=recurse", "--files")
                pattern_given |= text.startswith("--regexp") or text == "--files"
                continue
            if text.startswith("-") and len(text) > 1 and not arg.quoted:
                if name in ("ls", "dir"):
                    recursive |= "R" in text
                elif name in ("grep", "egrep", "fgrep"):
                    recursive |= "r" in text or "R" in text
                if text in ("-e", "-f"):
                    pattern_given = True
                skip = text in takes
                continue
            positional.append(arg)
        if not pattern_given and positional and name not in ("ls", "dir", "tree", "du"):
            positional = positional[1:]  # the pattern: data, never a place
        for root in positional if recursive else ():
            if self.places.is_global(root, cwd):
                self.searches.append(f"{name}: a recursive search rooted at {root.text}")
        return positional

    def _permissions(self, name: str, args: list[Word], cwd: str | None) -> None:
        texts = [w.text.lower() for w in args]
        if name in _WINDOWS_PERMISSIONS:  # switches start with `/`, the paths do not
            # Set-Acl replaces a path's whole list: as sweeping as a recursive change.
            recursive = name == "set-acl" or "/t" in texts or "/r" in texts
            places = [w for w in args if not w.text.startswith(("/", "-"))]
        else:
            recursive = any(
                t == "--recursive" or (t.startswith("-") and not t.startswith("--") and "r" in t)
                for t in texts
            )
            places = [w for w in args if not w.text.startswith("-")][1:]  # after the mode
        if not recursive:
            return
        for target in places:
            if self.places.where(target, cwd) == OUTSIDE:
                self.flag(
                    DESTRUCTIVE,
                    f"{name}: a recursive permission change of {target.text} outside the workspace",
                )

    def _git(self, args: list[Word], cwd: str | None) -> None:
        words = list(args)
        repository = Word(".", False, False, False)  # where git runs: `-C DIR`, or here
        while words and words[0].text.startswith("-"):
            if words[0].text == "-C" and len(words) > 1:
                repository = words[1]
            words = words[2:] if words[0].text in ("-C", "-c") else words[1:]
        rest = [w.text for w in words]
        if rest and rest[0] == "clean":
            self._git_clean(rest[1:], repository, cwd)
        if not rest or rest[0] != "push":
            return
        force = every = False
        positional: list[str] = []
        skip = False
        for text in rest[1:]:
            if skip:
                skip = False
            elif text.startswith("--"):
                found = _long(
                    text.split("=", 1)[0],
                    ("--force", "--force-with-lease", "--mirror", "--all", "--delete"),
                )
                force |= found in ("--force", "--force-with-lease", "--mirror")
                if found == "--delete":
                    force = True
                every |= found in ("--all", "--mirror")
                skip = text in ("--repo", "--push-option", "--receive-pack", "--exec")
            elif text.startswith("-") and len(text) > 1:
                force |= "f" in text or "d" in text
                skip = text in ("-o",)
            else:
                positional.append(text)
        branches = []
        for spec in positional[1:]:
            force |= spec.startswith("+") or spec.startswith(":")
            branches.append(spec.lstrip("+").rsplit(":", 1)[-1].removeprefix("refs/heads/"))
        if not force:
            return
        shared = ["every branch"] if every else [b for b in branches if _shared(b)]
        if not branches and not every:
            self.flag(
                DESTRUCTIVE, "git push --force without a branch named (it may be a shared one)"
            )
        elif shared:
            self.flag(DESTRUCTIVE, f"git push --force to the shared branch {shared[0]}")

    def _git_clean(self, options: list[str], repository: Word, cwd: str | None) -> None:
        """`git clean -f` deletes the untracked files of the repository it runs in: inside the
        workspace that is work; anywhere else it is a delete outside it."""
        force = any(
            o == "--force" or (o.startswith("-") and not o.startswith("--") and "f" in o)
            for o in options
        )
        if not force:  # git refuses to clean without -f (clean.requireForce)
            return
        place = self.places.where(repository, cwd)
        if place == OUTSIDE:
            where = self.places.resolve(repository.text, cwd)
            self.flag(
                DESTRUCTIVE, f"git clean deletes untracked files in {where}, outside the workspace"
            )
        elif place == NOWHERE:
            self.flag(UNKNOWN, "git clean in a directory only known when it runs")

    # -- inline code, su, moves and syncs -----------------------------------------------

    def _inline_code(
        self, interpreter: tuple[str, str, tuple[str, ...], tuple[str, ...]], args: list[Word]
    ) -> list[str] | None:
        """The code an interpreter is given on its command line (`-c CODE`, `-e CODE`…), or
        None when it runs a script file or a module (the project's own, like `bash x.sh`)."""
        _, letters, longs, valued = interpreter
        code: list[str] = []
        take = skip = False
        for arg in args:
            text = arg.text
            if take or skip:
                if take:
                    code.append(text)
                take = skip = False
                continue
            option, equal, value = text.partition("=")
            if option in longs:
                if equal:
                    code.append(value)
                else:
                    take = True
            elif text in valued:
                skip = True
            elif (
                text.startswith("-")
                and not text.startswith("--")
                and text[1:].isalpha()
                and text[-1] in letters
            ):
                take = True
            elif not text.startswith("-") or text == "-":
                break  # a script, a module's name, or the code's own arguments
        return code or None

    def _code(
        self,
        name: str,
        interpreter: tuple[str, str, tuple[str, ...], tuple[str, ...]],
        code: list[str],
        cwd: str | None,
        depth: int,
    ) -> None:
        """Inline code is at least unknown; the calls in it that plainly delete a path or run a
        shell line (code.py) are judged like the commands they amount to."""
        self.flag(UNKNOWN, f"{name} runs inline code")
        shell = "pwsh" if self.places.nt else "bash"  # what os.system & co. hand a line to
        for call in code_calls("\n".join(code), interpreter[0]):
            if call.kind == DELETE:
                self._deleted(f"{name} {call.name}", [_literal(call.args[0])], call.recursive, cwd)
            elif len(call.args) == 1:  # a shell line
                self.line(call.args[0], shell, cwd, depth + 1)
            else:  # an argument list: the command and its arguments, no shell between
                self.command([_literal(a) for a in call.args], shell, cwd, depth + 1, None)

    def _su(self, name: str, args: list[Word], cwd: str | None, depth: int) -> None:
        """`su [USER] -c LINE` runs LINE in a shell; `runuser -u USER -- COMMAND…` runs it."""
        skip = False
        for index, arg in enumerate(args):
            text = arg.text
            if skip:
                skip = False
            elif text in ("-c", "--command") or text.startswith("--command="):
                line = args[index + 1 : index + 2] if "=" not in text else [arg]
                if not line or line[0].dynamic:
                    self.flag(UNKNOWN, f"{name} runs a command only known when it runs")
                else:
                    self.line(line[0].text.removeprefix("--command="), "bash", cwd, depth + 1)
                return
            elif text == "--":
                self.command(args[index + 1 :], "bash", cwd, depth + 1, None)
                return
            else:
                skip = text in _SU_VALUED

    def _move(self, name: str, args: list[Word], cwd: str | None, pwsh: bool) -> None:
        """A move deletes its sources where they are and writes over what its destination
        names. So: a source outside the workspace is a delete outside it (destructive), and
        so is the workspace itself moved away. A destination outside the workspace is also
        destructive, not merely unknown: the files leave the project (beyond its history and
        the harness's checkpoints, unlike a delete inside it, which stays recoverable there),
        and mv / Move-Item silently replace whatever the destination already names."""
        sources, destination = self._move_operands(args, pwsh)
        if destination is None:
            return
        for source in sources:
            place = self.places.where(source, cwd)
            shown = source.text.replace("\0", "…")
            if place == OUTSIDE:
                self.flag(DESTRUCTIVE, f"{name}: moves {shown} away, outside the workspace")
            elif place == WORKSPACE:
                self.flag(DESTRUCTIVE, f"{name}: moves the whole workspace away")
            elif place == NOWHERE:
                self.flag(UNKNOWN, f"{name}: moves {shown}, only known when it runs")
        place = self.places.where(destination, cwd)
        shown = destination.text.replace("\0", "…")
        if place == OUTSIDE:
            self.flag(
                DESTRUCTIVE,
                f"{name}: moves files out of the workspace to {shown}, over what is there",
            )
        elif place == NOWHERE:
            self.flag(UNKNOWN, f"{name}: moves files to {shown}, only known when it runs")

    @staticmethod
    def _move_operands(args: list[Word], pwsh: bool) -> tuple[list[Word], Word | None]:
        """A move's sources and destination (None: too few operands to move anything)."""
        positional: list[Word] = []
        destination: Word | None = None
        skip = take = ""
        options = True
        for arg in args:
            text = arg.text
            if take:
                if take == "destination":
                    destination = arg
                else:
                    positional.append(arg)
                take = ""
                continue
            if skip:
                skip = ""
                continue
            lowered = text.lower().split(":", 1)[0]
            if options and text == "--":
                options = False
            elif options and pwsh and text.startswith("-") and len(text) > 1:
                if len(lowered) > 1 and "-destination".startswith(lowered):
                    take = "destination"
                elif lowered in ("-path", "-literalpath", "-lp", "-pspath"):
                    take = "source"
                elif any(o.startswith(lowered) for o in ("-filter", "-include", "-exclude")):
                    skip = "value"
            elif options and not pwsh and text.startswith("--target-directory"):
                _, equal, value = text.partition("=")
                if equal:
                    destination = Word(value, arg.quoted, arg.dynamic, arg.glob)
                else:
                    take = "destination"
            elif options and not pwsh and text in ("-t", "-S", "--suffix"):
                take, skip = ("destination", "") if text == "-t" else ("", "value")
            elif options and not pwsh and text.startswith("-") and len(text) > 1:
                continue
            else:
                positional.append(arg)
        if destination is None and len(positional) >= 2:
            destination = positional.pop()
        return (positional, destination) if positional else ([], None)

    def _rsync(self, args: list[Word], cwd: str | None) -> None:
        """rsync copies, which is safe anywhere; it deletes with `--delete` (what the
        destination has and the source lacks) and `--remove-source-files` (the sources), and
        those deletes are judged like rm's: outside the workspace, or all of it, destructive.
        A remote place (`host:path`, `rsync://`) is outside the workspace."""
        deletes = removes = False
        operands: list[Word] = []
        skip = False
        for arg in args:
            text = arg.text
            if skip:
                skip = False
            elif text.startswith("--"):
                option = text.split("=", 1)[0]
                deletes |= option in _RSYNC_DELETES
                removes |= option == "--remove-source-files"
                skip = "=" not in text and option in _RSYNC_VALUED
            elif text.startswith("-") and len(text) > 1:
                skip = text in _RSYNC_VALUED
            else:
                operands.append(arg)
        if len(operands) < 2:
            return
        *sources, destination = operands
        if deletes:
            self._synced("rsync --delete: deletes below", [destination], cwd)
        if removes:
            self._synced("rsync --remove-source-files: deletes", sources, cwd)

    def _synced(self, what: str, places: list[Word], cwd: str | None) -> None:
        for place in places:
            shown = place.text.replace("\0", "…")
            where = OUTSIDE if remote(place.text) else self.places.where(place, cwd)
            if where == OUTSIDE:
                self.flag(DESTRUCTIVE, f"{what} {shown}, outside the workspace")
            elif where == WORKSPACE:
                self.flag(DESTRUCTIVE, f"{what} {shown}: the whole workspace")
            elif where == NOWHERE:
                self.flag(UNKNOWN, f"{what} {shown}, only known when it runs")


def _interpreter(name: str) -> tuple[str, str, tuple[str, ...], tuple[str, ...]] | None:
    """The interpreter a command name runs (`python3.12` is python), or None."""
    if name.startswith("python") and name[6:].replace(".", "").isdigit():
        name = "python"
    return _INTERPRETERS.get(_INTERPRETER_NAMES.get(name, name))


def _literal(text: str) -> Word:
    """A word taken from code's string literal (a NUL, `\\0`, marks a part known when it runs)."""
    return Word(text, False, "\0" in text, False)


def _shared(branch: str) -> bool:
    return branch in _SHARED_BRANCHES or branch.startswith("release") or branch == "HEAD"


def _long(option: str, names: tuple[str, ...]) -> str | None:
    """The long option `option` stands for: itself or an unambiguous prefix of one."""
    option = option.split("=", 1)[0]
    if option in names:
        return option
    found = [name for name in names if name.startswith(option) and len(option) > 2]
    return found[0] if len(found) == 1 else None


def _opaque() -> list[Word]:
    return [Word("\0", False, True, False)]
