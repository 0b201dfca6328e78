"""Where dshkit keeps its state and where each harness keeps its sessions by default."""

from __future__ import annotations

import os
from pathlib import Path


def dsh_home() -> Path:
    """`$DSH_HOME`, defaulting to `~/.dsh` (the DSH harness's own home)."""
    value = os.environ.get("DSH_HOME")
    return Path(value).expanduser() if value else Path.home() / ".dsh"


def state_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """dshkit's state directory: `override`, else `$DSH_HOME/dshkit`."""
    return Path(override).expanduser() if override else dsh_home() / "dshkit"


def claude_home() -> Path:
    value = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else Path.home() / ".claude"


def codex_home() -> Path:
    value = os.environ.get("CODEX_HOME")
    return Path(value).expanduser() if value else Path.home() / ".codex"


def default_roots() -> dict[str, Path]:
    """The sessions root of each harness on this machine, keyed by harness name."""
    return {
        "dsh": dsh_home() / "sessions",
        "claude": claude_home() / "projects",
        "codex": codex_home() / "sessions",
    }
