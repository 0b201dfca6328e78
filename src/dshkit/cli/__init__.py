"""The `dshkit` command line.

`dshkit hook EVENT` is dispatched before click is imported: the agent runs it on every tool
call, so it must start about as fast as a bare interpreter (click alone takes ~70 ms).
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:2] == ["hook"] and sys.argv[2:3] not in (["-h"], ["--help"]):
        from ..hooks.run import main as run_hook

        run_hook(sys.argv[2:])  # (it ends the process)
    from .app import cli
    from .errors import run

    sys.exit(run(cli))
