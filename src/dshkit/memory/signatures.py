"""An error's signature, read two ways from a failed command's output: its telling line for
the harvest (`signature`), and the short tokens that name the failure for the injection
(`tokens`).

`signature` names what went wrong by its class and a short message
(`ModuleNotFoundError: No module named 'x'`, `error[E0432]`, `npm ERR! code E404`,
`Permission denied (publickey)`, an exit status), chosen by the kind of line it is, not by the
first line that holds the word "error". `SIGNATURES` is the list, as data, most telling first:
the line a signature of an earlier entry matches wins over any line of a later one; among lines
of one entry the first wins. Each entry is a name (the family, stored with the signature), a
pattern over one stripped line whose groups `cls` and `msg` (optional) give the class and the
message, and a fixed class for patterns that have no `cls` group.

`tokens` is what a negative path's template says of the error when it is given to the next
session (docs/design/provenance.md#four-grades-of-source: external text is never put into an
agent's context word for word): extracted, not quoted. Exception and error class names
(`ModuleNotFoundError`), error codes of known shapes (`E501`, `TS2304`, `E0308`, `ENOENT`,
`ERESOLVE`), the exit status (`exit 2`), the count of failed tests, and a few phrases from
dshkit's own vocabulary (`command not found`). Each token is short and of a narrow alphabet, so
no sentence of the output can pass through it.

Pure and standard-library only: the injection uses `tokens` on the hooks' path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MESSAGE_CHARS = 160  # a signature's short message
LINE_CHARS = 300  # the line it was read from, as kept
SCAN_LINES = 4_000  # lines of an output looked at
HEAD_CHARS = 10_000  # of a long output, the start and the end read
MATCH_CHARS = 500  # of a line, what the patterns read (an error's line says it early)


@dataclass(frozen=True, slots=True)
class Signature:
    family: str  # which entry of SIGNATURES matched
    cls: str  # the error's class: an exception's name, a code, the kind of refusal
    message: str  # a short message ("" when the line says no more than its class)
    line: str  # the line it was read from
    exit_status: int | None = None  # the command's exit status, when its output says it

    def as_json(self) -> dict[str, object]:
        found: dict[str, object] = {"family": self.family, "class": self.cls}
        if self.message:
            found["message"] = self.message
        found["line"] = self.line
        if self.exit_status is not None:
            found["exitStatus"] = self.exit_status
        return found

    @property
    def short(self) -> str:
        """The class and message as one line: `ModuleNotFoundError: No module named 'x'`."""
        return f"{self.cls}: {self.message}" if self.message else self.cls


_PY_CLASS = r"(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Denied)"

# (family, pattern, fixed class): most telling first.
SIGNATURES: tuple[tuple[str, str, str], ...] = (
    # ssh and git over ssh: "git@github.com: Permission denied (publickey)."
    ("ssh", r"(?:^|:\s)(?P<cls>Permission denied \((?:publickey|password)[^)]*\))", ""),
    ("ssh", r"(?P<cls>Host key verification failed)", ""),
    # git push refused by the remote
    ("git", r"^!\s*\[(?P<cls>rejected|remote rejected)\]\s+(?P<msg>.+)$", ""),
    # rustc / cargo: error[E0432]: unresolved import `foo`
    ("rust", r"^(?P<cls>error\[E\d{4}\])\s*:\s*(?P<msg>.+)$", ""),
    # TypeScript: src/a.ts(3,1): error TS2307: Cannot find module 'x'
    ("typescript", r"\berror (?P<cls>TS\d{3,5}):\s*(?P<msg>.+)$", ""),
    # npm: "npm ERR! code E404" (npm 6-9) or "npm error code E404" (npm 10)
    # (ELIFECYCLE only says a script failed: what the script said is why, below)
    ("npm", r"^npm (?:ERR!|error) code (?P<cls>(?!ELIFECYCLE\b)E[A-Z0-9]+)\s*$", ""),
    # Python (pytest's "E   " prefix too), Java, .NET: a qualified exception class
    ("exception", rf"^(?:E\s+)?(?P<cls>{_PY_CLASS})(?::\s*(?P<msg>.*))?$", ""),
    # pytest's summary line: FAILED tests/t.py::test_x - KeyError: 'name'
    ("exception", rf"^FAILED \S+ - (?P<cls>{_PY_CLASS})(?::\s*(?P<msg>.*))?$", ""),
    # Node's uncaught error: "Error: Cannot find module 'left-pad'"
    ("exception", r"^(?:Uncaught\s+)?(?P<cls>(?:[A-Z]\w*)?Error):\s*(?P<msg>.+)$", ""),
    # Go: modules and packages, compile errors, a failed test
    (
        "go",
        r"(?P<msg>no required module provides package [^\s;]+|missing go\.sum entry for .+|"
        r"cannot find (?:package|module) .+)",
        "go: missing module",
    ),
    ("go", r"^(?:\./)?\S+\.go:\d+:\d+:\s*(?P<msg>.+)$", "go: compile error"),
    ("go", r"^--- FAIL: (?P<msg>\S+)", "go test: FAIL"),
    # Docker
    ("docker", r"^(?:docker: )?Error response from daemon:\s*(?P<msg>.+)$", "docker: daemon error"),
    ("docker", r"^ERROR: failed to solve:\s*(?P<msg>.+)$", "docker build: failed to solve"),
    (
        "docker",
        r"(?P<msg>permission denied while trying to connect to the Docker daemon.*)$",
        "docker: permission denied",
    ),
    # a program the shell did not find
    ("shell", r"(?:^|:\s)(?P<msg>[\w./-]+): command not found$", "command not found"),
    ("shell", r"command not found:\s*(?P<msg>\S+)$", "command not found"),
    # a compiler's located error (gcc, clang): src/a.c:3:10: fatal error: zlib.h: …
    ("tool", r"^[\w./-]+:\d+(?::\d+)?:\s*(?P<cls>error|fatal error):\s*(?P<msg>.+)$", ""),
    # errno-style refusals (EACCES, ENOENT, …) and their plain words
    ("errno", r"\b(?!ERR)(?P<cls>E[A-Z]{3,})\b:?\s*(?P<msg>[a-z][^,]*(?:,.*)?)$", ""),
    ("errno", r"\b(?:No such file or directory|Permission denied)\s*$", "OSError"),
    # tools' fatal and error lines (git, gcc, apt, make's own)
    ("tool", r"^(?P<cls>fatal|FATAL|panic):\s*(?P<msg>.+)$", ""),
    ("tool", r"^(?P<cls>error|ERROR|Error|E):\s*(?P<msg>.+)$", ""),
    # a tool's named error line: "Config error: …", "ENV error: …", "Build Error: …"
    (
        "tool",
        r"^(?P<cls>[A-Za-z][\w-]{0,20}(?: [A-Za-z][\w-]{0,20})? (?:error|Error|ERROR)):"
        r"\s*(?P<msg>.+)$",
        "",
    ),
    # a failing test count ("1 failed, 3 passed"), a failed test result
    ("tests", r"(?P<msg>\b[1-9]\d* (?:failed|failing)\b.*|test result: FAILED.*)$", "tests failed"),
    # npm's "a script failed", when nothing the script said was telling
    ("npm", r"^npm (?:ERR!|error) code (?P<cls>ELIFECYCLE)\s*$", ""),
    # only the status: make's, Go's, a harness's wrapper
    ("exit", r"^make(?:\[\d+\])?: \*\*\* .*Error (?P<status>\d+)", "exit status"),
    ("exit", r"^exit status (?P<status>\d+)$", "exit status"),
    ("exit", r"^(?:Process exited with code|Exit code:) (?P<status>-?\d+)$", "exit status"),
)

_COMPILED = tuple((family, re.compile(pattern), fixed) for family, pattern, fixed in SIGNATURES)
_STATUS = re.compile(
    r"^(?:Process exited with code|Exit code:|exit status) (-?\d+)\s*$|"
    r"^make(?:\[\d+\])?: \*\*\* .*Error (\d+)",
    re.M,
)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# A line no signature can match holds none of these: the patterns run only where one is.
_HINT = re.compile(
    r"error|exception|denied|fatal|panic|fail|not found|no such|rejected|exit|interrupt|"
    r"verification|^npm |^E[:\s]|\.go:\d|\bE[A-Z]{3,}\b",
    re.IGNORECASE,
)


def exit_status(text: str) -> int | None:
    """The exit status the output states (a harness's wrapper, make, Go), or None."""
    found = _STATUS.search(text)
    if found is None:
        return None
    status = int(found[1] or found[2])
    return status if status else None


_NPM_DETAIL = re.compile(
    r"^npm (?:ERR!|error) (?!code\b|errno\b|syscall\b|path\b|A complete log)(.+)$"
)


def _npm_message(lines: list[str]) -> str:
    """npm says the code on one line and what it means on the next ones."""
    for line in lines[:8]:
        if found := _NPM_DETAIL.match(line):
            return found[1].strip()
    return ""


def signature(text: str) -> Signature | None:
    """The most telling error signature of `text` (a failed command's output), or None when
    no line reads like one."""
    if len(text) > 2 * HEAD_CHARS:  # a long output: its start and its end say why
        text = text[:HEAD_CHARS] + "\n" + text[-HEAD_CHARS:]
    lines = [line.strip() for line in text.splitlines()[:SCAN_LINES]]
    lines = [line for line in lines if line]
    best: tuple[int, int, re.Match[str]] | None = None
    for number, whole in enumerate(lines):
        line = whole[:MATCH_CHARS]
        if not _HINT.search(line):
            continue
        for rank, (_family, pattern, _fixed) in enumerate(_COMPILED):
            if best is not None and rank >= best[0]:
                break
            found = pattern.search(line)
            if found is not None:
                best = (rank, number, found)
                break
    if best is None:
        return None
    rank, number, found = best
    family, _pattern, fixed = _COMPILED[rank]
    groups = found.groupdict()
    cls = (groups.get("cls") or fixed).strip()
    message = (groups.get("msg") or "").strip().rstrip(".。;；:")
    if "msg" not in groups and fixed == "OSError":  # the whole line says what was refused
        message = lines[number]
    if family == "npm":
        message = _npm_message(lines[number + 1 :])
    status = exit_status(text)
    if groups.get("status") is not None:
        status = int(groups["status"]) or None
        message = ""
        cls = f"exit status {status}" if status is not None else cls
    return Signature(family, cls, _clip(message, MESSAGE_CHARS), lines[number][:LINE_CHARS], status)


# -- the injection's tokens ------------------------------------------------------------

MAX_TOKENS = 4
MAX_TOKEN = 48
TOKEN_SCAN_CHARS = 200_000  # of an output, read for its tokens (the tail too: tracebacks end it)

# An exception or error class: a capitalised identifier ending in one of these words, maybe
# qualified (`requests.exceptions.ConnectionError`), keeping the last part.
_EXCEPTION = re.compile(
    r"(?<![\w.])(?:[A-Za-z_][\w]*\.)*([A-Z][A-Za-z0-9]{0,40}(?:Error|Exception|Exit|Interrupt|"
    r"Failure|Fault|Panic|Timeout))\b"
)
# Error codes: a linter's (E501, F401, W0611, SC2086), TypeScript's (TS2304), Rust's
# (error[E0308]), errno names (ENOENT), npm's (npm ERR! code ERESOLVE), HTTP statuses.
_CODES = (
    re.compile(r"\berror\[(E\d{4})\]"),
    re.compile(r"\b(TS\d{4,5})\b"),
    re.compile(r"\b(SC\d{4})\b"),
    re.compile(r"(?:^|[\s:(\[])((?:E|F|W|C|N|B|D|UP|SIM|RUF|PL[CERW]?)\d{3,4})\b", re.M),
    re.compile(
        r"\b(E(?:NOENT|ACCES|PERM|EXIST|ADDRINUSE|CONNREFUSED|CONNRESET|TIMEDOUT|"
        r"NOTFOUND|NOSPC|ISDIR|NOTDIR|RESOLVE|NOMEM|PIPE|AI_AGAIN|INTEGRITY|LIFECYCLE))\b"
    ),
    re.compile(r"\bHTTP(?:/[\d.]+)?\s+([45]\d\d)\b"),
)
_EXIT_TOKENS = (
    re.compile(r"\bexit(?:ed)?\s+(?:with\s+)?(?:code|status)[:\s]+(-?\d{1,3})\b", re.I),
    re.compile(r"\bnon-zero exit status (\d{1,3})\b"),
    re.compile(r"\bexit code:?\s*(-?\d{1,3})\b", re.I),
    re.compile(r"\"exit_code\":\s*(-?\d{1,3})"),
    re.compile(r"^make(?:\[\d+\])?: \*\*\* .{0,200}? Error (\d{1,3})", re.M),
)
_FAILED_TESTS = re.compile(r"\b([1-9]\d{0,5}) (?:failed|failing)\b")
# Phrases a failure is known by, each said in dshkit's own words (the output's are not kept).
_PHRASES = (
    (re.compile(r"command not found|is not recognized as an internal", re.I), "command not found"),
    (
        re.compile(r"no such file or directory|找不到文件|cannot find the (?:file|path)", re.I),
        "no such file or directory",
    ),
    (re.compile(r"permission denied|权限不够|拒绝访问", re.I), "permission denied"),
    (re.compile(r"connection refused|连接被拒绝", re.I), "connection refused"),
    (re.compile(r"\btimed out\b|超时", re.I), "timed out"),
    (re.compile(r"segmentation fault|core dumped", re.I), "segmentation fault"),
    (re.compile(r"out of memory|\boom\b|cannot allocate memory", re.I), "out of memory"),
    (re.compile(r"merge conflict|CONFLICT \(", re.I), "merge conflict"),
    (re.compile(r"could not resolve host|name or service not known", re.I), "host not resolved"),
    (re.compile(r"authentication failed|unauthori[sz]ed|\b401\b", re.I), "authentication failed"),
    (re.compile(r"syntax error", re.I), "syntax error"),
)
_SAFE = re.compile(r"^[A-Za-z0-9_\[\]. -]+$")


def tokens(output: str, status: int | None = None) -> list[str]:
    """The tokens that name the failure in `output` (empty: nothing known; `status`: the
    exit status when the caller knows it), most telling first: exception classes (the last
    raised first: a traceback ends with it), codes, the failed tests, the exit status, a
    phrase."""
    text = (
        output
        if len(output) <= TOKEN_SCAN_CHARS
        else output[: TOKEN_SCAN_CHARS // 2] + "\n" + output[-TOKEN_SCAN_CHARS // 2 :]
    )
    found: list[str] = []

    def add(token: str) -> None:
        token = token.strip()
        if token and len(token) <= MAX_TOKEN and _SAFE.match(token) and token not in found:
            found.append(token)

    for name in reversed(_EXCEPTION.findall(text)):
        add(name)
    for pattern in _CODES:
        for code in pattern.findall(text):
            add(code)
    if match := _FAILED_TESTS.search(text):
        add(f"{match[1]} failed")
    if status is None:
        for pattern in _EXIT_TOKENS:
            if (match := pattern.search(text)) and match[1] != "0":
                status = int(match[1])
                break
    if status:
        add(f"exit {status}")
    if len(found) < MAX_TOKENS:
        for pattern, phrase in _PHRASES:
            if pattern.search(text):
                add(phrase)
    return found[:MAX_TOKENS]
