"""`dshkit gate FILE`: judge a web deliverable in headless Chromium and store the verdict."""

from __future__ import annotations

from pathlib import Path

import click

from ..gate import MAX_BUDGET_S, MIN_BUDGET_S, OK
from .common import json_option, open_app, print_json, state_dir_option, stdout


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--budget",
    type=click.FloatRange(MIN_BUDGET_S, MAX_BUDGET_S),
    default=None,
    help="Seconds to sample the page when it does not turn out good earlier "
    "[default: [gate] budget_s, 20].",
)
@json_option
@state_dir_option
def gate(file: Path, budget: float | None, as_json: bool, state_dir: str | None) -> None:
    """Judge FILE (.html/.htm/.xhtml/.svg) in headless Chromium: ok, fatal-overlay,
    page-error, blank-canvas-0, blank-canvas or unresponsive. Exits 1 unless ok."""
    verdict = open_app(state_dir).gate.check(file, budget)
    if as_json:
        print_json(verdict.summary())
    else:
        recovered = " (recovered)" if verdict.recovered else ""
        stdout.print(
            f"{verdict.verdict}{recovered} in {verdict.elapsed_ms / 1000:.1f} s: {verdict.path}",
            markup=False,
        )
        if verdict.overlay_text:
            stdout.print(f"overlay: {verdict.overlay_text}", markup=False)
        for error in verdict.errors:
            stdout.print(f"error: {error}", markup=False)
        for canvas in verdict.canvas:
            stdout.print(
                f"canvas {canvas['width']}x{canvas['height']} ({canvas['context']}): "
                f"frame {canvas['framePixel']}, screenshot {canvas['screenshotPixel']}",
                markup=False,
            )
        stdout.print(f"screenshot: {verdict.screenshot}", markup=False)
    if verdict.verdict != OK:
        raise SystemExit(1)
