"""What the install tests find in a person's home: settings of someone else's, with their own
hooks, that installing dshkit must keep as they are; and a harness CLI dshkit runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .cli import BARE_PATH

FOREIGN: dict[str, Any] = {
    "theme": "dark",
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": "/usr/local/bin/audit-bash", "timeout": 5}
                ],
            }
        ],
        "SessionStart": [{"matcher": "", "hooks": [{"type": "command", "command": "echo hi"}]}],
    },
}


# DSH's CLI as install-hooks and doctor meet it: `dsh plugin --profile P add SPEC…` puts each
# package into the profile as the real one does (its package.json's dependencies and
# node_modules/<name>/package.json, where doctor looks), or, with ADDS false, does nothing
# (an add that did not take); every call's arguments are logged beside the script.
_FAKE_DSH = """#!{python}
import json, os, sys
from pathlib import Path

with open(Path(sys.argv[0]).with_name("dsh.log"), "a") as log:
    print(*sys.argv[1:], file=log)
args = sys.argv[1:]
if {adds} and args[:2] == ["plugin", "--profile"] and args[3:4] == ["add"]:
    home = os.environ.get("DSH_HOME") or os.path.expanduser("~/.dsh")
    profile = Path(home, "profiles", args[2])
    names = {{spec.rpartition("@")[0]: spec.rpartition("@")[2] for spec in args[4:]}}
    for name in names:
        (profile / "node_modules" / name).mkdir(parents=True, exist_ok=True)
        (profile / "node_modules" / name / "package.json").write_text("{{}}")
    (profile / "package.json").write_text(json.dumps({{"dependencies": names}}))
"""


def fake_dsh(bin_dir: Path, adds: bool = True) -> str:
    """A fake `dsh` in `bin_dir` (made if need be); returns the PATH that finds it first (the
    system's programs after it). Its calls are logged in `bin_dir / "dsh.log"`."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "dsh"
    script.write_text(_FAKE_DSH.format(python=sys.executable, adds=adds))
    script.chmod(0o755)
    return f"{bin_dir}:{BARE_PATH}"
