"""Where a session's model may search: the prompt side of the guard's global-search block.

The guard refuses a recursive scan of a drive root, the home directory or AppData before it
runs (docs/design/guard.md#global-searches-are-blocked-before-they-run); saying so before the
model tries one spares it steps spent on refused scans
(docs/design/graft.md#the-model-is-told-where-to-search). Said once per session at its first
context, and again in a handoff's first message. Imported on the hook path: nothing here.
"""

from __future__ import annotations

SCOPE_MARK = "[dshkit 搜索范围]"


def search_scope(cwd: str) -> str:
    """The sentence that keeps the model's searches inside its workspace `cwd`."""
    return (
        f"{SCOPE_MARK} 搜索文件只在工作区 {cwd} 内进行：不要对磁盘根目录、用户主目录或 AppData "
        "做递归搜索或整盘扫描，这类命令会在执行前被拒绝；需要旧会话里的内容时用回读工具。"
    )
