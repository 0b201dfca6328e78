"""Options and helpers shared by the CLI commands."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson
from rich.console import Console

from .. import harnesses
from ..app import App
from ..errors import Invalid, Unavailable
from ..paths import state_dir
from ..sessions import Source, default_sources
from ..store import Store

F = TypeVar("F", bound=Callable[..., Any])

HARNESSES = harnesses.NAMES

# Never break a path or command; and off a terminal (a pipe, a file) no width at all, so that
# tables are never cut at 80 columns with their ids (a script copies them whole).
stdout = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 1 << 16)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)


def state_dir_option(func: F) -> F:
    return click.option(
        "--state-dir",
        type=click.Path(file_okay=False, path_type=str),
        default=None,
        callback=_absolute_state_dir,
        help="dshkit's state directory [default: $DSH_HOME/dshkit, DSH_HOME defaulting to ~/.dsh]",
    )(func)


def _absolute_state_dir(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> str | None:
    """The option as given, once the state directory it names and each harness's home (from
    DSH_HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, HOME) are known to be absolute: a relative one is
    a usage error (exit 2) naming the option or the variable, before the command makes or
    reads anything relative to the directory it runs in."""
    try:
        state_dir(value)
    except Invalid as exc:
        if value:
            raise click.BadParameter(exc.message, ctx, param) from None
        raise click.UsageError(exc.message, ctx) from None
    try:
        for harness in harnesses.all_harnesses():
            harness.home()
    except Invalid as exc:
        raise click.UsageError(exc.message, ctx) from None
    return value


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")(func)


@contextmanager
def open_store(directory: str | None) -> Iterator[Store]:
    """The state store; StoreError (the tree's Unavailable) says why it cannot be used."""
    try:
        store = Store(state_dir(directory))
    except OSError as exc:
        raise Unavailable(f"cannot open the state directory: {exc}") from exc
    for note in store.tightened:
        stderr.print(
            f"note: the state directory held people's words open to others; {note}", markup=False
        )
    with store:
        yield store


def open_app(state_dir: str | None, sources: Sequence[Source] | None = None) -> App:
    """The composition root over the state directory, once its store is known to be usable
    (a broken or newer database is refused, a directory open to others tightened, saying so).
    `sources`: the session roots a refresh reads (each harness's own when None)."""
    try:
        app, notes = App.open(state_dir, sources)
    except OSError as exc:
        raise Unavailable(f"cannot open the state directory: {exc}") from exc
    for note in notes:
        stderr.print(
            f"note: the state directory held people's words open to others; {note}", markup=False
        )
    return app


def print_json(value: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.flush()


def roots_option(func: F) -> F:
    func = click.option(
        "--harness",
        type=click.Choice(HARNESSES),
        default=None,
        help="Read roots by this harness's layout only [default: all three].",
    )(func)
    return click.option(
        "--root",
        "roots",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="A sessions root to read (repeatable) [default: each harness's own root].",
    )(func)


def sources_for(roots: tuple[Path, ...], harness: str | None) -> list[Source]:
    """The given roots read by the chosen harness's layout (or every layout), else defaults."""
    if not roots:
        return default_sources(harness)
    names = [harness] if harness else list(harnesses.NAMES)
    return [Source(name, root.resolve()) for root in roots for name in names]


def when(ms: int | None) -> str:
    """A time in milliseconds as UTC to the minute, "-" for none."""
    if not isinstance(ms, int):
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")
