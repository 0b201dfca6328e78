"""`dshkit graft …`: context handoff; `status` shows a session's watermark and the decision now,
`prepare` the handoff it would get (task board, constraints, first message), read-only."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from ..config import ConfigError
from ..graft.constraints import GraftAborted
from ..graft.handoff import prepare_handoff
from ..graft.watermark import GraftSettings, GraftState, Pressure, decide
from ..sessions import Scanner
from ..sessions.catalog import Catalog
from ..store import LeaseBusy
from .common import (
    HARNESSES,
    find_session,
    json_option,
    open_store,
    print_json,
    roots_option,
    sources_for,
    state_dir_option,
    stdout,
)


@click.group()
def graft() -> None:
    """Context handoff: when a session should hand off to a fresh one."""


@graft.command("status")
@click.option("--session", "session_id", required=True, help="A session id or a unique prefix.")
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@state_dir_option
@json_option
def status(session_id: str, harness: str | None, state_dir: str | None, as_json: bool) -> None:
    """The session's context pressure (and its source), watermark and the decision now.

    Read-only: reads what the last scan stored, and records nothing.
    """
    with open_store(state_dir) as store:
        try:
            settings = GraftSettings.load(store.state_dir)
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from None
        catalog = Catalog(store)
        row = find_session(catalog, session_id, harness, "--session")
        events = catalog.conversation(row.key)
    decision = decide(events, settings, GraftState())
    if as_json:
        print_json({"harness": row.harness, "session": row.session_id, **decision.as_json()})
        return
    pressure, mark = decision.pressure, decision.watermark
    table = Table(box=None, show_header=False)
    used = "unavailable (no usage reported yet)"
    if pressure.tokens is not None and pressure.ratio is not None:
        used = f"{pressure.tokens:,} tokens ({pressure.ratio:.1%})"
    rows = [
        ("session", f"{row.harness} {row.session_id}"),
        ("context in use", f"{used}, source: {pressure.source}"),
        ("model", pressure.model or "not named in the log"),
        ("window", f"{pressure.window:,} tokens ({_window_from(pressure)})"),
        ("watermark mode", mark.mode),
        ("warning at", _ratio(mark.warning, "no warning window")),
        ("forced cut at", _ratio(mark.forced, "no forced cut")),
        ("handoff fits", "yes" if mark.feasible else "no: the window cannot hold a handoff"),
        ("decision", f"{decision.action}: {decision.reason}"),
    ]
    if mark.cost is not None:
        cost = mark.cost
        rows.insert(
            5,  # after the watermark mode
            (
                "handoff cost",
                f"{cost.total:,} tokens ({cost.handoff:,} handoff + {cost.reserve_turns} turns × "
                f"{cost.tokens_per_turn:,} {_GROWTH_FROM[cost.tokens_per_turn_source]})",
            ),
        )
    for key, value in rows:
        table.add_row(key, Text(value))
    stdout.print(table)
    if mark.config_error:
        stdout.print(Text(f"configuration error: {mark.config_error}", style="red"))
    if decision.text:
        stdout.print(Text(f"the model would be told: {decision.text}"))


_GROWTH_FROM = {"history": "seen in recent turns", "config": "assumed by the config"}


def _window_from(pressure: Pressure) -> str:
    if pressure.window_source == "log":
        return "announced by the log"
    if pressure.window_source == "model-config":
        return f"[graft.windows] for {pressure.model}"
    unlisted = f", {pressure.model} not in [graft.windows]" if pressure.model else ""
    return f"[graft] window_tokens{unlisted}"


def _ratio(value: float | None, missing: str) -> str:
    return missing if value is None else f"{value:.1%}"


@graft.command("prepare")
@click.option("--session", "session_id", required=True, help="A session id or a unique prefix.")
@roots_option
@state_dir_option
@json_option
def prepare(
    session_id: str,
    roots: tuple[Path, ...],
    harness: str | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """The handoff SESSION would get now: task board, hard constraints and first message.

    Scans the roots first, then builds the handoff from the session's own events. Nothing is
    started or retired. Exit 1 with GRAFT_ABORTED when the person's rules do not fit whole.
    """
    with open_store(state_dir) as store:
        try:
            settings = GraftSettings.load(store.state_dir)
            Scanner(store).scan(sources_for(roots, harness))
        except (ConfigError, LeaseBusy) as exc:
            raise click.ClickException(str(exc)) from None
        catalog = Catalog(store)
        row = find_session(catalog, session_id, harness, "--session")
        try:
            handoff = prepare_handoff(catalog, row, settings)
        except GraftAborted as exc:
            if as_json:
                print_json({"error": str(exc), "report": exc.report})
            raise click.ClickException(str(exc)) from None
        except ValueError as exc:  # a card budget too small for the board's fixed lines
            raise click.ClickException(str(exc)) from None
    if as_json:
        print_json(handoff.as_json())
        return
    stdout.print(Text(handoff.first_message))
