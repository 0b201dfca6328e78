"""`dshkit signals`: the four friction signals (and their side counts) over the scanned roots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from ..profile import DETAILS, SIGNALS
from ..sessions import Refresh
from ..store import SQLITE_INT_MAX
from .common import (
    json_option,
    print_json,
    roots_option,
    sources_for,
    state_dir_option,
    stdout,
)
from .profile import ScanOnTerminal, service_for

_ABOUT = {
    "delegateRuns": "turns that ended asking the person to do it",
    "longTools": "command tools running past the threshold",
    "repeatFailures": "the same tool failing again and again",
    "freeformAnswers": "questions with options answered in the person's own words",
    "humanWaitTools": "long waits on the person or a background job (apart)",
    "concurrentSkipped": "long calls not timed: others ran in between",
    "unpairedToolResults": "tool results matching no call",
}


@click.command()
@roots_option
@click.option(
    "--long-tool-ms", type=click.IntRange(0, SQLITE_INT_MAX), default=60_000, show_default=True
)
@click.option(
    "--repeat-fail-min",
    type=click.IntRange(1, SQLITE_INT_MAX),
    default=3,
    show_default=True,
)
@click.option(
    "--answer-window-ms",
    type=click.IntRange(0, SQLITE_INT_MAX),
    default=30 * 60_000,
    show_default=True,
)
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Examples shown per signal (without --json).",
)
@click.option(
    "--details",
    type=click.IntRange(min=0),
    default=DETAILS,
    show_default=True,
    help="Hits kept per signal in the report's details; the rest are counted as omitted.",
)
@state_dir_option
@json_option
def signals(
    roots: tuple[Path, ...],
    harness: str | None,
    long_tool_ms: int,
    repeat_fail_min: int,
    answer_window_ms: int,
    top: int,
    details: int,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Count friction signals in the sessions under the roots (zero LLM calls).

    The roots are scanned first (incrementally); signals are computed again only for
    sessions that changed, or when the thresholds change. Totals count every hit; the
    details keep the first --details hits of each signal and count the rest as omitted.
    """
    service = service_for(state_dir, sources_for(roots, harness))
    # The delegate patterns are config.toml's ([signals]), as every other reader's.
    config = service.signal_config(
        long_tool_ms=long_tool_ms,
        repeat_fail_min=repeat_fail_min,
        answer_window_ms=answer_window_ms,
    )
    progress = ScanOnTerminal()
    try:
        report = service.signals(config, Refresh.WAIT, details, progress)
    finally:
        progress.stop()
    if as_json:
        print_json(report.as_json())
        return
    table = Table(
        title=f"{report.sessions} sessions with {report.human_messages} human messages",
        title_justify="left",
        box=None,
    )
    table.add_column("signal")
    table.add_column("count", justify="right")
    table.add_column("what it counts")
    for name in SIGNALS:
        table.add_row(name, str(report.totals[name]), _ABOUT[name])
    stdout.print(table)
    for name in SIGNALS[:4]:
        for hit in report.details[name][:top]:
            stdout.print(f"[bold]{name}[/] {escape(_describe(hit))}")
    if any(report.omitted.values()):
        left_out = ", ".join(f"{n} {c}" for n, c in report.omitted.items() if c)
        stdout.print(f"hits beyond the first {details} per signal not kept in details: {left_out}")


def _describe(hit: dict[str, Any]) -> str:
    where = f"{hit['session']} turn {hit['turn']}"
    if "durationMs" in hit:
        return f"{where}: {hit['tool']} took {int(hit['durationMs']) / 1000:.1f}s"
    if "failures" in hit:
        return (
            f"{where}: {hit['tool']} failed {hit['failures']} times (last code {hit['errorCode']})"
        )
    if "options" in hit:
        return f"{where}: options {hit['options']} → {hit['answer']!r}"
    return f"{where}: {hit.get('match')!r} in {hit.get('text')!r}"
