"""Where the repository, its test data and the real session fixtures are."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
# A dshkit process a test starts imports `tests.support` (DSHKIT_HOOK_HANDLERS names handlers
# there) and whatever the test process was told to import first.
PYTHONPATH = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
DATA = REPO / "tests" / "data"
# Real session logs written by DSH, Claude Code and Codex (../shared/fixtures, copied here so
# that a clone runs its own tests).
FIXTURES = DATA / "fixtures"
DSH_ZSTD = FIXTURES / "dsh-v0" / "sessions-zstd"
DSH_PLAIN = FIXTURES / "dsh-v0" / "sessions-plain"
CLAUDE = FIXTURES / "claude-code" / "projects"
CODEX = FIXTURES / "codex" / "sessions"
GEMINI = FIXTURES / "gemini-cli" / "tmp"
# The delivery gate's sample pages.
PAGES = DATA / "gate"


@contextlib.contextmanager
def own_temporary() -> Iterator[Path]:
    """A directory for a process a test starts to take as TMPDIR, removed after: its path
    short, as the temporary directory's (a test's `tmp_path` is too long to hold the Unix
    socket Chromium makes there)."""
    made = Path(tempfile.mkdtemp(prefix="t-"))
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def clear_stray_repository() -> None:
    """Remove an empty `.git` left in the temporary directory, once, before tests run.

    Codex's sandbox makes one there as a mount target while a command runs with `/tmp` a
    writable root, and a killed run leaves it (`support.real.CODEX_SPARES_TMP` keeps our own
    runs out of `/tmp`). Every test directory under it would sit in a "repository" rooted at
    `/tmp`: projects, approvals and workspaces are keyed by that root. An empty directory
    holds nothing (git takes it for no repository), so nothing is lost; anything else there
    is left alone."""
    with contextlib.suppress(OSError):
        os.rmdir(Path(tempfile.gettempdir()) / ".git")
