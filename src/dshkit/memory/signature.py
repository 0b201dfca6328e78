"""An error's signature: what kind of failure a tool's output shows, in dshkit's own words.

A negative path is given to the next session as dshkit's template, never as a line of the
tool's output (docs/design/provenance.md#four-grades-of-source: external text is never put
into an agent's context word for word). What the template says of the error is extracted,
not quoted: exception and error class names (`ModuleNotFoundError`), error codes of known
shapes (`E501`, `TS2304`, `E0308`, `ENOENT`, `ERESOLVE`), the exit status (`exit 2`), the count
of failed tests, and a few phrases from dshkit's own vocabulary (`command not found`). Each
token is short and of a narrow alphabet, so no sentence of the output can pass through it.

Pure and standard-library only: the harvest and the injection both use it (the injection on
the hooks' path).
"""

from __future__ import annotations

import re

MAX_TOKENS = 4
MAX_TOKEN = 48
SCAN_CHARS = 200_000  # of an output, read for its signature (the tail too: tracebacks end it)

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
_EXIT = (
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


def signature(output: str, exit_status: int | None = None) -> list[str]:
    """The tokens that name the failure in `output` (empty: nothing known), most telling
    first: exception classes (the last raised first: a traceback ends with it), codes, the
    failed tests, the exit status, a phrase."""
    text = (
        output
        if len(output) <= SCAN_CHARS
        else output[: SCAN_CHARS // 2] + "\n" + output[-SCAN_CHARS // 2 :]
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
    status = exit_status
    if status is None:
        for pattern in _EXIT:
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
