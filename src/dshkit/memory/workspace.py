"""Which workspace a directory belongs to: the real path of its repository root and the remote
it pushes to, never the folder's name.

The root is the nearest directory at or above the given one holding `.git` (a directory, or a
file pointing at one: a worktree, a submodule), found by walking up: no git process runs on
the hook path. The remote is read from that repository's `config` (`origin` first, else the
first remote), with any credentials in it dropped. A directory in no repository is its own
workspace. A monorepo is one workspace; configured workspace roots (`[memory] workspaces`)
split it: the deepest configured root at or above the directory wins.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .wire import WorkspaceJson

_SECTION = re.compile(r'^\s*\[\s*remote\s+"(?P<name>[^"]*)"\s*\]\s*$')
_ANY_SECTION = re.compile(r"^\s*\[")
_URL = re.compile(r"^\s*url\s*=\s*(?P<url>.+?)\s*$")
_USERINFO = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@")
_CONFIG_LIMIT = 1 << 20  # a repository config longer than this is not read for its remote


class Workspace:
    """A workspace's identity: its root (a real path) and its remote URL (None: none)."""

    __slots__ = ("remote", "root")

    def __init__(self, root: str, remote: str | None) -> None:
        self.root = root
        self.remote = remote

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workspace) and (self.root, self.remote) == (
            other.root,
            other.remote,
        )

    def __hash__(self) -> int:
        return hash((self.root, self.remote))

    def __repr__(self) -> str:
        return f"Workspace({self.root!r}, {self.remote!r})"

    def as_json(self) -> WorkspaceJson:
        return {"root": self.root, "remote": self.remote}


def identify(directory: str, configured: Iterable[str] = ()) -> Workspace:
    """The workspace of `directory` (see the module docstring)."""
    start = os.path.realpath(directory)
    repo = _repository_root(start)
    root = repo or start
    chosen = _configured_root(start, configured)
    if chosen is not None and (repo is None or _under(chosen, repo)):
        root = chosen
    return Workspace(root, _remote(repo) if repo else None)


def _repository_root(start: str) -> str | None:
    here = start
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _configured_root(start: str, configured: Iterable[str]) -> str | None:
    best: str | None = None
    for place in configured:
        real = os.path.realpath(os.path.expanduser(place))
        if _under(start, real) and (best is None or len(real) > len(best)):
            best = real
    return best


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _git_dir(repo: str) -> str | None:
    """The repository's git directory: `.git` itself, or where a `.git` file points (and, for
    a linked worktree, the common directory its config lives in)."""
    dot = os.path.join(repo, ".git")
    if os.path.isdir(dot):
        return dot
    text = _read(dot, 4096)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:") :].strip()
    git_dir = target if os.path.isabs(target) else os.path.normpath(os.path.join(repo, target))
    common = _read(os.path.join(git_dir, "commondir"), 4096)
    if common:
        common = common.strip()
        return common if os.path.isabs(common) else os.path.normpath(os.path.join(git_dir, common))
    return git_dir


def _remote(repo: str) -> str | None:
    git_dir = _git_dir(repo)
    text = None if git_dir is None else _read(os.path.join(git_dir, "config"), _CONFIG_LIMIT)
    if not text:
        return None
    remotes: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        if section := _SECTION.match(line):
            current = section["name"]
        elif _ANY_SECTION.match(line):
            current = None
        elif current is not None and current not in remotes and (url := _URL.match(line)):
            remotes[current] = url["url"].strip('"')
    if not remotes:
        return None
    return normalize_remote(remotes.get("origin") or next(iter(remotes.values())))


def normalize_remote(url: str) -> str:
    """A remote URL as kept: without credentials (`https://user:token@host/…` keeps no token),
    without a trailing slash or `.git`."""
    url = _USERINFO.sub(r"\g<scheme>", url.strip())
    url = url.rstrip("/")
    return url[:-4] if url.endswith(".git") else url


def _read(path: str, limit: int) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    if len(data) > limit:
        return None
    return data.decode("utf-8", "replace")
