"""`dshkit sessions list|show`: what the store knows about each session."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import click
from rich.table import Table

from ..sessions import Scanner
from ..sessions.events import (
    context_pressure,
    context_window,
    human_messages,
    message_text,
    pair_tool_calls,
    total_usage,
    turns,
)
from ..store import Store
from .common import HARNESSES, json_option, open_store, print_json, state_dir_option, stdout


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
        rows = [dict(row) for row in _rows(store, harness, limit)]
    if as_json:
        print_json([_summary_json(row) for row in rows])
        return
    table = Table(box=None)
    for column in ("harness", "session", "last activity", "events", "human", "tools", "title"):
        table.add_column(column, overflow="ellipsis", no_wrap=column != "title")
    for row in rows:
        table.add_row(
            row["harness"],
            row["session_id"],
            _when(row["last_time"]),
            f"{row['events']:,}",
            str(row["human_messages"]),
            str(row["tool_calls"]),
            row["title"].replace("\n", " ")[:80],
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
        row = _find(store, session_id, harness)
        scanner = Scanner(store)
        files = scanner.files(row["harness"], row["session_id"])
        events = scanner.events(row["harness"], row["session_id"])
    humans = human_messages(events)
    pairing = pair_tool_calls(events)
    tools: Counter[str] = Counter(call.name for call in pairing.calls)
    failures: Counter[str] = Counter(call.name for call in pairing.calls if call.failed)
    usage = total_usage(events)
    detail = {
        **_summary_json(row),
        "turns": len([t for t in turns(events) if t.number]),
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
            }
            for f in files
        ],
    }
    if as_json:
        print_json(detail)
        return
    head = Table(box=None, show_header=False)
    for key in ("harness", "session", "cwd", "files", "events", "turns", "contextWindow"):
        head.add_row(key, str(detail.get(key) if key != "session" else row["session_id"]))
    head.add_row("context in use", _share(detail["contextPressure"], detail["contextWindow"]))
    head.add_row("tokens", ", ".join(f"{k} {v:,}" for k, v in detail["usage"].items()))
    stdout.print(head)
    logs = Table(title="Log files", title_justify="left", box=None)
    for column in ("path", "bytes read", "skipped lines", "problem"):
        logs.add_column(column, overflow="fold")
    for item in detail["logFiles"]:
        logs.add_row(
            item["path"], f"{item['bytesRead']:,}", str(item["skippedLines"]), item["error"] or ""
        )
    stdout.print(logs)
    if tools:
        table = Table(title="Tools", title_justify="left", box=None)
        for column in ("tool", "calls", "failed"):
            table.add_column(column)
        for name, n in tools.most_common():
            table.add_row(name, str(n), str(failures[name]))
        stdout.print(table)
    stdout.print(f"[bold]Human messages ({len(humans)})[/]")
    for event in humans:
        stdout.print(f"[dim]{_when(event.get('time'))}[/] {message_text(event)}")


def _rows(store: Store, harness: str | None, limit: int) -> list[Any]:
    query = "SELECT * FROM sessions WHERE events > 0"
    params: list[Any] = []
    if harness:
        query += " AND harness = ?"
        params.append(harness)
    query += " ORDER BY last_time DESC, session_id LIMIT ?"
    return store.db.execute(query, [*params, limit]).fetchall()


def _find(store: Store, session_id: str, harness: str | None) -> dict[str, Any]:
    query = "SELECT * FROM sessions WHERE (session_id = ? OR session_id LIKE ? ESCAPE '\\')"
    pattern = session_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    params: list[Any] = [session_id, pattern]
    if harness:
        query += " AND harness = ?"
        params.append(harness)
    rows = [dict(r) for r in store.db.execute(query, params)]
    exact = [r for r in rows if r["session_id"] == session_id]
    if len(exact) == 1 or len(rows) == 1:
        return (exact or rows)[0]
    if not rows:
        raise click.BadParameter(f"no session {session_id!r} in the store", param_hint="SESSION_ID")
    names = ", ".join(f"{r['harness']}:{r['session_id']}" for r in rows[:5])
    raise click.BadParameter(
        f"{session_id!r} matches {len(rows)} sessions ({names}…); give more of the id or --harness",
        param_hint="SESSION_ID",
    )


def _summary_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "harness": row["harness"],
        "id": row["session_id"],
        "project": row["project"],
        "cwd": row["cwd"],
        "title": row["title"],
        "files": row["files"],
        "events": row["events"],
        "humanMessages": row["human_messages"],
        "toolCalls": row["tool_calls"],
        "firstTime": row["first_time"],
        "lastTime": row["last_time"],
    }


def _when(ms: int | None) -> str:
    if not isinstance(ms, int):
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def _share(used: int | None, window: int | None) -> str:
    if used is None:
        return "-"
    if not window:
        return f"{used:,} tokens"
    return f"{used:,} of {window:,} tokens ({used / window:.1%})"
