"""Options and helpers shared by the CLI commands."""

from __future__ import annotations

import functools
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import click
from rich.console import Console
from rich.text import Text

from .. import harnesses, store
from ..app import App
from ..errors import MAX_ID, Invalid, Unavailable
from ..paths import state_dir
from ..sessions import Source, default_sources
from ..store import SQLITE_INT_MAX, Store
from .errors import Invocation, dumps, printable

F = TypeVar("F", bound=Callable[..., Any])

HARNESSES = harnesses.NAMES

# Never break a path or command; and off a terminal (a pipe, a file) no width at all, so that
# tables are never cut at 80 columns with their ids (a script copies them whole).
stdout = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 1 << 16)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)


class OpenedPath(click.Path):
    """A path dshkit only opens (it never stores, compares or prints it as text): a name that
    is not UTF-8 passes through as the bytes it is. Every other path and text parameter of a
    command with --json must be UTF-8 (see `json_option`)."""


# An id or prefix the command line takes (a session's, a profile entry's) longer than
# `errors.MAX_ID` names nothing: refused as such, rather than looked up and echoed back whole
# (the session catalog refuses it too, for every surface).


class _Id(click.ParamType[str]):
    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if len(text) > MAX_ID:
            self.fail(f"{len(text):,} characters: an id is at most {MAX_ID:,}", param, ctx)
        return text


ID = _Id()
# A row's number (a record, a run): one larger than SQLite keeps names no row.
ROW = click.IntRange(0, SQLITE_INT_MAX)


def state_dir_option(func: F) -> F:
    return click.option(
        "--state-dir",
        type=OpenedPath(file_okay=False, path_type=str),
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
    _ran(ctx)
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
    """--json, and what every command that takes it checks before it runs: each text and path
    it was given is UTF-8 (see `undecodable`), and the command that ran is known to the error
    mapping (cli/errors.py: an error naming one of its parameters is a usage error, under
    --json a JSON one)."""

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        _ran(ctx, json=bool(kwargs.get("as_json")))
        for param in ctx.command.params:
            _check_text(ctx, param, ctx.params.get(param.name or ""))
        return func(*args, **kwargs)

    return click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")(
        cast(F, command)
    )


def _ran(ctx: click.Context, json: bool | None = None) -> None:
    if isinstance(ctx.obj, Invocation):
        ctx.obj.command = ctx.command
        if json is not None:
            ctx.obj.json = json


def undecodable(text: str) -> str | None:
    """Where `text` holds bytes that are not UTF-8 (Python keeps such bytes of an argument, a
    variable or a file name as lone surrogates, which no database, JSON or terminal takes), or
    None when it holds none."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as exc:
        first = exc.start
    try:
        raw = text.encode("utf-8", "surrogateescape")
        raw.decode("utf-8")
    except UnicodeEncodeError:
        return f"a lone surrogate U+{ord(text[first]):04X} at character {first:,}"
    except UnicodeDecodeError as exc:
        return f"byte 0x{raw[exc.start]:02x} at offset {exc.start:,}"
    return None


def _check_text(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if isinstance(param.type, OpenedPath | click.File):
        return
    for item in value if isinstance(value, tuple | list) else (value,):
        if not isinstance(item, str | os.PathLike):
            continue
        text = os.fspath(item)
        where = undecodable(text) if isinstance(text, str) else None
        if where is None:
            continue
        shown = f"'{printable(text)}'"
        if isinstance(param.type, click.Path):
            why = "the path is not UTF-8 ({}): dshkit keeps paths as text; rename it"
        else:
            why = "not UTF-8 text ({} cannot be decoded)"
        raise click.BadParameter(f"{shown}: {why.format(where)}", ctx, param)


def tell_waits() -> None:
    """Say on stderr, once, that this command waits for another process's hold on the store
    and whose it is (store.py calls it after about a second); --json or not: stdout stays the
    result's."""
    told = False

    def notice(holder: str, left: float) -> None:
        nonlocal told
        if not told:
            told = True
            stderr.print(
                f"waiting for the store (held by {holder}); up to {left:.0f} s more, then "
                "this gives up",
                markup=False,
            )

    store.wait_notice = notice


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
    tell_waits()
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
    sys.stdout.buffer.write(dumps(value) + b"\n")
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


# Characters that would hide or turn what a person reads in a terminal: direction controls
# (after U+202E "evil" reads "live"), zero-width and other format characters, C0 and C1
# controls but tab and newline (an escape sequence drives the terminal; a CR ending a line is
# a line end), and spaces passing for a plain one. Chinese, emoji, combining marks and the
# ideographic space stay as they are. The console marks the same (web/static/app.js).
_UNSEEN_CATEGORIES = frozenset({"Cf", "Cs", "Zl", "Zp"})
_UNSEEN_ALSO = frozenset(
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u202f\u205f\u115f\u1160\u3164\uffa0\u2800"
)
_KEPT_CONTROLS = frozenset("\t\n")
# A flag's tags and an emoji's joiners belong to the picture a person sees.
_FLAG = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")
_EMOJI_MODIFIERS = frozenset(["\ufe0f", *map(chr, range(0x1F3FB, 0x1F400))])
UNSEEN_STYLE = "reverse"


def _pictograph(char: str) -> bool:
    return unicodedata.category(char) == "So"


def _joins_emoji(text: str, at: int) -> bool:
    """Whether the ZERO WIDTH JOINER at `at` joins two pictographs (modifiers between)."""
    before = at - 1
    while before >= 0 and text[before] in _EMOJI_MODIFIERS:
        before -= 1
    after = at + 1
    return (
        before >= 0 and _pictograph(text[before]) and after < len(text) and _pictograph(text[after])
    )


def _unseen(text: str, at: int) -> bool:
    char = text[at]
    category = unicodedata.category(char)
    if category == "Cc":
        if char == "\r":
            return not text.startswith("\n", at + 1)
        return char not in _KEPT_CONTROLS
    if char == "\u200d":
        return not _joins_emoji(text, at)
    return category in _UNSEEN_CATEGORIES or char in _UNSEEN_ALSO


def visible(text: str) -> Text:
    """`text` for a terminal, each character that would hide or turn it shown as a token
    (`⟨U+202E⟩`, styled apart), the rest as it is: what any text from sessions, files or the
    model goes through before it is printed (`--json` stays exact)."""
    kept = {at for flag in _FLAG.finditer(text) for at in range(flag.start() + 1, flag.end())}
    shown = Text()
    start = 0
    for at in range(len(text)):
        if at in kept or not _unseen(text, at):
            continue
        shown.append(text[start:at])
        shown.append(f"⟨U+{ord(text[at]):04X}⟩", style=UNSEEN_STYLE)
        start = at + 1
    shown.append(text[start:])
    return shown
