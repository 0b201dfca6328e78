"""Host noise stripping: the one choke point that keeps the source machine's paths out of a handoff.

A transcript is true history, but paths of the machine it ran on (a home directory, AppData,
`/tmp`) are unreadable to the new session and hint that the profile directory is part of the
workspace (docs/design/graft.md#host-noise-is-stripped-project-paths-stay).
`strip_host_noise(text, cwd)` works paragraph by paragraph
(blank-line separated):

- A paragraph made only of host paths, punctuation and whitespace becomes `NOISE_MARKER`.
- The output of a machine-wide scan (at least `SCAN_MIN_LINES` lines starting with an absolute
  path, two thirds of the paragraph or more, none inside the workspace, and reaching past
  one top-level directory or into a host location) becomes `FOLDED_MARKER`.
- Any other paragraph keeps every word and every workspace path; each host path token in it is
  replaced by `HOST_PATH_MARKER`.

The criterion is narrow on purpose. A host path is an absolute path outside `cwd` in a place
that belongs to the machine or a person rather than to a project: a home directory
(`/home/<u>`, `/Users/<u>`, `/root`, `~`, `$HOME`, `C:\\Users\\<u>`, `%USERPROFILE%`), AppData
and the other Windows profile variables, temporary directories (`/tmp`, `/var/tmp`,
`/var/folders`, `/private/...`, `/run/user`) and `C:\\Windows` / `C:\\ProgramData`. System paths
such as `/etc/nginx` or `/usr/lib` and other drives' project paths are kept: the work may be
about them. A path under `cwd` is a workspace path even when `cwd` itself sits in a home
directory or in `/tmp`; Windows-shaped paths compare case-insensitively and with either slash.
Relative paths (`src/a.py`, `rg foo src/`) are never touched, and a paragraph with no host path
is returned byte for byte.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Literal

NOISE_MARKER = "[宿主环境噪音，已过滤]"
FOLDED_MARKER = "[命令输出已折叠]"
HOST_PATH_MARKER = "[宿主路径]"
SCAN_MIN_LINES = 5  # fewer path lines than this read as a mention, not as a scan's output


@dataclass(frozen=True, slots=True)
class Stripped:
    """The text with host noise taken out, and how much was taken (for the slimming note)."""

    text: str
    paragraphs_dropped: int
    tokens_redacted: int
    outputs_folded: int


# What may follow a path's first separator: anything but whitespace, quotes, brackets, the
# separators of shell syntax and CJK punctuation. `:` ends a path so `path:12:` (grep output)
# yields the path; a drive letter's colon is matched before the body starts.
_BODY = r"[^\s\"'`<>|;,:()\[\]{}，。；：！？、（）【】「」《》]*"
# Not preceded by a letter, digit, path character or `<`: `/tmp` in `https://x.org/tmp`, in
# `a/tmp` or `/root` in `</root>` is part of something else. CJK letters may touch a path
# ("写到/tmp/x"), so ASCII only.
_PATH = re.compile(
    r"(?<![A-Za-z0-9_/\\.~$%<-])(?:"
    rf"[A-Za-z]:[\\/]{_BODY}"  # C:\Users\… or C:/Users/…
    rf"|%[A-Za-z_]+%(?:[\\/]{_BODY})?"  # %APPDATA%\…
    rf"|\$env:[A-Za-z_]+(?:[\\/]{_BODY})?"  # $env:USERPROFILE\…
    rf"|\$\{{?HOME\}}?(?:/{_BODY})?"  # $HOME/…, ${{HOME}}/…
    rf"|~[\\/]{_BODY}"  # ~/…
    rf"|/+[^\s/\"'`<>|;,:()\[\]{{}}，。；：！？、（）【】「」《》]{_BODY}"  # /x…, file:///x…
    r")"
)
_WINDOWS = re.compile(r"^[a-z]:/")
_HOST_POSIX = re.compile(
    r"^/(?:home/[^/]+|users/[^/]+|root|tmp|var/tmp|var/folders|private/(?:tmp|var)|run/user"
    r"|mnt/[a-z]/users/[^/]+)(?:/|$)",
    re.IGNORECASE,
)
_HOST_WINDOWS = re.compile(
    r"^[a-z]:/(?:users/[^/]+|documents and settings|windows|programdata)(?:/|$)|/appdata(?:/|$)"
)
_HOME_OF = re.compile(r"^(/home/[^/]+|/Users/[^/]+|/root|[a-z]:/users/[^/]+)(?:/|$)")
_HOME_VARIABLES = {"home", "userprofile", "homepath"}  # `%…%` / `$env:…` that are a home
_PARAGRAPH_BREAK = re.compile(r"((?:\r?\n)(?:[ \t]*\r?\n)+)")
_FENCE = re.compile(r"^\s*(?:```|~~~)")

Kind = Literal["workspace", "host", "other"]


def _normalize(path: str) -> str:
    """One spelling per place: forward slashes, no repeated or trailing ones, `.`/`..` resolved,
    and lower case for a Windows-shaped path (drive letters and NTFS ignore case)."""
    path = re.sub(r"[\\/]+", "/", path)
    windows = re.match(r"^[A-Za-z]:/", path) is not None
    if windows:
        path = path[:2] + posixpath.normpath(path[2:])
        return path.lower()
    return posixpath.normpath(path) if path.startswith("/") else path


@dataclass(frozen=True, slots=True)
class _Workspace:
    root: str  # normalized cwd; "" when none is known
    home: str | None  # the home directory cwd sits in, if it sits in one

    @classmethod
    def of(cls, cwd: str) -> _Workspace:
        root = _normalize(cwd) if cwd else ""
        home = _HOME_OF.match(root)
        return cls(root, home.group(1) if home else None)

    def contains(self, path: str) -> bool:
        if not self.root or self.root == "/":  # a workspace of the whole disk is no workspace
            return False
        return path == self.root or path.startswith(self.root.rstrip("/") + "/")

    def kind(self, token: str) -> Kind:
        """Whether a path token is in the workspace, a host path, or some other path."""
        path = self._expand(token)
        if path is None:
            return "host"  # a profile variable with no home to resolve it against
        path = _normalize(path)
        if self.contains(path):
            return "workspace"
        if _WINDOWS.match(path):
            return "host" if _HOST_WINDOWS.search(path) else "other"
        return "host" if _HOST_POSIX.match(path) else "other"

    def _expand(self, token: str) -> str | None:
        """The token with a leading `~` / `$HOME` / `%USERPROFILE%` spelled out as cwd's home
        (only a home-relative spelling can be a workspace path); None when it cannot be."""
        variable = re.match(r"^(?:~|\$\{?(HOME)\}?|%([A-Za-z_]+)%|\$env:([A-Za-z_]+))", token)
        if variable is None:
            return token
        name = (variable.group(1) or variable.group(2) or variable.group(3) or "home").lower()
        if name not in _HOME_VARIABLES or self.home is None:
            return None
        return self.home + token[variable.end() :]


def _tokens(paragraph: str) -> list[tuple[int, int, str]]:
    """Each path token as (start, end, text), trailing sentence dots and glob stars left out."""
    found = []
    for match in _PATH.finditer(paragraph):
        text = match.group().rstrip(".*")
        if len(text) > 1:
            found.append((match.start(), match.start() + len(text), text))
    return found


def strip_host_noise(text: str, cwd: str) -> Stripped:
    """`text` with host noise dropped, folded or redacted as the module docstring says."""
    workspace = _Workspace.of(cwd)
    parts = _PARAGRAPH_BREAK.split(text)
    dropped = redacted = folded = 0
    for index in range(0, len(parts), 2):  # odd indices are the blank-line separators
        paragraph = parts[index]
        tokens = [(s, e, t, workspace.kind(t)) for s, e, t in _tokens(paragraph)]
        if not tokens:
            continue
        if _is_scan_output(paragraph, tokens):
            parts[index] = _replace_content(paragraph, FOLDED_MARKER)
            folded += 1
            continue
        hosts = [(s, e) for s, e, _, kind in tokens if kind == "host"]
        if not hosts:
            continue
        if not any(ch.isalpha() for ch in _cut(paragraph, hosts, "")):
            parts[index] = _replace_content(paragraph, NOISE_MARKER)
            dropped += 1
        else:
            parts[index] = _cut(paragraph, hosts, HOST_PATH_MARKER)
            redacted += len(hosts)
    return Stripped("".join(parts), dropped, redacted, folded)


def _cut(paragraph: str, spans: list[tuple[int, int]], marker: str) -> str:
    pieces, last = [], 0
    for start, end in spans:
        pieces += [paragraph[last:start], marker]
        last = end
    return "".join(pieces) + paragraph[last:]


def _replace_content(paragraph: str, marker: str) -> str:
    """The paragraph as one marker, keeping its code fence lines so a fenced block that spans
    paragraphs stays balanced."""
    lines = paragraph.splitlines()
    fences = [i for i, line in enumerate(lines) if _FENCE.match(line)]
    content = [i for i in range(len(lines)) if i not in fences]
    if not content:
        return paragraph
    before = [lines[i] for i in fences if i < content[0]]
    after = [lines[i] for i in fences if i > content[0]]
    return "\n".join([*before, marker, *after])


def _is_scan_output(paragraph: str, tokens: list[tuple[int, int, str, Kind]]) -> bool:
    """Many lines each starting with an absolute path, none in the workspace, spread over the
    machine (more than one top-level directory, or into a host location)."""
    if any(kind == "workspace" for *_, kind in tokens):
        return False
    starts = {start: (text, kind) for start, _, text, kind in tokens}
    lines, offset, heads = 0, 0, []
    for line in paragraph.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not _FENCE.match(line):
            lines += 1
            head = starts.get(offset + len(line) - len(line.lstrip()))
            # `/help` or `/usr` alone is a word or a listing of `/`, not a found file
            if head is not None and (head[1] == "host" or _normalize(head[0]).count("/") > 1):
                heads.append(head)
        offset += len(line)
    if len(heads) < SCAN_MIN_LINES or len(heads) * 3 < lines * 2:
        return False
    roots = {_normalize(text).split("/")[:2][-1] for text, _ in heads}
    return len(roots) > 1 or any(kind == "host" for _, kind in heads)
