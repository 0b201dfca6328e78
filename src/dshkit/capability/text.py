"""The capability facts as the agent reads them, in Chinese
(docs/design/capability.md#measure-never-guess).

Only facts and general rules, no recipe for any task: the modes as the harness reports them
(`unknown` where nothing said), each channel ✓/✗ with its raw reason, the MCP servers not
started because their harness would not start them, where the channels were measured (in
the session's own sandbox, or plainly outside it), for a session that is or may be
restricted that the delivery gate runs outside its sandbox, the rules that make a failure a
conclusion only after a fresh re-test, and — in full access only — the line that
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
# Where the harness offers no way to run a program inside the session's sandbox, the probes
# ran in dshkit's own process: said plainly, so a ✓ is not read as a promise about the
# session's own tools.
OUTSIDE = (
    "注意：以上 ✓ 是 dshkit 在会话沙箱之外测得的，不一定适用于你自己的工具；"
    "你的工具若失败，以当场复测的原始报错为准。"
)
INSIDE = "以上子进程与视觉截图两项经 {runner} 在本会话自己的沙箱里实测，与你的工具受同样的限制。"
# The one fact a restricted session most needs: the gate does what its tools may not.
GATE_OUTSIDE = (
    "交付门和 dshkit 的 gate_check 工具都在你的沙箱之外运行（宿主侧用真实无头 Chromium 打开网页）："
    "自己截不了图、开不了浏览器时，写好网页交付物后调用 gate_check 或直接交付，"
    "实测结论会回给你；不必为此申请提权，也不要把验证交给用户。"
)
PENDING = "通道实测正在后台进行，结果下一轮补上；在此之前通道状态未知，不能当作做不到。"
# Why a configured MCP server was not started (`harnesses.mcp_trust`), by who did not start it.
_WITHHELD = {"not approved": "未在 {harness} 中批准", "switched off": "已在 {harness} 中关闭"}
WITHHELD = (
    "未启动、未实测的 MCP 服务器：{servers}。dshkit 只启动 harness 自己会启动的服务器；"
    "它们能不能用未知，要用须由用户先在 harness 里批准，不要自己去改配置批准。"
)
NONE_STARTED = "没有启动任何服务器"
_NAME_LIMIT = 80


def render(facts: Facts, channels: list[dict[str, Any]] | None) -> str:
    """The text for these facts and channel results (None: the probes are still pending)."""
    lines = [HEADING, f"- 权限档：{facts.sandbox}", f"- 审批策略：{_approval(facts.approval)}"]
    if facts.permission != UNKNOWN or facts.sandbox == UNKNOWN:
        lines.append(f"- 权限模式：{facts.permission}")
    if channels is None:
        lines.append(f"- {PENDING}")
    else:
        lines += [_channel(result) for result in channels]
        inside = next((str(c["inside"]) for c in channels if c.get("inside")), None)
        if inside is not None:
            lines.append(f"- {INSIDE.format(runner=_outside(inside))}")
        elif not facts.full_access:
            lines.append(f"- {OUTSIDE}")
    if facts.restricted is not False:
        lines.append(f"- {GATE_OUTSIDE}")
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
    servers = result.get("servers")
    if name == TOOL_SERVERS and servers and "errors" in result:
        return _tool_servers(result, servers)
    reason = _outside(str(result["reason"]))
    return f"- {_LABELS.get(name, name)}：{_MARKS[result['ok']]}（{reason}）"


def _tool_servers(result: dict[str, Any], servers: list[dict[str, Any]]) -> str:
    """The servers probed with their raw reasons, then those not started and why."""
    started = [s for s in servers if s.get("started", True)]
    withheld = [s for s in servers if not s.get("started", True)]
    reasons = [f"{s['name']} {_MARKS[bool(s['ok'])]} {s['reason']}" for s in started]
    reasons += [str(error) for error in result["errors"]]
    shown = _outside("; ".join(reasons)) if reasons else NONE_STARTED
    lines = [f"- {_LABELS[TOOL_SERVERS]}：{_MARKS[result['ok']]}（{shown}）"]
    if withheld:
        listed = "；".join(
            f"{_name(s['name'])}（未启动："
            + _WITHHELD.get(str(s.get("withheld")), "{harness} 不会启动它").format(
                harness=_outside(str(s.get("harness") or "harness"))
            )
            + "）"
            for s in withheld
        )
        lines.append(f"- {WITHHELD.format(servers=listed)}")
    return "\n".join(lines)


def _name(name: object) -> str:
    """A server's name as the config spells it (anyone's words: one line, bounded)."""
    flat = " ".join(str(name).split())
    return _outside(flat if len(flat) <= _NAME_LIMIT else flat[: _NAME_LIMIT - 1] + "…")


def _outside(text: str) -> str:
    # Outside text: `{{` in it would be read by DSH as a template variable.
    return text.replace("{{", "{ {").replace("}}", "} }")
