"""`dshkit graft …`: context handoff; `status` shows a session's watermark and the decision now."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from ..config import ConfigError
from ..graft.watermark import GraftSettings, GraftState, decide
from ..sessions.catalog import Catalog
from .common import (
    HARNESSES,
    find_session,
    json_option,
    open_store,
    print_json,
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
        events = catalog.events(row.key)
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
        ("window", f"{pressure.window:,} tokens (from the {pressure.window_source})"),
        ("watermark mode", mark.mode),
        ("warning at", _ratio(mark.warning, "no warning window")),
        ("forced cut at", _ratio(mark.forced, "no forced cut")),
        ("handoff fits", "yes" if mark.feasible else "no: the window cannot hold a handoff"),
        ("decision", f"{decision.action}: {decision.reason}"),
    ]
    if mark.cost is not None:
        cost = mark.cost
        rows.insert(
            4,
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


def _ratio(value: float | None, missing: str) -> str:
    return missing if value is None else f"{value:.1%}"
