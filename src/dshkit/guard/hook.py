"""The command risk policy on PreToolUse, the guard's hook face: an agent's shell command that
is destructive, opaque or a global search is denied or sent for approval before it runs, per
`[guard] mode` and the person's own allow and deny rules.

It answers in every case: a call it cannot judge (a payload of the wrong shape, cut short or
unparsable: see `unjudged`) gets the decision for opaque code, never silence; settings it
cannot read (a broken config.toml, no state directory at all) are the strict mode. Where the
harness does not honour `ask` (the registry says), an ask goes out as a deny saying how to
run the command anyway. A deny ends with what can be done instead, by the kind of harm that
decided it (`ADVICE`).
"""

from __future__ import annotations

import os
import sys

from .. import harnesses
from ..hookio import Answer, Call
from .policy import DESTRUCTIVE, GLOBAL_SEARCH, OPAQUE, SAFE, TABLE, UNKNOWN, Kind, decide

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every shell command)
if TYPE_CHECKING:
    from typing import Any

    from ..hookio import Commit
    from ..store import Store
    from .rules import Rules
    from .service import Classification
    from .wire import RuleJson

_STRICT = "strict"
_RISKS = {"safe": "无破坏性", "unknown": "无法看懂的命令", "destructive": "破坏性命令"}
_HOW_TO_RUN = (
    "如确需运行，请让用户本人在终端里执行这条命令；或由用户在 dshkit 的 config.toml 的 [guard] "
    'allow 中加入允许规则（写法如 allow = ["git push:*"]，逐条匹配 `dshkit guard explain` '
    "列出的单条命令），判断依据也可用它查看。"
)
BY_HAND = "如确需运行，请让用户本人在终端里执行。"
# What can be done instead, per kind of harm (guard.policy.Kind): a denial says what was judged
# and what the agent or the person can do, which differs between a delete outside the
# workspace and a force push to main (docs/design/guard.md#a-denial-says-what-to-do-instead).
ADVICE = {
    Kind.DESTRUCTIVE: "这一步删掉或改掉的东西无法找回：请只处理本任务自己建的、写明名字的对象。"
    + BY_HAND,
    Kind.OUTSIDE: "工作区外的文件不归这次任务处理：请只在工作区内删除或改动；"
    "如确需处理工作区外的文件，请让用户本人执行。",
    Kind.WORKSPACE: "这会清空整个工作区：请只删除具体的文件或构建产物（如 build、dist）。",
    Kind.DISK: "这会抹掉整块磁盘、分区或卷上的数据，无法撤销，不应由代理执行。" + BY_HAND,
    Kind.WORK: "这会丢掉还没提交的改动、没合并的提交或找回它们的记录：请先提交、`git stash` "
    "或另建分支保存，再做。" + BY_HAND,
    Kind.SHARED: "强制推送会改写别人也在用的分支的历史：请推到自己的新分支（不加 --force），"
    "再发起合并请求；如确需改写共享分支，请让用户本人执行。",
    Kind.MACHINE: "这会影响整台机器或别人也在用的服务，不应由代理执行。" + BY_HAND,
    Kind.REMOTE: "这会删掉或改动另一台机器上的东西，在这里无法核实，也无法撤销。" + BY_HAND,
    Kind.CONFIG: "这是凭据、shell 启动文件、git 钩子或代理工具自己的设置（包括 dshkit 的守卫），"
    "改动它会影响之后的每一次运行：请只改工作区里本任务的文件；如确需修改，请让用户本人动手。",
    Kind.SECRET: "这是凭据文件，读进对话会把密钥交给模型：请只读取任务需要的非机密文件"
    "（如 .env.example）；如确需使用其中的值，请让用户本人配置环境变量。",
    Kind.LEAK: "这会把凭据发出这台机器，发出去就无法收回：请不要把凭据发出本机；如果对方服务"
    "确实需要，请让用户本人为它单独签发令牌，或由用户本人发送。",
    Kind.UNKNOWN: "strict 模式不运行看不清会影响什么的命令：请把路径和参数写成明确的值、"
    "把内联代码写进文件再运行；如确需运行，请让用户本人执行，或由用户改用 balanced 模式"
    "（`dshkit guard mode balanced`，这类命令会先问用户）。",
    Kind.OPAQUE: "看不到它实际会运行的代码：请先把要运行的内容（下载或解码的脚本）存成文件，"
    "看过后再运行那个文件。" + BY_HAND,
}
SEARCH_ADVICE = (
    "请把搜索限定在工作区或一个具体目录（如 `grep -r 关键词 src/`），不要从 /、盘符根目录、"
    "家目录或 AppData 开始。"
)
RULE_ADVICE = "这条规则是用户本人定的：请换一种做法；如确需运行，请让用户本人执行或修改这条规则。"


def on_command(call: Call) -> Answer | None:
    """A shell command; a Codex patch run through the shell tool (`["apply_patch", patch]`,
    or `apply_patch <<EOF` in a line) is judged as the patch it is too, the stricter winning."""
    tool_input = call.payload.get("tool_input")
    given = (
        tool_input.get("command", tool_input.get("cmd")) if isinstance(tool_input, dict) else None
    )
    patch = _patch_run(given)
    if patch is None:
        return _on_shell(call)
    from .edits import patch_answer

    patched = patch_answer(call, patch)
    if isinstance(given, list):  # argv: the patch program and its patch, no shell at all
        return patched
    return max((patched, _on_shell(call)), key=_answer_strictness)


def _patch_run(given: object) -> str | None:
    """The patch a shell tool's command hands to Codex's apply_patch, or None."""
    programs = ("apply_patch", "applypatch")
    if isinstance(given, list) and len(given) == 2 and all(isinstance(g, str) for g in given):
        program, patch = given
        return str(patch) if program in programs and "*** Begin Patch" in patch else None
    if (
        isinstance(given, str)
        and given.lstrip().startswith(programs)
        and "*** Begin Patch" in given
    ):
        return given
    return None


def _answer_strictness(answer: Answer | None) -> int:
    return -1 if answer is None or answer.decision is None else _strictness(answer.decision[0])


def _on_shell(call: Call) -> Answer | None:
    from .service import classify_sent  # (the judge: not for a file tool's call)

    tool_input = call.payload.get("tool_input")
    if tool_input is None:
        return None  # no command: nothing runs
    if not isinstance(tool_input, dict):
        return unjudged(call, "调用内容里的 tool_input 不是对象，看不到要运行的命令")
    command = harnesses.command_line(tool_input)
    if command is None:
        if tool_input.get("command", tool_input.get("cmd")) is None:
            return None
        return unjudged(call, "调用内容里的命令不是字符串（或字符串列表），无法读出要运行什么")
    cwd = call.payload.get("cwd")
    workdir = tool_input.get("workdir")
    platform = call.payload.get("platform")  # the harness's, when it says; it runs here
    misshapen = cwd is not None and not isinstance(cwd, str)
    workspace = cwd if isinstance(cwd, str) and cwd else None
    mode, rules, problem = _settings(call, workspace)
    found = classify_sent(  # the shell: from the tool's name, the platform and the line
        command,
        call.tool_name,
        workspace,
        workdir=workdir if isinstance(workdir, str) and workdir else None,
        platform=platform if isinstance(platform, str) else sys.platform,
        rules=rules,
    )
    decision = found.decision(mode)
    loosens = None
    if found.judge is not None and "dshkit" in command:
        from .own import loosening

        loosens = loosening(found.judge.seen)
    if (
        loosens is None
        and found.judge is not None
        and workspace
        and (">" in command or "tee" in command)
    ):
        from .edits import places_for
        from .own import shell_writes

        places = places_for(call)
        shell = "pwsh" if found.judge.seen and found.judge.seen[0].shell == "pwsh" else "bash"
        if places is not None:
            loosens = shell_writes(found, command, shell, places)
    if loosens is not None:  # the agent's own guard or start-up rewritten: as a file tool's
        decision = max(decision, decide(DESTRUCTIVE, False, mode), key=_strictness)
    if misshapen:  # where it runs is not known: never looser than a command it cannot see
        decision = max(decision, decide(UNKNOWN, False, mode, True), key=_strictness)
        problem = "（调用内容里的 cwd 不是字符串，不知道命令在哪个目录运行。）" + problem
    if decision == "allow":
        return None
    traced = classify_sent(  # again, traced: the rule that decided (never for an allow)
        command,
        call.tool_name,
        workspace,
        platform=platform if isinstance(platform, str) else sys.platform,
        rules=rules,
        traced=True,
        workdir=workdir if isinstance(workdir, str) and workdir else None,
    )
    rule = _rule(traced)
    relaxed = None
    if decision == "deny" and found.denied is None and not misshapen:
        from .intent import relaxing

        relaxed = relaxing(call, traced)  # the person's own latest words asked for it
        if relaxed is not None:
            decision = "ask"
    if loosens is not None and found.denied is None and decision != found.decision(mode):
        verb = "拒绝" if decision == "deny" else "需要人工确认"
        reason = (
            f"dshkit 命令风险策略（{mode}）{verb}这条命令：{loosens}（内置规则 own-guard）。"
            f"{problem}"
        )
        reason += ADVICE[Kind.CONFIG] if decision == "deny" else ""
        decision, reason = _delivered(call, decision, reason)
        commit = audited(call, decision, command, DESTRUCTIVE, mode, reason=loosens,
                         builtin="own-guard")  # fmt: skip
        return Answer("guard", decision=(decision, reason), commit=commit)
    if found.denied is not None:
        words = next(c for p, c in found.judge.denied if p is found.denied) if found.judge else None
        shown = " ".join([words.name, *(w.shown for w in words.args)]) if words else command
        reason = (
            f"dshkit 命令风险策略按用户自己的规则拒绝这条命令：规则 {found.denied.text!r}"
            f"（{found.denied.origin}）匹配了 `{shown}`。{problem}{RULE_ADVICE}"
        )
    elif found.leak is not None and _language(call) == "en":
        reason = _leak_in_english(found.leak, found.reason, mode, decision, rule, problem)
    else:
        what = "凭据外发" if found.leak is not None else _RISKS[found.risk]
        what += "、全局搜索" if found.global_search else ""
        what += "、运行看不见的代码" if found.opaque else ""
        verb = "拒绝" if decision == "deny" else "需要人工确认"
        reason = (
            f"dshkit 命令风险策略（{mode}）{verb}这条命令：{what}，{found.reason}"
            f"（{_rule_said(rule)}）。{problem}"
        )
        if relaxed is not None:
            reason += (
                f"本应拒绝，但用户最近的消息要求{relaxed}，所以只这一条改为请用户确认；"
                "其他命令照常判断。"
            )
        if decision == "deny":
            reason += _advice(found, mode)
        elif found.kind in ADVICE and found.kind != Kind.UNKNOWN:  # (its advice is strict's)
            reason += "更稳妥的做法：" + _kind_advice(found).replace(
                BY_HAND, ""
            )  # (for the one asked)
    decision, reason = _delivered(call, decision, reason)
    commit = audited(
        call,
        decision,
        command,
        found.risk,
        mode,
        relaxed=relaxed is not None,
        reason=found.reason,
        rule=rule.get("pattern"),  # the person's rule that decided, else the built-in one
        builtin=None if "pattern" in rule else rule.get("name"),
        words=rule.get("command"),
        globalSearch=found.global_search,
        opaque=found.opaque,
    )
    return Answer("guard", decision=(decision, reason), commit=commit)


def audited(
    call: Call,
    decision: str,
    command: str,
    risk: str,
    mode: str,
    *,
    relaxed: bool = False,
    **detail: Any,
) -> Commit:
    """The commit that logs a decision once it reached the harness (guard/audit.py: redacted,
    per workspace, bounded)."""
    cwd = call.payload.get("cwd")

    def commit(store: Store) -> None:
        from .audit import kind_of, record

        record(
            store,
            kind_of(decision, relaxed),
            harness=call.harness,
            session_id=call.session_id or None,
            command=command,
            workspace=cwd if isinstance(cwd, str) and cwd else None,
            risk=risk,
            mode=mode,
            **detail,
        )

    return commit


def _rule(traced: Classification) -> RuleJson:
    """The rule that decided a traced classification (service.explain's)."""
    from .service import explain

    record = explain(traced)
    return record.get("rule") or {"kind": "builtin", "name": "none"}


def _rule_said(rule: RuleJson) -> str:
    """The rule named for the agent: the built-in rule and the command it judged."""
    if "pattern" in rule:
        said = f"用户规则 {rule['pattern']!r}"
    else:
        said = f"内置规则 {rule.get('name') or '?'}"
    words = rule.get("command")
    return f"{said}，判定于 `{' '.join(words)}`" if words else said


def on_write(call: Call) -> Answer | None:
    """A write, an edit or a Codex patch: where it lands (guard/edits.py)."""
    from .edits import on_write as judged

    return judged(call)


def on_read(call: Call) -> Answer | None:
    """A read: whether it opens a credential file (guard/edits.py)."""
    from .edits import on_read as judged

    return judged(call)


def on_tool(call: Call) -> Answer | None:
    """Any other tool (MCP's): whether its name says it deletes (guard/edits.py)."""
    from .edits import on_tool as judged

    return judged(call)


def unjudged(call: Call, why: str) -> Answer | None:
    """The answer to a shell command the guard could not read (`why`, in Chinese): the mode's
    decision for code it cannot see, None only if that were allow."""
    mode, _, problem = _settings(call, None)
    decision = decide(UNKNOWN, False, mode, True)
    if decision == "allow":
        return None
    verb = "拒绝" if decision == "deny" else "需要人工确认"
    reason = (
        f"dshkit 命令风险策略（{mode}）{verb}这条命令：无法看懂的命令，{why}，"
        f"无法判断它的风险。{problem}"
    )
    if decision == "deny":
        reason += BY_HAND
    decision, reason = _delivered(call, decision, reason)
    return Answer("guard", decision=(decision, reason))


def _advice(found: Classification, mode: str) -> str:
    """What can be done instead, for each part of `found` whose row denies it under `mode`:
    its kind of harm, a global search, code it cannot see."""
    parts = []
    if found.risk != SAFE and TABLE[found.risk][mode] == "deny":
        parts.append(_kind_advice(found))
    if found.global_search and TABLE[GLOBAL_SEARCH][mode] == "deny":
        parts.append(SEARCH_ADVICE)
    if found.opaque and TABLE[OPAQUE][mode] == "deny":
        parts.append(ADVICE[Kind.OPAQUE])
    return "".join(dict.fromkeys(parts)) or BY_HAND  # (a deny for a cwd it cannot read)


def _kind_advice(found: Classification) -> str:
    """The advice of the deciding finding's kind (Chinese); a leak's names what would leave
    and where to."""
    if found.leak is not None:
        from .leaks import said

        return said(*found.leak, "zh")
    return ADVICE[found.kind]


def _language(call: Call) -> str:
    """The person's language, from their latest message in the session's transcript: "zh"
    (the guard's own) when it cannot be read. Read only for a leak stopped: a rare path."""
    from .intent import language

    return language(call)


def _leak_in_english(
    leak: tuple[str, str], why: str, mode: str, decision: str, rule: RuleJson, problem: str
) -> str:
    """A leak's whole reason in English, for a person who writes English: what would leave
    and where to, the rule that decided, and what to do instead."""
    from .leaks import said

    verb = "denies" if decision == "deny" else "asks the person about"
    words = rule.get("command")
    judged = f", judged on `{' '.join(words)}`" if words else ""
    advice = said(*leak, "en")
    if decision != "deny":
        advice = "A safer way: " + advice
    return (
        f"dshkit's command risk policy ({mode}) {verb} this command: a secret sent off the "
        "machine, "
        f"{why} (built-in rule {rule.get('name') or '?'}{judged}). {problem}{advice}"
    )


def _delivered(call: Call, decision: str, reason: str) -> tuple[str, str]:
    """The decision as this harness can take it: an ask where ask is not honoured (or the
    harness is not known) is a deny, whose reason says how to run the command anyway."""
    info = call.harness_info
    if decision != "ask" or (info is not None and info.honours_ask):
        return decision, reason
    if info is not None:
        said = f"{info.label} 不支持钩子的“需要确认”（ask），所以这次直接拒绝。"
    else:
        said = "无法确认调用它的工具支持钩子的“需要确认”（ask），所以这次直接拒绝。"
    return "deny", reason + said + _HOW_TO_RUN


def _strictness(decision: str) -> int:
    return ("allow", "ask", "deny").index(decision)


def _mode(call: Call) -> tuple[str, str]:
    """`[guard] mode` and a note when the config cannot be read (see `_settings`)."""
    mode, _, problem = _settings(call, None)
    return mode, problem


def _settings(call: Call, workspace: str | None) -> tuple[str, Rules | None, str]:
    """The mode (`guard.service.mode_state`, the one rule the CLI and the console show too),
    the person's rules for `workspace` and a note when what decides cannot be read. Without a
    config file or an override the config module (TOML, dataclasses) is never loaded: this
    runs on every shell command. No state directory (a relative DSH_HOME or --state-dir) is no
    settings: the strictest."""
    try:
        path = _config_file(call)
    except Exception as exc:  # Invalid, caught broadly: the hot path imports no error tree
        field = getattr(exc, "field", None)
        named = "--state-dir" if field == "state_dir" else field or "DSH_HOME"
        return (
            _STRICT,
            None,
            f"（{named} 必须是绝对路径，找不到 dshkit 的设置，按 strict 处理：{exc}）",
        )
    from .service import mode_state

    state = mode_state(os.path.dirname(path), call.env)  # the one rule: what the CLI shows
    section, rules, note = state.section, None, ""
    if section is not None and (section["allow"] or section["deny"] or section["projects"]):
        from .service import rules_for

        rules = rules_for(section, workspace, path) or None
    if state.problem:  # what was to decide the mode cannot be read: strict, and said why
        what = "配置" if state.source == "unreadable" else "选定的模式"
        note = f"（{what}无法读取，按 strict 处理：{state.problem}）"
    return state.mode, rules, note


def _config_file(call: Call) -> str:
    """<state dir>/config.toml, the state directory spelled as the entry point spells it
    (`Call.state`): a string, since `call.state_dir` would load pathlib (milliseconds) for
    every command."""
    return os.path.join(call.state, "config.toml")
