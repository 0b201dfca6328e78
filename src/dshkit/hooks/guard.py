"""The command risk policy on PreToolUse: an agent's shell command that is destructive, opaque
or a global search is denied or sent for approval before it runs, per `[guard] mode` and the
person's own allow and deny rules.

It answers in every case: a call it cannot judge (a payload of the wrong shape, cut short or
unparsable: see `unjudged`) gets the decision for opaque code, never silence. Where the
harness does not honour `ask` (the registry says), an ask goes out as a deny saying how to
run the command anyway.
"""

from __future__ import annotations

import os
import sys

from .. import harnesses
from ..guard import DEFAULT_MODE, UNKNOWN, decide
from ..guard.service import chosen_mode, classify_sent
from .protocol import HookInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every shell command)
if TYPE_CHECKING:
    from typing import Any

    from ..guard.rules import Rules

_STRICT = "strict"
_MODE_ENV = "DSHKIT_GUARD_MODE"  # `[guard] mode`'s override (config.py)
_RISKS = {"safe": "无破坏性", "unknown": "无法看懂的命令", "destructive": "破坏性命令"}
_HOW_TO_RUN = (
    "如确需运行，请让用户本人在终端里执行这条命令；或由用户在 dshkit 的 config.toml 的 [guard] "
    'allow 中加入允许规则（写法如 allow = ["git push:*"]，逐条匹配 `dshkit guard explain` '
    "列出的单条命令），判断依据也可用它查看。"
)


def on_command(hook: HookInput) -> dict[str, Any] | None:
    tool_input = hook.payload.get("tool_input")
    if tool_input is None:
        return None  # no command: nothing runs
    if not isinstance(tool_input, dict):
        return unjudged(hook, "调用内容里的 tool_input 不是对象，看不到要运行的命令")
    command = harnesses.command_line(tool_input)
    if command is None:
        if tool_input.get("command", tool_input.get("cmd")) is None:
            return None
        return unjudged(hook, "调用内容里的命令不是字符串（或字符串列表），无法读出要运行什么")
    cwd = hook.payload.get("cwd")
    workdir = tool_input.get("workdir")
    platform = hook.payload.get("platform")  # the harness's, when it says; it runs here
    misshapen = cwd is not None and not isinstance(cwd, str)
    workspace = cwd if isinstance(cwd, str) and cwd else None
    mode, rules, problem = _settings(hook, workspace)
    found = classify_sent(  # the shell: from the tool's name, the platform and the line
        command,
        hook.tool_name,
        workspace,
        workdir=workdir if isinstance(workdir, str) and workdir else None,
        platform=platform if isinstance(platform, str) else sys.platform,
        rules=rules,
    )
    decision = found.decision(mode)
    if misshapen:  # where it runs is not known: never looser than a command it cannot see
        decision = max(decision, decide(UNKNOWN, False, mode, True), key=_strictness)
        problem = "（调用内容里的 cwd 不是字符串，不知道命令在哪个目录运行。）" + problem
    if decision == "allow":
        return None
    if found.denied is not None:
        words = next(c for p, c in found.judge.denied if p is found.denied) if found.judge else None
        shown = " ".join([words.name, *(w.shown for w in words.args)]) if words else command
        reason = (
            f"dshkit 命令风险策略按用户自己的规则拒绝这条命令：规则 {found.denied.text!r}"
            f"（{found.denied.origin}）匹配了 `{shown}`。{problem}"
        )
    else:
        what = _RISKS[found.risk] + ("、全局搜索" if found.global_search else "")
        what += "、运行看不见的代码" if found.opaque else ""
        verb = "拒绝" if decision == "deny" else "需要人工确认"
        reason = f"dshkit 命令风险策略（{mode}）{verb}这条命令：{what}，{found.reason}。{problem}"
        if decision == "deny":
            reason += "请改在工作区内操作，或缩小搜索范围。"
    decision, reason = _delivered(hook, decision, reason)

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
                opaque=found.opaque,
                mode=mode,
                rule=found.denied.text if found.denied is not None else None,
            )

    return {"permissionDecision": decision, "permissionDecisionReason": reason, "commit": audited}


def unjudged(hook: HookInput, why: str) -> dict[str, Any] | None:
    """The answer to a shell command the guard could not read (`why`, in Chinese): the mode's
    decision for code it cannot see, None only if that were allow."""
    mode, _, problem = _settings(hook, None)
    decision = decide(UNKNOWN, False, mode, True)
    if decision == "allow":
        return None
    verb = "拒绝" if decision == "deny" else "需要人工确认"
    reason = (
        f"dshkit 命令风险策略（{mode}）{verb}这条命令：无法看懂的命令，{why}，"
        f"无法判断它的风险。{problem}"
    )
    decision, reason = _delivered(hook, decision, reason)
    return {"permissionDecision": decision, "permissionDecisionReason": reason}


def _delivered(hook: HookInput, decision: str, reason: str) -> tuple[str, str]:
    """The decision as this harness can take it: an ask where ask is not honoured (or the
    harness is not known) is a deny, whose reason says how to run the command anyway."""
    info = hook.harness_info
    if decision != "ask" or (info is not None and info.honours_ask):
        return decision, reason
    if info is not None:
        said = f"{info.label} 不支持钩子的“需要确认”（ask），所以这次直接拒绝。"
    else:
        said = "无法确认调用它的工具支持钩子的“需要确认”（ask），所以这次直接拒绝。"
    return "deny", reason + said + _HOW_TO_RUN


def _strictness(decision: str) -> int:
    return ("allow", "ask", "deny").index(decision)


def _mode(hook: HookInput) -> tuple[str, str]:
    """`[guard] mode` and a note when the config cannot be read (see `_settings`)."""
    mode, _, problem = _settings(hook, None)
    return mode, problem


def _settings(hook: HookInput, workspace: str | None) -> tuple[str, Rules | None, str]:
    """`[guard] mode`, the person's rules for `workspace` and a note when the config cannot
    be read. Without a config file or an override it is the default mode and no rules, and
    the config module (TOML, dataclasses) is never loaded: this runs on every shell command."""
    path = _config_file(hook)
    # The mode a person chose (console, CLI) wins over config.toml's; the override over both.
    chosen = None if hook.env.get(_MODE_ENV) else chosen_mode(os.path.dirname(path))
    if not hook.env.get(_MODE_ENV) and not os.path.exists(path):
        return chosen or DEFAULT_MODE, None, ""
    from ..config import ConfigError, load_config

    try:
        section = load_config(hook.state_dir, hook.env)["guard"]
    except ConfigError as exc:  # a guard that cannot read its settings takes the strictest
        return _STRICT, None, f"（配置无法读取，按 strict 处理：{exc}）"
    rules = None
    if section["allow"] or section["deny"] or section["projects"]:
        from ..guard.service import rules_for

        rules = rules_for(section, workspace, path) or None
    return chosen or str(section["mode"]), rules, ""


def _config_file(hook: HookInput) -> str:
    """<state dir>/config.toml, the state directory spelled as the entry point spells it
    (hooks/run.py): a string, since `hook.state_dir` would load pathlib (milliseconds) for
    every command."""
    given = hook.directory
    if not given:
        return os.path.join(harnesses.dsh_home(), "dshkit", "config.toml")
    state = harnesses.absolute(os.path.expanduser(given), given, "the state directory", "state_dir")
    return os.path.join(state, "config.toml")
