"""`dshkit sessions list|show`: what the store knows about each session."""

from __future__ import annotations

from collections.abc import Sequence

import click
from rich.table import Table
from rich.text import Text

from .. import paths
from ..errors import Unavailable
from ..sessions import SessionsService, Source
from ..store import SQLITE_INT_MAX
from .common import (
    HARNESSES,
    ID,
    json_option,
    print_json,
    state_dir_option,
    stderr,
    stdout,
    tell_waits,
    visible,
    when,
)


def sessions_service(
    state_dir: str | None, sources: Sequence[Source] | None = None
) -> SessionsService:
    """The service over the state directory, made private first (a directory that was open
    to others is said as it is tightened). The database is not opened here: the service's
    call is the one connection of the command (an extra one, opened and closed before a
    forget, kept another process's open connection from seeing that forget). A wait for
    another process's hold on the store is said on stderr (`tell_waits`)."""
    tell_waits()
    directory = paths.state_dir(state_dir)
    try:
        tightened = paths.private_dir(directory)
    except OSError as exc:
        raise Unavailable(f"cannot open the state directory: {exc}") from exc
    for note in tightened:
        stderr.print(
            f"note: the state directory held people's words open to others; {note}", markup=False
        )
    return SessionsService(directory, sources=sources)


@click.group()
def sessions() -> None:
    """List and inspect the sessions dshkit has read."""


@sessions.command("list")
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@click.option("--limit", type=click.IntRange(1, SQLITE_INT_MAX), default=50, show_default=True)
@state_dir_option
@json_option
def list_sessions(harness: str | None, limit: int, state_dir: str | None, as_json: bool) -> None:
    """Sessions with events, most recent first."""
    rows = sessions_service(state_dir).recent(harness, limit)
    if as_json:
        print_json([row.as_json() for row in rows])
        return
    table = Table(box=None)
    for column in ("harness", "session", "last activity", "events", "human", "tools", "title"):
        table.add_column(column, overflow="ellipsis", no_wrap=column != "title")
    for row in rows:
        table.add_row(
            row.harness,
            visible(row.session_id),
            when(row.last_time),
            f"{row.events:,}",
            str(row.human_messages),
            str(row.tool_calls),
            visible(row.title.replace("\n", " ")[:80]),
        )
    stdout.print(table if rows else "No sessions yet: run `dshkit scan` first.")


@sessions.command("show")
@click.argument("session_id", type=ID)
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@state_dir_option
@json_option
def show_session(
    session_id: str, harness: str | None, state_dir: str | None, as_json: bool
) -> None:
    """One session: its human messages, tools, turns and token usage.

    SESSION_ID may be a unique prefix of the id.
    """
    detail = sessions_service(state_dir).show(session_id, harness)
    if as_json:
        print_json(detail.as_json())
        return
    info = detail.info
    head = Table(box=None, show_header=False)
    window = detail.context_window
    for key, value in (
        ("harness", info.harness),
        ("session", info.session_id),
        ("cwd", info.cwd),
        ("files", info.files),
        ("events", info.events),
        ("turns", detail.turns),
        ("context window", f"{window:,} tokens" if window else "not reported by the log"),
    ):
        head.add_row(key, visible(str(value)))
    head.add_row("context in use", _share(detail.context_pressure, window))
    usage = detail.as_json()["usage"]
    head.add_row("tokens", ", ".join(f"{k} {v:,}" for k, v in usage.items()))
    stdout.print(head)
    logs = Table(title="Log files", title_justify="left", box=None)
    for column in ("path", "bytes read", "skipped lines", "problem"):
        logs.add_column(column, overflow="fold")
    for log in detail.log_files:
        problem = log.error or ""
        if log.bad_lines:
            problem = f"{log.bad_lines} unreadable lines skipped, last: {log.last_problem}"
        logs.add_row(
            visible(log.path), f"{log.bytes_read:,}", str(log.skipped_lines), visible(problem)
        )
    stdout.print(logs)
    if detail.tools:
        table = Table(title="Tools", title_justify="left", box=None)
        for column in ("tool", "calls", "failed"):
            table.add_column(column)
        # Most called first; ties in order of first call.
        for name, count in sorted(detail.tools.items(), key=lambda t: t[1].calls, reverse=True):
            table.add_row(visible(name), str(count.calls), str(count.failed))
        stdout.print(table)
    stdout.print(f"[bold]Human messages ({len(detail.human_messages)})[/]")
    for message in detail.human_messages:
        stdout.print(Text.assemble((when(message.time), "dim"), " ", visible(message.text)))


def _share(used: int | None, window: int | None) -> str:
    if used is None:
        return "-"
    if not window:
        return f"{used:,} tokens"
    return f"{used:,} of {window:,} tokens ({used / window:.1%})"
