"""Rework: which web deliverables a write tool touched, and the instruction that sends a hard
failure back to the agent with the measured evidence (`delivery` decides when, and records
that it reached the session once per file content).

Which files a write tool touched is read from its input, whatever the harness: a path under
`file_path` or `path` (Claude Code's Write/Edit, DSH's write/edit), or the `*** Add File:` /
`*** Update File:` / `*** Move to:` lines of a patch anywhere in it (Codex's apply_patch).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

# What the gate judges (the judge's own list, spelled in `scan` too so that the hooks, which
# only need to know a deliverable when they see one, never import the judge and its browser).
from .scan import DELIVERABLE_SUFFIXES as DELIVERABLE_SUFFIXES

SHOTS_DIR = "gate-shots"  # under the state dir
_PATH_KEYS = ("file_path", "path")
_PATCH_LINE = re.compile(r"^\*\*\* (?:Add File|Update File|Move to): (.+?)\s*$", re.MULTILINE)
_SHOWN_ERRORS = 8  # errors quoted to the agent (all of them are in the stored evidence)
_SHOWN_CHARS = 1500  # of the overlay text quoted to the agent

# The verdicts that are no failure: nothing goes back (a page waiting for a gesture the gate
# made once is not dead, nor one whose failure follows from a script the gate refused from
# the network: no rework order).
NOT_FAILURES = ("ok", "needs-gesture", "needs-network")
# What each hard failure means, for the agent (the model reads it: Chinese). The judge's
# verdicts, spelled here for the same reason as the suffixes (a test keeps the two lists equal).
MEANING = {
    "fatal-overlay": "页面显示了自己的致命错误覆盖层",
    "parse-error": "浏览器无法解析该文档（显示的是解析器的错误框，不是页面内容）",
    "page-error": "页面抛出了未捕获的异常 / 未处理的 Promise 拒绝 / console.error",
    "blank-canvas-0": "画布的后备缓冲尺寸 ≤ 8 像素（CSS 尺寸再正常也显示不出任何东西）",
    "webgl-error": "WebGL 绘制调用什么都没画出来：调用时没有可用的着色器程序（编译或链接失败）",
    "blank-canvas": "画布什么都没显示：从未绘制，或在帧内与截图中都是全黑，或除了一个小浮层"
    "（如 FPS 计数）外只有暗淡且无形状的纹理，或画布从未设置尺寸（300×150）而场景画在"
    "其后备缓冲之外；或页面根本没有任何内容",
    "unresponsive": "页面主线程卡死，采样在超时内没有回应",
}


def shots_dir(state_dir: Path) -> Path:
    return Path(state_dir) / SHOTS_DIR


def written_deliverables(tool_input: Any, cwd: str | None) -> list[Path]:
    """The existing web deliverables a write tool's input names, resolved against `cwd`,
    each once, in the order named."""
    found: dict[Path, None] = {}
    for name in _named_paths(tool_input):
        path = Path(name).expanduser()
        if not path.is_absolute():
            if not cwd:
                continue  # relative to nothing we know: not guessed
            path = Path(cwd) / path
        if path.suffix.lower() in DELIVERABLE_SUFFIXES and path.is_file():
            found.setdefault(path.resolve())
    return list(found)


def _named_paths(tool_input: Any) -> Iterator[str]:
    if not isinstance(tool_input, dict):
        return
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            yield value.strip()
    for text in _strings(tool_input):
        if "*** " in text:
            yield from _PATCH_LINE.findall(text)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


class Rework:
    """A rework decision: the instruction for the agent, and `commit` to record that it was
    delivered to the session (call it only once it really was)."""

    def __init__(self, instruction: str, commit: Callable[[], None]) -> None:
        self.instruction = instruction
        self.commit = commit


def instruction(verdicts: Sequence[Mapping[str, Any]]) -> str:
    """The rework instruction: what the gate measured, per failed file (Chinese), from the
    verdicts' stored evidence: the judge's report of its findings (when, what kind, where,
    what, how often), or for a verdict stored before findings existed its errors and
    canvases."""
    parts = [
        "【dshkit 交付门：机器实测未通过，请返工】以下网页交付物在真实无头 Chromium 中打开后判定为"
        "失败（宿主侧实测，不是推测）。请按证据修复根因，修好后再交付；不要只做静态检查就宣称已验证。"
    ]
    for verdict in verdicts:
        name = str(verdict.get("verdict"))
        lines = [
            f"\n文件：{verdict.get('path')}",
            f"判定：{name}（{MEANING.get(name, name)}）；"
            f"采样 {int(verdict.get('elapsedMs') or 0) / 1000:.1f} 秒，按最后一次采样判定",
        ]
        findings = [str(line) for line in (verdict.get("report") or [])[1:]]
        if findings:
            # The judge's findings as it reports them to people: when, what kind, where, what.
            lines.append(
                "实测证据（时间为打开后的秒数）：\n" + "\n".join(f"- {f.strip()}" for f in findings)
            )
            lines.extend(_overlay(verdict))  # a report line cuts it: the page's own words whole
        else:
            lines.extend(_raw_evidence(verdict))  # stored before findings existed
        if verdict.get("screenshot"):
            lines.append(f"截图：{verdict['screenshot']}")
        parts.append("\n".join(lines))
    return "\n".join(parts)


def _raw_evidence(verdict: Mapping[str, Any]) -> list[str]:
    """The evidence of a verdict stored without findings: overlay, errors and canvases."""
    lines = _overlay(verdict)
    errors = [str(e) for e in verdict.get("errors") or []]
    if errors:
        shown = errors[:_SHOWN_ERRORS]
        lines.append("页面错误：\n" + "\n".join(f"- {e}" for e in shown))
        total = int(verdict.get("errorCount") or len(errors))
        hidden = total - sum(_count(e) for e in shown)
        if hidden > 0:
            lines.append(f"（另有 {hidden} 条错误未列出，见证据记录）")
    for index, canvas in enumerate((verdict.get("canvas") or [])[:4], 1):
        lines.append(
            f"画布 {index}：后备缓冲 {canvas.get('width')}×{canvas.get('height')}，"
            f"CSS {canvas.get('cssWidth')}×{canvas.get('cssHeight')}，"
            f"上下文 {canvas.get('context')}，"
            f"帧内中心像素 {_pixel(canvas.get('framePixel'))}，"
            f"截图像素 {_pixel(canvas.get('screenshotPixel'))}"
        )
    return lines


def _overlay(verdict: Mapping[str, Any]) -> list[str]:
    overlay = verdict.get("overlayText")
    if not overlay:
        return []
    text = str(overlay)
    if len(text) > _SHOWN_CHARS:
        text = text[:_SHOWN_CHARS] + f"…（覆盖层文字共 {len(text)} 字，其余未显示）"
    return [f"覆盖层文字：\n{text}"]


def _count(error: str) -> int:
    """How many occurrences one listed error stands for (`… (×N)`)."""
    found = re.search(r" \(×(\d+)\)$", error)
    return int(found.group(1)) if found else 1


def _pixel(pixel: dict[str, Any] | None) -> str:
    if not pixel:
        return "无"
    if pixel.get("lost"):
        return "上下文丢失"
    return f"均值 {pixel['mean']} / 最大 {pixel['max']}"
