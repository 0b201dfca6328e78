"""What each harness's Stop hook and sandbox support, as found by running and reading them.

Stop (the event when the agent is about to end its turn):
- Claude Code: `{"decision": "block", "reason": …}` makes the model go on with the reason;
  the payload's `stop_hook_active` is true while it goes on because of a Stop hook.
- Codex 0.171: the same answer; the reason reaches the model as a user message
  (`<hook_prompt …>reason`), and the next Stop says `stop_hook_active: true` (run here
  against a fake Responses server).
- DSH's Claude-Code bridge (dsh-hooks-claude-code 0.0.1-rc.5): a block steers the agent with
  the reason for another step (`agent.steer`; run here on rc.8: the next request carried
  it), but `stop_hook_active` is always false and the bridge has no cap on consecutive
  blocks (its README and lib/index.js): the loop guard must be the hook's own.

Running a program inside the session's sandbox:
- Codex ships `codex sandbox [-c sandbox_mode="…"] -- COMMAND…` (0.171; run here:
  read-only refuses writes, and headless Chromium fails in read-only and workspace-write with
  `setsockopt: Operation not permitted`, as in a session's own shell; `-C DIR` is refused
  without a named `--permission-profile`).
- Claude Code's bash sandbox (`sandbox.enabled` in its settings) is sandbox-runtime over
  bubblewrap inside the CLI; the CLI offers no command that runs a given program under it.
- DSH rc.8's sandbox policy (`sandbox/mode` in its log) has no such command either.
Where there is none, probes run outside the sandbox and the facts say so.

Kept free of heavy imports: the hook path reads it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

_TAIL = 1 << 20  # a mode is read from a log's last MiB (the latest one wins)


class StopSupport:
    """What a harness does with a Stop hook's answer."""

    __slots__ = ("blocks", "loop_flag")

    def __init__(self, *, blocks: bool, loop_flag: bool) -> None:
        self.blocks = blocks  # a "block" with a reason makes the agent go on with it
        self.loop_flag = loop_flag  # `stop_hook_active` is really set while it goes on


class Sandbox:
    """How a harness's sandbox is known and entered: the modes read from its own files for a
    session, and how a program runs inside the sandbox of a mode (None: it cannot be)."""

    __slots__ = ("modes", "runner", "runner_name")

    def __init__(
        self,
        *,
        modes: Callable[[Mapping[str, Any], list[str]], dict[str, str]] | None = None,
        runner: Callable[[str, str], list[str] | None] | None = None,
        runner_name: str = "",
    ) -> None:
        self.modes = modes  # (hook payload, errors) → {fact: value, "source:" + fact: where}
        self.runner = runner  # (mode, cwd) → the argv prefix that runs a program inside it
        self.runner_name = runner_name  # how the runner is spelled for people


def _tail(path: str) -> bytes:
    """The last MiB of a session log, opened read-only."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - _TAIL))
        return handle.read()


def _codex_modes(payload: Mapping[str, Any], errors: list[str]) -> dict[str, str]:
    """The sandbox and approval policy of the rollout's latest turn context (a mode switched
    mid-session is the latest one)."""
    import json

    transcript = str(payload.get("transcript_path") or "")
    if not transcript:
        return {}
    try:
        tail = _tail(transcript)
    except OSError as exc:
        errors.append(f"{transcript}: {exc.strerror or exc}")
        return {}
    for line in reversed(tail.split(b"\n")):
        if b'"turn_context"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue  # the first line of the tail may be cut
        context = record.get("payload") if isinstance(record, dict) else None
        if record.get("type") != "turn_context" or not isinstance(context, dict):
            continue
        found: dict[str, str] = {}
        policy = context.get("sandbox_policy")
        mode = policy.get("type") if isinstance(policy, dict) else policy
        if isinstance(mode, str) and mode:
            found.update(sandbox=mode, **{"source:sandbox": "rollout turn context"})
        approval = context.get("approval_policy")
        if isinstance(approval, str) and approval:
            found.update(approval=approval, **{"source:approval": "rollout turn context"})
        return found
    return {}


def _codex_program() -> str | None:
    """The Codex CLI: `$CODEX_BIN`, `codex` on PATH, else the binary of the Codex that runs
    this hook (an npm install puts its `codex-path` directory, beside the native binary's
    `bin`, first on its hooks' PATH and names its package in CODEX_MANAGED_PACKAGE_ROOT)."""
    import shutil  # (here: a hook that reads no Codex mode loads none of shutil's archivers)

    found = os.environ.get("CODEX_BIN") or shutil.which("codex")
    if found:
        return found
    places = [
        os.path.join(os.path.dirname(entry.rstrip("/")), "bin", "codex")
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if os.path.basename(entry.rstrip("/")) == "codex-path"
    ]
    root = os.environ.get("CODEX_MANAGED_PACKAGE_ROOT")
    if root:
        import glob

        places += sorted(
            glob.glob(os.path.join(root, "..", "codex-*", "vendor", "*", "bin", "codex"))
        )
    return next((p for p in places if os.path.isfile(p) and os.access(p, os.X_OK)), None)


def _codex_runner(mode: str, cwd: str) -> list[str] | None:
    program = _codex_program()
    if not program or not mode or mode == "unknown":
        return None
    # (`-C DIR` would need a named permission profile too: the program runs where it is run)
    return [program, "sandbox", "-c", f'sandbox_mode="{mode}"', "--"]


def _claude_settings(cwd: str) -> list[str]:
    """Claude Code's settings files, lowest precedence first."""
    home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    files = [os.path.join(home, "settings.json")]
    if cwd:
        files += [os.path.join(cwd, ".claude", n) for n in ("settings.json", "settings.local.json")]
    return [*files, "/etc/claude-code/managed-settings.json"]


def _claude_modes(payload: Mapping[str, Any], errors: list[str]) -> dict[str, str]:
    """Whether Claude Code's bash sandbox is on (`sandbox.enabled`, the last file that says)."""
    import json

    found: dict[str, str] = {}
    for path in _claude_settings(str(payload.get("cwd") or "")):
        try:
            with open(path, "rb") as handle:
                settings = json.load(handle)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            errors.append(f"{path}: {exc}")
            continue
        sandbox = settings.get("sandbox") if isinstance(settings, dict) else None
        enabled = sandbox.get("enabled") if isinstance(sandbox, dict) else None
        if isinstance(enabled, bool):
            found = {"sandbox": "bash-sandbox" if enabled else "off", "source:sandbox": path}
    return found


STOP: dict[str, StopSupport] = {
    "claude": StopSupport(blocks=True, loop_flag=True),
    "codex": StopSupport(blocks=True, loop_flag=True),
    "dsh": StopSupport(blocks=True, loop_flag=False),
}
SANDBOXES: dict[str, Sandbox] = {
    "codex": Sandbox(modes=_codex_modes, runner=_codex_runner, runner_name="codex sandbox"),
    "claude": Sandbox(modes=_claude_modes),
    "dsh": Sandbox(),  # its modes are `sandbox/mode` events in its log (Capability.log_modes)
}
_NO_STOP = StopSupport(blocks=False, loop_flag=False)


def stop_support(harness: str) -> StopSupport:
    """What `harness`'s Stop hook supports (an unknown harness: nothing assumed)."""
    return STOP.get(harness, _NO_STOP)


def sandbox(harness: str) -> Sandbox:
    """How `harness`'s sandbox is read and entered (an unknown harness: neither)."""
    return SANDBOXES.get(harness) or Sandbox()
