"""The capability facts as the agent reads them (Chinese, seed 000 §0⁗).

Only facts and general rules, no recipe for any task: the modes as the harness reports them
(`unknown` where nothing said), each channel ✓/✗ with its raw reason, the rules that make a
failure a conclusion only after a fresh re-test, and — in full access only — the line that
restricted-mode warnings do not apply. Nothing here holds `{{` (DSH would read a variable).
"""

from __future__ import annotations

from typing import Any

from .facts import UNKNOWN, Facts
from .probes import SCREENSHOT, SUBPROCESS, TOOL_SERVERS

HEADING = "【能力事实】本会话实测（dshkit 探测，不是推测）"
_LABELS = {
    SUBPROCESS: "子进程",
    SCREENSHOT: "视觉截图（无头浏览器）",
    TOOL_SERVERS: "外部工具服务器（MCP）",
}
_MARKS = {True: "✓", False: "✗", None: "—"}
RULES = (
    "【失败不是结论】“被拒/做不到”只能由当场复测确认：自己的一次失败可能是假失败"
    "（异步落盘时立刻去查、参数被已开着的实例吞掉），先复测一次再下结论。",
    "权限档、审批策略或环境变过，之前的失败结论一律作废，需要时重新实测。",
    "能自动验证的（截图、编译、断言、跑一遍）自己验，不许交给用户去看。",
)
FULL_ACCESS = (
    "本会话是全权档：工具说明里针对受限档的警告（命名管道 EPERM、受限语言模式、"
    ".NET/Add-Type、申请提权审批等）在本会话不适用，不要申请提权。"
)
# The probes run from dshkit's hook process, not inside the harness's tool sandbox: said
# plainly, so a restricted session does not read ✓ as a promise about its own tools.
OUTSIDE = (
    "以上通道由 dshkit 在会话工具的沙箱之外实测；受限档下你自己的工具若仍失败，"
    "以当场复测的原始报错为准。"
)
PENDING = "通道实测正在后台进行，结果下一轮补上；在此之前通道状态未知，不能当作做不到。"


def render(facts: Facts, channels: list[dict[str, Any]] | None) -> str:
    """The text for these facts and channel results (None: the probes are still pending)."""
    lines = [HEADING, f"- 权限档：{facts.sandbox}", f"- 审批策略：{_approval(facts.approval)}"]
    if facts.permission != UNKNOWN or facts.sandbox == UNKNOWN:
        lines.append(f"- 权限模式：{facts.permission}")
    if channels is None:
        lines.append(f"- {PENDING}")
    else:
        lines += [_channel(result) for result in channels]
        if not facts.full_access:
            lines.append(f"- {OUTSIDE}")
    lines.append("通用规则：")
    lines += [f"- {rule}" for rule in RULES]
    if facts.full_access:
        lines.append(f"- {FULL_ACCESS}")
    return "\n".join(lines)


def _approval(policy: str) -> str:
    if policy == "never":
        return "never（没有任何操作需要审批，不是“没有权限”）"
    return policy


def _channel(result: dict[str, Any]) -> str:
    name = result["channel"]
    # A raw reason is outside text: `{{` in it would be read by DSH as a template variable.
    reason = str(result["reason"]).replace("{{", "{ {").replace("}}", "} }")
    return f"- {_LABELS.get(name, name)}：{_MARKS[result['ok']]}（{reason}）"
