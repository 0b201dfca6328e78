"""The guard's path model: the workspace and the home directory, the variables a line may
expand to places, and where a word lands (inside the workspace, the workspace itself, outside
it, or only known when the line runs), in POSIX or Windows spelling.

A Windows workspace (`C:\\…`) is judged with Windows paths, whatever machine this runs on
(ntpath is loaded only then).
"""

from __future__ import annotations

import os
import posixpath

from .lexer import Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

INSIDE, WORKSPACE, OUTSIDE, NOWHERE = "inside", "workspace", "outside", "unknown"

# Writing over one of these is a disk wipe (`dd of=…`, `> /dev/sda`).
_DEVICES = ("/dev/sd", "/dev/nvme", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/disk", "/dev/mmcblk",
            "/dev/mapper/", "\\\\.\\physicaldrive")  # fmt: skip


# Where writing over a file loses nothing anyone keeps: scratch directories and the devices
# that are no disk (`> /dev/null`, `2> /tmp/err.log`).
_SCRATCH = ("/tmp", "/var/tmp", "/private/tmp", "/private/var/folders", "/var/folders",
            "/dev/shm")  # fmt: skip
_NOT_DISKS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero")
_NT_NOT_FILES = ("nul", "con", "$null", "nul:")

# The temporary directories: a named entry below one is scratch a delete may take (what
# public guards let through); the directory itself, or every entry of it, is others' too.
_TEMPS = ("/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp")

# Where the users' homes are: a workspace there is none, whoever's home it holds.
_HOMES = frozenset({"/", "/home", "/Users", "/root", "/var/root"})


def windows(path: str) -> bool:
    """A path with a drive letter (`C:…`)."""
    return len(path) >= 2 and path[1] == ":" and path[0].isalpha()


def device(text: str) -> bool:
    """A disk device (a partition or a whole disk)."""
    return text.lower().startswith(_DEVICES)


def remote(text: str, nt: bool = False) -> bool:
    """A place on another machine, as scp and rsync read their operands: `rsync://…`, or
    `host:path`, a colon before any slash (`b:/etc/x` is host b). A leading colon is a file's
    name; a drive letter (`C:\\…`, `C:/…`) is only one where the commands run on Windows
    (`nt`): on POSIX scp and rsync take the letter for a host, as git does."""
    if text.startswith("rsync://"):
        return True
    colon = text.find(":")
    slash = text.find("/")
    if colon < 1 or 0 <= slash < colon:
        return False
    return not (nt and windows(text))


class Places:
    """Where the words of one command line land, for a workspace and a home directory."""

    __slots__ = ("_isabs", "_join", "_normpath", "confined", "home", "nt", "workspace")

    def __init__(self, workspace: str, home: str | None) -> None:
        self.nt = windows(workspace)
        if self.nt:
            import ntpath

            self._normpath: Callable[[str], str] = ntpath.normpath
            self._isabs: Callable[[str], bool] = ntpath.isabs
            self._join: Callable[..., str] = ntpath.join
        else:
            self._normpath, self._isabs, self._join = (
                posixpath.normpath,
                posixpath.isabs,
                posixpath.join,
            )
        self.workspace = self._normpath(workspace)
        self.home = self._normpath(home if home is not None else self._default_home())
        # An agent opened in the home directory, a disk's root or above the home has no
        # workspace: nothing it names is its own project's.
        key = self._key(self.workspace)
        top = (  # a disk's root, or where the homes are
            windows(key) and key[2:].rstrip("\\") in ("", "\\users") if self.nt else key in _HOMES
        )
        self.confined = not (top or self._within(self.home, self.workspace))

    def _default_home(self) -> str:
        if not self.nt:
            return os.path.expanduser("~")
        parts = self.workspace.split("\\")
        if len(parts) > 2 and parts[1].lower() == "users":
            return "\\".join(parts[:3])
        return "C:\\Users\\user"

    def expansions(
        self, shell: str, cwd: str | None, assigned: Mapping[str, str]
    ) -> dict[str, str]:
        """The variables a line may use whose values are places (PowerShell's lower-cased, the
        environment's `env:` prefixed), with `assigned`, the line's own (bash)."""
        home = self.home
        if shell == "pwsh":
            join = self._join
            known = {
                "home": home,
                "env:userprofile": home,
                "env:home": home,
                "env:appdata": join(home, "AppData", "Roaming"),
                "env:localappdata": join(home, "AppData", "Local"),
                # (PowerShell on Linux or macOS: the temporary directory is /tmp)
                "env:temp": join(home, "AppData", "Local", "Temp") if self.nt else "/tmp",
                "env:tmp": join(home, "AppData", "Local", "Temp") if self.nt else "/tmp",
                "env:tmpdir": "/tmp",
                "env:systemroot": "C:\\Windows",
                "env:windir": "C:\\Windows",
                "env:systemdrive": "C:",
                "env:programfiles": "C:\\Program Files",
            }
        else:
            known = {"HOME": home, "TMPDIR": "/tmp", "IFS": " ", **assigned}
        if cwd:
            known["pwd" if shell == "pwsh" else "PWD"] = cwd
        return known

    def resolve(self, text: str, cwd: str | None = None) -> str:
        """The absolute path `text` names, relative ones taken from `cwd` (the workspace)."""
        if self.nt and text.startswith("/") and not text.startswith("//"):
            text = text.replace("/", "\\")
        if self._isabs(text) or windows(text):  # C:\… is no place in a POSIX workspace
            return self._normpath(text)
        return self._normpath(self._join(cwd or self.workspace, text))

    def where(self, word: Word, cwd: str | None) -> str:
        """INSIDE the workspace, the WORKSPACE itself, OUTSIDE it, or NOWHERE known. A
        PowerShell drive that is no disk (`HKLM:\\…`, `Env:\\…`, `Cert:`) is outside."""
        if self.nt and _drive_of_provider(word.text):
            return OUTSIDE
        base, entries = self._base(word, cwd)
        if base is None:
            return NOWHERE
        if not self.confined:
            return OUTSIDE
        if not entries and self._key(base) == self._key(self.workspace):
            return WORKSPACE
        return INSIDE if self._within(base, self.workspace) else OUTSIDE

    def scratch(self, word: Word, cwd: str | None) -> bool:
        """Whether `word` names a scratch place (a temporary directory, `/dev/null`, `$null`),
        where writing over a file loses nothing anyone keeps."""
        if self.nt and word.text.lower() in _NT_NOT_FILES:
            return True
        base, _ = self._base(word, cwd)
        if base is None:
            return False
        if self.nt:
            temps = (self._join(self.home, "AppData", "Local", "Temp"), "C:\\Windows\\Temp")
            return any(self._within(base, temp) for temp in temps)
        if base in _NOT_DISKS or base.startswith("/dev/fd/"):
            return True
        return any(self._within(base, temp) for temp in _SCRATCH)

    def temporary(self, word: Word, cwd: str | None) -> bool:
        """Whether `word` names one entry below a temporary directory (`/tmp/build`,
        `$env:TEMP\\x`, `/tmp/build/*`), not the directory itself (`/tmp`, `/tmp/*`,
        `/tmp/..`) nor a name only known when it runs there (`/tmp/$X`), nor one holding the
        workspace (`/tmp/a` for a workspace in `/tmp/a/proj`), nor the home directory or
        what it holds (a home below `/tmp` is still a home)."""
        if not self.nt and "\\" in word.text:  # PowerShell on Linux: `$env:TEMP\x` is /tmp/x
            word = Word(word.text.replace("\\", "/"), word.quoted, word.dynamic, word.glob)
        base, _ = self._base(word, cwd)
        if base is None or self._within(self.workspace, base) or self._within(self.home, base):
            return False
        if self.nt:
            temps: tuple[str, ...] = (
                self._join(self.home, "AppData", "Local", "Temp"),
                "C:\\Windows\\Temp",
            )
        else:
            temps = _TEMPS
        key = self._key(base)
        for temp in temps:
            if key == self._key(temp) or not self._within(base, temp):
                continue
            # a home below `/tmp` is still a home (Windows' Temp is below the home)
            if not self._within(base, self.home) or self._within(temp, self.home):
                return True
        return False

    def below(self, word: Word, cwd: str | None) -> list[str] | None:
        """The parts of the path `word` names below the workspace, a wildcard's or an unknown
        part's as written (lower-cased on Windows), or None when it is not below it."""
        text = word.text
        tail = ""
        if not (word.glob or word.dynamic):
            if cwd is None and not (self._isabs(text) or windows(text)):
                return None
            path = self.resolve(text, cwd)
        else:
            cut = min((i for i, c in enumerate(text) if c in "*?[\0"), default=len(text))
            slash = max(text.rfind("/", 0, cut), text.rfind("\\", 0, cut) if self.nt else -1)
            tail = text[slash + 1 :]
            if slash < 0:
                if cwd is None:
                    return None
                path = cwd
            else:
                head = text[: slash + 1]
                if cwd is None and not (self._isabs(head) or windows(head)):
                    return None
                path = self.resolve(head, cwd)
        sep = "\\" if self.nt else "/"
        key, root = self._key(path), self._key(self.workspace).rstrip(sep)
        if key == root:
            parts = []
        elif key.startswith(root + sep):
            parts = key[len(root) + 1 :].split(sep)
        else:
            return None
        if tail:
            parts += self._key(tail).split(sep)
        return [part for part in parts if part not in ("", ".")]

    def is_global(self, word: Word, cwd: str | None) -> bool:
        """Whether a search rooted at `word` scans the machine or the user's files: `/`, a
        drive root, the home directory or one of its ancestors, or AppData."""
        base, _ = self._base(word, cwd)
        if base is None:
            return False
        key = self._key(base)
        if key in ("/", "\\") or (self.nt and len(key) <= 3 and windows(key)):
            return True
        if self._within(self.home, base):
            return True
        return "\\appdata\\" in key + "\\" if self.nt else "/appdata/" in key.lower() + "/"

    def _base(self, word: Word, cwd: str | None) -> tuple[str | None, bool]:
        """The path a word names, or for a wildcard or an unknown part the directory whose
        entries it may name (True); None when nothing about it is known."""
        text = word.text
        if not (word.glob or word.dynamic):
            known = cwd or self._isabs(text) or windows(text)
            return (self.resolve(text, cwd) if known else None), False
        cut = min((i for i, c in enumerate(text) if c in "*?[\0"), default=len(text))
        slash = max(text.rfind("/", 0, cut), text.rfind("\\", 0, cut) if self.nt else -1)
        if slash < 0:
            return (cwd if cwd and "\0" not in text[: cut + 1] else None), True
        head = text[: slash + 1]
        if cwd is None and not (self._isabs(head) or windows(head)):
            return None, True
        return self.resolve(head, cwd), True

    def _key(self, path: str) -> str:
        return path.lower().replace("/", "\\") if self.nt else path

    def _within(self, path: str, root: str) -> bool:
        """Whether `path` is `root` or below it."""
        path, root = self._key(path), self._key(root)
        sep = "\\" if self.nt else "/"
        return path == root or path.startswith(root.rstrip(sep) + sep)


def _drive_of_provider(text: str) -> bool:
    """A PowerShell provider's drive (`HKLM:`, `Env:\\PATH`), not a disk's (`C:`)."""
    colon = text.find(":")
    return colon > 1 and text[:colon].isalpha() and text[colon + 1 : colon + 2] in ("", "\\", "/")
