"""`dshkit doctor`: what works on this machine, per harness."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import httpx
from rich.table import Table

from ..hooks.install import installed
from ..llm import LLMConfig, LLMConfigError
from ..paths import default_roots
from ..paths import state_dir as resolve_state_dir
from .common import json_option, print_json, state_dir_option, stdout


@click.command()
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
@state_dir_option
@json_option
def doctor(port: int, state_dir: str | None, as_json: bool) -> None:
    """Per harness: sessions root found, hooks installed; then the LLM and the service."""
    state = resolve_state_dir(state_dir)
    harnesses: dict[str, dict[str, Any]] = {
        name: {
            "sessionsRoot": str(root),
            "sessionsRootFound": root.is_dir(),
            "hooksInstalled": installed(name, "user", Path.cwd(), state),
        }
        for name, root in default_roots().items()
    }
    try:
        LLMConfig.load(state).check()
        llm: str | None = None
    except LLMConfigError as exc:
        llm = str(exc)
    url = f"http://127.0.0.1:{port}/api/profile/state"
    try:
        reachable = httpx.get(url, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        reachable = False
    report = {
        "harnesses": harnesses,
        "llmConfigured": llm is None,
        "llmProblem": llm,
        "service": {"url": url, "reachable": reachable},
    }
    if as_json:
        print_json(report)
        return
    table = Table(box=None)
    for column in ("harness", "sessions root", "found", "hooks installed"):
        table.add_column(column, overflow="fold")
    for name, item in harnesses.items():
        table.add_row(
            name,
            item["sessionsRoot"],
            _yes(item["sessionsRootFound"]),
            _yes(item["hooksInstalled"]),
        )
    stdout.print(table)
    stdout.print(f"LLM configured: {_yes(llm is None)}" + (f" ({llm})" if llm else ""))
    stdout.print(f"service at {url}: {_yes(reachable)}" + ("" if reachable else " (dshkit serve)"))


def _yes(value: bool) -> str:
    return "yes" if value else "no"
