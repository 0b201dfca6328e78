"""The command risk policy on PreToolUse: an agent's shell command that is destructive, opaque
or a global search is denied or sent for approval before it runs, per `[guard] mode`."""

from __future__ import annotations

import os
import sys

from .. import harnesses
from ..guard import DEFAULT_MODE, decide
from ..guard.service import classify_sent
from .protocol import HookInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every shell command)
if TYPE_CHECKING:
    from typing import Any

_STRICT = "strict"
_MODE_ENV = "DSHKIT_GUARD_MODE"  # `[guard] mode`'s override (config.py)
_RISKS = {"safe": "无破坏性", "unknown": "无法看懂的命令", "destructive": "破坏性命令"}


def on_command(hook: HookInput) -> dict[str, Any] | None:
    tool_input = hook.payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    command = harnesses.command_line(tool_input)
    if command is None:
        return None
    cwd = hook.payload.get("cwd")
    workdir = tool_input.get("workdir")
    platform = hook.payload.get("platform")  # the harness's, when it says; it runs here
    found = classify_sent(  # the shell: from the tool's name, the platform and the line
        command,
        hook.tool_name,
        cwd if isinstance(cwd, str) and cwd else None,
        workdir=workdir if isinstance(workdir, str) and workdir else None,
        platform=platform if isinstance(platform, str) else sys.platform,
    )
    mode, problem = _mode(hook)
    decision = decide(found.risk, found.global_search, mode)
    if decision == "allow":
        return None
    what = _RISKS[found.risk] + ("、全局搜索" if found.global_search else "")
    verb = "拒绝" if decision == "deny" else "需要人工确认"
    reason = f"dshkit 命令风险策略（{mode}）{verb}这条命令：{what}，{found.reason}。{problem}" + (
        "请改在工作区内操作，或缩小搜索范围。" if decision == "deny" else ""
    )

    def audited() -> None:  # once the decision reached the harness
        from ..graft import ledger

        with hook.open_store() as store:
            ledger.audit(
                store,
                "command-blocked" if decision == "deny" else "command-asked",
                harness=hook.harness,
                session_id=hook.session_id or None,
                command=command,
                risk=found.risk,
                globalSearch=found.global_search,
                mode=mode,
            )

    return {"permissionDecision": decision, "permissionDecisionReason": reason, "commit": audited}


def _mode(hook: HookInput) -> tuple[str, str]:
    """`[guard] mode` and a note when the config cannot be read. Without a config file or an
    override it is the default, and the config module (TOML, dataclasses) is never loaded:
    this runs on every shell command."""
    if not hook.env.get(_MODE_ENV) and not os.path.exists(_config_file(hook)):
        return DEFAULT_MODE, ""
    from ..config import ConfigError, load_config

    try:
        return str(load_config(hook.state_dir, hook.env)["guard"]["mode"]), ""
    except ConfigError as exc:  # a guard that cannot read its mode takes the strictest one
        return _STRICT, f"（配置无法读取，按 strict 处理：{exc}）"


def _config_file(hook: HookInput) -> str:
    """<state dir>/config.toml, the state directory spelled as the entry point spells it
    (hooks/run.py): a string, since `hook.state_dir` would load pathlib (milliseconds) for
    every command."""
    given = hook.directory
    if not given:
        return os.path.join(harnesses.dsh_home(), "dshkit", "config.toml")
    state = harnesses.absolute(os.path.expanduser(given), given, "the state directory", "state_dir")
    return os.path.join(state, "config.toml")
