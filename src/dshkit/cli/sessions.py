"""`dshkit sessions list|show`: what the store knows about each session."""

from __future__ import annotations

from collections import Counter

import click
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..sessions.catalog import Catalog
from ..sessions.events import (
    context_pressure,
    context_window,
    human_messages,
    message_text,
    pair_tool_calls,
    total_usage,
    turns,
)
from .common import (
    HARNESSES,
    find_session,
    json_option,
    open_store,
    print_json,
    state_dir_option,
    stdout,
    when,
)


@click.group()
def sessions() -> None:
    """List and inspect the sessions dshkit has read."""


@sessions.command("list")
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@state_dir_option
@json_option
def list_sessions(harness: str | None, limit: int, state_dir: str | None, as_json: bool) -> None:
    """Sessions with events, most recent first."""
    with open_store(state_dir) as store:
        rows = Catalog(store).recent(harness, limit)
    if as_json:
        print_json([row.as_json() for row in rows])
        return
    table = Table(box=None)
    for column in ("harness", "session", "last activity", "events", "human", "tools", "title"):
        table.add_column(column, overflow="ellipsis", no_wrap=column != "title")
    for row in rows:
        table.add_row(
            row.harness,
            row.session_id,
            when(row.last_time),
            f"{row.events:,}",
            str(row.human_messages),
            str(row.tool_calls),
            Text(row.title.replace("\n", " ")[:80]),
        )
    stdout.print(table if rows else "No sessions yet: run `dshkit scan` first.")


@sessions.command("show")
@click.argument("session_id")
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@state_dir_option
@json_option
def show_session(
    session_id: str, harness: str | None, state_dir: str | None, as_json: bool
) -> None:
    """One session: its human messages, tools, turns and token usage.

    SESSION_ID may be a unique prefix of the id.
    """
    with open_store(state_dir) as store:
        catalog = Catalog(store)
        row = find_session(catalog, session_id, harness)
        files = catalog.files(row.key)
        events = catalog.events(row.key)
    humans = human_messages(events)
    pairing = pair_tool_calls(events)
    tools: Counter[str] = Counter(call.name for call in pairing.calls)
    failures: Counter[str] = Counter(call.name for call in pairing.calls if call.failed)
    usage = total_usage(events)
    detail = {
        **row.as_json(),
        "turns": len([t for t in turns(events) if t.ordinal]),
        "humanMessageTexts": [
            {"seq": e.get("seq"), "time": e.get("time"), "text": message_text(e)} for e in humans
        ],
        "tools": {name: {"calls": n, "failed": failures[name]} for name, n in tools.items()},
        "unpairedToolResults": len(pairing.unpaired_results),
        "usage": {
            "inputTokens": usage.input,
            "outputTokens": usage.output,
            "cacheReadTokens": usage.cache_read,
            "cacheWriteTokens": usage.cache_write,
            "reasoningTokens": usage.reasoning,
        },
        "contextWindow": context_window(events),
        "contextPressure": context_pressure(events),
        "logFiles": [
            {
                "path": f.path,
                "bytesRead": f.offset,
                "error": f.error,
                "skippedLines": f.state.get("unknownLines", 0),
                "badLines": f.state.get("badLines", 0),
                "lastProblem": f.state.get("lastProblem"),
            }
            for f in files
        ],
    }
    if as_json:
        print_json(detail)
        return
    head = Table(box=None, show_header=False)
    window = detail["contextWindow"]
    for key, value in (
        ("harness", row.harness),
        ("session", row.session_id),
        ("cwd", row.cwd),
        ("files", row.files),
        ("events", row.events),
        ("turns", detail["turns"]),
        ("context window", f"{window:,} tokens" if window else "not reported by the log"),
    ):
        head.add_row(key, Text(str(value)))
    head.add_row("context in use", _share(detail["contextPressure"], detail["contextWindow"]))
    head.add_row("tokens", ", ".join(f"{k} {v:,}" for k, v in detail["usage"].items()))
    stdout.print(head)
    logs = Table(title="Log files", title_justify="left", box=None)
    for column in ("path", "bytes read", "skipped lines", "problem"):
        logs.add_column(column, overflow="fold")
    for item in detail["logFiles"]:
        problem = item["error"] or ""
        if item["badLines"]:
            problem = f"{item['badLines']} unreadable lines skipped, last: {item['lastProblem']}"
        logs.add_row(
            Text(item["path"]),
            f"{item['bytesRead']:,}",
            str(item["skippedLines"]),
            Text(problem),
        )
    stdout.print(logs)
    if tools:
        table = Table(title="Tools", title_justify="left", box=None)
        for column in ("tool", "calls", "failed"):
            table.add_column(column)
        for name, n in tools.most_common():
            table.add_row(Text(name), str(n), str(failures[name]))
        stdout.print(table)
    stdout.print(f"[bold]Human messages ({len(humans)})[/]")
    for event in humans:
        stdout.print(f"[dim]{when(event.get('time'))}[/] {escape(message_text(event))}")


def _share(used: int | None, window: int | None) -> str:
    if used is None:
        return "-"
    if not window:
        return f"{used:,} tokens"
    return f"{used:,} of {window:,} tokens ({used / window:.1%})"
