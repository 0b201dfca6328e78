"""The walker: every command of a line in order, seen through whatever only runs another one.

A line is lexed (lexer.py), split into pipelines and their stages, and each simple command is
judged with where it runs (`cd`, subshells) and what the stage before pipes into it. What
merely runs another command is seen through: wrappers (sudo, env, timeout, nice…), `xargs`
with what the pipe feeds it, shells handed a line (`bash -c`, `pwsh -Command`, `cmd /c`, `su
-c`, a pipe into `sh`), eval, and inline code handed to an interpreter (`python -c`, code.py).
Every other command goes to its rule (commands.py).
"""

from __future__ import annotations

from .commands import (
    OPAQUE,
    Command,
    Findings,
    FromFile,
    command_name,
    deleted,
    dispatch_table,
    from_file,
    overwritten,
    rule_for,
    said_delete,
)
from .lexer import LexError, Token, Word, lex
from .options import SLASH_ANY, Syntax, parse
from .paths import OUTSIDE, Places, device
from .policy import DESTRUCTIVE, UNKNOWN, Kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .commands import Fed
    from .rules import Pattern, Rules

    # (judge, command) -> the directory after it, what it pipes on
    Step = Callable[["Judge", Command], tuple[str | None, Fed]]

MAX_DEPTH = 8  # nested shells (`bash -c "bash -c …"`) deeper than this are not read

_WRAPPERS = {"sudo", "doas", "nohup", "nice", "time", "command", "builtin", "exec", "env",
             "timeout", "stdbuf", "ionice", "unbuffer", "caffeinate", "busybox",
             "npx", "bunx", "pnpx", "flock", "chroot", "setsid", "nsenter", "unshare", "strace",
             "ltrace", "systemd-run", "pkexec", "firejail", "taskset", "chrt", "numactl",
             "xvfb-run", "proxychains", "proxychains4", "torsocks", "dbus-run-session",
             "valgrind", "cgexec", "sg", "script", "gtimeout", "catchsegv", "faketime",
             "prlimit", "systemd-inhibit", "schroot", "fakeroot", "with-lock-ex",
             "sem", "wsl"}  # fmt: skip
_WRAPPER_VALUED = {  # the options of a wrapper that take a value
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-U", "-r", "-t", "-D", "-T"},
    "script": {
        "-c",
        "--command",
        "-E",
        "--echo",
        "-O",
        "--log-out",
        "-I",
        "--log-in",
        "-T",
        "--log-timing",
        "-m",
        "--logging-format",
    },
    "env": {"-u", "-C", "-S", "--split-string"},
    "doas": {"-u", "-C"},
    "timeout": {"-s", "-k"},
    "nice": {"-n"},
    "ionice": {"-c", "-n", "-p"},
    "npx": {"-p", "--package"},
    "bunx": {"-p", "--package"},
    "pnpx": {"-p", "--package"},
    "stdbuf": {"-i", "-o", "-e"},
    "time": {"-f", "-o"},
    "exec": {"-a"},
    "flock": {"-w", "--wait", "--timeout", "-E", "--conflict-exit-code", "-c", "--command"},
    "nsenter": {"-t", "--target", "-S", "--setuid", "-G", "--setgid", "-r", "-w"},
    "strace": {"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X"},
    "ltrace": {"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-n", "-l", "-x"},
    "systemd-run": {
        "-u",
        "--unit",
        "-p",
        "--property",
        "-E",
        "--setenv",
        "-M",
        "--machine",
        "-H",
        "--host",
        "--description",
        "--slice",
        "--uid",
        "--gid",
        "-d",
        "--working-directory",
        "--on-active",
        "--on-calendar",
    },
    "pkexec": {"--user", "-u"},
    "taskset": {"-c", "--cpu-list"},
    "numactl": {
        "-C",
        "--physcpubind",
        "-N",
        "--cpunodebind",
        "-m",
        "--membind",
        "-i",
        "--interleave",
        "-p",
        "--preferred",
    },
    "xvfb-run": {
        "-n",
        "--server-num",
        "-s",
        "--server-args",
        "-e",
        "--error-file",
        "-f",
        "--auth-file",
        "-p",
        "--xauth-protocol",
    },
    "proxychains": {"-f"},
    "proxychains4": {"-f"},
    "cgexec": {"-g"},
    "faketime": {"-f"},
    "prlimit": {"-p", "--pid"},
    "schroot": {"-c", "--chroot", "-u", "--user", "-d", "--directory"},
    "systemd-inhibit": {"--what", "--who", "--why", "--mode"},
    "sem": {"-j", "--jobs", "--id"},
    "sg": {"-c"},
    "wsl": {"-d", "--distribution", "-u", "--user", "--cd", "--shell-type"},
}
# The wrappers whose first operands come before the command they run (flock's lock file,
# chroot's new root, taskset's mask, chrt's priority, sg's group, faketime's time).
_WRAPPER_LEADING = {"flock": 1, "chroot": 1, "taskset": 1, "chrt": 1, "sg": 1, "faketime": 1,
                    "with-lock-ex": 1}  # fmt: skip
_WRAPPER_DESTROYS = {"wsl": ("--unregister", "--uninstall")}
# The options of a wrapper whose value is a shell line (`flock F -c LINE`, `script -c LINE`,
# `sudo -s LINE`, `env -S LINE` split into words).
_WRAPPER_LINES = {"flock": ("-c", "--command"), "script": ("-c", "--command"),
                  "sg": ("-c",), "env": ("-S", "--split-string")}  # fmt: skip
_SU = {"su", "runuser"}  # `su -c LINE`: a shell run as another user
_SU_VALUED = {"-s", "--shell", "-g", "--group", "-G", "--supp-group", "-u", "--user", "-w"}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh", "fish", "ash"}
_PWSH = {"pwsh", "powershell"}
_PWSH_VALUED = ("-executionpolicy", "-windowstyle", "-outputformat", "-inputformat",
                "-workingdirectory", "-configurationname", "-version", "-settingsfile",
                "-psconsolefile", "-custompipename")  # fmt: skip
_EVAL = {"eval", "iex", "invoke-expression"}
# .NET methods a PowerShell expression may call that delete, move over or stop something
# (`$_.Delete()`, `[IO.Directory]::Delete($p, $true)`): an expression, not a command.
_PWSH_METHODS = ("delete", "kill", "move", "moveto", "writealltext", "writeallbytes",
                 "writealllines", "deletesubkey", "deletesubkeytree", "deletevalue",
                 "format", "setenvironmentvariable")  # fmt: skip
_PWSH_METHOD_CALLS = tuple(f"{sep}{name}(" for name in _PWSH_METHODS for sep in (".", "::"))
_SOURCE = {"source", ".", "invoke-command", "icm"}
_STDIN = ("/dev/stdin", "-", "/dev/fd/0")  # a script read from what is fed
# Interpreters whose code is not read here: the words that hand them code on the command line.
_INLINE_CODE = {"lua": ("-e",), "luajit": ("-e",), "rscript": ("-e",), "Rscript": ("-e",),
                "r": ("-e",), "osascript": ("-e",), "tclsh": ("-c",), "wish": ("-c",),
                "expect": ("-c",), "julia": ("-e", "--eval"),
                "elixir": ("-e", "--eval"), "erl": ("-eval",), "groovy": ("-e",),
                "scala": ("-e",), "jshell": (), "swift": ("-e",), "pwsh-preview": (),
                "raku": ("-e",), "guile": ("-c",), "racket": ("-e",), "sbcl": ("--eval",),
                "clojure": ("-e", "--eval"), "kotlin": ("-e",), "dart": ("eval",)}  # fmt: skip
_APPENDED = Word(">>")  # marks the redirection before it as appending
_DECLARERS = {"export", "declare", "typeset", "local", "readonly"}
_CD = {"cd", "pushd", "chdir", "set-location", "sl", "push-location"}
_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}",
             "case", "esac", "in", "function", "&"}  # fmt: skip
_SEPARATORS = ("&&", "||", ";", ";;", "&", "\n", "(", ")")
_COMMAND_STARTS = ("&&", "||", ";", "\n", "(", ")", "|", "&")  # what may precede a command


def _pwsh_valued(option: str) -> bool:
    return len(option) > 2 and any(o.startswith(option) for o in _PWSH_VALUED)


_WRAPPER_OPTIONS = {name: Syntax(valued, stop=True) for name, valued in _WRAPPER_VALUED.items()}
_PLAIN_WRAPPER_OPTIONS = Syntax(stop=True)
_XARGS_OPTIONS = Syntax(  # `-i`, `-e`, `-l`, `--replace` take only an attached value
    {"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "--arg-file", "--delimiter", "--max-args",
     "--max-procs", "--max-lines", "--max-chars", "--process-slot-var"},
    stop=True,
    end=False,
    dash=True,
)  # fmt: skip
_BASH_OPTIONS = Syntax(  # `-o NAME`, also at the end of a cluster (`-euo pipefail`)
    lambda option: option[:1] in "-+" and option[1:2] != "-" and option.lower().endswith("o"),
    stop=True,
    end=False,
    dash=True,
    plus=True,
)
_PWSH_OPTIONS = Syntax(_pwsh_valued, fold=True, stop=True, end=False, dash=True)
_CMD_OPTIONS = Syntax(fold=True, slash=SLASH_ANY, stop=True, end=False, dash=True)
_SU_OPTIONS = Syntax({"-c", "--command", *_SU_VALUED})
_CD_OPTIONS = Syntax(end=False)


class Interpreter:
    """How an interpreter is handed inline code: its language (code.py), the letters that
    end a short option followed by code (`-c`, `-Bc`; `-e`, `-ne`, `-lane`), its long
    options for code, and the options that take a value (so it is not taken for a script)."""

    __slots__ = ("language", "letters", "longs", "syntax", "valued")

    def __init__(
        self, language: str, letters: str, longs: tuple[str, ...], valued: tuple[str, ...]
    ) -> None:
        self.language = language
        self.letters = letters
        self.longs = longs
        self.valued = valued
        self.syntax = Syntax(lambda o: o in valued or self.runs(o), stop=True, end=False)

    def runs(self, option: str) -> bool:
        """Whether `option` takes the code to run."""
        if option in self.longs:
            return True
        short = option.startswith("-") and not option.startswith("--") and option[1:].isalpha()
        return short and option not in self.valued and option[-1] in self.letters

    def code(self, args: list[Word]) -> list[str] | None:
        """The code given on the command line, or None when it runs a script file or a
        module (the project's own, like `bash x.sh`)."""
        parsed = parse(args, self.syntax)
        code = [f.value.text for f in parsed.flags if f.value is not None and self.runs(f.name)]
        return code or None


class _Verbed(Interpreter):
    """An interpreter handed code after a verb (`deno eval CODE`, `bun eval CODE`)."""

    __slots__ = ("verb",)

    def __init__(self, language: str, verb: str) -> None:
        super().__init__(language, "ep", ("--eval", "--print"), ())
        self.verb = verb

    def code(self, args: list[Word]) -> list[str] | None:
        if args and args[0].text == self.verb:
            operands = parse(args[1:], self.syntax).operands
            return [operands[0].text] if operands else None
        return super().code(args)


_INTERPRETERS = {
    "deno": _Verbed("node", "eval"),
    "python": Interpreter("python", "c", (), ("-W", "-X")),
    "node": Interpreter("node", "ep", ("--eval", "--print"), ("-r", "--require", "--import")),
    "perl": Interpreter("perl", "eE", (), ("-I",)),
    "ruby": Interpreter("ruby", "e", (), ("-I", "-r")),
    "php": Interpreter("php", "r", ("--run",), ("-c", "-d")),
}
_INTERPRETER_NAMES = {"python2": "python", "python3": "python", "pypy": "python",
                      "pypy3": "python", "nodejs": "node", "bun": "node"}  # fmt: skip


def interpreter_for(name: str) -> Interpreter | None:
    """The interpreter a command name runs (`python3.12` is python), or None."""
    if name.startswith("python") and name[6:].replace(".", "").isdigit():
        name = "python"
    return _INTERPRETERS.get(_INTERPRETER_NAMES.get(name, name))


class Judge:
    """Walks one command line, recording what it finds in `findings`, every simple command it
    met in `seen` and, with the person's `rules`, the commands they denied and allowed.
    `traced`: also which command (and which of its rules) made each finding, for `explain`."""

    __slots__ = ("allowed", "denied", "findings", "functions", "looped", "owners", "places",
                 "rules", "scripts", "secret_files", "secret_substitution", "seen",
                 "substituting", "variables")  # fmt: skip

    def __init__(self, places: Places, rules: Rules | None = None, traced: bool = False) -> None:
        self.places = places
        self.findings = Findings(places)
        self.variables: dict[str, str] = {}  # the line's own literal assignments (bash)
        self.rules = rules
        self.seen: list[Command] = []
        self.denied: list[tuple[Pattern, Command]] = []
        self.allowed: list[tuple[Pattern, Command]] = []
        # finding index -> (the command, the name of the rule or step that judged it)
        self.owners: dict[int, tuple[Command, str]] | None = {} if traced else None
        # secrets (leaks.py): files the line wrote one into, one a substitution printed, and
        # whether a substitution is being walked (what it prints is a word, not context)
        self.secret_files: dict[str, str] = {}
        self.secret_substitution: str | None = None
        self.substituting = False
        self.functions: dict[str, str] = {}  # the line's own shell functions: their bodies
        self.scripts: dict[str, str] = {}  # files the line wrote literal text into: a script?
        # a loop's variables (`while read f`, `for f in …`): what each is fed, by its marker
        self.looped: dict[str, list[Word]] = {}

    def flag(self, risk: str, reason: str, kind: str = "") -> None:
        self.findings.flag(risk, reason, kind)

    def hidden(self, reason: str) -> None:
        self.findings.hidden(reason)

    def line(self, text: str, shell: str, cwd: str | None, depth: int) -> None:
        """Judges a line; also as it looks where it holds spacing that is no separator
        (`rm\u00a0-rf\u00a0/` reads as `rm -rf /`), and with `$TMPDIR` unset (it is not
        `/tmp` then, but empty: `$TMPDIR/x` is `/x`)."""
        if depth > MAX_DEPTH:
            self.hidden(f"shells nested over {MAX_DEPTH} deep: not read")
            return
        if depth == 0 and shell == "bash" and _powershell_like(text):
            self._as_powershell(text, cwd)
            return
        self._line(text, shell, cwd, depth)
        if not text.isascii():
            plain = _plain_spacing(text)
            if plain != text:
                self._again(plain, shell, cwd, depth, "as it looks")
        if shell == "bash" and "TMPDIR" in text and "TMPDIR" not in self.variables:
            self.variables["TMPDIR"] = ""
            try:
                self._again(text, shell, cwd, depth, "if TMPDIR is unset")
            finally:
                self.variables.pop("TMPDIR", None)

    def _as_powershell(self, text: str, cwd: str | None) -> None:
        """A line a bash-named tool was handed that looks like PowerShell (Claude Code on
        Windows): judged as the PowerShell tool would judge it, and as bash for what bash
        would destroy or search (its unknowns are mostly bash meeting PowerShell's syntax)."""
        from .dialect import places_for

        places = self.places
        traced = self.owners is not None
        powershell = Judge(places_for("pwsh", places.workspace, places.home), self.rules, traced)
        powershell.line(text, "pwsh", cwd, 0)
        bash = Judge(places, self.rules, traced)
        bash._line(text, "bash", cwd, 0)
        self._merge(powershell, lambda risk: True, " (read as PowerShell)")
        self._merge(bash, lambda risk: risk == DESTRUCTIVE, "")

    def _merge(self, other: Judge, keep: Callable[[str], bool], said: str) -> None:
        """Takes in what another reading of the line found (the findings `keep` keeps), their
        reasons ending with `said`."""
        mine, theirs = self.findings, other.findings
        for index, (risk, reason, kind) in enumerate(theirs.found):
            if not keep(risk):
                continue
            if self.owners is not None and other.owners and index in other.owners:
                self.owners[len(mine.found)] = other.owners[index]
            if index in theirs.leaks:
                mine.leaks[len(mine.found)] = theirs.leaks[index]
            mine.found.append((risk, reason + said, kind))
            if kind == Kind.OPAQUE:
                mine.opaque.append(reason + said)
        mine.searches += [reason + said for reason in theirs.searches]
        mine.every |= theirs.every
        known = {id(c) for c in self.seen}
        self.seen += [c for c in other.seen if id(c) not in known]
        self.denied += other.denied
        self.allowed += other.allowed

    def _again(self, text: str, shell: str, cwd: str | None, depth: int, how: str) -> None:
        """Judges the line read another way, what it finds said so and asked about (unknown
        at most: it is what the line may do, not what it does as bash reads it); the
        commands not seen twice."""
        seen, first = len(self.seen), len(self.findings.found)
        self._line(text, shell, cwd, depth)
        del self.seen[seen:]
        found = self.findings.found
        for at in range(first, len(found)):
            risk, reason, kind = found[at]
            if risk == DESTRUCTIVE:
                risk, kind = UNKNOWN, UNKNOWN
                self.findings.leaks.pop(at, None)
            found[at] = (risk, f"{how}: {reason}", kind)

    def _line(self, text: str, shell: str, cwd: str | None, depth: int) -> None:
        expansions = self.places.expansions
        try:
            lexed = lex(text, shell, expansions(shell, cwd, self.variables), self.places.home)
            if shell == "bash" and self._assigned(lexed.tokens):  # `X=/; rm -rf $X`
                lexed = lex(text, shell, expansions(shell, cwd, self.variables), self.places.home)
            loops = _loop_names(lexed.tokens) if shell == "bash" and _may_loop(text) else []
            if loops:  # `while read f; do rm "$f"; done < list`: `$f` is what the loop is fed
                marked = {**self.variables, **{name: loop_marker(name) for name in loops}}
                lexed = lex(text, shell, expansions(shell, cwd, marked), self.places.home)
                lexed.tokens = _loop_fed(lexed.tokens)
        except LexError as exc:  # what it would run was not seen
            self.hidden(f"cannot be read: {exc}")
            return
        for nested in lexed.nested:
            substituting, self.substituting = self.substituting, True
            try:
                self.line(nested, shell, cwd, depth + 1)
            finally:
                self.substituting = substituting
            if "ps" in nested or "image" in nested:  # `docker rm $(docker ps -aq)`
                self.findings.every |= _lists_every(nested)
        if shell == "bash" and ("()" in text or "function" in text):
            self.functions.update(_functions(text))
        if shell == "bash" and "()" in text and _fork_bomb(text):
            self.flag(DESTRUCTIVE, "a function that starts itself twice: a fork bomb", Kind.MACHINE)
        if shell == "pwsh" and "(" in text:
            calls = text.lower().replace(" ", "")
            method = next((m for m in _PWSH_METHOD_CALLS if m in calls), None)
            if method is not None:
                self.flag(UNKNOWN, f"calls the .NET method {method.strip('.:(')}: deletes or stops")
        stack: list[str | None] = []
        stages: list[list[Token]] = [[]]
        for token in [*lexed.tokens, "\n"]:
            if token == "|" or token == "|&":
                stages.append([])
            elif isinstance(token, str) and token in _SEPARATORS:
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
        declaring = False  # after `export`, `declare -x`, `local`, `readonly`: assignments too
        for token in tokens:
            if isinstance(token, str):
                start = token in _COMMAND_STARTS
                declaring = False
                continue
            if start and not token.quoted and token.text in _DECLARERS:
                declaring = True
                start = False
                continue
            if declaring and token.text.startswith("-"):
                continue
            if (start or declaring) and _assignment(token, pwsh=False):
                name, _, value = token.text.partition("=")
                if not token.quoted and (value == "~" or value.startswith("~/")):
                    value = self.places.home + value[1:]  # `X=~`: bash expands it there
                if not token.dynamic and self.variables.get(name) != value:
                    self.variables[name] = value
                    new = True
                continue
            start = declaring = False
        return new

    def pipeline(
        self, stages: list[list[Token]], shell: str, cwd: str | None, depth: int
    ) -> str | None:
        """Judges each stage with what the one before feeds it; the directory after it. A
        stage naming a loop's variable is judged once for each value the loop is fed."""
        fed: Fed = None  # None: nothing piped in; a dynamic word: unknown
        for stage in stages:
            given = fed
            for tokens in self._looping(stage):
                cwd, fed = self._stage(tokens, shell, cwd, depth, given)
        return cwd

    def _stage(
        self, tokens: list[Token], shell: str, cwd: str | None, depth: int, fed: Fed
    ) -> tuple[str | None, Fed]:
        """One stage of a pipeline, its redirections read; the directory after it, and what
        it pipes on."""
        words: list[Word] = []
        redirect = ""
        outputs: list[Word] = []
        for token in tokens:
            if isinstance(token, str):
                redirect = token
                continue
            if redirect:
                if redirect in (">", ">>", ">|", "&>", "&>>"):
                    outputs.append(token)
                    if redirect in (">>", "&>>"):
                        outputs.append(_APPENDED)
                if redirect in (">", ">>", ">|", "&>", "&>>") and device(token.text):
                    self.flag(DESTRUCTIVE, f"writes over the disk device {token.text}", Kind.DISK)
                elif redirect in (">", ">|", "&>"):
                    overwritten(self.findings, "> writes over", [token], cwd)
                elif redirect in ("<<", "<<<"):  # a here-document or here-string feeds it
                    fed = [token]
                elif redirect == "<":  # a file feeds it
                    fed = [FromFile(token)]
                redirect = ""
                continue
            words.append(token)
        before = cwd
        cwd, fed = self.command(words, shell, cwd, depth, fed)
        if outputs:
            self._written(outputs, fed, before)
        return cwd, fed

    def _looping(self, tokens: list[Token]) -> list[list[Token]]:
        """The stage as judged: its words naming a loop's variable (`"$f"`, marked by the
        lexer) with each value the loop is fed (`read`'s input, `for`'s words), at most
        MAX_LOOPED of them; a variable fed nothing known is only known when it runs."""
        marked = [t for t in tokens if isinstance(t, Word) and _MARK in t.text]
        if not marked:
            return [tokens]
        names = {name for word in marked for name in _marks(word.text)}
        variants: list[dict[str, Word]] = [{}]
        for name in sorted(names):
            values = self.looped.get(name) or [_UNKNOWN]
            variants = [{**v, name: value} for v in variants for value in values]
            variants = variants[:MAX_LOOPED]
        return [[_unmarked(t, v) if t in marked else t for t in tokens] for v in variants]

    def _written(self, outputs: list[Word], fed: Fed, cwd: str | None) -> None:
        """What a command's output redirection writes: literal text, remembered as the file's
        content (`echo 'rm -rf ~' > x.sh && sh x.sh` runs it), a secret sent down a socket
        (`> /dev/tcp/host/port`), or a file remembered as holding the secret."""
        from .leaks import secret_fed

        if fed and not any(w.dynamic for w in fed):
            text = " ".join(w.text for w in fed)
            appended = False
            for target in outputs:
                if target is _APPENDED:
                    appended = True
                elif not target.dynamic:
                    path = self.places.resolve(target.text, cwd)
                    before = self.scripts.get(path, "") if appended else ""
                    self.scripts[path] = f"{before}\n{text}" if before else text
            return
        secret = secret_fed(fed)
        if secret is None:
            return
        for target in outputs:
            if target is _APPENDED:
                continue
            if target.text.startswith(("/dev/tcp/", "/dev/udp/")):
                host, _, port = target.text[9:].partition("/")
                self.findings.leaked(f"> {target.shown}", secret, f"{host}:{port}".rstrip(":"))
            elif not target.dynamic:
                self.secret_files[self.places.resolve(target.text, cwd)] = secret

    def command(
        self, words: list[Word], shell: str, cwd: str | None, depth: int, fed: Fed
    ) -> tuple[str | None, Fed]:
        """Judges one simple command; returns the directory after it and what it pipes on."""
        pwsh = shell == "pwsh"
        if words and words[0].text == "case" and not words[0].quoted and not pwsh:
            return cwd, None  # `case WORD in PATTERN)`: data (a substitution in it is nested)
        # PowerShell's call operator (`& $cmd`, `& 'C:\x.exe'`): what follows is a command
        called_by_operator = False
        closed = False  # `done`, `fi`, `}`: what a compound command printed is piped on
        while words and (
            _assignment(words[0], pwsh) or (words[0].text in _KEYWORDS and not words[0].quoted)
        ):
            called_by_operator |= pwsh and words[0].text == "&"
            closed |= words[0].text in ("done", "fi", "}") and not pwsh
            # assignments were recorded by `_assigned`; `function f { …`: the body follows
            words = words[2:] if words[0].text == "function" and not pwsh else words[1:]
        if not words:
            # `for f in *; do echo rm $f; done | sh`: its output, only known when it runs
            return cwd, OPAQUE if closed else None
        if not pwsh:
            words = self._split(words)
        head = words[0]
        if head.dynamic and pwsh and not called_by_operator:
            return cwd, OPAQUE  # `$x = 1`, `$_.CPU -gt 9`, `"$a"`: an expression, not a call
        if head.dynamic:
            unseen = Command(head.shown, words[1:], shell, cwd, depth, fed)
            self.seen.append(unseen)
            self.hidden(f"the command name {head.shown!r} is only known when it runs")
            if self.owners is not None:
                self.owners[len(self.findings.found) - 1] = (unseen, "command name")
            return cwd, OPAQUE
        if "/" in head.text and self.scripts and not pwsh:  # `./x.sh`: written by the line?
            script = self.written(head, cwd)
            if script is not None:
                self.line(script, shell, cwd, depth + 1)
        name = command_name(head.text, pwsh)
        body = self.functions.get(head.text) if not pwsh and self.functions else None
        if body is not None:  # `f() { rm -rf "$1"; }; f ~`: the body, with its arguments
            called = Command(name, words[1:], shell, cwd, depth, fed)
            self.seen.append(called)
            self.line(_called_body(body, words[1:]), shell, cwd, depth + 1)
            return cwd, OPAQUE
        if not name.isascii():  # a look-alike: at least unknown, and judged as what it mimics
            from .expand import look_alike

            self.flag(UNKNOWN, f"the command name {head.shown!r} is not plain ASCII")
            folded = look_alike(name)
            if folded is None:
                return cwd, OPAQUE
            name = command_name(folded, pwsh)
        lower = name.lower()
        if lower != name and not pwsh and (lower in _STEPS or rule_for(lower, False)):
            name = lower  # `RM` is rm on a case-insensitive file system (macOS)
        if not all(w.text.isascii() for w in words[1:]):
            odd = next((w for w in words[1:] if _unusual(w.text)), None)
            if odd is not None:  # `rm -rf\u00a0/`, `git reset\u00a0--hard`: not what it shows
                self.flag(UNKNOWN, f"an argument holds invisible or unusual spacing: {odd.shown!r}")
        called = Command(name, words[1:], shell, cwd, depth, fed)
        self.seen.append(called)
        rules, owners = self.rules, self.owners
        if rules is None and owners is None:
            return self._judged(called)
        hit = rules.match(called) if rules is not None else None
        if hit is not None and hit.deny:
            self.denied.append((hit, called))  # still walked: the record shows all it runs
        mark = self.findings.mark()
        after = self._judged(called)
        if hit is not None and not hit.deny:
            self.findings.cut(mark)  # what it does is the person's call; the rest still counts
            self.allowed.append((hit, called))
        elif owners is not None:
            judged = _judged_by(called)
            for index in range(mark[0], len(self.findings.found)):
                owners.setdefault(index, (called, judged))  # the innermost command owns it
        return after

    def _judged(self, called: Command) -> tuple[str | None, Fed]:
        """The command's step (what runs another command) or rule; what it pipes on (a
        secret it read or was fed goes on down the pipe, leaks.py)."""
        secret = self._secret(called) if _may_touch_secrets(called) else None
        cwd, fed = self._stepped(called)
        if secret is not None and (fed is None or any(w.dynamic for w in fed)):
            from .leaks import Secret

            if self.substituting:
                self.secret_substitution = secret
            fed = [Secret(secret)]
        return cwd, fed

    def _split(self, words: list[Word]) -> list[Word]:
        """Bash splits an unquoted expansion at the characters of IFS (`X="rm -rf /"; $X`,
        `IFS=,; c=rm,-rf,/; $c`, `rm${IFS}-rf${IFS}/`): a literal word never holds them."""
        separators = self.variables.get("IFS", " \t\n")
        if not separators or all(
            w.quoted or not any(c in w.text for c in separators) for w in words
        ):
            return words
        split: list[Word] = []
        for word in words:
            if word.quoted or not any(c in word.text for c in separators):
                split.append(word)
                continue
            text = word.text
            for c in separators[1:]:
                text = text.replace(c, separators[0])
            split += [
                Word(part, False, word.dynamic, word.glob)
                for part in text.split(separators[0])
                if part
            ]
        return split or words

    def written(self, word: Word, cwd: str | None) -> str | None:
        """The text the line wrote into the file `word` names, before running it, or None."""
        if word.dynamic or not self.scripts:
            return None
        return self.scripts.get(self.places.resolve(word.text, cwd))

    def _code_path(self, text: str) -> Word:
        """A path taken from code's literal (`~` from code naming the home directory)."""
        if text == "~" or text.startswith("~/"):
            text = self.places.home + text[1:]
        return _literal(text)

    def _code_write(self, what: str, target: Word, cwd: str | None) -> None:
        """Code writing over a file outside the workspace (not scratch): what it held is lost,
        by code no one reads as it runs."""
        places = self.places
        if places.where(target, cwd) == OUTSIDE and not places.scratch(target, cwd):
            self.flag(
                DESTRUCTIVE,
                f"{what}: writes over {target.shown} outside the workspace",
                Kind.OUTSIDE,
            )

    def _secret(self, called: Command) -> str | None:
        from .leaks import touches

        return touches(self, called)

    def _stepped(self, called: Command) -> tuple[str | None, Fed]:
        name, cwd = called.name, called.cwd
        step = _STEPS.get(name)
        if step is not None:
            return step(self, called)
        interpreter = interpreter_for(name)
        if interpreter is not None:
            self._interpreter(interpreter, called)
            return cwd, OPAQUE  # a script file or a module: the project's own
        return cwd, self.ruled(called)

    def ruled(self, called: Command) -> Fed:
        """The command's own rule (or, with none, whether it says it deletes); what it pipes
        on."""
        name = called.name
        rule = rule_for(name, called.pwsh)
        if rule is None:
            if called.args:
                word = said_delete(called)
                if word is not None:
                    self.flag(UNKNOWN, f"{name} {word}: may delete what it manages")
            return OPAQUE
        return rule(self.findings, called)

    def _interpreter(self, interpreter: Interpreter, command: Command) -> None:
        """Inline code is at least unknown; the calls in it that plainly delete a path or run a
        shell line (code.py) are judged like the commands they amount to."""
        name, args, cwd, depth, fed = (
            command.name,
            command.args,
            command.cwd,
            command.depth,
            command.fed,
        )
        code = interpreter.code(args)
        if code is None and fed is not None and (not args or args[0].text == "-"):
            if from_file(fed) is not None:
                return  # `python < x.py`: a script file, the project's own
            if any(w.dynamic for w in fed):
                self.hidden(f"{name} runs what the pipe sends it")
                return
            code = [w.text for w in fed]  # a here-document or an echo: the code itself
        if code is None and self.scripts:  # `python x.py` where the line wrote x.py
            operands = parse(args, interpreter.syntax).operands
            written = self.written(operands[0], cwd) if operands else None
            code = None if written is None else [written]
        if code is None:
            # A script of the project's own, told to delete what it manages (`python
            # manage.py flush`, `php artisan db:wipe`): asked about, like a tool saying so.
            operands = parse(args, interpreter.syntax).operands
            if operands and not operands[0].dynamic and len(operands) > 1:
                script = Command(operands[0].text, operands[1:], command.shell, cwd, depth, None)
                word = said_delete(script)
                if word is not None and word != script.name:
                    self.flag(UNKNOWN, f"{name} {script.name} {word}: may delete what it manages")
            return
        from .code import DELETE, WRITE, code_calls, harmless  # only for inline code
        from .leaks import code_leak, code_target

        leak = code_leak("\n".join(code), self.places.home)
        if leak is not None:
            self.findings.leaked(f"{name} (inline code)", leak, code_target("\n".join(code)))
        if any("\0" in part for part in code):  # `python -c "$(curl …)"`
            self.hidden(f"{name} runs inline code only known when it runs")
        elif not harmless("\n".join(code)) or _in_place(args):
            self.flag(UNKNOWN, f"{name} runs inline code")
        shell = "pwsh" if self.places.nt else "bash"  # what os.system & co. hand a line to
        for call in code_calls("\n".join(code), interpreter.language):
            if call.kind == DELETE:
                target = [self._code_path(call.args[0])]
                deleted(self.findings, f"{name} {call.name}", target, call.recursive, cwd)
            elif call.kind == WRITE:
                self._code_write(f"{name} {call.name}", self._code_path(call.args[0]), cwd)
            elif len(call.args) == 1:  # a shell line
                self.line(call.args[0], shell, cwd, depth + 1)
            else:  # an argument list: the command and its arguments, no shell between
                self.command([_literal(a) for a in call.args], shell, cwd, depth + 1, None)


# The commands leaks.py looks at whatever their words (senders, dumpers, token printers).
_SECRET_NAMES = frozenset({
    "env", "printenv", "export", "set", "declare", "typeset", "compgen", "gh", "glab", "gcloud",
    "aws", "az", "security", "op", "pass", "gopass", "bw", "vault", "kubectl", "heroku",
    "doppler", "curl", "wget", "http", "https",
    "xh", "nc", "ncat", "netcat", "socat", "scp", "rsync", "invoke-webrequest", "iwr",
    "invoke-restmethod", "irm", "dig", "nslookup", "host", "ping", "ssh", "telnet",
    "openssl"})  # fmt: skip
_SECRET_HINTS = ("ssh", "aws", "gcloud", "azure", "kube", "netrc", "credential", ".env", "gh/",
                 "glab", "docker", "npmrc", "pypirc", "gem", "cargo", "tfrc", "vault", "pgpass",
                 ".my.cnf", "boto", "s3cfg", "gnupg", "password", "keyring", "keychain",
                 "firefox", "chrom", "brave", "cookies", "login", "claude", "codex", "dsh",
                 "openai", "anthropic", "op", "hub", "id_", "shadow", "key", ".p", "env:",
                 "environ", "history")  # fmt: skip


def _may_touch_secrets(command: Command) -> bool:
    """Whether leaks.py should look at a command: a sender, dumper or reader by name, fed
    something, or a word holding a hint of a secret's place (a cheap test, no import)."""
    if command.name in _SECRET_NAMES or command.fed is not None:
        return True
    for word in command.args:
        lower = word.text.lower()
        if any(hint in lower for hint in _SECRET_HINTS) or word.dynamic:
            return True
    return False


def _in_place(args: list[Word]) -> bool:
    """Whether perl or ruby are told to edit files in place (`-pi -e …`, `-i.bak`)."""
    return any(
        w.text.startswith("-") and not w.text.startswith("--") and "i" in w.text[1:].split(".")[0]
        for w in args
        if w.text[1:2] != "I"  # (perl's -I: a library directory)
    )


def _judged_by(command: Command) -> str:
    """The name of the step or rule that judges `command` (for `explain`)."""
    name = command.name
    step = _STEPS.get(name)
    if step is _runner and _runner_verb(command) is None:
        step = None  # no exec or dlx: the manager's own rule
    if step is _expanded or step is _remote:
        from .expand import STEPS as EXPANDED_STEPS
        from .remote import STEPS as REMOTE_STEPS

        step = (EXPANDED_STEPS if step is _expanded else REMOTE_STEPS)[name]
    if step is not None:
        return step.__name__.strip("_")
    if interpreter_for(name) is not None:
        return "inline code"
    rule = rule_for(name, command.pwsh)
    return rule.__name__.strip("_") if rule is not None else "no rule"


def _assignment(word: Word, pwsh: bool) -> bool:
    name, equal, _ = word.text.partition("=")
    return bool(equal) and not pwsh and name.isidentifier()


def _literal(text: str) -> Word:
    """A word taken from code's string literal (a NUL, `\\0`, marks a part known when it runs)."""
    return Word(text, dynamic="\0" in text)


# -- what only runs another command, or moves where the next ones run ----------------------


def _nothing(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    return command.cwd, None  # `for x in …`: the words are data


def _cd(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    cwd = command.cwd
    targets = parse(command.args, _CD_OPTIONS).operands
    if not targets:
        return judge.places.home, None
    target = targets[0]
    if target.dynamic or target.text == "-" or cwd is None:
        return None, None
    return judge.places.resolve(target.text, cwd), None


def _popd(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    return None, None  # back to a directory only known when it runs


def _wrapper(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """The command a wrapper runs (its own options and values, env's assignments, timeout's
    duration and nice's adjustment skipped) is judged as if run alone."""
    syntax = _WRAPPER_OPTIONS.get(command.name, _PLAIN_WRAPPER_OPTIONS)
    rest = command.args
    wrapper = command.name
    leading = _WRAPPER_LEADING.get(wrapper, 0)
    lines = _WRAPPER_LINES.get(wrapper, ())
    for word in command.args:  # `wsl --unregister NAME`: the distribution and its files go
        if word.text in _WRAPPER_DESTROYS.get(wrapper, ()):
            judge.flag(DESTRUCTIVE, f"{wrapper} {word.text}: deletes what it runs in, for good")
    while True:
        parsed = parse(rest, syntax)
        for flag in parsed.flags:
            clustered = flag.short and flag.value is not None and f"-{flag.name[-1]}" in lines
            if flag.name in lines or (lines and flag.name[:2] in lines and flag.short) or clustered:
                # (`script -qc LINE`: the cluster's last option takes the line)
                line = flag.value if clustered and flag.value else flag.value or Word(flag.name[2:])
                if wrapper == "env" and parsed.operands:  # `env -S rm -rf /`: split, then more
                    rest = [line, *parsed.operands]
                    dynamic = any(w.dynamic for w in rest)
                    line = Word(" ".join(w.text for w in rest), dynamic=dynamic)
                return _wrapped_line(judge, command, line)
        rest = parsed.operands
        if not rest or parsed.end_at is not None:
            break
        text = rest[0].text
        if wrapper == "env" and "=" in text and not text.startswith("-"):
            rest = rest[1:]
        elif wrapper == "timeout" or (wrapper == "nice" and text.lstrip("-").isdigit()):
            wrapper = ""  # the duration: the command follows
            rest = rest[1:]
        elif leading:
            leading -= 1
            rest = rest[1:]
            if not leading:
                wrapper = ""
        else:
            break
    if len(rest) == 1 and not rest[0].dynamic and any(c.isspace() for c in rest[0].text.strip()):
        return _wrapped_line(judge, command, rest[0])  # `sudo -s 'rm -rf /'`: one word, a line
    # `sudo -s <<< LINE`, `echo LINE | sudo -i`: the shell it starts reads what is fed
    if (
        not rest
        and command.fed is not None
        and wrapper in ("sudo", "doas")
        and any(f.short and f.name[-1:] in "si" for f in parsed.flags)
    ):
        shell = Command("sh", [], command.shell, command.cwd, command.depth, command.fed)
        return _shell(judge, shell)
    return judge.command(rest, command.shell, command.cwd, command.depth, command.fed)


def _wrapped_line(judge: Judge, command: Command, line: Word) -> tuple[str | None, Fed]:
    """A wrapper told to run a shell line: the line judged, or opaque when it is not known."""
    if line.dynamic:
        judge.hidden(f"{command.name} runs a command only known when it runs")
    else:
        judge.line(line.text, command.shell, command.cwd, command.depth + 1)
    return command.cwd, OPAQUE


# A loop's variable, as the lexer expands it: unknown (NUL), marked with its name, so each
# stage naming it is judged with each value the loop is fed (`Judge._looping`).
_MARK = "\ue000"
_UNKNOWN = Word("\0", dynamic=True)
MAX_LOOPED = 16  # values of a loop's variables a stage is judged with
_READ_OPTIONS = Syntax(frozenset({"-d", "-i", "-n", "-N", "-p", "-t", "-u"}))
_LOOP_STARTS = (*_COMMAND_STARTS, "do", "then", "else", "{", "!", "while", "until", "if")


def _may_loop(text: str) -> bool:
    """The cheap test before looking for loops: a `read` or a `for` in the line."""
    return "read" in text or "for" in text or "mapfile" in text


def loop_marker(name: str) -> str:
    return f"\0{_MARK}{name}{_MARK}"


def _marks(text: str) -> list[str]:
    """The names of the loop variables marked in a word's text."""
    return text.split(_MARK)[1::2]


def _unmarked(word: Word, values: dict[str, Word]) -> Word:
    """`word` with each loop variable marked in it replaced by its value (a value only known
    when it runs stays unknown: NUL)."""
    text = word.text
    for name in _marks(text):
        text = text.replace(loop_marker(name), values[name].text)
    glob = word.glob or any(values[name].glob for name in _marks(word.text))
    return Word(text, True, "\0" in text, glob)


def _loop_names(tokens: list[Token]) -> list[str]:
    """The variables a loop of the line sets from what it is fed: `read`'s (REPLY when it
    names none; `-a`'s array) and `for NAME in …`'s."""
    names: list[str] = []
    start = True
    for index, token in enumerate(tokens):
        if isinstance(token, str):
            start = token in _LOOP_STARTS
            continue
        text = token.text
        if start and not token.quoted and text in ("while", "until", "do", "!", "{", "if"):
            continue  # a keyword: a command may follow
        if start and "=" in text and text.split("=", 1)[0].isidentifier():
            continue  # `IFS= read -r f`
        if start and text in ("read", "mapfile", "readarray") and not token.quoted:
            words = []
            for after in tokens[index + 1 :]:
                if isinstance(after, str):
                    break
                words.append(after)
            if text == "read":
                parsed = parse(words, _READ_OPTIONS)
                found = [w.text for w in parsed.operands if w.text.isidentifier()]
                array = next((f.value for f in parsed.flags if f.name == "-a"), None)
                names += found or ([array.text] if array is not None else ["REPLY"])
            else:  # `mapfile -t fs < list`: `${fs[@]}`, judged as `$fs`
                parsed = parse(words, Syntax(frozenset({"-d", "-n", "-O", "-s", "-u", "-C",
                                                        "-c"})))  # fmt: skip
                found = [w.text for w in parsed.operands if w.text.isidentifier()]
                names += found or ["MAPFILE"]
        elif start and text == "for" and not token.quoted and index + 1 < len(tokens):
            after = tokens[index + 1]
            if isinstance(after, Word) and after.text.isidentifier():
                names.append(after.text)
        start = False
    return list(dict.fromkeys(names))


def _loop_fed(tokens: list[Token]) -> list[Token]:
    """The tokens with what feeds a `while`/`until` loop (`done < list`, `done <<< …`) given
    to its first command too (the `read` that takes it): bash feeds the whole loop."""
    out = list(tokens)
    opened: list[int] = []  # for each open loop, where its condition's first command ends
    at = 0
    while at < len(out):
        token = out[at]
        if isinstance(token, Word) and not token.quoted:
            before = out[at - 1] if at else "\n"
            starts = (isinstance(before, str) and before in _LOOP_STARTS) or (
                isinstance(before, Word) and before.text in ("do", "then", "else", "{")
            )
            if starts and token.text in ("while", "until"):
                end = at + 1
                while end < len(out) and not isinstance(out[end], str):
                    end += 1
                opened.append(end)
            elif starts and token.text in ("for", "select"):
                opened.append(-1)  # fed nothing: its words are its values
            elif token.text == "done" and starts and opened:
                end = opened.pop()
                after = out[at + 1 : at + 3]
                if (
                    end >= 0
                    and len(after) == 2
                    and after[0] in ("<", "<<", "<<<")
                    and isinstance(after[1], Word)
                ):
                    out[end:end] = after
                    at += 2
        at += 1
    return out


def _read(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`read` (and `mapfile`) sets its variables from what it is fed: each line, or what
    another command pipes on (only known when it runs: a file's lines are not read here)."""
    fed = command.fed
    if not fed or any(isinstance(w, FromFile) for w in fed):
        return command.cwd, None
    names = _loop_names([Word(command.name), *command.args])
    values: list[Word] = []
    for word in fed:
        if word.dynamic:
            values.append(word)
            continue
        for line in word.text.splitlines() or [word.text]:
            if line.strip():
                values.append(Word(line.strip(), True, False, any(c in line for c in "*?[")))
    if len(names) > 1:  # `read a b`: any of them may hold any field (the last, the rest)
        values = [Word(" ".join(v.text.split()[i:] if i == len(names) - 1 else
                                v.text.split()[i : i + 1]), True, v.dynamic)
                  for v in values for i in range(len(names))]  # fmt: skip
    for name in names:
        judge.looped[name] = values[:MAX_LOOPED]
    return command.cwd, None


def _for(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`for NAME in WORDS`: NAME takes each word (a wildcard, a substitution: as written)."""
    args = command.args
    if len(args) >= 2 and args[0].text.isidentifier() and args[1].text == "in":
        values = [w for w in args[2:] if w.text not in ("do", ";")]
        judge.looped[args[0].text] = values[:MAX_LOOPED] or [_UNKNOWN]
    return command.cwd, None


def _xargs(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """xargs runs its command with what the pipe sends it as further arguments."""
    cwd = command.cwd
    parsed = parse(command.args, _XARGS_OPTIONS)
    inner = parsed.operands
    if not inner:
        return cwd, None
    items = command.fed if command.fed is not None else OPAQUE
    if any(f.name.startswith(("-a", "--arg-file")) for f in parsed.flags):
        items = OPAQUE  # read from a file
    replace = next((_replaced(f.name, f.value) for f in parsed.flags if _replaces(f.name)), None)
    if replace:  # `-I {}`: each item in place of the string, in every word that holds it
        after: tuple[str | None, Fed] = cwd, OPAQUE
        if len(items) > 1 and not any(w.dynamic for w in items):
            # an item is a whole line: `echo rm -rf ~ | xargs -I C sh -c C` (words or lines?)
            items = [*items[:7], Word(" ".join(w.text for w in items))]
        for item in items[:8]:
            words = [
                Word(w.text.replace(replace, item.text), True, w.dynamic or item.dynamic)
                if replace in w.text
                else w
                for w in inner
            ]
            after = judge.command(words, command.shell, cwd, command.depth, None)
        return cwd, after[1]
    return cwd, judge.command(inner + items, command.shell, cwd, command.depth, None)[1]


def _replaces(option: str) -> bool:
    return option.startswith(("-I", "-i", "--replace"))


def _replaced(option: str, value: Word | None) -> str:
    """The string xargs replaces with each item: `-I S`, `-iS`, `--replace=S`; `{}` alone."""
    if value is not None:
        return value.text
    if option.startswith("--replace="):
        return option.partition("=")[2] or "{}"
    return option[2:] if option.startswith(("-i", "-I")) and len(option) > 2 else "{}"


def _shell(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """A shell started by the line: what it is told to run is judged as a line (a script
    file is the project's own)."""
    name, args, cwd, depth = command.name, command.args, command.cwd, command.depth
    pwsh, cmd = name in _PWSH, name == "cmd"
    inner = "pwsh" if pwsh or cmd else "bash"
    parsed = parse(args, _PWSH_OPTIONS if pwsh else _CMD_OPTIONS if cmd else _BASH_OPTIONS)
    for flag in parsed.flags:
        option = flag.name
        if flag.takes:
            continue
        if pwsh and option.startswith("-e") and "-encodedcommand".startswith(option):
            judge.hidden(f"{name} runs an encoded command")
            return cwd, OPAQUE
        if cmd:
            runs = option in ("/c", "/k", "/r")
        elif pwsh:
            runs = len(option) > 1 and "-command".startswith(option)
        else:
            runs = flag.short and "c" in option.lower()  # -c, -lc, -ec…
        if runs:
            rest = args[flag.at + 1 :]  # pwsh and cmd: the rest of the words
            if not pwsh and not cmd:
                rest = rest[:1]
            if not rest or any(w.dynamic for w in rest):
                judge.hidden(f"{name} runs a command only known when it runs")
            else:
                text = " ".join(w.text for w in rest)
                if cmd:
                    text = _cmd_line(text, judge.places.nt)
                judge.line(text, inner, cwd, depth + 1)
            return cwd, OPAQUE
    if parsed.operands and parsed.operands[0].text in _STDIN and command.fed is not None:
        parsed.operands = []  # `bash /dev/stdin <<< LINE`: the line fed is what it runs
    operands = parsed.operands
    if pwsh and operands and not operands[0].text.lower().endswith(".ps1"):
        # Windows PowerShell takes bare words as -Command (`powershell Remove-Item …`)
        if any(w.dynamic for w in operands):
            judge.hidden(f"{name} runs a command only known when it runs")
        else:
            judge.line(" ".join(w.text for w in operands), "pwsh", cwd, depth + 1)
        return cwd, OPAQUE
    if parsed.operands:  # a script file: the project's own, unless the line wrote it
        script = judge.written(parsed.operands[0], cwd)
        if script is not None:
            judge.line(script, inner, cwd, depth + 1)
        elif parsed.operands[0].dynamic:
            judge.hidden(f"{name} runs a script only known when it runs")
    elif command.fed is not None and from_file(command.fed) is None:  # (a file: a script)
        if any(w.dynamic for w in command.fed):
            judge.hidden(f"{name} runs what the pipe sends it (a download or a decoded payload)")
        else:
            judge.line(" ".join(w.text for w in command.fed), inner, cwd, depth + 1)
    return cwd, OPAQUE


# Package managers that fetch and run a package's command (`npm exec -- rimraf ~`, `pnpm dlx
# rimraf /`), as npx does: the verbs that do, and their options taking a value.
_RUNNERS = {"npm": ("exec", "x"), "pnpm": ("dlx", "exec"), "yarn": ("dlx", "exec")}
_RUNNER_OPTIONS = Syntax({"-p", "--package", "-w", "--workspace", "-c", "--call", "--prefix",
                          "-C", "--dir", "--filter", "-F"}, stop=True)  # fmt: skip
_CONTAINER_LISTS = ("docker", "podman", "nerdctl")


def _runner(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """What a package manager's exec or dlx runs is judged as if run alone (`-c LINE`: a
    line); anything else is the manager's own rule."""
    args = command.args
    verb = _runner_verb(command)
    if verb is None:
        return command.cwd, judge.ruled(command)
    parsed = parse(args[verb + 1 :], _RUNNER_OPTIONS)
    for flag in parsed.flags:
        if flag.name in ("-c", "--call") and flag.value is not None:
            return _wrapped_line(judge, command, flag.value)
    if not parsed.operands:
        return command.cwd, OPAQUE
    return judge.command(parsed.operands, command.shell, command.cwd, command.depth, command.fed)


def _runner_verb(command: Command) -> int | None:
    """Where a package manager's exec or dlx is among its words, or None."""
    args = command.args
    verb = next((at for at, w in enumerate(args) if not w.text.startswith("-")), None)
    return verb if verb is not None and args[verb].text in _RUNNERS[command.name] else None


def _lists_every(line: str) -> bool:
    """Whether a substitution lists every container or image (`docker ps -aq`, `docker images
    -q`), with no filter: what a `docker rm` given its output removes."""
    words = line.split()
    if len(words) < 2 or words[0] not in _CONTAINER_LISTS:
        return False
    short = [w for w in words if w[:1] == "-" and w[1:2] != "-"]
    if any(w.startswith("--filter") for w in words) or any("f" in w for w in short):
        return False
    verb = words[1:3]
    if verb[:1] == ["images"] or verb == ["image", "ls"]:  # (a name given: only its images)
        return all(w[:1] == "-" for w in words[3 if verb[0] == "image" else 2 :])
    every = "--all" in words or any("a" in w for w in short)
    return every and (verb[:1] == ["ps"] or verb in (["container", "ls"], ["container", "ps"]))


def _trap(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`trap LINE SIGNAL…` runs LINE when the signal comes (EXIT: when the shell ends)."""
    args = command.args
    if len(args) >= 2 and not args[0].text.startswith("-"):
        if args[0].dynamic:
            judge.hidden("trap runs a command only known when it runs")
        else:
            judge.line(args[0].text, command.shell, command.cwd, command.depth + 1)
    return command.cwd, None


def _inline(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """An interpreter whose code the guard does not read (Lua, R, AppleScript, Tcl, Deno),
    given code on its command line or fed it: unknown (a script file is the project's own)."""
    options = _INLINE_CODE[command.name]
    given = any(w.text in options for w in command.args)
    fed = command.fed is not None and from_file(command.fed) is None and not command.args
    if given or fed:
        judge.flag(UNKNOWN, f"{command.name} runs inline code")
    return command.cwd, OPAQUE


def _at(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """at and batch run, later, the shell lines they are fed (`-f FILE`: a script of one's
    own); what is fed is judged as if run now."""
    fed = command.fed
    if fed is None or from_file(fed) is not None or any(w.text == "-f" for w in command.args):
        return command.cwd, OPAQUE
    if any(w.dynamic for w in fed):
        judge.hidden(f"{command.name} runs, later, what the pipe sends it")
    else:
        judge.line("\n".join(w.text for w in fed), "bash", command.cwd, command.depth + 1)
    return command.cwd, OPAQUE


def _unusual(text: str) -> bool:
    """Whether `text` holds spacing other than a space or a tab, or an invisible character
    (a zero-width space, a direction mark): what a reader takes for a separator."""
    if text.isascii():
        return False
    import unicodedata  # only for a word that is not plain ASCII

    return any(
        not char.isascii() and unicodedata.category(char) in ("Zs", "Zl", "Zp", "Cf", "Cc")
        for char in text
    )


def _functions(text: str) -> dict[str, str]:
    """The shell functions a line defines (`f() { …; }`, `function f { …; }`): their bodies,
    found by their braces (roughly: braces inside quotes count too)."""
    import re  # only for a line that may define a function

    found: dict[str, str] = {}
    for match in re.finditer(
        r"(?:\bfunction\s+([\w.:-]+)\s*(?:\(\s*\))?|([\w.:-]+)\s*\(\s*\))\s*\{", text
    ):
        name = match.group(1) or match.group(2)
        at, level = match.end(), 1
        while at < len(text) and level:
            level += {"{": 1, "}": -1}.get(text[at], 0)
            at += 1
        found[name] = text[match.end() : at - 1]
    return found


def _called_body(body: str, args: list[Word]) -> str:
    """A function's body with its positional parameters (`$1`, `"$@"`) replaced by the
    arguments it was called with (one only known when it runs stays unknown)."""
    import re

    def quoted(word: Word) -> str:
        if word.dynamic:
            return "${__dshkit_unknown}"
        return "'" + word.text.replace("'", "'\"'\"'") + "'"

    def replace(match: re.Match[str]) -> str:
        key = match.group(1) or match.group(2) or match.group(3)
        if key in ("@", "*"):
            return " ".join(quoted(w) for w in args)
        index = int(key) - 1
        if 0 <= index < len(args):
            return quoted(args[index])
        return "${__dshkit_unknown}"  # (also `f() {`: read as `f` called with no argument)

    return re.sub(r'"\$(?:\{(\w+|[@*])\}|(\d|[@*]))"|\$(?:\{?(\d|[@*])\}?)', replace, body)


def _powershell_like(text: str) -> bool:
    """Whether a line handed to a bash-named tool looks like PowerShell (dialect.py)."""
    if "]::" in text:  # `[IO.Directory]::Delete(…)`: a .NET call
        return True
    first = text.lstrip().split(None, 1)[0].lower() if text.strip() else ""
    if first in ("powershell", "powershell.exe", "pwsh", "pwsh.exe"):
        return True  # its line is PowerShell's to read (`C:\"` ends no quote there)
    if "-" not in text and "$env:" not in text.lower() and "`" not in text:
        return False  # (no `Verb-Noun`, no `$env:`, no PowerShell escape: no import)
    from .dialect import looks_like_powershell

    return looks_like_powershell(text)


def _plain_spacing(text: str) -> str:
    """`text` with the spacing a reader takes for a separator made plain: Unicode spaces a
    space, line and paragraph separators a newline, invisible characters dropped."""
    import unicodedata  # only for a line that is not plain ASCII

    out = []
    for char in text:
        if char.isascii():
            out.append(char)
            continue
        category = unicodedata.category(char)
        if category == "Zs":
            out.append(" ")
        elif category in ("Zl", "Zp"):
            out.append("\n")
        elif category != "Cf":
            out.append(char)
    return "".join(out)


def _fork_bomb(text: str) -> bool:
    """`:(){ :|:& };:` and its renamings: a function whose body pipes itself into itself."""
    import re  # only for a line defining a function

    return re.search(r"(\S+)\s*\(\)\s*\{[^}]*?\1\s*\|\s*\1", text) is not None


# Programs whose arguments may hold a shell line: awk's `system("…")` and pipes to a
# command, vim's `-c '!…'` (`+!…`), gdb's `-ex 'shell …'`. Each: how to find the line in one
# argument (None: there is none), whether the argument is the kind that runs one.
def _awk_line(text: str) -> str | None:
    at = text.find("system(")
    if at < 0:
        return "" if ('| "' in text or '|"' in text or "|&" in text) else None
    rest = text[at + 7 :].lstrip()
    if rest.startswith('"'):
        end = rest.find('"', 1)
        if end > 0 and rest[end + 1 :].lstrip().startswith(")"):
            return rest[1:end]
    return ""  # built at run time


def _editor_line(text: str) -> str | None:
    text = text.lstrip(":+ ")
    return text[1:] if text.startswith("!") else None


def _debugger_line(text: str) -> str | None:
    text = text.strip()
    if text.startswith("!"):
        return text[1:]
    return text[5:] if text.startswith("shell ") else None


_ESCAPES = {"awk": _awk_line, "gawk": _awk_line, "mawk": _awk_line, "nawk": _awk_line,
            "vim": _editor_line, "vi": _editor_line, "nvim": _editor_line, "ex": _editor_line,
            "view": _editor_line, "gdb": _debugger_line, "lldb": _debugger_line}  # fmt: skip


def _escape(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """A shell line held in a program's arguments is at least unknown, and judged when it is
    plain text."""
    find = _ESCAPES[command.name]
    for word in command.args:
        line = find(word.text)
        if line is None:
            continue
        judge.flag(UNKNOWN, f"{command.name} runs a shell command")
        if line.strip() and "\0" not in line:
            judge.line(line, "bash", command.cwd, command.depth + 1)
    return command.cwd, OPAQUE


def _cmd_line(text: str, nt: bool) -> str:
    """A line cmd runs, read as PowerShell: its `%NAME%` variables, and a drive named with no
    separator after it (`C:*`, what bash leaves of `C:\\*`) taken at its root; on a POSIX
    system (a workspace with no drive) its paths spelled with `/`."""
    text = _cmd_variables(text)
    if ":" in text:
        import re

        text = re.sub(r"(?<![\w$:])([A-Za-z]):(?=[^\\/\s]|$|\s)", r"\1:\\", text)
        if not nt:
            text = re.sub(
                r"(?<![\w$:])([A-Za-z]):\\\S*", lambda m: m.group(0).replace("\\", "/"), text
            )
    return text


def _cmd_variables(text: str) -> str:
    """cmd's `%NAME%` spelled as PowerShell's `$env:NAME` (the line is read as PowerShell),
    so `%USERPROFILE%` is the home directory and an unknown one is only known when it runs."""
    parts = text.split("%")
    if len(parts) < 3:
        return text
    out = [parts[0]]
    at = 1
    while at < len(parts):
        name = parts[at]
        if at + 1 < len(parts) and name and name.replace("_", "").isalnum():
            out.append(f"$env:{name}{parts[at + 1]}")
            at += 2
        else:
            out.append(f"%{name}")
            at += 1
    return "".join(out)


def _su(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`su [USER] -c LINE` runs LINE in a shell; `runuser -u USER -- COMMAND…` runs it."""
    args, cwd, depth = command.args, command.cwd, command.depth
    parsed = parse(args, _SU_OPTIONS)
    for flag in parsed.flags:
        if flag.name in ("-c", "--command"):
            if flag.value is None or flag.value.dynamic:
                judge.hidden(f"{command.name} runs a command only known when it runs")
            else:
                judge.line(flag.value.text, "bash", cwd, depth + 1)
            return cwd, OPAQUE
    if parsed.end_at is not None:
        judge.command(args[parsed.end_at + 1 :], "bash", cwd, depth + 1, None)
    return cwd, OPAQUE


def _eval(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """eval (Invoke-Expression) runs its words, or what the pipe sends it, as a line: what
    is literal in them is judged, and a part only known when it runs is opaque code."""
    args = command.args
    if not args and command.fed is not None and from_file(command.fed) is None:  # `iwr … | iex`
        args = command.fed
    if any(w.dynamic for w in args):
        judge.hidden(f"{command.name} runs text only known when it runs")
    else:
        judge.flag(UNKNOWN, f"{command.name} runs text built at run time")
    literal = [w for w in args if not w.dynamic]
    if literal:
        text = " ".join(w.text for w in literal)
        judge.line(text, command.shell, command.cwd, command.depth + 1)
    return command.cwd, OPAQUE


def _source(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    fed = command.fed
    if command.args and command.args[0].text in _STDIN and fed is not None:
        if any(w.dynamic for w in fed) or from_file(fed) is not None:
            judge.hidden(f"{command.name} runs what the pipe sends it")
        else:
            judge.line(" ".join(w.text for w in fed), command.shell, command.cwd, command.depth + 1)
        return command.cwd, OPAQUE
    script = judge.written(command.args[0], command.cwd) if command.args else None
    if script is not None:  # the line wrote it first
        judge.line(script, command.shell, command.cwd, command.depth + 1)
    elif any(w.dynamic for w in command.args):  # otherwise a script file: the project's own
        judge.hidden(f"{command.name} runs a script only known when it runs")
    return command.cwd, OPAQUE


# The commands whose steps live in expand.py, imported only when one of them is met.
EXPANDED = frozenset({"watch", "parallel", "find", "alias", "tar", "bsdtar", "gtar", "truncate",
                      "cp", "tee", "install", "copy-item", "cpi", "copy", "tee-object",
                      "start-process", "saps", "start", "cipher", "ln"})  # fmt: skip


def _expanded(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    from .expand import STEPS

    return STEPS[command.name](judge, command)


# The commands run on another machine or in a container (remote.py, imported when met).
REMOTE = frozenset({"ssh", "mosh", "pdsh", "pssh", "parallel-ssh", "clush", "sshpass", "ansible",
                    "kubectl", "oc", "docker", "podman", "nerdctl", "docker-compose",
                    "podman-compose"})  # fmt: skip


def _remote(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    from .remote import STEPS

    return STEPS[command.name](judge, command)


def _java(judge: Judge, command: Command) -> tuple[str | None, Fed]:
    """`java -jar tool.jar ARGS`: the tool named by its jar (`jenkins-cli.jar` is jenkins-cli,
    a version dropped), judged with its arguments; anything else, java's own words."""
    args = command.args
    at = next((i for i, w in enumerate(args) if w.text == "-jar"), None)
    if at is None or at + 1 >= len(args) or args[at + 1].dynamic:
        return command.cwd, judge.ruled(command)
    jar = command_name(args[at + 1].text, False).removesuffix(".jar")
    base = jar.rstrip("0123456789.-")
    tool = Word(base if base else jar)
    return judge.command(
        [tool, *args[at + 2 :]], command.shell, command.cwd, command.depth, command.fed
    )


_STEPS: dict[str, Step] = dispatch_table(
    (("for",), _for),
    (("read", "mapfile", "readarray"), _read),
    (("java",), _java),
    (_CD, _cd),
    (("popd", "pop-location"), _popd),
    (_WRAPPERS, _wrapper),
    (("xargs",), _xargs),
    (_SHELLS | _PWSH | {"cmd"}, _shell),
    (_SU, _su),
    (("at", "batch"), _at),
    (("trap",), _trap),
    (_INLINE_CODE, _inline),
    (_ESCAPES, _escape),
    (_EVAL, _eval),
    (_SOURCE, _source),
    (EXPANDED, _expanded),
    (REMOTE, _remote),
    (_RUNNERS, _runner),
)
