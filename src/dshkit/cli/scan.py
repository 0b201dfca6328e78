"""`dshkit scan`: read new session-log content from every root into the store."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from ..sessions import Progress as ScanProgress
from ..sessions import ScanReport, SessionsService, Source
from .common import (
    json_option,
    print_json,
    roots_option,
    sources_for,
    state_dir_option,
    stderr,
    stdout,
)
from .sessions import sessions_service


class ScanBar(ScanProgress):
    """A rich progress bar on stderr, shown only on a terminal and only when there is work."""

    def __init__(self) -> None:
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def start(self, total_bytes: int, files: int) -> None:
        if not stderr.is_terminal or total_bytes == 0:
            return
        self.bar = Progress(
            TextColumn("reading {task.fields[files]} session logs"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=stderr,
            transient=True,
        )
        self.bar.start()
        self.task = self.bar.add_task("scan", total=total_bytes, files=files)

    def advance(self, nbytes: int) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task, nbytes)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@click.command()
@roots_option
@click.option(
    "--frame-budget",
    type=click.IntRange(min=1),
    default=None,
    help="Decode at most this many zstd frames in this round; the next round resumes.",
)
@state_dir_option
@json_option
def scan(
    roots: tuple[Path, ...],
    harness: str | None,
    frame_budget: int | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Read new session-log content (DSH, Claude Code, Codex) into dshkit's store.

    Only what was appended since the last scan is read; session files are never written.
    """
    sources = sources_for(roots, harness)
    report = run_scan(sessions_service(state_dir, sources), frame_budget)
    if as_json:
        print_json(report.as_json())
        return
    _print_report(report, sources, bool(roots))


def run_scan(service: SessionsService, frame_budget: int | None = None) -> ScanReport:
    """Scan the service's sources with a progress bar on a terminal, warnings on stderr."""
    bar = ScanBar()
    try:
        report = service.scan(frame_budget=frame_budget, progress=bar)
    finally:
        bar.stop()
    for warning in report.warnings:
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    return report


def _print_report(report: ScanReport, sources: list[Source], explicit: bool) -> None:
    where = Table(title="Where dshkit looked", title_justify="left", box=None)
    where.add_column("root", overflow="fold")
    where.add_column("harness")
    where.add_column("log files")
    for root in dict.fromkeys(source.root for source in sources):
        counts = {s.harness: n for s, n in report.found.items() if s.root == root}
        matched = {h: n for h, n in counts.items() if n} or (counts if not explicit else {})
        if not root.is_dir():
            where.add_row(Text(str(root)), ", ".join(counts), "[dim]not present[/]")
            continue
        if not matched:
            where.add_row(Text(str(root)), "-", "[dim]none in any known layout[/]")
        for harness, n in matched.items():
            where.add_row(Text(str(root)), harness, f"{n:,}")
    stdout.print(where)

    table = Table(title="Scan", title_justify="left", box=None, show_header=False)
    table.add_column(justify="left")
    table.add_column(justify="right")
    for label, value in (
        ("log files", report.files),
        ("sessions with events", report.sessions),
        ("events", report.events),
        ("human messages", report.human_messages),
        ("zstd frames decoded now", report.frames_decoded),
        ("bytes read now", report.bytes_read),
        ("time", f"{report.elapsed_ms} ms"),
    ):
        table.add_row(label, f"{value:,}" if isinstance(value, int) else value)
    stdout.print(table)
    if report.pending:
        stderr.print("[yellow]The frame budget stopped this round early; scan again to go on.[/]")
    if report.errors:
        errors = Table(title=f"{len(report.errors)} problem(s)", title_justify="left", box=None)
        errors.add_column("file", overflow="fold")
        errors.add_column("problem", overflow="fold")
        for item in report.errors:
            errors.add_row(Text(item["file"]), Text(item["error"]))
        stdout.print(errors)
    if not report.files and not explicit:
        stdout.print("No session logs found yet; dshkit reads them as the harnesses write them.")
