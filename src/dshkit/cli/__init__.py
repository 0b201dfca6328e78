"""The `dshkit` command line.

`dshkit hook EVENT` is dispatched before click is imported: the agent runs it on every tool
call, so it must start about as fast as a bare interpreter (click alone takes ~70 ms).
"""

from __future__ import annotations

import sys

# A hook's process lives tens of milliseconds, and the cyclic collector's passes over what its
# imports make found almost nothing (once the hook began, a DSH prompt made 5 passes, ~0.8 ms;
# a full watermark check 27, ~3.2 ms; measured): collected this rarely, a short call makes
# none, and a long one (an LLM call) is still collected
# (docs/design/hooks.md#a-hook-process-collects-rarely).
HOOK_GC_THRESHOLD = 100_000


def main() -> None:
    if sys.argv[1:2] == ["hook"] and sys.argv[2:3] not in (["-h"], ["--help"]):
        import gc

        gc.set_threshold(HOOK_GC_THRESHOLD)
        from ..hooks.run import main as run_hook

        run_hook(sys.argv[2:])  # (it ends the process)
    from .app import cli
    from .errors import run

    sys.exit(run(cli))
