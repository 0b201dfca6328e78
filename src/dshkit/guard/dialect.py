"""Which shell reads a command line: from the harness tool's name, the platform it runs on and
the shape of the command itself, and where the two readings disagree, both.

A tool's name alone misleads: Claude Code's Bash tool on Windows may be handed PowerShell,
Codex's shell tool runs PowerShell there, and a model on Linux may still write `Remove-Item
..\\other`. So a line is read first in the shell the tool names (bash unless its name says
PowerShell) and, when the platform is Windows or the line looks like PowerShell or cmd, also in
the other; the caller takes the worse (service.py). PowerShell on a POSIX system takes `\\` as a
path separator too, so its reading there judges `..\\other` as `../other`.
"""

from __future__ import annotations

from .lexer import Word
from .paths import Places, windows

BASH, PWSH = "bash", "pwsh"

# PowerShell's approved verbs most seen in agents' lines: `Verb-Noun` first words.
_VERBS = frozenset(("add", "clear", "close", "compress", "convert", "convertfrom", "convertto",
    "copy", "disable", "dismount", "enable", "enter", "exit", "expand", "export", "find",
    "foreach", "format", "get", "group", "import", "initialize", "install", "invoke", "join",
    "measure", "mount", "move", "new", "out", "pop", "push", "read", "receive", "register",
    "remove", "rename", "reset", "resize", "resolve", "restart", "restore", "resume", "save",
    "select", "send", "set", "sort", "split", "start", "stop", "suspend", "test", "uninstall",
    "unregister", "update", "wait", "where", "write"))  # fmt: skip
# cmd's commands that take `/x` switches where bash has no such command.
_CMD = frozenset(("del", "erase", "rd", "rmdir", "cipher", "format", "xcopy", "robocopy"))
_FIRST_WORD_BREAKS = ";|&({\n"


def powershell_tool(tool: str) -> bool:
    """Whether a harness tool's name says it runs PowerShell (DSH's `pwsh`)."""
    name = tool.lower()
    return "pwsh" in name or "powershell" in name


def on_windows(cwd: str | None, platform: str | None) -> bool:
    """Whether the harness runs on Windows: its working directory has a drive (`C:\\…`) or a
    UNC share, or the platform it reports is Windows (`win32`, `windows`)."""
    if cwd and (windows(cwd) or cwd.startswith("\\\\")):
        return True
    return bool(platform) and str(platform).lower().startswith(("win", "cygwin", "msys"))


def looks_like_powershell(command: str) -> bool:
    """A `Verb-Noun` cmdlet where a command starts, `$env:`, a PowerShell escape (`` `" ``,
    `` `$ ``, a backtick ending a line) or a cmd command with its `/x` switches."""
    lowered = command.lower()
    if "$env:" in lowered or '`"' in command or "`$" in command or "`\n" in command:
        return True
    for first, second in _command_starts(command):
        verb, dash, noun = first.partition("-")
        if dash and verb.lower() in _VERBS and noun[:1].isalpha() and noun.isalnum():
            return True
        if first.lower() in _CMD and second.startswith("/") and second[1:2].isalpha():
            return True
    return False


def _command_starts(command: str) -> list[tuple[str, str]]:
    """The first two words after each separator (roughly: quotes are not read)."""
    found: list[tuple[str, str]] = []
    text = command
    for breaker in _FIRST_WORD_BREAKS:
        text = text.replace(breaker, "\0")
    for part in text.split("\0"):
        words = part.split()
        if words:
            found.append((words[0], words[1] if len(words) > 1 else ""))
    return found


def dialects(
    command: str, tool: str = "", cwd: str | None = None, platform: str | None = None
) -> tuple[str, ...]:
    """The shells to read `command` in, the one its tool names first; two when the platform or
    the command's shape says the other may be the one that runs it."""
    first = PWSH if powershell_tool(tool) else BASH
    if first == PWSH:
        return (PWSH,)
    if on_windows(cwd, platform) or looks_like_powershell(command):
        return (BASH, PWSH)
    return (BASH,)


class _PosixPowerShellPlaces(Places):
    """Places as PowerShell on a POSIX system reads them: `\\` separates too."""

    __slots__ = ()

    def resolve(self, text: str, cwd: str | None = None) -> str:
        return super().resolve(text.replace("\\", "/"), cwd)

    def _base(self, word: Word, cwd: str | None) -> tuple[str | None, bool]:
        if "\\" in word.text:
            word = Word(word.text.replace("\\", "/"), word.quoted, word.dynamic, word.glob)
        return super()._base(word, cwd)


def places_for(shell: str, workspace: str, home: str | None) -> Places:
    """The path model a shell's words are judged with, for the workspace and home given."""
    if shell == PWSH and not windows(workspace):
        return _PosixPowerShellPlaces(workspace, home)
    return Places(workspace, home)
