"""`dshkit hook --help`: the hook entry point itself runs outside click (see dshkit.cli)."""

from __future__ import annotations

import click

from ..hookspec import EVENTS


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("event", type=click.Choice(EVENTS))
def hook(event: str) -> None:
    """Answer one command-hook event (Claude Code, Codex, DSH's bridge): the payload on
    stdin, the protocol's JSON on stdout. Never breaks the agent: any problem gives no
    opinion, exit 0, and a line in <state dir>/hooks.log."""
