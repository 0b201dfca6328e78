"""A fourth harness, made up for the tests as one module, as any harness module of
`dshkit.harnesses` is: whatever dshkit does for it must follow from this module alone.

Its hook dialect is not Claude Code's: it calls the tool events `BeforeTool` and
`AfterTool`, a prompt `BeforeAgent` and the end of a turn `AfterAgent` (as the Gemini CLI
does), has no SessionEnd, and is answered with exit code 2 and the reason on stderr where it
is to block (a tool call, or the end of a turn). `dshkit_with_fourth` runs a dshkit process
with it registered, `hook_with_fourth` one hook call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dshkit.harnesses.harness import (
    COMMAND,
    READ,
    WRITE,
    Harness,
    HookDialect,
    Launcher,
    StopSupport,
    location,
)

from .cli import environment

NAME = "fourth"
SHELL = "run_shell_command"  # its command tool
NAMES = {
    "UserPromptSubmit": "BeforeAgent",
    "PreToolUse": "BeforeTool",
    "PostToolUse": "AfterTool",
    "Stop": "AfterAgent",
    "SessionEnd": None,
    "PreCompact": "PreCompress",
}


def home() -> str:
    return location("FOURTH_HOME", "~/.fourth")


HARNESS = Harness(
    name=NAME,
    label="A fourth harness",
    home=home,
    places=lambda: (home(),),
    sessions_root=lambda: os.path.join(home(), "chats"),
    adapter_name="dshkit.sessions.claude:ClaudeAdapter",  # (its logs are never read here)
    log_name=r"^chat-.+\.json$",
    tools={
        COMMAND: frozenset({SHELL}),
        READ: frozenset({"read_file"}),
        WRITE: frozenset({"write_file", "replace"}),
    },
    user_settings=lambda state_dir: os.path.join(home(), "settings.json"),
    project_settings=None,
    bridge=None,
    dialect=HookDialect(names=NAMES, transcripts="chat-", block_exit=2),
    context_event="SessionStart",
    generations_repeat=False,
    launcher=Launcher("fourth", lambda message: ["-p", message], None, "FOURTH_BIN"),
    stop=StopSupport(blocks=True, loop_flag=False),
    prompt_prefixes=(("/", "slash command", True),),
)

# Run first in a dshkit process: the registry made with this module after the built-in ones,
# as one more name in `harnesses.MODULES` would make it.
_REGISTER = (
    "import sys\n"
    "sys.argv[0] = 'dshkit'\n"
    "from dshkit import harnesses\n"
    f"harnesses.HARNESSES.update(harnesses.build([{__name__!r}]))\n"
    "harnesses.NAMES = tuple(harnesses.HARNESSES)\n"
    "from dshkit.cli import main\n"
    "main()\n"
)


def dshkit_with_fourth(
    *args: str, home: Path, input: bytes = b"", env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`dshkit ARGS` under `home` (see `support.cli.environment`) with this harness
    registered, run to its end whatever its exit code (stdout and stderr as bytes)."""
    made: dict[str, Any] = {"FOURTH_HOME": str(home / ".fourth"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", _REGISTER, *args],
        input=input,
        capture_output=True,
        env=environment(home, made),
        timeout=120,
    )


def hook_with_fourth(
    home: Path, event: str, payload: dict[str, Any], **env: str
) -> tuple[int, bytes, bytes]:
    """`dshkit hook EVENT` with this harness registered, `payload` on stdin: its exit code,
    stdout and stderr."""
    done = dshkit_with_fourth("hook", event, home=home, input=json.dumps(payload).encode(), env=env)
    return done.returncode, done.stdout, done.stderr
