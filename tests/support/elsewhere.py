"""What another process does to a store while a test holds it: a commit, made by a process of
its own that is then the last to close the store (SQLite checkpoints and may remove the WAL
then: what a connection kept open in the test must survive)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_COMMIT = """
import sys
from pathlib import Path
from dshkit.store import Store
with Store(Path(sys.argv[1])) as store:
    store.set_meta(sys.argv[2], sys.argv[3])
"""


def commit_meta(state: Path, key: str, value: str) -> None:
    """The meta `key` set to `value` in the store at `state`, by another process."""
    subprocess.run([sys.executable, "-c", _COMMIT, str(state), key, value], check=True)
