"""The command lines dshkit installs (a hook, its MCP server), recognising them in a file,
and what keeps one found there from running this dshkit with this state directory.

User scope names the installing `dshkit` by absolute path and its state directory, so the
command works whatever the harness's PATH is (a hook: through its launcher where it can,
`launcher`); project scope runs `dshkit` found on PATH with its default state directory,
because that file is meant to be committed and used on other machines.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from ..paths import state_dir as default_state_dir
from . import launcher
from .model import BROKEN, WARN, Problem

PROJECT_PROGRAM = "dshkit"  # what a project-scope command runs: whichever dshkit is on PATH
SERVER_NAME = "dshkit"  # the MCP server's name in every harness: its tools are `mcp__dshkit__…`


def dshkit_command() -> list[str]:
    """How this very dshkit is run: its script beside the interpreter, else `python -m`."""
    script = Path(sys.executable).parent / "dshkit"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "dshkit"]


def hook_line(event: str, scope: str, state_dir: Path) -> str:
    """The command a hook runs for `event`."""
    if scope == "project":
        return shlex.join([PROJECT_PROGRAM, "hook", event])
    program = launcher.program(dshkit_command())
    return shlex.join([*program, "hook", event, "--state-dir", str(state_dir)])


def server_command(scope: str, state_dir: Path, harness: str) -> list[str]:
    """What `harness` runs to start dshkit's MCP server: it reads that harness's sessions, so a
    handoff tool finds the session calling it; its instructions leave the profile out, which
    the hooks installed beside it inject once per session."""
    if scope == "project":
        return [PROJECT_PROGRAM, "mcp", "--harness", harness, "--no-profile"]
    return [
        *dshkit_command(),
        *("mcp", "--harness", harness, "--no-profile", "--state-dir", str(state_dir)),
    ]


def runs_dshkit(words: list[str], verb: str) -> bool:
    """Whether a command line is `… dshkit VERB …` (a script, `python -m dshkit`, or a hook's
    launcher)."""
    if verb not in words:
        return False
    before = words[: words.index(verb)]
    return launcher.is_launcher(before) or any(os.path.basename(w) == "dshkit" for w in before)


def inspect_command(
    command: str, state_dir: Path, again: str, verb: str = "hook", scope: str = "user"
) -> list[Problem]:
    """What keeps `… dshkit VERB …` from working here: a missing or other dshkit, another
    state directory; and, for a user-scope hook, a line that is not the one this dshkit
    would write (`hook_line`: an older launcher, or none where one can start it)."""
    words = shlex.split(command)
    at = words.index(verb)
    program = words[0]  # the dshkit script, or the interpreter of `python -m dshkit`
    found = shutil.which(program) if os.sep not in program else program
    started = launcher.is_launcher(words[:at])
    this = sys.executable if started else dshkit_command()[0]
    problems = []
    if found is None or not os.access(found, os.X_OK):
        where = "is not on PATH here" if os.sep not in program else "does not exist"
        problems.append(Problem(f"runs {program}, which {where}: {again}", BROKEN))
    elif os.path.realpath(found) != os.path.realpath(this):
        problems.append(Problem(f"runs another dshkit ({found}; this one is {this})", WARN))
    elif started and words[:at] != launcher.program(dshkit_command()):
        # (the paths this dshkit's interpreter is given have changed since: an upgrade, a
        # package added or moved)
        problems.append(Problem(f"starts dshkit with other paths than this one's: {again}", WARN))
    elif (verb, scope, started) == ("hook", "user", False) and launcher.is_launcher(
        launcher.program(dshkit_command())
    ):  # (installed before the launcher: it works, ~1 ms a call slower)
        slower = "starts dshkit through its script, with `site` (~1 ms a call)"
        problems.append(Problem(f"{slower}: {again}", WARN))
    given = words[words.index("--state-dir") + 1] if "--state-dir" in words[at:-1] else None
    used = Path(given) if given else default_state_dir()
    if os.path.realpath(used) != os.path.realpath(state_dir):
        problems.append(
            Problem(f"feeds another state directory ({used}; this one is {state_dir})", BROKEN)
        )
    return problems
