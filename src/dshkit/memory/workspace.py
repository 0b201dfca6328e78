"""Which workspace a directory belongs to: the real path of its repository root and the remote
it pushes to, never the folder's name.

The root is the nearest directory at or above the given one holding `.git` (a directory, or a
file pointing at one: a worktree, a submodule), found by walking up: no git process runs on
the hook path. A linked worktree (its `.git` file's `gitdir:` holds a `commondir`) is its
repository's: the root is the main checkout the common directory belongs to, so every
worktree of one repository shares its memory. The remote is read from the repository's
`config` (`origin` first, else the first remote) and kept canonical: the https, ssh and scp
spellings of one repository (`https://github.com/o/r.git`, `git@github.com:o/r.git`,
`ssh://git@github.com/o/r`), with or without a trailing slash or `.git`, in any case of the
host, are one `https://host/path`, with no credentials. A directory in no repository is its
own workspace. A monorepo is one workspace; configured workspace roots (`[memory]
workspaces`) split it: the deepest configured root at or above the directory wins.

`settle` keeps a workspace's records with it when only its remote changed: records of the
same root kept under no remote (the remote was added later) or under another spelling of the
same remote (stored before remotes were canonical) join it. `workspace_id` is the short name
`dshkit memory rekey` and `status` give a workspace.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks' path)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..store import Store
    from .wire import WorkspaceJson

_SECTION = re.compile(r'^\s*\[\s*remote\s+"(?P<name>[^"]*)"\s*\]\s*$')
_ANY_SECTION = re.compile(r"^\s*\[")
_URL = re.compile(r"^\s*url\s*=\s*(?P<url>.+?)\s*$")
_USERINFO = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@")
# scheme://[user@]host[:port]/path, and the scp form [user@]host:path (not a Windows drive).
_URL_FORM = re.compile(
    r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://(?:[^/@]*@)?(?P<host>[^/:]+)(?::\d*)?(?P<path>/.*)?$"
)
_SCP_FORM = re.compile(r"^(?:[^/@:]+@)?(?P<host>[^/:]{2,}):(?!//)(?P<path>.+)$")
_NETWORK = frozenset({"http", "https", "ssh", "git", "git+ssh", "ssh+git"})
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

    @property
    def id(self) -> str:
        return workspace_id(self.root, self.remote)

    def as_json(self) -> WorkspaceJson:
        return {"root": self.root, "remote": self.remote}


def workspace_id(root: str, remote: str | None) -> str:
    """A workspace's short name (12 hex digits of a digest of its root and remote)."""
    import hashlib

    key = f"{root}\0{remote or ''}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(key).hexdigest()[:12]


def identify(directory: str, configured: Iterable[str] = ()) -> Workspace:
    """The workspace of `directory` (see the module docstring)."""
    start = os.path.realpath(directory)
    repo = _repository_root(start)
    root = repo or start
    chosen = _configured_root(start, configured)
    if chosen is not None and (repo is None or _under(chosen, repo)):
        root = chosen
    elif repo is not None:
        root = _main_checkout(repo) or repo
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
    git_dir = _linked_dir(repo)
    if git_dir is None:
        return None
    return _common_dir(git_dir) or git_dir


def _linked_dir(repo: str) -> str | None:
    """Where the `.git` file of `repo` points (`gitdir: …`), or None."""
    text = _read(os.path.join(repo, ".git"), 4096)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:") :].strip()
    return target if os.path.isabs(target) else os.path.normpath(os.path.join(repo, target))


def _common_dir(git_dir: str) -> str | None:
    """A linked worktree's common directory (its `commondir` file), or None: not one."""
    common = _read(os.path.join(git_dir, "commondir"), 4096)
    if not common or not common.strip():
        return None
    common = common.strip()
    found = common if os.path.isabs(common) else os.path.normpath(os.path.join(git_dir, common))
    return os.path.realpath(found)


def _main_checkout(repo: str) -> str | None:
    """For a linked worktree, the repository it belongs to: the checkout holding its common
    `.git` directory (the common directory itself for a bare repository); None otherwise (a
    repository's own root, a submodule)."""
    if os.path.isdir(os.path.join(repo, ".git")):
        return None
    git_dir = _linked_dir(repo)
    common = None if git_dir is None else _common_dir(git_dir)
    if common is None or not os.path.isdir(common):
        return None
    return os.path.dirname(common) if os.path.basename(common) == ".git" else common


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
    """A remote URL as kept, one spelling per repository: a network remote (https, http, ssh,
    git, or scp's `user@host:path`) as `https://host/path`, the host in lower case, without
    credentials, port, trailing slash or `.git`; anything else (a local path, `file://`)
    without credentials, a trailing slash or `.git`."""
    url = url.strip()
    network = _URL_FORM.match(url)
    if network is not None and network["scheme"].lower() in _NETWORK:
        return _canonical(network["host"], network["path"] or "")
    scp = None if "://" in url else _SCP_FORM.match(url)
    if scp is not None:
        return _canonical(scp["host"], "/" + scp["path"].lstrip("/"))
    url = _USERINFO.sub(r"\g<scheme>", url).rstrip("/")
    return url[:-4] if url.endswith(".git") else url


# Hosts that serve one repository under another host name too (SSH over port 443, a www
# name): the repository is the same one.
_HOST_ALIASES = {
    "ssh.github.com": "github.com",
    "www.github.com": "github.com",
    "altssh.gitlab.com": "gitlab.com",
    "www.gitlab.com": "gitlab.com",
    "altssh.bitbucket.org": "bitbucket.org",
    "www.bitbucket.org": "bitbucket.org",
}
# Hosts whose repository paths are case-insensitive (`Owner/Repo` and `owner/repo` are one
# repository there); elsewhere a path keeps its case (a server may tell them apart).
_CASELESS_PATHS = frozenset({"github.com", "gitlab.com", "bitbucket.org"})
# Azure DevOps spells one repository `org@ssh.dev.azure.com:v3/org/project/repo` over SSH and
# `https://dev.azure.com/org/project/_git/repo` over HTTPS.
_AZURE_SSH = re.compile(r"^/v3/(?P<org>[^/]+)/(?P<project>[^/]+)/(?P<repo>[^/]+)$")


def _canonical(host: str, path: str) -> str:
    host = host.lower()
    host = _HOST_ALIASES.get(host, host)
    path = path.rstrip("/")
    path = path[:-4] if path.endswith(".git") else path
    path = path.rstrip("/")
    if host in ("ssh.dev.azure.com", "vs-ssh.visualstudio.com") and (
        azure := _AZURE_SSH.match(path)
    ):
        host, path = "dev.azure.com", "/{org}/{project}/_git/{repo}".format(**azure.groupdict())
    if host in _CASELESS_PATHS:
        path = path.lower()
    return f"https://{host}{path}"


def settle(store: Store, workspace: Workspace) -> int:
    """Join to `workspace` the records of its root kept under no remote (the remote was added
    after them) or under another spelling of its remote; how many moved. Only the remote
    changes: records of another repository at the same root (another remote) stay apart. One
    indexed read when there is nothing to move; the write is its own transaction."""
    if workspace.remote is None:
        return 0
    rows = store.db.execute(
        "SELECT DISTINCT remote FROM memory_records WHERE workspace = ?", (workspace.root,)
    ).fetchall()
    strays = [
        remote
        for (remote,) in rows
        if remote != workspace.remote
        and (remote is None or normalize_remote(remote) == workspace.remote)
    ]
    if not strays:
        return 0
    moved = 0
    with store.transaction() as db:
        for remote in strays:
            moved += db.execute(
                "UPDATE memory_records SET remote = ? WHERE workspace = ? AND remote IS ?",
                (workspace.remote, workspace.root, remote),
            ).rowcount
    return moved


def _read(path: str, limit: int) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    if len(data) > limit:
        return None
    return data.decode("utf-8", "replace")
