"""`dshkit optimize …`, `dshkit runs …`, `dshkit outcome …`: the prompt optimizer by hand."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..optimizer import FORMS, TIERS, OptimizerService
from ..sessions import Refresh, Source
from ..store import SQLITE_INT_MAX
from .common import (
    ID,
    ROW,
    OpenedPath,
    json_option,
    open_app,
    print_json,
    roots_option,
    sources_for,
    state_dir_option,
    stderr,
    stdout,
)


def _service(state_dir: str | None, sources: list[Source] | None = None) -> OptimizerService:
    return open_app(state_dir, sources).optimizer


class _DefaultGroup(click.Group):
    """`dshkit optimize RAW …` runs one optimization; `dshkit optimize eval|settings …` are
    its subcommands. Anything else is `run`'s, options before the words included
    (`dshkit optimize --tier basic "…"`): the group itself takes no option but help."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["run", *args]
        return super().parse_args(ctx, args)


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
@click.option(
    "--session", "session_id", type=ID, default=None, help="The session (id or unique prefix)."
)
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
    service = _service(state_dir, sources_for(roots, harness))
    run = service.optimize(
        raw,
        session=session_id,
        harness=harness,
        cwd=str(cwd) if cwd else None,
        overrides={"tier": tier, "form": form, "turns": turns, "full": full},
        refresh=Refresh.WAIT,  # a person asked: the session's newest turn counts
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


@optimize_command.command("compare")
@click.argument("raw")
@click.option(
    "--session", "session_id", type=ID, required=True, help="The session (id or unique prefix)."
)
@roots_option
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The working directory the tools may read [default: the session's].",
)
@click.option("--tier", type=click.Choice(TIERS), default=None)
@state_dir_option
@json_option
def compare_command(
    raw: str,
    session_id: str,
    roots: tuple[Path, ...],
    harness: str | None,
    cwd: Path | None,
    tier: str | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Optimize RAW for a session twice, with its history and without any, and show both
    (does the history make the instruction hit the right target?). Calls the model twice."""
    service = _service(state_dir, sources_for(roots, harness))
    with_history, without = service.compare(
        raw,
        session=session_id,
        harness=harness,
        cwd=str(cwd) if cwd else None,
        overrides={"tier": tier},
        refresh=Refresh.WAIT,
    )
    if as_json:
        print_json({"withHistory": with_history.detail(), "withoutHistory": without.detail()})
        return
    for title, run in (("with history", with_history), ("without history", without)):
        shown = run.context["turnsIncluded"] if run.context else 0
        stdout.print(f"[bold]{title}[/] (run {run.id}, {shown} exchanges shown)")
        if run.fallback:
            stdout.print(f"[yellow]the raw words were passed on:[/] {escape(run.fallback)}")
        click.echo(run.output + "\n")


def _progress() -> Callable[[str, str], None]:
    def told(stage: str, message: str) -> None:
        if stderr.is_terminal:
            stderr.print(f"[dim]{stage}: {escape(message)}[/]")

    return told


@optimize_command.command("settings")
@click.option(
    "--session", "session_id", type=ID, default=None, help="Change one session's settings."
)
@click.option("--harness", default=None, help="The harness of --session, when ids collide.")
@click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Change one project's settings (a working directory): every session working there "
    "starts from them.",
)
@_choices
@click.option("--permission", type=click.Choice(["auto", "review"]), default=None)
@click.option(
    "--skip-trivial/--no-skip-trivial",
    default=None,
    help="Pass a bare continuation (继续, ok) or a harness command without a model call.",
)
@click.option(
    "--strategy",
    type=click.Choice(["v6", "v5"]),
    default=None,
    help="The strategy text: v6 (with the guard rails F1-F7) or v5 (without; to compare).",
)
@click.option("--model", default=None, help="The optimizer's own model ('': the [llm] one).")
@click.option(
    "--reasoning-effort",
    type=click.Choice(["", "minimal", "low", "medium", "high"]),
    default=None,
    help="The reasoning effort asked of the optimizer's model ('': the [llm] one).",
)
@click.option(
    "--budget-s",
    type=click.FloatRange(0, 600, min_open=True),
    default=None,
    help="Seconds a typed prompt may wait for the optimizer before the raw words go on.",
)
@state_dir_option
@json_option
def settings_command(
    session_id: str | None,
    harness: str | None,
    project: Path | None,
    tier: str | None,
    form: str | None,
    turns: int | None,
    full: bool | None,
    permission: str | None,
    skip_trivial: bool | None,
    strategy: str | None,
    model: str | None,
    reasoning_effort: str | None,
    budget_s: float | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Show the optimizer's settings; with --session or --project and options, change only
    those options of that session's or that project's.

    The defaults live in <state dir>/config.toml, section [optimizer]; a project's settings
    go over them, and a session's own over its project's.
    """
    given = {
        "tier": tier,
        "form": form,
        "turns": turns,
        "full": full,
        "permission": permission,
        "skip_trivial": skip_trivial,
        "strategy": strategy,
        "model": model,
        "reasoning_effort": reasoning_effort,
        "budget_s": budget_s,
    }
    # Only the options given change: one left out keeps what the session or project chose.
    changes = {name: value for name, value in given.items() if value is not None}
    if session_id and project:
        raise click.UsageError("give --session or --project, not both")
    where = str(project) if project else None
    service = _service(state_dir)
    if changes:
        if not session_id and not where:
            raise click.UsageError(
                "give --session (or --project) to change one session's (or project's) "
                "settings; the defaults are set in <state dir>/config.toml, section [optimizer]"
            )
        settings = service.set_settings(session_id, harness, changes, project=where)
    else:
        settings = service.settings(session_id, harness, project=where)
    if as_json:
        print_json(settings.as_json())
        return
    for name, value in settings.as_json().items():
        stdout.print(f"{name}: {value}", markup=False)


@optimize_command.command("eval")
@click.option(
    "--cases",
    type=OpenedPath(exists=True, dir_okay=False, path_type=Path),
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
    service = _service(state_dir)
    rows = service.evaluate(cases, cwd=str(cwd or Path.cwd()), progress=_progress()).rows
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
@click.option("--limit", type=click.IntRange(1, SQLITE_INT_MAX), default=20, show_default=True)
@click.option("--tier", type=click.Choice(TIERS), default=None)
@state_dir_option
@json_option
def runs_list(limit: int, tier: str | None, state_dir: str | None, as_json: bool) -> None:
    """The newest runs, and each tier's one-pass success rate against the raw words."""
    listed = _service(state_dir).runs(limit, tier)
    if as_json:
        print_json(listed.as_json())
        return
    table = Table(box=None)
    for column in ("run", "tier", "ms", "fallback / skipped", "untraced", "outcome", "raw"):
        table.add_column(column, overflow="ellipsis", no_wrap=column != "raw")
    for run in listed.runs:
        table.add_row(
            str(run.id),
            run.tier,
            str(run.timings.get("totalMs", "-")),
            Text((run.fallback or (f"skipped: {run.passed}" if run.passed else ""))[:30]),
            str(run.audit.get("untraced", "-")),
            run.outcome or "-",
            Text(run.raw.replace("\n", " ")[:60]),
        )
    stdout.print(table if listed.runs else 'No runs yet: `dshkit optimize "…"`.')
    _print_rates(listed.rates)


@runs_command.command("stats")
@state_dir_option
@json_option
def runs_stats(state_dir: str | None, as_json: bool) -> None:
    """Per tier: the optimizer's added latency (p50/p95, skips and fallbacks counted) and the
    one-pass rate against the raw words on comparable prompts, with the sample sizes."""
    rates = _service(state_dir).runs(1).rates
    if as_json:
        print_json({"rates": rates})
        return
    _print_rates(rates)


def _print_rates(rates: Mapping[str, Any]) -> None:
    table = Table(box=None)
    for column in (
        "tier",
        "prompts",
        "skipped",
        "fallbacks",
        "p50 ms",
        "p95 ms",
        "delivered",
        "ok / judged",
        "one-pass (95% CI)",
        "vs raw words (n / raw n)",
    ):
        table.add_column(column, no_wrap=True)
    for name, rate in rates.items():
        latency = rate["latency"]
        least = rate["minSample"]
        share = f"- (under {least} judged)"
        if rate["successRate"] is not None and rate["interval"] is not None:
            low, high = rate["interval"]
            share = f"{rate['successRate']:.0%} ({low:.0%}-{high:.0%})"
        vs = rate["vsRawWords"]
        difference = "-" if vs is None else f"{vs:+.0%}"
        against = f"{difference} ({rate['comparable']} / {rate['rawComparable']})"
        table.add_row(
            "off (raw words)" if name == "off" else name,
            str(latency["prompts"]),
            str(latency["skipped"]),
            str(latency["fallbacks"]),
            "-" if latency["p50Ms"] is None else str(latency["p50Ms"]),
            "-" if latency["p95Ms"] is None else str(latency["p95Ms"]),
            str(rate["runs"]),
            f"{rate['ok']} / {rate['judged']}",
            share,
            against,
        )
    if rates:
        stdout.print(table)


class _RunId(click.ParamType[int | None]):
    """A run's number, or `last` (None: the newest run)."""

    name = "RUN|last"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | None:
        if isinstance(value, str) and value.strip().lower() == "last":
            return None
        if isinstance(value, str) and not value.strip().isdigit():
            self.fail(f"{_short_value(value)} is neither a run's number nor 'last'", param, ctx)
        return int(ROW.convert(value, param, ctx))


def _short_value(value: str, most: int = 40) -> str:
    """A bad value as an error repeats it: its start, not all of it."""
    return repr(value if len(value) <= most else value[: most - 1] + "…")


@runs_command.command("show")
@click.argument("run_id", type=_RunId())
@state_dir_option
@json_option
def runs_show(run_id: int | None, state_dir: str | None, as_json: bool) -> None:
    """Everything kept of one run (`last`: the newest, e.g. the one the prompt hook just told
    you of), as JSON with or without --json (which makes an error JSON too)."""
    service = _service(state_dir)
    run = service.last_run() if run_id is None else service.run(run_id)
    print_json(run.detail())


@click.command("outcome")
@click.argument("run_id", type=ROW)
@click.argument("outcome", type=click.Choice(["ok", "rework"]))
@state_dir_option
@json_option
def outcome_command(run_id: int, outcome: str, state_dir: str | None, as_json: bool) -> None:
    """Record whether the agent got it right in one pass (ok) or it needed rework (--json:
    the run, as `runs show` prints it)."""
    run = _service(state_dir).record_outcome(run_id, outcome)
    if as_json:
        print_json(run.detail())
        return
    stdout.print(f"run {run.id}: {run.outcome}", markup=False)


def _yes(value: bool) -> str:
    return "yes" if value else "no"
