"""The static half of "session directories are read-only to us": every module of `src/` that
can write a file at all is known, with why, so a new writer cannot slip in unseen.

A writer is any call that can create, change or remove a file or directory: `open` with a
write mode (or a mode not written as a literal), `os.open` with a write flag (or flags it
cannot see), the `os`, `shutil` and `tempfile` calls that create, move, change or remove, a
path's `write_text`/`write_bytes`/`touch`/`mkdir`/`unlink`/`rename`/`chmod`…,
`sqlite3.connect`, and `paths.replace_whole` (a file replaced whole for the module calling
it). The dynamic half (the audit hook that sees every open while scanning, and the
before/after hashes of every session file) is in test_safety.py.
"""

from __future__ import annotations

import ast

from .support.paths import REPO

SRC = REPO / "src" / "dshkit"

# module → what it writes, and where. Every entry must still write (no stale entries).
WRITERS = {
    "capability/probes.py": "a probe page and the browser's log, in a temporary directory",
    "chromium.py": "Chromium profile directories in the temporary directory (and removes stale "
    "ones: this user's, their dshkit process gone)",
    "gate/browser.py": "the browser's profile, in a temporary directory removed afterwards",
    "gate/judge.py": "a verdict's screenshot, 0600 in <state dir>/gate-shots",
    "graft/lifecycle.py": "a temporary file in the state directory for a target CLI's errors",
    "graft/fold.py": "<state dir>/graft-settings: the [graft] settings a full check "
    "resolved, for the hot path, 0600, replaced whole",
    "graft/marker.py": "<state dir>/graft.used and graft-room/: the hot path's hints",
    "guard/service.py": "<state dir>/guard-mode: the mode a person chose, 0600, replaced whole",
    "guard/rulefile.py": "<state dir>/config.toml: a rule added to the person's file, edited "
    "in place, checked, replaced whole, 0600",
    "hooks/hint.py": "<state dir>/hints/<event>.<session>: a session's hint, 0600, replaced "
    "whole; a stale one removed",
    "hooks/log.py": "appends to <state dir>/hooks.log",
    "hooks/spawn.py": "a detached step's payload (and the answer written beside it), 0600 "
    "in <state dir>/hints, removed by the step once taken",
    "hooks/resident.py": "an anonymous temporary file holding a call's payload (its stdin); "
    "/dev/null opened over a worker's fds 0 and 1",
    "install/files.py": "the person's harness settings files (dshkit's entries only, atomic)",
    "install/ledger.py": "the installer's bookkeeping, in <state dir>/install",
    "install/resident.py": "the service's user unit (systemd) or agent (launchd) file, and "
    "<state dir>/hook-token, 0600, replaced whole",
    "memory/skills.py": "an accepted skill's SKILL.md in a harness skills folder, never over one",
    "paths.py": "the private state directory; a file replaced whole for its caller",
    "sessions/scanner.py": "the plaintext cache in <state dir>/plain",
    "store.py": "<state dir>/dshkit.db",
    "web/app.py": "<state dir>/token, replaced whole",
    "web/link.py": "the running service's address, in the state directory",
}

_OS = {
    "open", "replace", "rename", "renames", "remove", "unlink", "rmdir", "removedirs",
    "mkdir", "makedirs", "symlink", "link", "chmod", "chown", "truncate", "mkfifo", "utime",
}  # fmt: skip
_SHUTIL = {"copy", "copy2", "copyfile", "copytree", "copymode", "copystat", "move", "rmtree"}
_TEMPFILE = {
    "mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryDirectory", "TemporaryFile",
    "SpooledTemporaryFile",
}  # fmt: skip
_METHODS = {
    "write_text", "write_bytes", "touch", "mkdir", "unlink", "rmdir", "symlink_to",
    "hardlink_to", "chmod", "lchmod", "rename",
}  # fmt: skip
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC", "O_TMPFILE"}


def _names(node: ast.AST) -> set[str]:
    return {n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(node)
            if isinstance(n, ast.Attribute | ast.Name)}  # fmt: skip


def _os_open_writes(call: ast.Call, tree: ast.Module) -> bool:
    """Whether an `os.open` call may write: its flags name a write flag, directly or through
    a variable assigned in the module; flags it cannot see count as writing."""
    if len(call.args) < 2:
        return True
    flags = call.args[1]
    seen = _names(flags)
    if isinstance(flags, ast.Name):
        values = [
            a.value
            for a in ast.walk(tree)
            if isinstance(a, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == flags.id for t in a.targets)
        ]
        if not values:
            return True
        seen = set().union(*(_names(v) for v in values))
    return bool(seen & _WRITE_FLAGS) or not any(name.startswith("O_") for name in seen)


def writes(source: str) -> list[tuple[int, str]]:
    """(line, call) for every call in `source` that can write a file."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if called == "replace_whole":  # paths.py's atomic write, for the module calling it
            found.append((node.lineno, "replace_whole"))
        elif isinstance(func, ast.Name) and func.id == "open":
            mode = node.args[1] if len(node.args) > 1 else None
            mode = next((k.value for k in node.keywords if k.arg == "mode"), mode)
            if mode is None or (
                isinstance(mode, ast.Constant)
                and isinstance(mode.value, str)
                and not set(mode.value) & set("wax+")
            ):
                continue
            found.append((node.lineno, "open"))
        elif isinstance(func, ast.Attribute):
            base = func.value.id if isinstance(func.value, ast.Name) else None
            if base == "os" and func.attr in _OS:
                if func.attr != "open" or _os_open_writes(node, tree):
                    found.append((node.lineno, f"os.{func.attr}"))
            elif base == "shutil" and func.attr in _SHUTIL:
                found.append((node.lineno, f"shutil.{func.attr}"))
            elif base == "tempfile" and func.attr in _TEMPFILE:
                found.append((node.lineno, f"tempfile.{func.attr}"))
            elif base == "sqlite3" and func.attr == "connect":
                found.append((node.lineno, "sqlite3.connect"))
            elif base not in ("os", "shutil", "tempfile", "sqlite3") and func.attr in _METHODS:
                found.append((node.lineno, f".{func.attr}"))
    return found


def test_only_the_known_modules_write_files() -> None:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        hits = writes(path.read_text())
        if hits:
            found[path.relative_to(SRC).as_posix()] = hits
    unknown = {name: hits for name, hits in found.items() if name not in WRITERS}
    assert not unknown, f"modules that write files and are not in WRITERS: {unknown}"
    stale = sorted(set(WRITERS) - set(found))
    assert not stale, f"in WRITERS but no longer writing (remove them): {stale}"


def test_the_checker_sees_every_kind_of_writer() -> None:
    source = "\n".join(
        [
            "import os, shutil, tempfile, sqlite3",
            "open(p, 'rb')",  # a read: not a writer
            "open(p, 'ab')",
            "open(p, mode)",
            "os.open(p, os.O_RDONLY | os.O_NOFOLLOW)",  # a read
            "os.open(p, os.O_WRONLY | os.O_CREAT)",
            "FLAGS = os.O_RDONLY",
            "os.open(p, FLAGS)",  # a read, through a constant
            "os.open(p, flags_from_somewhere)",
            "os.replace(a, b)",
            "shutil.copyfile(a, b)",
            "tempfile.mkstemp()",
            "Path(p).write_text('x')",
            "p.unlink()",
            "text.replace('a', 'b')",  # a string method: not a writer
            "sqlite3.connect(p)",
            "paths.replace_whole(p, b'x')",
        ]
    )
    assert [line for line, _ in writes(source)] == [3, 4, 6, 9, 10, 11, 12, 13, 14, 16, 17]
