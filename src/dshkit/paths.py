"""Where dshkit keeps its state; each harness's own places are in the harness registry."""

from __future__ import annotations

import os
from pathlib import Path

from . import harnesses


def dsh_home() -> Path:
    """`$DSH_HOME`, defaulting to `~/.dsh` (the DSH harness's own home)."""
    return Path(harnesses.dsh_home())


def state_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """dshkit's state directory: `override`, else `$DSH_HOME/dshkit`."""
    return Path(override).expanduser() if override else dsh_home() / "dshkit"


def default_roots() -> dict[str, Path]:
    """The sessions root of each harness on this machine, keyed by harness name."""
    return {h.name: Path(h.sessions_root()) for h in harnesses.all_harnesses()}
