"""The MCP server's tools: thin handlers over the capabilities, one method of `Tools` each.

A tool is a method marked with `@tool`: its name is the method's name, its description the
docstring (Chinese: the model reads it), its input schema the annotated parameters (each
with a description). Adding a tool is writing one such method. Handlers run on worker
threads and open their own store per call; what a caller got wrong comes back as a tool
error naming the argument (`ToolError`), never as a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import orjson
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from .. import harnesses
from ..config import ConfigError
from ..gate.browser import BrowserError
from ..gate.judge import MAX_BUDGET_S, MIN_BUDGET_S, GateInputError
from ..gate.service import run_gate
from ..llm import LLMConfig
from ..optimizer.context import resolve_session
from ..optimizer.pipeline import optimize
from ..optimizer.settings import settings_for
from ..optimizer.strategies import FORMS, TIERS
from ..profile.state import ProfileState
from ..sessions import Catalog, Scanner, Source
from ..store import LeaseBusy, Store, StoreError

F = TypeVar("F", bound=Callable[..., Any])

# tool name → its annotations, in the order the tools are listed
TOOLS: dict[str, ToolAnnotations] = {}


def tool(*, read_only: bool) -> Callable[[F], F]:
    """Mark a method of `Tools` as a tool (`read_only`: it changes nothing anywhere)."""

    def mark(method: F) -> F:
        TOOLS[method.__name__] = ToolAnnotations(read_only_hint=read_only)
        return method

    return mark


def result(text: str, structured: dict[str, Any] | None = None) -> CallToolResult:
    """A tool's answer: `text` for the model as it is, and the same facts as JSON."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def as_text(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


class Tools:
    """What the tools share: the state directory and the session roots to read (as
    `dshkit scan` reads them)."""

    def __init__(self, state_dir: Path, sources: list[Source]) -> None:
        self.state_dir = Path(state_dir)
        self.sources = sources

    @contextmanager
    def store(self) -> Iterator[Store]:
        try:
            store = Store(self.state_dir)
        except (StoreError, OSError) as exc:
            raise ToolError(str(exc)) from exc
        with store:
            yield store

    @tool(read_only=True)
    def profile_show(self) -> CallToolResult:
        """dshkit 当前注入给模型的用户画像原文（与 hook 注入的文字逐字节相同；没有画像时为空），
        以及它的来源（自动画像或用户自定义）和被省略的条目。"""
        with self.store() as store:
            effective = ProfileState(store).effective()
        facts = {
            "text": effective.text,
            "mode": effective.mode.value,
            "source": effective.source,
            "dropped": list(effective.dropped),
            "withheld": effective.withheld,
        }
        return result(effective.text, facts)

    @tool(read_only=False)
    def optimize_prompt(
        self,
        raw: Annotated[str, Field(description="用户的原话（要优化成给工作智能体的指令）")],
        session: Annotated[
            str | None,
            Field(description="会话 id 或唯一前缀：提供历史与工作目录；不给则不读历史"),
        ] = None,
        harness: Annotated[
            str | None,
            Field(description=f"session 所属的宿主（{', '.join(harnesses.NAMES)}），id 重名时用"),
        ] = None,
        cwd: Annotated[
            str | None,
            Field(description="可读取文件的工作目录（默认为会话的工作目录；都没有则不读文件）"),
        ] = None,
        tier: Annotated[
            str | None, Field(description=f"优化档位：{' / '.join(TIERS)}（默认用配置）")
        ] = None,
        form: Annotated[
            str | None, Field(description=f"交付形式：{' / '.join(FORMS)}（默认用配置）")
        ] = None,
        turns: Annotated[
            int | None, Field(description="带入的最近轮数，0 到 10（默认用配置）")
        ] = None,
        full: Annotated[bool | None, Field(description="是否带入完整历史（默认用配置）")] = None,
    ) -> CallToolResult:
        """把用户的原话优化成一条有依据的指令（dshkit 的提示词优化器，调用配置的模型）。
        返回优化后的指令原文；模型不可用或失败时报错并说明原因，原话保持不变。"""
        if not raw.strip():
            raise ToolError("raw: the raw words are empty")
        if harness is not None and harness not in harnesses.NAMES:
            raise ToolError(f"harness: {harnesses.UnknownHarness(harness)}")
        with self.store() as store:
            key = None
            if session:
                wanted = [s for s in self.sources if harness in (None, s.harness)]
                try:
                    Scanner(store).scan(wanted)
                except LeaseBusy as exc:
                    raise ToolError(str(exc)) from exc
                key = resolve_session(Catalog(store), session, harness)
                if key is None:
                    raise ToolError(f"session: no single session matches {session!r}")
            overrides = {"tier": tier, "form": form, "turns": turns, "full": full}
            try:
                settings = settings_for(store, key, overrides)
                llm = LLMConfig.load(store.state_dir) if settings.tier != "off" else None
                if llm is not None:
                    llm.check()
            except ConfigError as exc:
                raise ToolError(str(exc)) from exc
            info = Catalog(store).get(key) if key else None
            where = cwd or (info.cwd if info and info.cwd else None)
            run = optimize(store, raw, settings, llm, session=key, cwd=where)
        if run.fallback:
            raise ToolError(f"run {run.id}: the raw words were passed on: {run.fallback}")
        return result(run.output, run.as_json())

    @tool(read_only=False)
    def gate_check(
        self,
        path: Annotated[
            str,
            Field(description="要检查的网页交付物（.html/.htm/.xhtml/.svg）的绝对路径"),
        ],
        budget: Annotated[
            float | None,
            Field(description=f"采样秒数上限，{MIN_BUDGET_S:g} 到 {MAX_BUDGET_S:g}（默认用配置）"),
        ] = None,
    ) -> CallToolResult:
        """在无头 Chromium 中打开网页交付物并判定：ok、fatal-overlay、page-error、
        blank-canvas-0、blank-canvas 或 unresponsive，附证据（错误、画布像素、截图路径）。"""
        file = Path(path)
        if not file.is_absolute():
            raise ToolError(f"path: {path!r} is not an absolute path")
        try:
            verdict = run_gate(self.state_dir, file, budget)
        except GateInputError as exc:
            name = "budget" if str(exc).startswith("budget") else "path"
            raise ToolError(f"{name}: {exc}") from exc
        except (ConfigError, BrowserError, StoreError, OSError) as exc:
            raise ToolError(str(exc)) from exc
        summary = verdict.summary()
        return result(as_text(summary), summary)
