"""Inline code handed to an interpreter (`python -c`, `node -e`, `perl -e`, …): the few calls
in it that plainly delete a path or run a shell line, read with a small tokenizer.

Code is not understood in general: a command running inline code is at least `unknown`,
unless it names nothing but computing and printing (`harmless`: no file, process, network,
environment or code built from strings). Some calls say what they do by their name and a
literal argument, and only those are picked out, so they are judged like the shell commands
they amount to:

- deletes of a path: Python `shutil.rmtree`, `os.remove`, `os.unlink`, `os.rmdir`,
  `os.removedirs`; Node `fs.rmSync`, `fs.rmdirSync`, `fs.unlinkSync` (and their callback and
  promise forms); Ruby `FileUtils.rm_rf`, `rm_r`, `rm`, `remove_dir`, `File.delete`; Perl
  `rmtree`, `remove_tree`, `unlink`; PHP `unlink`, `rmdir`.
- shell lines or argument lists: Python `os.system`, `os.popen`, `subprocess.run`, `call`,
  `check_call`, `check_output`, `Popen`; Node `execSync`, `exec`, `spawnSync`, `spawn`,
  `execFileSync`; Perl, Ruby and PHP `system`, `exec`, `shell_exec`, `passthru`, `popen`, and
  backtick commands in Perl, Ruby and PHP.

A call whose argument is not a literal string (a variable, an f-string's or template's
placeholder) is kept with a marker: its target is only known when it runs.
"""

from __future__ import annotations

DELETE, SHELL, WRITE = "delete", "shell", "write"
HOME = "~"  # an argument naming the home directory by code (`Path.home()`, `process.env.HOME`)

# The calls recognized: the name as written, or its last dotted part for names no other
# library uses; what it does; whether a delete is recursive.
_QUALIFIED: dict[str, tuple[str, bool]] = {
    "shutil.rmtree": (DELETE, True),
    "os.remove": (DELETE, False),
    "os.unlink": (DELETE, False),
    "os.rmdir": (DELETE, False),
    "os.removedirs": (DELETE, False),
    "fs.rm": (DELETE, True),
    "fs.rmdir": (DELETE, True),
    "fs.unlink": (DELETE, False),
    "fs.promises.rm": (DELETE, True),
    "fs.promises.unlink": (DELETE, False),
    "File.delete": (DELETE, False),
    "Deno.remove": (DELETE, True),
    "Deno.removeSync": (DELETE, True),
    "fs.writeFile": (WRITE, False),
    "fs.promises.writeFile": (WRITE, False),
    "File.write": (WRITE, False),
    "IO.write": (WRITE, False),
    "Bun.write": (WRITE, False),
    "FileUtils.rm_rf": (DELETE, True),
    "FileUtils.remove_entry": (DELETE, True),
    "FileUtils.remove_entry_secure": (DELETE, True),
    "File.unlink": (DELETE, False),
    "os.system": (SHELL, False),
    "os.popen": (SHELL, False),
}
_DISTINCT: dict[str, tuple[str, bool]] = {
    "rmtree": (DELETE, True),
    "remove_tree": (DELETE, True),
    "rmSync": (DELETE, True),
    "rmdirSync": (DELETE, True),
    "unlinkSync": (DELETE, False),
    "rm_rf": (DELETE, True),
    "rm_r": (DELETE, True),
    "remove_dir": (DELETE, True),
    "unlink": (DELETE, False),
    "rmdir": (DELETE, False),
    "writeFileSync": (WRITE, False),
    "writeTextFileSync": (WRITE, False),
    "writeTextFile": (WRITE, False),
    "file_put_contents": (WRITE, False),
    "truncateSync": (WRITE, False),
    "run": (SHELL, False),  # subprocess.run: only as subprocess's (see `_call`)
    "call": (SHELL, False),
    "check_call": (SHELL, False),
    "check_output": (SHELL, False),
    "Popen": (SHELL, False),
    "execSync": (SHELL, False),
    "spawnSync": (SHELL, False),
    "spawn": (SHELL, False),
    "execFileSync": (SHELL, False),
    "system": (SHELL, False),
    "exec": (SHELL, False),
    "shell_exec": (SHELL, False),
    "passthru": (SHELL, False),
    "popen": (SHELL, False),
}
_SUBPROCESS_ONLY = {"run", "call"}  # too common a name elsewhere
_STRING_PREFIXES = {"r", "b", "u", "f", "rb", "br", "fr", "rf"}


class Call:
    """One recognized call: `kind` DELETE (`args[0]` the path) or SHELL (one string: a shell
    line; several: an argument list). A `\\0` in an argument marks a part known only when the
    code runs. (A plain class: dataclasses cost this hot path more than the policy itself.)"""

    __slots__ = ("args", "kind", "name", "recursive")

    def __init__(self, name: str, kind: str, recursive: bool, args: tuple[str, ...]) -> None:
        self.name = name
        self.kind = kind
        self.recursive = recursive
        self.args = args

    def _key(self) -> tuple[str, str, bool, tuple[str, ...]]:
        return self.name, self.kind, self.recursive, self.args

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Call) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Call{self._key()!r}"


# Code naming the home directory (its tokens joined): an argument spelled so is `HOME`.
_HOMES = ("ENV", "os.environ", "process.env", "os.path.expanduser", "Path.home",
          "pathlib.Path.home", "os.homedir", "homedir", "os.environ.get", "os.getenv",
          "process.env.HOME", "ENV.fetch", "Dir.home", "$ENV", "getenv", "Deno.env.get",
          "Bun.env.HOME", "os.UserHomeDir", "Deno.homeDir")  # fmt: skip
# Calls whose value is a path built of their literal arguments (joined with `/`).
_JOINERS = {"os.path.join", "path.join", "path.resolve", "Path", "pathlib.Path", "PurePath",
            "File.join", "glob", "glob.glob", "File.expand_path", "os.path.abspath",
            "os.path.realpath", "Pathname.new", "realpath"}  # fmt: skip
# Methods of a path object that delete or write over it (`Path('/x').unlink()`).
_PATH_METHODS = {"unlink": (DELETE, False), "rmdir": (DELETE, False),
                 "write_text": (WRITE, False), "write_bytes": (WRITE, False),
                 "rmtree": (DELETE, True), "delete": (DELETE, False)}  # fmt: skip
_OPEN = {"open", "io.open", "codecs.open", "File.open", "fopen", "os.open"}


# What inline code must not mention to be let through unasked: files, processes, the network,
# the environment, and every way to run code built from strings (lower-cased substrings).
# Printing, arithmetic, reading stdin and importing a module (the project's own, like running
# its script) are all that is left.
_UNSAFE = ("open", "exec", "eval", "compile", "import_module", "__import__", "importlib",
           "getattr", "setattr", "delattr", "globals", "locals", "vars(", "builtins",
           "__class__", "__subclasses__", "__dict__", "subprocess", "system", "popen", "spawn",
           "fork", "kill", "remove", "unlink", "rmtree", "rmdir", "rm_", "rename", "truncate",
           "chmod", "chown", "write", "dump", "socket", "request", "urllib", "http", "fetch",
           "ftp", "smtp", "paramiko", "shutil", "os.", "from os", "import os", "pathlib",
           "path(", "child_process", "process.", "deno.", "bun.", "file", "dir.", "io.", "`",
           "decode", "b64", "base64", "fromhex", "chr(", "\\x", "\\u", "marshal", "pickle",
           "ctypes", "cffi", "signal", "sys.modules", "environ", "env[", "%env", "$env",
           "require(", "import(", "qx", "syscall", "fs.", "'fs'", '"fs"', "link", "mkdir",
           "copy", "move", "glob", "sh ", "bash", "curl", "wget", "$(", "${", "reflect",
           "new function", "settimeout", "setinterval", "worker", "thread", "sqlite",
           "connect", "%x", "passthru", "proc_", "assert(", "create_function", "preg_",
           "shell", "runpy", "do '", 'do "', "kernel", "binding", "dlopen", "ffi",
           "unpack")  # fmt: skip
# A require of the project's own JSON (`require('./package.json').version`) reads, only; so do
# Node's facts about itself.
_OWN_JSON = ("require('./", 'require("./')
_FACTS = ("process.versions", "process.version", "process.platform", "process.arch")


def harmless(code: str) -> bool:
    """Whether inline code plainly does nothing but compute and print (`print(sys.version)`,
    `json.load(sys.stdin)['x']`, `console.log(require('./package.json').version)`): it
    names no file, process, network, environment or dynamic code at all."""
    lower = code.lower()
    for fact in _FACTS:
        lower = lower.replace(fact, "")
    for own in _OWN_JSON:
        while own in lower:
            at = lower.index(own)
            end = lower.find(")", at)
            if end < 0 or not lower[at:end].rstrip("'\"").endswith(".json"):
                return False
            lower = lower[:at] + lower[end + 1 :]
    return not any(word in lower for word in _UNSAFE)


def code_calls(code: str, language: str) -> list[Call]:
    """The recognized calls in `code` written in `language` (python, node, perl, ruby, php):
    deletes, writes over a file (`open(p, 'w')`, `writeFileSync`) and shell lines."""
    tokens = _home_spelled(_tokens(code, language))
    calls: list[Call] = []
    for index, (kind, text) in enumerate(tokens):
        if kind == "cmd":  # a backtick command: a shell line
            calls.append(Call("`…`", SHELL, False, (text,)))
        elif kind == "name":
            found = _call(text)
            if found is None and text in _OPEN:
                args = _arguments(tokens, index + 1)
                if not args and language == "perl":  # `open(F, ">/x")`, `open(my $f, '>', p)`
                    comma = next((i for i in range(index, min(index + 6, len(tokens)))
                                  if tokens[i] == ("op", ",")), None)  # fmt: skip
                    args = _arguments(tokens, comma + 1) if comma is not None else ()
                mode = _open_mode(args)
                if args and mode is not None and ("w" in mode or mode[:1] == ">"):
                    perl = mode[:1] == ">" and len(args) > 1  # `open(F, '>', path)`
                    path = args[-1] if perl else args[0]
                    if not path.startswith(">>") and mode != ">>":  # (appending loses nothing)
                        calls.append(Call(text, WRITE, False, (path.lstrip(">+ "),)))
                continue
            if found is None and text.rsplit(".", 1)[-1] in ("Path", "Pathname", "new"):
                method = _path_method(tokens, index + 1)
                if method is not None:
                    args = _arguments(tokens, index + 1)
                    if args:
                        kind_, recursive = _PATH_METHODS[method]
                        calls.append(Call(f"{text}.{method}", kind_, recursive, args[:1]))
                continue
            if found is not None:
                args = _arguments(tokens, index + 1)
                if args:
                    calls.append(Call(text, found[0], found[1], args))
    return calls


def _open_mode(args: tuple[str, ...]) -> str | None:
    """The mode an `open` call is given: its second literal argument (Perl's three-argument
    `open(F, '>', path)` and two-argument `open(F, ">path")` too), or None."""
    if len(args) >= 2 and args[0].strip() in (">", "+>", ">>", "+<"):  # Perl's 3 arguments
        return args[0].strip()
    if len(args) >= 2:
        return args[1]
    if len(args) == 1 and args[0][:1] == ">":  # Perl: `open(F, ">/etc/x")`
        return ">"
    return None


def _path_method(tokens: list[tuple[str, str]], at: int) -> str | None:
    """The method called on a path object built at `at` (`Path('/x').unlink()`), or None."""
    if tokens[at : at + 1] != [("op", "(")]:
        return None
    level = 0
    while at < len(tokens):
        if tokens[at] == ("op", "("):
            level += 1
        elif tokens[at] == ("op", ")"):
            level -= 1
            if level == 0:
                break
        at += 1
    after = tokens[at + 1 : at + 3]
    if len(after) == 2 and after[0] == ("op", ".") and after[1][0] == "name":
        name = after[1][1].split(".", 1)[0]
        return name if name in _PATH_METHODS else None
    if len(after) >= 1 and after[0][0] == "name" and after[0][1].startswith("."):
        return None
    return None


def _home_spelled(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The tokens with code naming the home directory (`os.path.expanduser('~')`,
    `process.env.HOME`, `Path.home()`) replaced by the string `~`, then strings joined by `+`
    and calls building a path of literals (`os.path.join('/a', 'b')`, `glob('/x/*')`) by the
    path they build."""
    return _joined(_homes(tokens))


def _homes(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(tokens):
        kind, text = tokens[at]
        if kind == "name" and (text in _HOMES or text.startswith(_HOMES)):
            home = _home_end(tokens, at, text)
            if home is not None:
                if out[-5:] == [("name", "require"), ("op", "("), ("str", "os"), ("op", ")"),
                                ("op", ".")]:  # fmt: skip
                    del out[-5:]  # `require('os').homedir()`
                out.append(("str", home[1]))
                at = home[0]
                continue
        out.append((kind, text))
        at += 1
    return out


def _joined(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(tokens):
        kind, text = tokens[at]
        if kind == "str" and len(out) >= 2 and out[-1] == ("op", "+") and out[-2][0] == "str":
            out[-2:] = [("str", out[-2][1] + text)]  # `home + '/.bashrc'`
            at += 1
            continue
        if kind == "name" and text in _JOINERS and tokens[at + 1 : at + 2] == [("op", "(")]:
            parts: list[str] = []
            end = at + 2
            while end < len(tokens) and tokens[end][0] == "str":
                parts.append(tokens[end][1])
                end += 1
                if tokens[end : end + 1] == [("op", ",")]:
                    end += 1
            if parts and tokens[end : end + 1] == [("op", ")")]:
                joined = parts[0]
                for part in parts[1:]:
                    joined = part if part.startswith("/") else joined.rstrip("/") + "/" + part
                if tokens[end + 1 : end + 2] == [("op", ".")]:  # `Path('/x').unlink()`
                    out.extend(tokens[at : end + 1])
                    at = end + 1
                    continue
                out.append(("str", joined))
                at = end + 1
                continue
        out.append((kind, text))
        at += 1
    return out


def _home_end(tokens: list[tuple[str, str]], at: int, text: str) -> tuple[int, str] | None:
    """Where code naming the home directory at `at` ends, and the path it names."""
    nxt = tokens[at + 1 : at + 2]
    if text in ("process.env.HOME", "Dir.home", "Bun.env.HOME") or text.endswith(".HOME"):
        end = at + 1
        if tokens[end : end + 2] == [("op", "("), ("op", ")")]:
            end += 2
        return end, HOME
    if nxt == [("op", "(")] or nxt == [("op", "[")] or nxt == [("op", "{")]:
        closing = {"(": ")", "[": "]", "{": "}"}[nxt[0][1]]
        inner = tokens[at + 2 : at + 4]
        if inner[:1] == [("op", closing)]:  # `Path.home()`, `os.homedir()`
            return (at + 3, HOME) if "home" in text.lower() else None
        closed = tokens[at + 3 : at + 4] == [("op", closing)]
        if closed and inner[0][0] in ("str", "name") and inner[0][1] in ("HOME", "USERPROFILE"):
            return at + 4, HOME
        if closed and inner[0][0] == "str" and inner[0][1].startswith("~"):  # expanduser('~/x')
            return at + 4, inner[0][1]
    return None


def _call(name: str) -> tuple[str, bool] | None:
    if name in _QUALIFIED:
        return _QUALIFIED[name]
    last = name.rsplit(".", 1)[-1]
    if last in _SUBPROCESS_ONLY and not name.endswith("subprocess." + last):
        return None
    return _DISTINCT.get(last)


def _arguments(tokens: list[tuple[str, str]], at: int) -> tuple[str, ...]:
    """The leading literal arguments of a call (strings, lists of strings, flattened): with or
    without parentheses (Perl and Ruby call without). Empty when the first is not literal."""
    if at < len(tokens) and tokens[at] == ("op", "("):
        at += 1
    args: list[str] = []
    while at < len(tokens):
        kind, text = tokens[at]
        if kind == "str":
            args.append(text)
            at += 1
        elif (kind, text) == ("op", "["):
            at += 1
            while at < len(tokens) and tokens[at][0] == "str":
                args.append(tokens[at][1])
                at += 1
                if tokens[at : at + 1] == [("op", ",")]:
                    at += 1
            if tokens[at : at + 1] != [("op", "]")]:
                args.append("\0")  # a list with a part known only when it runs
            at += 1
        elif kind == "name" and args:  # a variable among literal arguments, or keywords
            if tokens[at + 1 : at + 2] == [("op", "=")]:  # `shell=True`: the list is over
                break
            args.append("\0")
            at += 1
        else:
            break
        if tokens[at : at + 1] != [("op", ",")]:
            break
        at += 1
    return tuple(args)


def _tokens(code: str, language: str) -> list[tuple[str, str]]:
    """Names (dotted: `os.path.join`, `File::Path::rmtree`), string literals (their text,
    with `\\0` for interpolated parts), backtick commands and single-character operators;
    comments skipped."""
    out: list[tuple[str, str]] = []
    at = 0
    hash_comments = language in ("python", "perl", "ruby", "php")
    slash_comments = language in ("node", "php")
    while at < len(code):
        char = code[at]
        if char.isspace():
            at += 1
        elif (char == "#" and hash_comments) or (code.startswith("//", at) and slash_comments):
            end = code.find("\n", at)
            at = len(code) if end < 0 else end
        elif char.isalpha() or char in "_$":
            end = at
            while end < len(code) and (code[end].isalnum() or code[end] in "_$"):
                end += 1
            while True:  # a dotted name goes on past each joint followed by a name
                joint = next((j for j in (".", "::", "->") if code.startswith(j, end)), "")
                following = code[end + len(joint) : end + len(joint) + 1]
                if not joint or not (following.isalpha() or following == "_"):
                    break
                end += len(joint)
                while end < len(code) and (code[end].isalnum() or code[end] in "_$"):
                    end += 1
            word = code[at:end]
            prefix = word.lower() if language == "python" else ""
            if prefix in _STRING_PREFIXES and code[end : end + 1] in ("'", '"'):
                text, at = _string(code, end, language, prefix)
                out.append(("str", text))
                continue
            out.append(("name", word.replace("::", ".").replace("->", ".")))
            at = end
        elif char in "'\"" or (char == "`" and language == "node"):
            text, at = _string(code, at, language, "")
            out.append(("str", text))
        elif char == "`":  # Perl, Ruby, PHP: a command run by the shell
            end = code.find("`", at + 1)
            end = len(code) if end < 0 else end
            out.append(("cmd", code[at + 1 : end]))
            at = end + 1
        else:
            out.append(("op", char))
            at += 1
    return out


def _string(code: str, at: int, language: str, prefix: str) -> tuple[str, int]:
    """The literal starting at `at` (a quote) and the index after it."""
    quote = code[at]
    if language == "python" and code.startswith(quote * 3, at):
        quote = quote * 3
    raw = "r" in prefix or (quote == "'" and language in ("perl", "ruby", "php"))
    parts: list[str] = []
    index = at + len(quote)
    while index < len(code) and not code.startswith(quote, index):
        char = code[index]
        if char == "\\" and not raw and index + 1 < len(code):
            escaped = code[index + 1]
            parts.append({"n": "\n", "t": "\t"}.get(escaped, escaped))
            index += 2
            continue
        parts.append(char)
        index += 1
    text = "".join(parts)
    interpolated = (
        ("f" in prefix and "{" in text)
        or (quote == "`" and "${" in text)
        or (quote == '"' and language in ("perl", "php") and "$" in text)
        or (quote == '"' and language == "ruby" and "#{" in text)
    )
    if interpolated:
        text = _mark(text)
    return text, min(len(code), index + len(quote))


def _mark(text: str) -> str:
    """An interpolated string: its literal head, then a marker for the rest."""
    cut = min((i for i, c in enumerate(text) if c in "{$#"), default=len(text))
    return text[:cut] + "\0"
