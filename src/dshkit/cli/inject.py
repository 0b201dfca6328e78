"""`dshkit inject show`: what each hook event would inject into a session, byte for byte."""

from __future__ import annotations

import sys

import click

from ..hookspec import EVENTS
from ..inject import EventPreview, InjectPreview
from ..inject.service import SOURCES
from .common import HARNESSES, ID, json_option, open_app, print_json, state_dir_option, stdout


@click.group()
def inject() -> None:
    """What the hooks put into a session's context."""


@inject.command()
@click.option(
    "--session",
    type=ID,
    default=None,
    help="A session id or unique prefix [default: a new session].",
)
@click.option(
    "--harness",
    type=click.Choice(HARNESSES),
    default=None,
    help="The session's harness (needed for a new session, or one no scan has read yet).",
)
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="The session's working directory [default: as the scan read it, else this one].",
)
@click.option(
    "--event",
    "events",
    type=click.Choice(EVENTS),
    multiple=True,
    help="Only this event (repeatable) [default: every event a handler serves there].",
)
@click.option(
    "--source",
    type=click.Choice(SOURCES),
    default="startup",
    show_default=True,
    help="What the SessionStart follows (compact and clear inject again).",
)
@click.option(
    "--permission-mode",
    default=None,
    help="The permission mode the hook payload would carry (Claude Code's) [default: none].",
)
@state_dir_option
@json_option
def show(
    session: str | None,
    harness: str | None,
    cwd: str | None,
    events: tuple[str, ...],
    source: str,
    permission_mode: str | None,
    state_dir: str | None,
    as_json: bool,
) -> None:
    """Print, for each hook event, the exact text the hooks would inject next into the
    session, and its parts: each handler in its order, where its text comes from, its length
    as the harnesses count it, and whether the 10,000-character cap would drop it. The same
    rules as the hooks run, dry: nothing is delivered, recorded or started."""
    if cwd is not None:
        import os

        cwd = os.path.abspath(cwd)
    found = open_app(state_dir).inject.preview(
        session,
        harness,
        cwd=cwd,
        events=events or None,
        source=source,
        permission_mode=permission_mode,
    )
    if as_json:
        print_json(found.as_json())
        return
    _show(found)


def _show(found: InjectPreview) -> None:
    who = (
        f"a new {found.harness} session"
        if found.session_id is None
        else f"{found.harness} session {found.session_id}"
        + ("" if found.catalogued else " (not read by a scan yet)")
    )
    say(f"{who} in {found.cwd}: each event as if it fired next, nothing delivered in between")
    for event in found.events:
        _event(event, found.source)


def _event(event: EventPreview, source: str) -> None:
    what = f"{event.event} ({source})" if event.event == "SessionStart" else event.event
    size = f"{event.chars:,} of 10,000 characters" if event.text else "no context"
    say("")
    say(f"{what}: {size}")
    for part in event.parts:
        head = f"  {part.order:>4} {part.handler}"
        if part.text:
            mark = "  DROPPED by the cap" if part.dropped else ""
            say(f"{head}  {part.source}, {part.chars:,} characters{mark}")
            if len(part.pieces) > 1 or (part.pieces and part.pieces[0].source != part.source):
                from ..harnesses import text_length

                pieces = ", ".join(f"{p.source} {text_length(p.text):,}" for p in part.pieces)
                say(f"         from {pieces}")
        elif not part.previewed:
            say(f"{head}  not previewed: {part.why}")
        elif part.decision is not None:
            say(f"{head}  {part.decision[0]}: {part.decision[1]}")
        else:
            say(f"{head}  nothing: {part.why}")
        for effect in part.effects:
            say(f"         would also: {effect}")
    for note in event.notes:
        say(f"  note: {note}")
    if event.text:
        say("  ---- the text, exactly ----")
        sys.stdout.flush()
        stdout.file.flush()
        sys.stdout.write(event.text + "\n")
        sys.stdout.flush()
        say("  ---- end ----")


def say(line: str) -> None:
    stdout.print(line, markup=False)
