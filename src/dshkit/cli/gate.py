"""`dshkit gate FILE`: judge a web deliverable in headless Chromium and store the verdict;
`dshkit gate rework --session ID on|off|config`: whether a session gets its failures back."""

from __future__ import annotations

from pathlib import Path

import click

from ..gate import MAX_BUDGET_S, MIN_BUDGET_S, OK
from ..procs import ExitOnSigterm
from .common import HARNESSES, ID, json_option, open_app, print_json, state_dir_option, stdout


class _GateGroup(click.Group):
    """`dshkit gate FILE …` stays the judging command: arguments naming no subcommand are
    `check`'s."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args != ["--help"] and not any(a in self.commands for a in args):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_GateGroup)
def gate() -> None:
    """The delivery gate: judge a web deliverable (`dshkit gate FILE`, the same as
    `dshkit gate check FILE`), or switch rework for one session."""


@gate.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--budget",
    type=click.FloatRange(MIN_BUDGET_S, MAX_BUDGET_S),
    default=None,
    help="Seconds to sample the page when it does not turn out good earlier "
    "[default: [gate] budget_s, 20].",
)
@click.option("--quiet", is_flag=True, help="Print nothing (a background run).")
@click.option(
    "--watch",
    is_flag=True,
    help="After an early ok (stored at once), watch the page to the end of the budget and "
    "store a late failure (the background runs of delivery).",
)
@json_option
@state_dir_option
def check(
    file: Path,
    budget: float | None,
    quiet: bool,
    watch: bool,
    as_json: bool,
    state_dir: str | None,
) -> None:
    """Judge FILE (.html/.htm/.xhtml/.svg) in headless Chromium: ok, fatal-overlay,
    parse-error, page-error, blank-canvas-0, webgl-error, blank-canvas, unresponsive,
    needs-gesture (not a failure: clicked once, still waiting) or needs-network (not a
    failure: it needs a script the gate refused from the network), with what was seen, when
    and where (--json: the measured verdict with its findings and report). Exits 1 unless
    ok."""
    # SIGTERM ends the run as Ctrl-C does: the browser is closed on the way out.
    with ExitOnSigterm():
        verdict = open_app(state_dir).gate.check(file, budget, watch=watch)
    if quiet:
        pass
    elif as_json:
        print_json(verdict.summary() | {"findings": verdict.findings, "report": verdict.report()})
    else:
        head, *findings = verdict.report()
        stdout.print(head, markup=False)
        stdout.print(f"file: {verdict.path}", markup=False)
        for line in findings:
            stdout.print(line, markup=False)
        stdout.print(f"screenshot: {verdict.screenshot}", markup=False)
    if verdict.verdict != OK:
        raise SystemExit(1)


@gate.command()
@click.option(
    "--session", "session_id", type=ID, required=True, help="A session id or a unique prefix."
)
@click.option(
    "--harness", type=click.Choice(HARNESSES), default=None, help="The session's harness."
)
@click.argument("state", type=click.Choice(("on", "off", "config")), required=False)
@json_option
@state_dir_option
def rework(
    session_id: str, harness: str | None, state: str | None, as_json: bool, state_dir: str | None
) -> None:
    """Whether the session's failed deliverables go back to its agent: `on`, `off`, or
    `config` (follow [gate] rework again). Without STATE, only show it."""
    service = open_app(state_dir).gate
    key = service.session_key(session_id, harness)
    if state is None:
        shown = service.rework_state(key)
    else:
        shown = service.set_rework(key, None if state == "config" else state == "on")
    if as_json:
        print_json(shown)
    else:
        word = "on" if shown["rework"] else "off"
        stdout.print(
            f"rework {word} for {shown['harness']}:{shown['session']} (from the {shown['source']})",
            markup=False,
        )
