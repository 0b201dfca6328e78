"""Read-only grounding for the optimizer model: `read`/`glob`/`grep` rooted at the session's cwd.

The optimizer verifies and locates facts in the session's working directory
(docs/design/optimizer.md#grounding-reads-the-project-read-only), and only what it actually
read may be stated as fact (iron rule 1). A `Workspace`
is the dispatcher the tool loop (`dshkit.llm.run_tool_loop`) calls; it

- never lets a path escape its root (`..`, absolute paths, symlinks resolving outside), never
  walks `.git/`, skips what `.gitignore` files ignore, binary files, non-regular files (a FIFO
  would block), and files over a size limit (refused by name); it never opens
  secrets-looking files (`SECRET_NAMES`, `SECRET_DIRS`) and does not even list them;
- bounds its own work (lines and bytes per read, paths per glob, files, bytes and hits per
  grep, directory entries per walk) and says so whenever a bound stops it;
- keeps every result within the loop's per-result cap and what is left of its total budget
  (`GroundingLimits.tool_limits()` gives the loop the same numbers), so the loop never cuts a
  result and the ledger holds exactly the lines the model was shown;
- records the evidence ledger: each read's returned line range and each grep hit shown; a glob
  records nothing, because a listed name is not known content.

Every refusal is a short tool result in Chinese (the model reads it), never an exception.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pathspec.patterns.gitignore import GitIgnorePatternError
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from ..errors import Invalid, Unavailable
from ..llm.tools import ToolLimits

# Basenames (matched lowercased) whose content is never read, searched or listed: keys,
# certificates' private halves, credentials and environment files.
SECRET_NAMES = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.kdbx",
    "*.gpg",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials",
    "credentials.*",
    "*-credentials.*",
    "*_credentials.*",
    "service-account*.json",
    "auth.json",
    "secret",
    "secrets",
    "secret.*",
    "secrets.*",
    "*.secret",
    "*.secrets",
    "*.token",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
    ".dockercfg",
)
# Directories (matched lowercased) never entered: they hold keys and credentials as a whole.
SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".docker", ".kube", ".password-store"})

_BINARY_PROBE = 8192  # bytes looked at for a NUL, as git does
_GITIGNORE_BYTES = 256 * 1024  # a larger .gitignore is not one people write; it is skipped
_PATTERN_CHARS = 500  # longest regex or glob pattern accepted
_BRACE_EXPANSIONS = 64  # `{a,b}` alternatives one glob may expand to
_HIT_CHARS = 200  # characters of a grep hit's line shown
_NOTE_CHARS = 80  # characters of an evidence index note
_FOOTER_RESERVE = 400  # bytes kept free for the closing notes of a result
_CUT_NOTE = 200  # bytes kept free for the note that says rows were left out


def _tool(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


# The OpenAI function-calling schemas offered to the optimizer model.
TOOLS: list[dict[str, Any]] = [
    _tool(
        "read",
        "读取工作目录内的一个文本文件，按行返回并带行号，用于核实事实与定位（文件:行）。"
        "被 .gitignore 忽略的、二进制的、疑似密钥的和过大的文件不可读。",
        {
            "path": {"type": "string", "description": "相对于工作目录的文件路径"},
            "offset": {"type": "integer", "description": "从第几行开始（从 1 起），默认 1"},
            "limit": {"type": "integer", "description": "读多少行，默认读到单次上限"},
        },
        ["path"],
    ),
    _tool(
        "glob",
        "按通配模式列出工作目录内的文件路径（只有路径，不含内容），"
        "如 **/*.py、src/*.{ts,tsx}；* 不跨目录，** 跨任意层目录。",
        {"pattern": {"type": "string", "description": "相对于工作目录的通配模式"}},
        ["pattern"],
    ),
    _tool(
        "grep",
        "在工作目录内按 Python 正则表达式逐行搜索文件内容，返回「路径:行号: 该行」。",
        {
            "pattern": {"type": "string", "description": "Python re 正则表达式"},
            "path": {
                "type": "string",
                "description": "只搜这个文件或子目录（相对路径），默认整个工作目录",
            },
        },
        ["pattern"],
    ),
]
_ARGUMENTS = {
    "read": ("path", "offset", "limit"),
    "glob": ("pattern",),
    "grep": ("pattern", "path"),
}


@dataclass(frozen=True)
class GroundingLimits:
    """How much one optimization's tools may do; the loop's own bounds come from here too."""

    max_steps: int = 8  # model calls in the tool loop; the last may not call tools
    result_bytes: int = 12_000  # UTF-8 bytes of one tool result
    budget_bytes: int = 60_000  # UTF-8 bytes of all tool results together
    read_lines: int = 200  # lines one read returns at most
    line_chars: int = 500  # characters of one line shown by read (a longer one is cut, said)
    file_bytes: int = 1_000_000  # larger files are refused by read and skipped by grep
    glob_paths: int = 200  # paths one glob lists at most
    walk_entries: int = 20_000  # directory entries one glob or grep may visit
    grep_files: int = 2_000  # files one grep searches at most
    grep_bytes: int = 16_000_000  # bytes one grep reads at most
    grep_hits: int = 50  # hits one grep shows at most

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            least = {"max_steps": 2, "result_bytes": 2 * _FOOTER_RESERVE}.get(spec.name, 1)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(
                    f"GroundingLimits.{spec.name} must be an integer ≥ {least}, got {value!r}"
                )

    def tool_limits(self) -> ToolLimits:
        """The bounds to give `run_tool_loop` alongside a `Workspace` with these limits."""
        return ToolLimits(self.max_steps, self.result_bytes, self.budget_bytes)


@dataclass(frozen=True)
class Evidence:
    """One ledger entry: lines of a file the model was actually shown."""

    kind: str  # "read" (a range) or "grep" (one hit: first_line == last_line)
    path: str  # relative to the root, `/`-separated, as the model named it
    first_line: int
    last_line: int
    text: str  # read: the first non-blank line shown; grep: the hit's line (stripped)


class WorkspaceUnavailable(Unavailable):
    """The session's working directory cannot be used: the optimizer runs without tools."""


class _Refused(Invalid):
    """A tool call refused: its text is the result the model reads."""


class Workspace:
    """The read-only tools over one root directory, and the ledger of what they showed."""

    def __init__(self, root: str | os.PathLike[str] | None, limits: GroundingLimits | None = None):
        self.limits = limits or GroundingLimits()
        self.root = _usable_root(root)
        self._ignore = _GitIgnore(self.root)
        self._ledger: dict[tuple[str, str, int, int], Evidence] = {}
        self._shown: dict[str, dict[int, str]] = {}  # path → line → the text the model saw
        self._spent = 0  # result bytes counted against the budget, as the loop counts them

    # -- the dispatcher ---------------------------------------------------------------------

    def dispatch(self, name: str, arguments: dict[str, Any]) -> str:
        """Run one tool call (a `dshkit.llm.Dispatcher`): always text, never an exception."""
        tools: dict[str, Callable[[dict[str, Any]], str]] = {
            "read": self._read,
            "glob": self._glob,
            "grep": self._grep,
        }
        tool = tools.get(name)
        if tool is None:
            output = f"[错误：没有名为 {name!r} 的工具；可用的工具：read、glob、grep。]"
        elif not isinstance(arguments, dict):
            output = "[错误：参数必须是 JSON 对象。]"
        elif unknown := sorted(set(arguments) - set(_ARGUMENTS[name])):
            allowed = "、".join(_ARGUMENTS[name])
            output = f"[错误：{name} 没有参数 {'、'.join(unknown)}；可用参数：{allowed}。]"
        elif self._left() < _FOOTER_RESERVE:
            output = "[未执行：工具结果总预算已基本用完。请根据已有信息作答。]"
        else:
            try:
                output = tool(arguments)
            except _Refused as refusal:
                output = str(refusal)
            except (OSError, RuntimeError) as exc:  # a race with the disk, a symlink loop
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                output = f"[错误：文件系统错误：{why}]"
        # Counted exactly as the loop counts what it shows (never more than what is left).
        self._spent += min(len(output.encode()), self.limits.result_bytes, self._left())
        return output

    # -- the ledger -------------------------------------------------------------------------

    @property
    def ledger(self) -> list[Evidence]:
        """What the model was shown, in order, each entry once."""
        return list(self._ledger.values())

    def evidence_index(self) -> list[dict[str, Any]]:
        """The evidence index (依据索引, docs/design/optimizer.md#the-evidence-index):
        `{"path", "line", "note"}` per entry, note ≤ 80 chars."""
        index = []
        for entry in self._ledger.values():
            if entry.kind == "read":
                span = f"{entry.first_line}–{entry.last_line}"
                if entry.first_line == entry.last_line:
                    span = str(entry.first_line)
                note = f"读过第 {span} 行：{entry.text or '（空白）'}"
            else:
                note = entry.text
            index.append({"path": entry.path, "line": entry.first_line, "note": _clip(note)})
        return index

    def ranges(self) -> list[tuple[str, int, int]]:
        """Lines known per file, merged and sorted: a cited path:line in one is traced."""
        spans = sorted((e.path, e.first_line, e.last_line) for e in self._ledger.values())
        merged: list[tuple[str, int, int]] = []
        for path, first, last in spans:
            if merged and merged[-1][0] == path and first <= merged[-1][2] + 1:
                merged[-1] = (path, merged[-1][1], max(last, merged[-1][2]))
            else:
                merged.append((path, first, last))
        return merged

    def shown_lines(self) -> dict[str, dict[int, str]]:
        """The text of every line the model was shown, per file: what a citation of it can
        be checked against."""
        return {path: dict(found) for path, found in self._shown.items()}

    def _record(self, entry: Evidence) -> None:
        self._ledger.setdefault((entry.kind, entry.path, entry.first_line, entry.last_line), entry)

    # -- read -------------------------------------------------------------------------------

    def _read(self, arguments: dict[str, Any]) -> str:
        target = self._locate(arguments.get("path"), allow_root=False)
        if stat.S_ISDIR(target.st.st_mode):
            return f"[拒绝：{target.name} 是目录；列目录请用 glob。]"
        offset = _line_number(arguments.get("offset"), "offset", 1)
        limit = _line_number(arguments.get("limit"), "limit", self.limits.read_lines)
        lines = _lines(self._content(target))
        if not lines:
            return f"[{target.name} 是空文件。]"
        if offset > len(lines):
            return f"[拒绝：{target.name} 共 {len(lines)} 行，offset={offset} 超出范围。]"
        wanted = min(limit, self.limits.read_lines)
        room = self._cap() - _FOOTER_RESERVE
        shown: list[str] = []
        used = 0
        why = ""
        for number in range(offset, min(offset + wanted, len(lines) + 1)):
            text = lines[number - 1]
            if len(text) > self.limits.line_chars:
                text = (
                    f"{text[: self.limits.line_chars]}…[该行共 {len(text)} 字符，"
                    f"只显示前 {self.limits.line_chars} 个]"
                )
            row = f"{number:>6}\t{text}\n"
            if used + len(row.encode()) > room:
                why = "本次结果的字节上限"
                break
            shown.append(row)
            used += len(row.encode())
            self._shown.setdefault(target.name, {})[number] = text
        if not shown:
            return (
                f"[拒绝：{target.name} 第 {offset} 行超过本次结果还能容纳的字节数；"
                "工具结果总预算已所剩无几。]"
            )
        last = offset + len(shown) - 1
        if not why and limit > self.limits.read_lines and last < len(lines):
            why = f"单次最多 {self.limits.read_lines} 行"
        footer = ""
        if last < len(lines):
            stopped = f"，已达{why}" if why else ""
            footer = (
                f"[第 {offset}–{last} 行，共 {len(lines)} 行{stopped}；"
                f"继续读请用 offset={last + 1}。]\n"
            )
        first_text = next((line.strip() for line in lines[offset - 1 : last] if line.strip()), "")
        self._record(Evidence("read", target.name, offset, last, first_text))
        return "".join(shown) + footer

    # -- glob -------------------------------------------------------------------------------

    def _glob(self, arguments: dict[str, Any]) -> str:
        pattern = _pattern(arguments.get("pattern"))
        if pattern.startswith("/"):
            return "[拒绝：pattern 必须相对于工作目录，不能以 / 开头。]"
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        if ".." in parts:
            return "[拒绝：pattern 不得含 ..（不能离开工作目录）。]"
        alternatives = _braces("/".join(parts))
        if alternatives is None:
            return f"[拒绝：pattern 的 {{}} 展开超过 {_BRACE_EXPANSIONS} 种。]"
        # Git's wildmatch, anchored at the root: `*` stays within a directory, `**` crosses.
        try:
            matchers = [GitIgnoreSpecPattern(f"/{alt}") for alt in alternatives if alt]
        except (GitIgnorePatternError, re.error) as exc:
            return f"[拒绝：pattern 无法解析：{exc}]"
        # Walk only below the pattern's literal leading directories.
        prefix: list[str] = []
        for part in parts[:-1]:
            if any(c in part for c in "*?[{\\"):
                break
            prefix.append(part)
        start = self._locate("/".join(prefix), allow_root=True)
        found: list[str] = []
        walk = _Walk()
        # A prefix through a directory symlink is not walked, as no walk follows one.
        if stat.S_ISDIR(start.st.st_mode) and start.real_parts == tuple(prefix):
            for parts_found, _path, _st in self._files(start.real_parts, start.real, walk):
                name = "/".join(parts_found)
                if any(_matches_itself(m, name) for m in matchers):
                    found.append(name)
        found.sort()
        notes = []
        if walk.stopped:
            notes.append(
                f"[已停止：遍历了 {self.limits.walk_entries} 个目录项（上限），其余未遍历，"
                "结果可能不全；请用更具体的目录前缀。]"
            )
        secret = sum(1 for name in walk.secrets if any(_matches_itself(m, name) for m in matchers))
        if secret:
            notes.append(f"[另有 {secret} 个疑似密钥/凭据的文件或目录未列出，也不可读。]")
        tail = "".join(f"{note}\n" for note in notes)
        if not found:
            return f"[无匹配：{pattern}]\n{tail}"
        rows = [f"{name}\n" for name in found[: self.limits.glob_paths]]
        listed, why = self._fit(rows, tail)
        if len(listed) < len(found):
            reason = why or f"单次最多 {self.limits.glob_paths} 个"
            tail = (
                f"[共 {len(found)} 个匹配，按路径排序只列出前 {len(listed)} 个（{reason}）；"
                f"请缩小 pattern。]\n{tail}"
            )
        return "".join(listed) + tail

    # -- grep -------------------------------------------------------------------------------

    def _grep(self, arguments: dict[str, Any]) -> str:
        pattern = _pattern(arguments.get("pattern"))
        if _nested_repeat(pattern):
            return "[拒绝：正则里有被重复的分组又含重复（如 (a+)+），可能回溯爆炸；请改写。]"
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            return f"[拒绝：正则表达式无效：{exc}]"
        target = self._locate(arguments.get("path", ""), allow_root=True)
        walk = _Walk()
        if stat.S_ISDIR(target.st.st_mode):
            files = self._files(target.real_parts, target.real, walk)
        else:
            files = iter([(target.parts, target.real, target.st)])
        limits = self.limits
        hits: list[tuple[str, int, str]] = []
        searched = read_bytes = binary = 0
        too_big: list[str] = []
        stop = ""
        for parts, path, st in files:
            name = "/".join(parts)
            if st.st_size > limits.file_bytes:
                too_big.append(f"{_shorten(name, 60)}（{st.st_size} 字节）")
                continue
            if searched >= limits.grep_files:
                stop = f"已搜索 {limits.grep_files} 个文件（上限），其余文件未搜索"
                break
            if read_bytes + st.st_size > limits.grep_bytes:
                stop = f"已读 {read_bytes} 字节（上限 {limits.grep_bytes}），其余文件未搜索"
                break
            data = _read_regular(path, limits.file_bytes)
            if data is None:
                continue  # no longer a regular file
            if b"\0" in data[:_BINARY_PROBE]:
                binary += 1
                continue
            searched += 1
            read_bytes += len(data)
            for number, line in enumerate(_lines(data), 1):
                if regex.search(line):
                    hits.append((name, number, line.strip()))
                    if len(hits) >= limits.grep_hits:
                        stop = f"已达 {limits.grep_hits} 处匹配（上限），其后未再搜索"
                        break
            if stop:
                break
        if walk.stopped and not stop:
            stop = f"遍历了 {limits.walk_entries} 个目录项（上限），其余未遍历"
        notes = []
        if stop:
            notes.append(f"[已停止：{stop}；请缩小 path 或 pattern。]")
        skipped = []
        if binary:
            skipped.append(f"二进制文件 {binary} 个")
        if too_big:
            names = "、".join(too_big[:3]) + (f" 等 {len(too_big)} 个" if len(too_big) > 3 else "")
            skipped.append(f"超过 {limits.file_bytes} 字节的文件 {names}")
        if walk.secrets:
            skipped.append(f"疑似密钥/凭据的文件或目录 {len(walk.secrets)} 个")
        if skipped:
            notes.append(f"[跳过：{'；'.join(skipped)}。]")
        tail = "".join(f"{note}\n" for note in notes)
        if not hits:
            return f"[无匹配：在 {searched} 个文件中未找到。]\n{tail}"
        tail = f"[在 {searched} 个文件中找到 {len(hits)} 处匹配。]\n{tail}"
        rows = [f"{name}:{number}: {_shorten(text, _HIT_CHARS)}\n" for name, number, text in hits]
        shown, why = self._fit(rows, tail)
        if len(shown) < len(rows):
            tail = f"[只列出前 {len(shown)} 处匹配（{why}）；请缩小 path 或 pattern。]\n{tail}"
        for name, number, text in hits[: len(shown)]:
            self._record(Evidence("grep", name, number, number, text))
            self._shown.setdefault(name, {}).setdefault(number, text)
        return "".join(shown) + tail

    # -- shared -----------------------------------------------------------------------------

    def _left(self) -> int:
        return max(0, self.limits.budget_bytes - self._spent)

    def _cap(self) -> int:
        """Bytes this result may take: the per-result cap or what is left of the budget."""
        return min(self.limits.result_bytes, self._left())

    def _fit(self, rows: list[str], tail: str) -> tuple[list[str], str]:
        """The rows that fit this result before its closing `tail` (and a note saying rows
        were left out), and why the rest did not."""
        room = self._cap() - len(tail.encode()) - _CUT_NOTE
        used = 0
        for count, row in enumerate(rows):
            used += len(row.encode())
            if used > room:
                return rows[:count], "本次结果的字节上限"
        return rows, ""

    def _locate(self, raw: object, *, allow_root: bool) -> _Target:
        """The file or directory a path argument names inside the root."""
        if raw is None:
            if not allow_root:
                raise _Refused("[拒绝：缺少参数 path。]")
            raw = ""
        if not isinstance(raw, str):
            raise _Refused("[拒绝：path 必须是字符串。]")
        text = raw.strip()
        if "\0" in text:
            raise _Refused("[拒绝：path 含空字符。]")
        if text.startswith("/") or text == "~" or text.startswith("~/"):
            hint = ""
            if text.startswith("/"):
                inside = Path(os.path.normpath(text))
                if inside.is_relative_to(self.root) and inside != self.root:
                    hint = f"可改用 {inside.relative_to(self.root).as_posix()}"
            raise _Refused(f"[拒绝：只接受相对于工作目录的路径{'；' + hint if hint else ''}。]")
        parts = tuple(p for p in text.split("/") if p not in ("", "."))
        if ".." in parts:
            raise _Refused("[拒绝：路径不得含 ..（不能离开工作目录）。]")
        if not parts and not allow_root:
            raise _Refused("[拒绝：path 为空；请给出文件路径。]")
        name = "/".join(parts) or "."
        lexical = _secret_or_git(parts)
        if lexical:
            raise _Refused(f"[拒绝：{name} {lexical}。]")
        try:
            real = self.root.joinpath(*parts).resolve(strict=True)
        except FileNotFoundError:
            raise _Refused(f"[拒绝：{name} 不存在。]") from None
        except (OSError, RuntimeError) as exc:  # not a directory on the way, a symlink loop
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise _Refused(f"[拒绝：{name} 无法解析：{why}。]") from None
        if not real.is_relative_to(self.root):
            raise _Refused(f"[拒绝：{name} 指向工作目录之外。]")
        real_parts = real.relative_to(self.root).parts
        st = real.stat()
        is_dir = stat.S_ISDIR(st.st_mode)
        if not is_dir and not stat.S_ISREG(st.st_mode):
            raise _Refused(f"[拒绝：{name} 不是普通文件。]")
        why = _secret_or_git(real_parts)
        if why:
            raise _Refused(f"[拒绝：{name} 指向的文件{why}。]")
        if self._ignore.hidden(parts, is_dir) or self._ignore.hidden(real_parts, is_dir):
            raise _Refused(f"[拒绝：{name} 被 .gitignore 忽略。]")
        return _Target(name, parts, real, real_parts, st)

    def _content(self, target: _Target) -> bytes:
        """A regular file's bytes, unless too large or binary."""
        too_big = f"超过 {self.limits.file_bytes} 字节的上限，不读；可用 grep 定位"
        if target.st.st_size > self.limits.file_bytes:
            raise _Refused(f"[拒绝：{target.name} 有 {target.st.st_size} 字节，{too_big}。]")
        data = _read_regular(target.real, self.limits.file_bytes)
        if data is None:
            raise _Refused(f"[拒绝：{target.name} 不是普通文件。]")
        if b"\0" in data[:_BINARY_PROBE]:
            raise _Refused(f"[拒绝：{target.name} 是二进制文件，不读。]")
        if len(data) > self.limits.file_bytes:  # it grew since stat
            raise _Refused(f"[拒绝：{target.name} {too_big}。]")
        return data

    def _files(
        self, start: tuple[str, ...], directory: Path, walk: _Walk
    ) -> Iterator[tuple[tuple[str, ...], Path, os.stat_result]]:
        """Visible regular files below `directory` (= root/start), depth first by name.

        Directory symlinks are not followed (what they point to inside the root is walked
        under its own name); a file symlink counts only when it resolves to a visible regular
        file inside the root.
        """
        stack = [(start, directory)]
        while stack:
            parts, here = stack.pop()
            try:
                with os.scandir(here) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError:
                continue
            subdirs = []
            for entry in entries:
                walk.visited += 1
                if walk.visited > self.limits.walk_entries:
                    walk.stopped = True
                    return
                path = (*parts, entry.name)
                if entry.name == ".git":
                    continue
                try:
                    if entry.is_symlink():
                        found = self._linked_file(path)
                        if found is not None:
                            yield path, *found
                        continue
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if not is_dir and not entry.is_file(follow_symlinks=False):
                        continue  # a FIFO, socket or device
                    if self._ignore.ignored(path, is_dir):
                        continue
                    if (entry.name.lower() in SECRET_DIRS) if is_dir else _secret_name(entry.name):
                        walk.secrets.append("/".join(path))
                        continue
                    if is_dir:
                        subdirs.append((path, Path(entry.path)))
                    else:
                        yield path, Path(entry.path), entry.stat(follow_symlinks=False)
                except OSError:
                    continue
            stack.extend(reversed(subdirs))

    def _linked_file(self, parts: tuple[str, ...]) -> tuple[Path, os.stat_result] | None:
        """A symlink met in a walk: its target when that is a visible regular file inside."""
        try:
            real = self.root.joinpath(*parts).resolve(strict=True)
            st = real.stat()
        except (OSError, RuntimeError):
            return None
        if not real.is_relative_to(self.root) or not stat.S_ISREG(st.st_mode):
            return None
        real_parts = real.relative_to(self.root).parts
        for checked in (parts, real_parts):
            if _secret_or_git(checked) or self._ignore.hidden(checked, False):
                return None
        return real, st


@dataclass(frozen=True)
class _Target:
    name: str  # the normalized relative path, as the model named it ("." for the root)
    parts: tuple[str, ...]
    real: Path  # resolved, inside the root
    real_parts: tuple[str, ...]
    st: os.stat_result


@dataclass
class _Walk:
    visited: int = 0
    stopped: bool = False
    secrets: list[str] = field(default_factory=list)  # secrets-looking paths passed over


def _usable_root(root: str | os.PathLike[str] | None) -> Path:
    if root is None or not os.fspath(root):
        raise WorkspaceUnavailable("no working directory")
    path = Path(root)
    if not path.is_absolute():
        raise WorkspaceUnavailable(f"working directory {str(path)!r} is not an absolute path")
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise WorkspaceUnavailable(f"working directory {str(path)!r} does not exist") from None
    if not real.is_dir():
        raise WorkspaceUnavailable(f"working directory {str(path)!r} is not a directory")
    try:
        with os.scandir(real):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise WorkspaceUnavailable(
            f"working directory {str(path)!r} cannot be read: {why}"
        ) from None
    return real


def _secret_name(name: str) -> bool:
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in SECRET_NAMES)


def _secret_or_git(parts: tuple[str, ...]) -> str:
    """Why a path is never read whatever it holds, or ""."""
    if ".git" in parts:
        return "位于 .git 内，不读"
    if any(part.lower() in SECRET_DIRS for part in parts[:-1]) or (
        parts and (parts[-1].lower() in SECRET_DIRS or _secret_name(parts[-1]))
    ):
        return "疑似密钥/凭据，不读"
    return ""


def _line_number(value: object, name: str, default: int) -> int:
    """A positive line number or count from an argument (digits in a string accepted)."""
    if value is None:
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Refused(f"[拒绝：{name} 必须是正整数（行），收到 {value!r}。]")
    return value


def _pattern(value: object) -> str:
    """The pattern argument: a non-empty string of bounded length."""
    if not isinstance(value, str) or not value:
        raise _Refused("[拒绝：缺少参数 pattern（非空字符串）。]")
    if len(value) > _PATTERN_CHARS:
        raise _Refused(f"[拒绝：pattern 有 {len(value)} 个字符，超过 {_PATTERN_CHARS} 的上限。]")
    return value


def _read_regular(path: Path, limit: int, *, follow: bool = False) -> bytes | None:
    """Up to `limit` + 1 bytes of a regular file, None if it is not one.

    Opened non-blocking and checked on the open descriptor, so a FIFO or device swapped in
    never blocks a read; and (unless `follow`) not through a symlink, so one swapped in for
    a path already resolved inside the root cannot lead the read elsewhere.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return handle.read(limit + 1)


def _lines(data: bytes) -> list[str]:
    """Text lines as editors and `grep -n` number them (`\\n` ends a line, `\\r` dropped)."""
    lines = data.decode("utf-8", "replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _clip(text: str) -> str:
    return _shorten(" ".join(text.split()), _NOTE_CHARS)


def _nested_repeat(pattern: str) -> bool:
    """Whether a repeated group itself holds a repeat (`(a+)+`, `(\\w*\\s)*`): star height
    above one, the shape on which Python's backtracking `re` can take exponential time."""
    stack = [False]  # per open group: whether it holds a repeat
    closed: bool | None = None  # the group just closed held a repeat
    i = 0
    while i < len(pattern):
        char = pattern[i]
        repeat = re.match(r"\{(\d*)(,?)(\d*)\}", pattern[i:]) if char == "{" else None
        if char == "\\":
            i += 2
            closed = None
            continue
        if char == "[":
            end = re.match(r"\[\^?\]?(?:\\.|[^\]\\])*\]", pattern[i:])
            i += end.end() if end else 1
            closed = None
            continue
        if char == "(":
            stack.append(False)
            closed = None
        elif char == ")":
            closed = stack.pop() if len(stack) > 1 else None
            if closed:
                stack[-1] = True
            i += 1
            continue
        elif char in "*+" or (repeat and (repeat.group(2) or int(repeat.group(1) or 0) > 1)):
            if closed:
                return True
            stack[-1] = True
        closed = None
        i += 1
    return False


def _braces(pattern: str) -> list[str] | None:
    """`{a,b}` alternatives expanded (innermost first), or None when there are too many."""
    done: list[str] = []
    todo = [pattern]
    while todo:
        current = todo.pop()
        group = re.search(r"(?<!\\)\{([^{}]*)\}", current)
        if group is None:
            done.append(current)
        else:
            for alternative in group.group(1).split(","):
                todo.append(current[: group.start()] + alternative + current[group.end() :])
        if len(done) + len(todo) > _BRACE_EXPANSIONS:
            return None
    return sorted(set(done))


def _matches_itself(rule: GitIgnoreSpecPattern, path: str) -> bool:
    """Whether a gitignore `rule` matches `path` (a directory's ending in `/`) itself.

    pathspec also reports a match through a directory above the path: its `ps_d` group holds
    the `/` after that directory. Git decides such a directory on its own (`hidden` asks about
    each one), and counting it again for the path would let a deeper file's `!dir/` speak
    for the files inside, which git never does.
    """
    found = rule.match_file(path)
    if found is None:
        return False
    match = found.match
    return match.groupdict().get("ps_d") is None or match.end() == len(path)


def _rules(text: str) -> list[GitIgnoreSpecPattern]:
    """A .gitignore's rules, compiled by pathspec as git reads them (`!` negation, `dir/`
    only, `/` anchoring, `**`); blank lines and comments drop out."""
    rules = []
    for line in text.splitlines():
        try:
            rule = GitIgnoreSpecPattern(line)
        except (GitIgnorePatternError, re.error):
            continue  # git ignores a pattern it cannot parse; so do we
        if rule.include is not None:
            rules.append(rule)
    return rules


class _GitIgnore:
    """Which paths the .gitignore files of a root (and of its repository above it) ignore.

    As git decides: each file's rules read paths relative to its own directory, the last
    matching rule of a file wins, a deeper file overrides a shallower one, and nothing inside
    an ignored directory comes back (`hidden`).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[Path, list[GitIgnoreSpecPattern]] = {}
        # .gitignore files above the root count when the root is inside a repository.
        self._outer: list[tuple[Path, tuple[str, ...]]] = []
        above = root
        while not (above / ".git").exists() and above.parent != above:
            above = above.parent
            self._outer.append((above, root.relative_to(above).parts))
        if not (above / ".git").exists():
            self._outer = []  # not inside a repository: only the root's own files count

    def ignored(self, parts: tuple[str, ...], is_dir: bool) -> bool:
        """Whether this entry itself is ignored (its parent directories not considered)."""
        places = [(self.root.joinpath(*parts[:d]), parts[d:]) for d in range(len(parts))]
        places.reverse()
        places += [(where, (*prefix, *parts)) for where, prefix in self._outer]
        for where, below in places:
            path = "/".join(below) + ("/" if is_dir else "")
            for rule in reversed(self._load(where)):
                if _matches_itself(rule, path):
                    return bool(rule.include)
        return False

    def hidden(self, parts: tuple[str, ...], is_dir: bool) -> bool:
        """Whether the entry or any directory above it (inside the root) is ignored."""
        return any(self.ignored(parts[:n], True) for n in range(1, len(parts))) or (
            bool(parts) and self.ignored(parts, is_dir)
        )

    def _load(self, directory: Path) -> list[GitIgnoreSpecPattern]:
        if directory not in self._cache:
            try:
                data = _read_regular(directory / ".gitignore", _GITIGNORE_BYTES, follow=True)
            except OSError:
                data = None  # no .gitignore here
            usable = data is not None and len(data) <= _GITIGNORE_BYTES
            text = data.decode("utf-8", "replace") if data is not None and usable else ""
            self._cache[directory] = _rules(text)
        return self._cache[directory]
