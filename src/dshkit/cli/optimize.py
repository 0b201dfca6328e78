"""`dshkit optimize …`, `dshkit runs …`, `dshkit outcome …`: the prompt optimizer by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..config import ConfigError
from ..llm import LLMConfig
from ..optimizer.context import resolve_session
from ..optimizer.evaluate import evaluate, load_cases
from ..optimizer.pipeline import optimize
from ..optimizer.request import llm_for, resolve_request
from ..optimizer.runs import RunNotFound, get_run, list_runs, record_outcome, success_rates
from ..optimizer.settings import set_session_settings, settings_for
from ..optimizer.strategies import FORMS, TIERS
from ..sessions import Catalog, Scanner
from ..store import LeaseBusy
from .common import (
    json_option,
    open_store,
    print_json,
    roots_option,
    sources_for,
    state_dir_option,
    stderr,
    stdout,
)


class _DefaultGroup(click.Group):
    """`dshkit optimize RAW …` runs one optimization; `dshkit optimize eval|settings …` are
    its subcommands."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] in self.commands:
            return super().resolve_command(ctx, args)
        return "run", self.commands["run"], args


def _choices(func: Any) -> Any:
    for option in reversed(
        [
            click.option("--tier", type=click.Choice(TIERS), default=None),
            click.option("--form", type=click.Choice(FORMS), default=None),
            click.option("--turns", type=click.IntRange(0, 10), default=None),
            click.option("--full/--no-full", default=None),
        ]
    ):
        func = option(func)
    return func


@click.group(cls=_DefaultGroup)
def optimize_command() -> None:
    """Turn raw words into one evidence-backed instruction for the working agent."""


@optimize_command.command("run")
@click.argument("raw")
@click.option("--session", "session_id", default=None, help="The session (id or unique prefix).")
@roots_option
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The working directory the tools may read [default: the session's; without a "
    "session, none: no files are read].",
)
@_choices
@state_dir_option
@json_option
def run_command(
    raw: str,
    session_id: str | None,
    roots: tuple[Path, ...],
    harness: str | None,
    cwd: Path | None,
    tier: str | None,
    form: str | None,
    turns: int | None,
    full: bool | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Optimize RAW (the session, if named, gives history and the working directory)."""
    if not raw.strip():
        raise click.BadParameter("the raw words are empty", param_hint="RAW")
    with open_store(state_dir) as store:
        overrides = {"tier": tier, "form": form, "turns": turns, "full": full}
        try:
            if session_id:
                Scanner(store).scan(sources_for(roots, harness))
            request = resolve_request(
                store, session_id, harness, overrides, str(cwd) if cwd else None
            )
        except LeaseBusy as exc:
            raise click.ClickException(str(exc)) from exc
        except ConfigError as exc:  # before ValueError: a ConfigError is one
            raise click.ClickException(str(exc)) from exc
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--session") from None
        try:
            llm = llm_for(store, request.settings)
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from exc
        run = optimize(
            store,
            raw,
            request.settings,
            llm,
            session=request.key,
            cwd=request.cwd,
            progress=_progress(),
        )
    if as_json:
        print_json(run.as_json())
        return
    if run.fallback:
        stderr.print(f"[yellow]the raw words were passed on:[/] {escape(run.fallback)}")
    click.echo(run.output)
    audit = run.audit
    if audit:
        stderr.print(
            f"run {run.id}: {audit['sentences']} sentences, {audit['traced']} traced, "
            f"{audit['freedom']} marked as freedom, {audit['untraced']} untraced; "
            f"mark it with `dshkit outcome {run.id} ok|rework`",
            markup=False,
        )


def _progress() -> Any:
    def told(stage: str, message: str) -> None:
        if stderr.is_terminal:
            stderr.print(f"[dim]{stage}: {escape(message)}[/]")

    return told


@optimize_command.command("settings")
@click.option("--session", "session_id", default=None, help="Change one session's settings.")
@click.option("--harness", default=None, help="The harness of --session, when ids collide.")
@_choices
@click.option("--permission", type=click.Choice(["auto", "review"]), default=None)
@state_dir_option
@json_option
def settings_command(
    session_id: str | None,
    harness: str | None,
    tier: str | None,
    form: str | None,
    turns: int | None,
    full: bool | None,
    permission: str | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Show the optimizer's settings; with --session and options, change that session's.

    The defaults live in <state dir>/config.toml, section [optimizer].
    """
    changes = {"tier": tier, "form": form, "turns": turns, "full": full, "permission": permission}
    with open_store(state_dir) as store:
        key = resolve_session(Catalog(store), session_id, harness) if session_id else None
        if session_id and key is None:
            raise click.BadParameter(
                f"no single session matches {session_id!r}", param_hint="--session"
            )
        try:
            if any(v is not None for v in changes.values()):
                if key is None:
                    raise click.UsageError(
                        "give --session to change one session's settings; the defaults are "
                        "set in <state dir>/config.toml, section [optimizer]"
                    )
                set_session_settings(store, key, changes)
            settings = settings_for(store, key)
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json(settings.as_json())
        return
    for name, value in settings.as_json().items():
        stdout.print(f"{name}: {value}", markup=False)


@optimize_command.command("eval")
@click.option(
    "--cases",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help='A JSON-lines file: {"raw": …, "clear": true|false} per line.',
)
@click.option("--cwd", type=click.Path(exists=True, file_okay=False, path_type=Path))
@state_dir_option
@json_option
def eval_command(cases: Path, cwd: Path | None, state_dir: str | None, as_json: bool) -> None:
    """Run a case file against the configured live model, every tier: does each answer ask
    (within its budget), write 无 on a clear request, and stay within its length? Calls the
    real model: never part of the tests."""
    try:
        loaded = load_cases(cases)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--cases") from exc
    with open_store(state_dir) as store:
        try:
            llm = LLMConfig.load(store.state_dir)
            llm.check()
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from exc
        rows = evaluate(store, loaded, llm, cwd=str(cwd or Path.cwd()), progress=_progress())
    if as_json:
        print_json(rows)
        return
    table = Table(box=None)
    for column in ("case", "tier", "ask section", "items/limit", "无 on clear", "chars", "ratio"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            Text(row["raw"][:30]),
            row["tier"],
            _yes(row["askGate"]["hasSection"]),
            f"{row['askGate']['items']}/{row['askGate']['limit']}",
            "-" if row["nothingOnClear"] is None else _yes(row["nothingOnClear"]),
            str(row["lengthGate"]["chars"]),
            str(row["lengthGate"]["ratio"]),
        )
    stdout.print(table)


@click.group("runs")
def runs_command() -> None:
    """The optimizer's runs and their outcomes."""


@runs_command.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--tier", type=click.Choice(TIERS), default=None)
@state_dir_option
@json_option
def runs_list(limit: int, tier: str | None, state_dir: str | None, as_json: bool) -> None:
    """The newest runs, and each tier's one-pass success rate against the raw words."""
    with open_store(state_dir) as store:
        runs = list_runs(store, limit, tier)
        rates = success_rates(store)
    if as_json:
        print_json({"runs": [r.as_json() | {"outcome": r.outcome} for r in runs], "rates": rates})
        return
    table = Table(box=None)
    for column in ("run", "tier", "fallback", "untraced", "outcome", "raw"):
        table.add_column(column, overflow="ellipsis", no_wrap=column != "raw")
    for run in runs:
        table.add_row(
            str(run.id),
            run.tier,
            Text((run.fallback or "")[:30]),
            str(run.audit.get("untraced", "-")),
            run.outcome or "-",
            Text(run.raw.replace("\n", " ")[:60]),
        )
    stdout.print(table if runs else 'No runs yet: `dshkit optimize "…"`.')
    for name, rate in rates.items():
        share = "-" if rate["successRate"] is None else f"{rate['successRate']:.0%}"
        stdout.print(f"{name}: {rate['judged']} judged of {rate['runs']}, one-pass {share}")


@runs_command.command("show")
@click.argument("run_id", type=int)
@state_dir_option
def runs_show(run_id: int, state_dir: str | None) -> None:
    """Everything kept of one run (JSON)."""
    with open_store(state_dir) as store:
        try:
            print_json(get_run(store, run_id).detail())
        except RunNotFound as exc:
            raise click.BadParameter(str(exc), param_hint="RUN_ID") from None


@click.command("outcome")
@click.argument("run_id", type=int)
@click.argument("outcome", type=click.Choice(["ok", "rework"]))
@state_dir_option
def outcome_command(run_id: int, outcome: str, state_dir: str | None) -> None:
    """Record whether the agent got it right in one pass (ok) or it needed rework."""
    with open_store(state_dir) as store:
        try:
            run = record_outcome(store, run_id, outcome)
        except RunNotFound as exc:
            raise click.BadParameter(str(exc), param_hint="RUN_ID") from None
    stdout.print(f"run {run.id}: {run.outcome}", markup=False)


def _yes(value: bool) -> str:
    return "yes" if value else "no"
